"""Admin endpoints for API keys: create (shown once), list, revoke."""

from __future__ import annotations

import marshmallow as ma
from flask import g
from flask.views import MethodView
from flask_smorest import abort
from marshmallow import validate

from ..engine.i18n import N_, _
from ..store import keys
from ..store.errors import Conflict
from .extensions.auth import actor
from .extensions.db import db_session
from .extensions.fields import String
from .extensions.smorest import Blueprint

blp = Blueprint("keys", __name__, url_prefix="/v1/keys", description="API keys and their roles (admin).")

# Letters, digits, . _ @ -, and not one of the audit trail's own actors (cli, anonymous, seed) in any case: the
# lookahead says so in the contract too (JSON Schema patterns are ECMA-262 regexes, which have it).
_RESERVED = "|".join("".join(f"[{c}{c.upper()}]" for c in name) for name in keys.RESERVED_NAMES)
NAME_PATTERN = rf"^(?!(?:{_RESERVED})$)[A-Za-z0-9._@-]+$"
NAME_MESSAGE = N_(
    "Letters, digits and . _ @ - only, and not {reserved} (in any case): those are the audit trail's own actors."
).format(reserved=", ".join(keys.RESERVED_NAMES))


class KeyCreateSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    name = String(
        required=True,
        validate=[validate.Length(1, 128), validate.Regexp(NAME_PATTERN, error=NAME_MESSAGE)],
        metadata={
            "description": "Unique name (letters, digits, . _ @ -); not cli, anonymous or seed, in any case "
            "(the audit trail's own actors)",
            "example": "ci-bot",
        },
    )
    role = String(required=True, validate=validate.OneOf(keys.ROLES), metadata={"example": "editor"})


class KeySchema(ma.Schema):
    name = String(metadata={"example": "ci-bot"})
    role = String(metadata={"enum": list(keys.ROLES)})
    prefix = String(metadata={"description": "First characters of the key, to recognise it"})
    created_at = ma.fields.DateTime()
    created_by = String(allow_none=True)
    revoked_at = ma.fields.DateTime(allow_none=True)


class NewKeySchema(KeySchema):
    key = String(metadata={"description": "The secret; shown only in this response", "example": "sc_…"})


@blp.route("")
class Keys(MethodView):
    @blp.auth("admin")
    @blp.arguments(KeyCreateSchema)
    @blp.response(201, NewKeySchema)
    @blp.problem(409, "A key with this name exists.")
    @blp.doc(operationId="createKey")
    def post(self, body):
        """Create a key. The secret appears only in this response; only its hash is stored."""
        session = db_session()
        try:
            key, secret = keys.create(
                session, body["name"], body["role"], actor=actor(), request_id=g.request_id
            )
            session.commit()
        except Conflict:
            session.rollback()
            abort(409, message=_("A key named '{name}' exists.").format(name=body["name"]))
        return {**keys.as_dict(key), "key": secret}

    @blp.auth("admin")
    @blp.response(200, KeySchema(many=True))
    @blp.doc(operationId="listKeys")
    def get(self):
        """List keys (never their secrets)."""
        return [keys.as_dict(k) for k in keys.list_keys(db_session())]


@blp.route("/<string(maxlength=128):name>")  # key names are up to 128 characters
class KeyItem(MethodView):
    @blp.auth("admin")
    @blp.response(204)
    @blp.problem(404, "No live key has this name.")
    @blp.problem(409, "This is the last live admin key: create another admin key first.")
    @blp.doc(operationId="revokeKey")
    def delete(self, name: str):
        """Revoke a key; it stops working at once.

        The last live admin key cannot be revoked (409): nobody is locked out of key and catalog
        administration by accident."""
        session = db_session()
        try:
            keys.revoke(session, name, actor=actor(), request_id=g.request_id)
        except keys.KeyError_:
            session.rollback()
            abort(404, message=_("No live key named '{name}'.").format(name=name))
        except keys.LastAdminKey:
            session.rollback()
            abort(
                409,
                message=_(
                    "'{name}' is the last live admin key; revoking it would leave nobody able to manage keys "
                    "or the catalog. Create another admin key first (POST /v1/keys or scalecost keys create)."
                ).format(name=name),
            )
        session.commit()
