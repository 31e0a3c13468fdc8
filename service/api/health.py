"""Probes: GET /healthz (database answering and at the alembic head), GET /livez (the process answers: for a
liveness probe, which must not restart a worker because the database is down) and GET /readyz (everything a
request needs: the database, its migrations and the rate limiter's store; for a readiness probe)."""

from __future__ import annotations

import marshmallow as ma
from flask import current_app, jsonify
from flask.views import MethodView

from .. import API_VERSION
from ..store.migrate import database_status
from .extensions.db import database
from .extensions.smorest import Blueprint

blp = Blueprint("health", __name__, description="Liveness and readiness of the service and its database.")


class _ProbeSchema(ma.Schema):
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

    connection_pool = ma.fields.String(
        metadata={
            "description": "The requests' connection pool: `ok`, or `saturated` when every connection is in use "
            "(requests beyond wait up to 5 s, then answer 503 'in use'); the probes have a connection of their "
            "own, so a saturated pool is not reported as a database that is down",
            "enum": ["ok", "saturated"],
        }
    )


class HealthSchema(_ProbeSchema):
    version = ma.fields.String(
        required=True,
        metadata={"description": "The service's version (pyproject.toml's; the contract's `info.version`)"},
    )


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(
        200,
        HealthSchema,
        example={"status": "ok", "database": "ok", "migrations": "current", "version": API_VERSION},
    )
    @blp.alt_response(
        503,
        schema=HealthSchema,
        description="The database does not answer or is not migrated to the head revision.",
        example={
            "status": "degraded",
            "database": "unavailable",
            "migrations": "unknown",
            "version": API_VERSION,
        },
    )
    @blp.doc(operationId="getHealth")
    def get(self):
        """Health check: 200 when the database answers and is migrated to head, 503 otherwise."""
        db, migrations = database_status(database().probe_engine)
        body = {"status": "ok", "database": db, "migrations": migrations, "version": API_VERSION}
        body["connection_pool"] = "saturated" if database().pool_saturated() else "ok"
        if body["database"] != "ok" or body["migrations"] != "current":
            body["status"] = "degraded"
            response = jsonify(body)
            response.status_code = 503
            return response
        return body


class LiveSchema(ma.Schema):
    status = ma.fields.String(
        required=True, metadata={"description": "`ok`: the process answers", "enum": ["ok"]}
    )


class ReadySchema(_ProbeSchema):
    rate_limiter = ma.fields.String(
        required=True,
        metadata={
            "description": "The rate limiter's store (RATELIMIT_STORAGE_URI): `ok`, `unavailable` (limits then count "
            "in each worker's memory: fail-open) or `disabled` (RATELIMIT_ENABLED false)",
            "enum": ["ok", "unavailable", "disabled"],
        },
    )


@blp.route("/livez")
class Live(MethodView):
    @blp.response(200, LiveSchema, example={"status": "ok"})
    @blp.doc(operationId="getLiveness")
    def get(self):
        """Liveness: 200 while the process can answer; touches neither the database nor the limiter's store."""
        return {"status": "ok"}


def limiter_status() -> str:
    """`ok`, `unavailable` or `disabled`: whether the rate limiter's store answers its own check."""
    limiter = current_app.extensions.get("scalecost.limiter")
    if limiter is None or not current_app.config.get("RATELIMIT_ENABLED", True):
        return "disabled"
    try:
        return "ok" if limiter.storage.check() else "unavailable"
    except Exception:  # noqa: BLE001  # any failure of the store is "unavailable", never a 500
        return "unavailable"


@blp.route("/readyz")
class Ready(MethodView):
    @blp.response(
        200,
        ReadySchema,
        example={"status": "ok", "database": "ok", "migrations": "current", "rate_limiter": "ok"},
    )
    @blp.alt_response(
        503,
        schema=ReadySchema,
        description="The database does not answer or is not at the head revision, or the limiter's store is down.",
        example={
            "status": "degraded",
            "database": "ok",
            "migrations": "current",
            "rate_limiter": "unavailable",
        },
    )
    @blp.doc(operationId="getReadiness")
    def get(self):
        """Readiness: 200 when the database answers at the head revision and the limiter's store answers."""
        db, migrations = database_status(database().probe_engine)
        body = {"status": "ok", "database": db, "migrations": migrations, "rate_limiter": limiter_status()}
        body["connection_pool"] = "saturated" if database().pool_saturated() else "ok"
        if db != "ok" or migrations != "current" or body["rate_limiter"] == "unavailable":
            body["status"] = "degraded"
            response = jsonify(body)
            response.status_code = 503
            return response
        return body
