"""flask-smorest subclassed once: problem+json errors documented for every operation."""

from __future__ import annotations

import http
import re

import flask_smorest
import flask_smorest.pagination
import marshmallow as ma
from apispec import BasePlugin
from flask_smorest.spec import prepare_response

from .errors import PROBLEM_CONTENT_TYPE, ProblemSchema


def _exclusive_bounds(self, field, ret, **kwargs) -> dict:
    """apispec drops Range(min_inclusive=False): state open bounds in the contract (OpenAPI 3.0 booleans)."""
    out: dict = {}
    for validator in field.validators:
        if isinstance(validator, ma.validate.Range):
            if validator.min is not None and not validator.min_inclusive:
                out["exclusiveMinimum"] = True
            if validator.max is not None and not validator.max_inclusive:
                out["exclusiveMaximum"] = True
    return out


def _typed_null_branch(self, field, ret, **kwargs) -> dict:
    """apispec writes a nullable nested object as `anyOf: [{$ref}, {type: object, nullable: true}]`, whose second
    branch is any object: generated clients make an untyped class of it. Say null and nothing else."""
    for branch in ret.get("anyOf") or ():
        if branch == {"type": "object", "nullable": True}:
            branch["enum"] = [None]
    return {}


MAX_PAGE = 1_000_000


def _pagination_parameters_schema_factory(def_page, def_page_size, def_max_page_size):
    """flask-smorest's pagination schema with an upper bound on `page`, so the contract states it
    (an unbounded page overflows the database's OFFSET), and no default for `page` in the contract: a generated
    client sends every parameter that has a default, and a listing that also pages by cursor refuses a page
    beside a cursor (an absent page is the first one all the same; a callable default is not documented)."""
    base = _original_factory(def_page, def_page_size, def_max_page_size)

    class PaginationParametersSchema(base):  # type: ignore[valid-type,misc]  # a class made at run time
        page = ma.fields.Integer(
            load_default=lambda: def_page,
            validate=ma.validate.Range(min=1, max=MAX_PAGE),
            metadata={"description": f"Page number; page {def_page} when absent."},
        )

    return PaginationParametersSchema


_original_factory = flask_smorest.pagination._pagination_parameters_schema_factory
flask_smorest.pagination._pagination_parameters_schema_factory = _pagination_parameters_schema_factory


def default_operation_id(path: str, method: str) -> str:
    """`getPriceImportsByImportId` for GET /v1/price-imports/{import_id}: the name an operation gets when its view
    names none (views name theirs with `@blp.doc(operationId=...)`, a verb and the resource in camelCase)."""
    words = []
    for segment in path.strip("/").split("/"):
        if segment == "v1" or not segment:
            continue
        if segment.startswith("{"):
            words += ["by", *re.split(r"[^A-Za-z0-9]+", segment.strip("{}"))]
        else:
            words += re.split(r"[^A-Za-z0-9]+", segment)
    return method.lower() + "".join(word[:1].upper() + word[1:] for word in words if word)


class OperationIds(BasePlugin):
    """Every operation has an operationId, so generated clients get stable, readable function names."""

    def operation_helper(self, path=None, operations=None, **kwargs) -> None:
        for method, operation in (operations or {}).items():
            if isinstance(operation, dict):
                operation.setdefault("operationId", default_operation_id(path or "", method))


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ProblemSchema

    def init_app(self, app, *, spec_kwargs=None):
        spec_kwargs = dict(spec_kwargs or {})
        spec_kwargs["extra_plugins"] = [*spec_kwargs.get("extra_plugins", ()), OperationIds()]
        super().init_app(app, spec_kwargs=spec_kwargs)
        self.ma_plugin.converter.add_attribute_function(_exclusive_bounds)
        self.ma_plugin.converter.add_attribute_function(_typed_null_branch)
        self.spec.components.security_scheme(
            "bearerAuth",
            {"type": "http", "scheme": "bearer", "description": "API key `sc_…` (scalecost keys create)"},
        )

    def _register_error_handlers(self):
        """Errors are handled by service.api.extensions.errors (registered in create_app)."""

    def document_request_body(self, path: str, method: str, schema: dict) -> None:
        """Replace a generated request-body schema by a hand-written one (e.g. a oneOf the body's
        loader enforces but marshmallow cannot express)."""
        body = self.spec._paths[path][method]["requestBody"]
        body["content"]["application/json"]["schema"] = schema

    def _register_pagination_header(self):
        """X-Pagination is a JSON document in a header: a header's value is a string on the wire."""
        self.spec.components.header(
            "PAGINATION",
            {
                "description": "Pagination metadata as JSON: total, total_pages, first_page, last_page, page, "
                "previous_page, next_page",
                "schema": {"type": "string", "example": '{"total": 37, "total_pages": 4, "page": 1}'},
            },
            lazy=True,
        )

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
            security: list[dict[str, list[str]]] = [{"bearerAuth": []}]
            if read:
                security.append({})  # open unless REQUIRE_AUTH_FOR_READS
            return self.doc(security=security)(guarded)

        return decorator
