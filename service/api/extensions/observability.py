"""X-Request-ID handling and one JSON access-log line per request."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

from flask import Flask, Response, g, request

from ... import logjson

access_log = logging.getLogger("scalecost.access")
_VALID_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def init_app(app: Flask) -> None:
    @app.before_request
    def _start() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if _VALID_ID.match(incoming) else uuid.uuid4().hex
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        request_id = g.get("request_id") or uuid.uuid4().hex
        response.headers["X-Request-ID"] = request_id
        started = g.get("started")
        access_log.info(
            json.dumps(
                {
                    "event": "request",
                    "request_id": request_id,
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 3) if started else None,
                    "remote_addr": request.remote_addr,
                }
            )
        )
        return response


def configure_logging(level: str) -> None:
    """Every `scalecost.*` line one JSON object on stderr (service/logjson.py), tracebacks included. Under
    gunicorn its logconfig_dict has already given the logger that handler (and the root logger, and
    gunicorn's error log)."""
    logger = logging.getLogger("scalecost")
    if not logger.handlers:
        logger.addHandler(logjson.handler())
    logger.setLevel(level)
    logger.propagate = False
    # flask-limiter says when its store is unreachable and it counts in memory (fail-open), and when the store is
    # back; its logger only has a NullHandler, so without a root handler (outside gunicorn) those lines were lost.
    limiter = logging.getLogger("flask-limiter")
    if not any(isinstance(h, logging.StreamHandler) for h in limiter.handlers):
        limiter.addHandler(logjson.handler())
    limiter.setLevel(level)
    limiter.propagate = False
