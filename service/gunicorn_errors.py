"""Errors gunicorn answers itself are problem+json too, like every other error of the service.

gunicorn refuses a request before the app sees it when the request line is too long (414), the headers
are too many or too large (431), or the request cannot be parsed (400), and writes an HTML page for it.
`install()` replaces that writer (gunicorn.util.write_error, which every worker class calls from
Worker.handle_error) with one that writes an RFC 9457 body with a request id, as the app's own errors have.

The gunicorn config runs it in each worker:

    def post_worker_init(worker):
        from service.gunicorn_errors import install
        install()
"""

from __future__ import annotations

import json
import uuid
from http import HTTPStatus

PROBLEM_CONTENT_TYPE = "application/problem+json"

_DETAILS = {
    400: "The request could not be parsed as HTTP/1.1.",
    414: "The request line (method, path and query) is too long.",
    431: "The request headers are too many or too large.",
}


def problem_response(status_int: int, reason: str, mesg: str) -> bytes:
    """The whole HTTP/1.1 response gunicorn sends for a request it refused."""
    phrase = HTTPStatus(status_int).phrase if status_int in HTTPStatus._value2member_map_ else reason
    request_id = uuid.uuid4().hex
    detail = _DETAILS.get(status_int) or phrase
    if mesg and status_int < 500:
        detail = f"{detail} ({mesg[:200]})"
    body = json.dumps(
        {
            "type": "about:blank",
            "title": phrase,
            "status": status_int,
            "detail": detail,
            "request_id": request_id,
        }
    ).encode("utf-8")
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {PROBLEM_CONTENT_TYPE}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-ID: {request_id}\r\n"
        "\r\n"
    )
    return head.encode("latin-1", "replace") + body


def write_error(sock, status_int: int, reason: str, mesg: str) -> None:
    from gunicorn import util

    util.write_nonblock(sock, problem_response(status_int, reason, mesg))


def install() -> None:
    """Make gunicorn write its own error answers as problem+json (idempotent)."""
    from gunicorn import util

    util.write_error = write_error
