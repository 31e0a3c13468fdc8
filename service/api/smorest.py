"""flask-smorest subclassed once: problem+json errors documented for every operation."""

from __future__ import annotations

import http

import flask_smorest
from flask_smorest.spec import prepare_response

from .errors import PROBLEM_CONTENT_TYPE, ProblemSchema


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ProblemSchema

    def init_app(self, app, *, spec_kwargs=None):
        super().init_app(app, spec_kwargs=spec_kwargs)
        from .model_schemas import MODEL_FORMS

        for name, schema in MODEL_FORMS.items():  # the oneOf branches of every request's `model`
            self.spec.components.schema(name, schema=schema)
        self.spec.components.security_scheme(
            "bearerAuth",
            {"type": "http", "scheme": "bearer", "description": "API key `sc_…` (scalecost keys create)"},
        )

    def _register_error_handlers(self):
        """Errors are handled by service.api.errors (registered in create_app)."""

    def _register_responses(self):
        """Document error responses as application/problem+json with the ProblemSchema."""
        for status in http.HTTPStatus:
            response: dict = {"description": status.phrase}
            if status >= 400:
                response["schema"] = self.ERROR_SCHEMA
                prepare_response(response, self.spec, PROBLEM_CONTENT_TYPE)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM_CONTENT_TYPE)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)


class Blueprint(flask_smorest.Blueprint):
    """Project blueprint: `problem` documents an extra error status; `auth` guards and documents a view."""

    def problem(self, status: int, description: str):
        return self.alt_response(
            status, schema=ProblemSchema, description=description, content_type=PROBLEM_CONTENT_TYPE
        )

    def auth(self, role: str, *, read: bool = False):
        """Require an API key with at least `role` (reads: only when REQUIRE_AUTH_FOR_READS is true)."""
        from .auth import requires

        def decorator(view):
            guarded = requires(role, read=read)(view)
            guarded = self.problem(401, "Missing, unknown or revoked API key (WWW-Authenticate: Bearer).")(
                guarded
            )
            if not read:
                guarded = self.problem(403, f"The API key lacks the '{role}' role.")(guarded)
            security = [{"bearerAuth": []}]
            if read:
                security.append({})  # open unless REQUIRE_AUTH_FOR_READS
            return self.doc(security=security)(guarded)

        return decorator
