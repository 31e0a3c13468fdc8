"""Bearer API keys with roles: viewer < editor < admin."""

from __future__ import annotations

import functools

from flask import current_app, g, request
from flask_smorest import abort

from ...engine.i18n import _
from ...store import keys
from .db import db_session

RANK = {"viewer": 0, "editor": 1, "admin": 2}
ANONYMOUS = "anonymous"
WWW_AUTHENTICATE = {"WWW-Authenticate": 'Bearer realm="scalecost"'}


def _bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def current_key():
    """The live key the Authorization header names, or None. Looked up once per request: the rate
    limiter (which runs before the view) asks first, authenticate() then reuses the answer."""
    token = _bearer()
    if token is None:
        return None
    cached = g.get("_api_key_lookup")
    if cached is not None and cached[0] == token:
        return cached[1]
    key = keys.authenticate(db_session(), token)
    g._api_key_lookup = (token, key)
    return key


def authenticate(role: str, *, read: bool) -> None:
    """Set g.actor/g.role or abort 401/403. Reads are open unless REQUIRE_AUTH_FOR_READS."""
    token = _bearer()
    if token is None and read and not current_app.config["REQUIRE_AUTH_FOR_READS"]:
        g.actor, g.role = ANONYMOUS, None
        return
    if token is None:
        abort(401, message=_("Send an API key: Authorization: Bearer sc_…"), headers=WWW_AUTHENTICATE)
    key = current_key()
    if key is None:
        abort(401, message=_("The API key is unknown or revoked."), headers=WWW_AUTHENTICATE)
    if RANK[key.role] < RANK[role]:
        abort(
            403,
            message=_("This needs the '{role}' role; the key '{name}' has '{role2}'.").format(
                role=role, name=key.name, role2=key.role
            ),
        )
    g.actor, g.role = key.name, key.role


def requires(role: str, *, read: bool = False):
    def decorator(view):
        @functools.wraps(view)
        def wrapper(*args, **kwargs):
            authenticate(role, read=read)
            return view(*args, **kwargs)

        return wrapper

    return decorator


def actor() -> str:
    return g.get("actor") or ANONYMOUS
