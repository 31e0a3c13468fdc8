"""RFC 9457 problem details for every error the service returns."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any, NoReturn

import marshmallow as ma
from flask import Response, g, json, request
from werkzeug.exceptions import HTTPException

from ...engine import InvalidRequest
from ...engine.i18n import N_, _, active
from ...i18n import translate_message
from ...store.errors import ConcurrentChange, is_locked, is_saturated, is_unavailable, unique_violation

PROBLEM_CONTENT_TYPE = "application/problem+json"
# A field breaks the documented contract (type, range, enum): the request is not schema-valid.
INVALID_FIELD = "urn:scalecost:problem:invalid-field"
# Every field is valid on its own, but together they are physically impossible or unknown to the
# catalog (parallel degrees ≠ device count, fp8 on an A100, an unknown accelerator id…).
IMPOSSIBLE_REQUEST = "urn:scalecost:problem:impossible-request"
# The body is a file in a provider's own format (a cloud price list) that cannot be read: its content is beyond
# what the contract can describe, so a schema-valid request can still carry one.
UNREADABLE_FILE = "urn:scalecost:problem:unreadable-file"
log = logging.getLogger("scalecost.errors")

# The titles (HTTP reason phrases) and the werkzeug descriptions the service answers with, for the catalogs:
# problem() translates every title, detail and field message through them (service.i18n.translate_message).
MESSAGES = (
    N_("Bad Request"), N_("Unauthorized"), N_("Forbidden"), N_("Not Found"), N_("Method Not Allowed"),
    N_("Not Acceptable"), N_("Conflict"), N_("Gone"), N_("Precondition Failed"), N_("Request Entity Too Large"),
    N_("Unsupported Media Type"), N_("Unprocessable Entity"), N_("Precondition Required"),
    N_("Too Many Requests"), N_("Internal Server Error"), N_("Service Unavailable"), N_("Error"),
    N_("The requested URL was not found on the server. If you entered the URL manually please check your "
       "spelling and try again."),
    N_("The method is not allowed for the requested URL."),
    N_("The browser (or proxy) sent a request that this server could not understand."),
    N_("The data value transmitted exceeds the capacity limit."),
    N_("The server does not support the media type transmitted in the request."),
    N_("The request was well-formed but was unable to be followed due to semantic errors."),
    N_("The server could not verify that you are authorized to access the URL requested. You either supplied "
       "the wrong credentials (e.g. a bad password), or your browser doesn't understand how to supply the "
       "credentials required."),
    N_("You don't have the permission to access the requested resource. It is either read-protected or not "
       "readable by the server."),
    N_("The precondition on the request for the URL failed positive evaluation."),
    N_("This request is required to be conditional; try using \"If-Match\" or \"If-Unmodified-Since\"."),
    N_("This user has exceeded an allotted request count. Try again later."),
    N_("The server encountered an internal error and was unable to complete your request. Either the server "
       "is overloaded or there is an error in the application."),
)  # fmt: skip


class ProblemSchema(ma.Schema):
    """Documentation of the problem+json body (RFC 9457); the handlers below build it."""

    type = ma.fields.String(
        required=True, metadata={"description": "URI naming the problem type", "example": "about:blank"}
    )
    title = ma.fields.String(required=True, metadata={"description": "Short summary", "example": "Not Found"})
    status = ma.fields.Integer(required=True, metadata={"description": "HTTP status code", "example": 404})
    detail = ma.fields.String(
        required=True, metadata={"description": "Explanation specific to this occurrence"}
    )
    errors = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.List(ma.fields.String()),
        metadata={
            "description": "Field path → messages, for validation failures",
            "example": {"json.hardware.count": ["Must be greater than or equal to 1."]},
        },
    )
    request_id = ma.fields.String(
        required=True, metadata={"description": "The X-Request-ID of the request", "example": "3f2c…"}
    )


def problem(
    status: int,
    detail: str | None = None,
    *,
    errors: dict[str, Any] | None = None,
    title: str | None = None,
    type_: str = "about:blank",
    headers: dict[str, str] | None = None,
) -> Response:
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    lang = active()
    body: dict[str, Any] = {
        "type": type_,
        "title": translate_message(title or phrase, lang),
        "status": status,
        "detail": translate_message(detail or phrase, lang),
        "request_id": getattr(g, "request_id", None) or "",
    }
    if errors:
        body["errors"] = _translated(errors, lang)
    response = Response(json.dumps(body), status=status, mimetype=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _translated(errors: dict[str, Any], lang: Any) -> dict[str, Any]:
    """Field paths stay as they are; each message in the caller's language."""
    return {
        path: [translate_message(m, lang) for m in messages] if isinstance(messages, list) else messages
        for path, messages in errors.items()
    }


