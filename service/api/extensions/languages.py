"""The language of every answer: Accept-Language (quality values honoured; `?lang=` on the page) picks the
engine's active Language for the request; the answer says which with Content-Language, and Vary tells caches
that it depends on Accept-Language."""

from __future__ import annotations

from flask import Flask, Response, g, request

from ... import i18n
from ...engine.i18n import activate, deactivate

PAGE_ENDPOINTS = {"web.index"}  # only the page reads ?lang= (the API's query strings are strict)


def choose() -> None:
    asked = request.args.get("lang") if request.endpoint in PAGE_ENDPOINTS else None
    g.language = i18n.negotiate(request.accept_languages, asked)
    g.language_token = activate(i18n.language(g.language))


def restore(_error: BaseException | None = None) -> None:
    """Back to the language before the request (a test client runs requests in the caller's context)."""
    token = g.pop("language_token", None)
    if token is not None:
        deactivate(token)


def label(response: Response) -> Response:
    response.headers["Content-Language"] = getattr(g, "language", i18n.DEFAULT)
    response.vary.add("Accept-Language")
    return response


def init_app(app: Flask) -> None:
    """Registered first, so the body checks and every error handler already speak the caller's language."""
    app.before_request(choose)
    app.after_request(label)
    app.teardown_request(restore)
