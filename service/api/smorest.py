"""flask-smorest subclassed once: problem+json errors documented for every operation."""

from __future__ import annotations

import http

import flask_smorest
from flask_smorest.spec import prepare_response

from .errors import PROBLEM_CONTENT_TYPE, ProblemSchema


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ProblemSchema

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
    """Project blueprint; `problem` documents an extra error status in one line."""

    def problem(self, status: int, description: str):
        return self.alt_response(
            status, schema=ProblemSchema, description=description, content_type=PROBLEM_CONTENT_TYPE
        )