def flatten_messages(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """webargs nests messages by location and field: {"json": {"hardware": {"count": [..]}}} → dotted."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, dict):
        for key, value in messages.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            flat.update(flatten_messages(value, path))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        flat[prefix or "_schema"] = list(messages)
    elif isinstance(messages, list):
        for i, value in enumerate(messages):
            flat.update(flatten_messages(value, f"{prefix}.{i}"))
    else:
        flat[prefix or "_schema"] = [str(messages)]
    return flat


def handle_http_exception(error: HTTPException) -> Response:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    headers = dict(data.get("headers") or {})
    valid_methods = getattr(error, "valid_methods", None)
    if status == 405 and valid_methods:
        headers["Allow"] = ", ".join(valid_methods)
    messages = data.get("errors") or data.get("messages")
    if isinstance(messages, dict) and set(messages) == {"json"}:
        messages = messages["json"]  # body errors are named by field alone: `hardware.count`
    errors = flatten_messages(messages) if messages else None
    detail = data.get("message") or error.description
    type_ = "about:blank"
    if status == 422 and errors:
        detail = _("The request has invalid fields: {fields}.").format(fields=", ".join(sorted(errors)))
        type_ = INVALID_FIELD
    if status == 415:
        detail = _("Send the body as JSON with Content-Type: application/json.")
    return problem(status, detail, errors=errors, headers=headers, type_=type_)


def handle_unexpected(error: Exception) -> Response:
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    if isinstance(error, RecursionError):
        return problem(400, _("The JSON body is nested too deeply."))
    conflict = unique_violation(error)
    if conflict:
        return problem(409, conflict)
    if isinstance(error, ConcurrentChange):
        return problem(
            412, _("The resource was modified concurrently; GET it again and retry with its new ETag.")
        )
    if is_locked(error):
        return locked()
    if is_saturated(error):
        log.warning(
            "no free database connection within the pool timeout (%s %s)", request.method, request.path
        )
        return problem(
            503,
            _(
                "Every database connection of this server is in use (slow or waiting requests); retry shortly."
            ),
            headers={"Retry-After": str(LOCKED_RETRY_AFTER_S)},
        )
    if is_unavailable(error):
        log.error("database unavailable: %s", type(error).__name__)
        return problem(503, _("The database is unavailable; retry shortly."), headers={"Retry-After": "5"})
    log.exception("unhandled error")
    return problem(500, _("An unexpected error occurred. Quote the request id when reporting it."))


LOCKED_RETRY_AFTER_S = 2


def locked() -> Response:
    """A wait for a lock another write holds ran out (store/errors.is_locked): the database answers, so not
    "unavailable". A write is a 409 (nothing was written), a read a 503; both say when to retry."""
    log.warning("database lock wait ran out (%s %s)", request.method, request.path)
    headers = {"Retry-After": str(LOCKED_RETRY_AFTER_S)}
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return problem(
            503, _("Another write is in progress and holds the data this request reads; retry shortly."),
            headers=headers,
        )  # fmt: skip
    return problem(
        409, _("Another write is in progress on the same data; nothing was written. Retry shortly."),
        headers=headers,
    )  # fmt: skip


def abort_invalid_fields(errors: dict[str, list[str]]) -> NoReturn:
    """422 invalid-field problem naming each field (dotted path) with its messages."""
    from flask_smorest import abort

    abort(422, errors=errors)
    raise AssertionError("unreachable")  # abort raises


def json_options_answer(response: Response) -> Response:
    """Flask answers OPTIONS itself with an empty text/html 200; say the allowed methods in JSON instead."""
    if (
        request.method == "OPTIONS"
        and response.status_code == 200
        and response.mimetype == "text/html"
        and not response.get_data()
    ):
        allow = [m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()]
        response.set_data(json.dumps({"allow": allow}))
        response.mimetype = "application/json"
    return response


def handle_invalid_request(error: InvalidRequest) -> Response:
    """The engine's physical and catalog checks: 422 naming each field."""
    detail = _("The request cannot be estimated: {fields}.").format(fields=", ".join(sorted(error.errors)))
    return problem(422, detail, errors=error.errors, type_=IMPOSSIBLE_REQUEST, title=_("Impossible request"))


def register(app) -> None:
    app.register_error_handler(InvalidRequest, handle_invalid_request)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(Exception, handle_unexpected)
    app.after_request(json_options_answer)
