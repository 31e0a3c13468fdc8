"""Rate limits on writes and key endpoints (flask-limiter; storage from RATELIMIT_STORAGE_URI)."""

from __future__ import annotations

import hashlib

from flask import Flask, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"]


def client_key() -> str:
    """Per API key when one is sent (so one office behind a NAT is not one client), else per address."""
    auth = request.headers.get("Authorization", "")
    if auth:
        return "key:" + hashlib.sha256(auth.encode()).hexdigest()[:24]
    return "ip:" + (get_remote_address() or "unknown")


def _write_limit() -> str:
    return current_app.config["RATELIMIT_WRITES"]


def init_app(app: Flask, write_blueprints, all_method_blueprints) -> Limiter:
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    limiter = Limiter(client_key, app=app, storage_uri=app.config["RATELIMIT_STORAGE_URI"])
    for blp in write_blueprints:
        limiter.limit(_write_limit, methods=WRITE_METHODS)(blp)
    for blp in all_method_blueprints:  # key administration: every method counts
        limiter.limit(_write_limit)(blp)
    return limiter
