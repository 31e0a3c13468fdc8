"""GET /healthz: is the database answering and at the alembic head?"""

from __future__ import annotations

import marshmallow as ma
from flask import jsonify
from flask.views import MethodView

from ..store.migrate import database_status
from .extensions.db import database
from .extensions.smorest import Blueprint

blp = Blueprint("health", __name__, description="Liveness and readiness of the service and its database.")


class HealthSchema(ma.Schema):
    status = ma.fields.String(
        required=True, metadata={"description": "`ok` or `degraded`", "enum": ["ok", "degraded"]}
    )
    database = ma.fields.String(
        required=True, metadata={"description": "`ok` or `unavailable`", "enum": ["ok", "unavailable"]}
    )
    migrations = ma.fields.String(
        required=True,
        metadata={
            "description": "`current`, `pending` or `unknown`",
            "enum": ["current", "pending", "unknown"],
        },
    )


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200, HealthSchema, example={"status": "ok", "database": "ok", "migrations": "current"})
    @blp.alt_response(
        503,
        schema=HealthSchema,
        description="The database does not answer or is not migrated to the head revision.",
        example={"status": "degraded", "database": "unavailable", "migrations": "unknown"},
    )
    def get(self):
        """Health check: 200 when the database answers and is migrated to head, 503 otherwise."""
        db, migrations = database_status(database().engine)
        body = {"status": "ok", "database": db, "migrations": migrations}
        if body["database"] != "ok" or body["migrations"] != "current":
            body["status"] = "degraded"
            response = jsonify(body)
            response.status_code = 503
            return response
        return body
