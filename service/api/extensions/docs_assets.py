"""Swagger UI's assets served by the app itself, so /docs works on a network without internet.

The files are swagger-ui-dist as shipped inside the flask-swagger-ui package (Apache-2.0; its LICENSE lies
beside them in the installed package): the installed version pins them, and its number is part of their
URL, so a browser never mixes the files of two versions. Only the files are used, not that package's
blueprint: flask-smorest still renders /docs (OPENAPI_SWAGGER_UI_URL points here).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
from importlib.metadata import version
from pathlib import Path

from flask import Flask, Response, request, send_from_directory

PACKAGE = "flask-swagger-ui"
CACHE_MAX_AGE_S = 365 * 24 * 3600  # the URL changes with the version

# flask-smorest's OPENAPI_SWAGGER_UI_CONFIG. Swagger UI's default validatorUrl loads a badge from
# validator.swagger.io for every non-local spec URL: an external host, told where the spec lives.
SWAGGER_UI_CONFIG = {"validatorUrl": None}


def assets_dir() -> Path:
    spec = importlib.util.find_spec("flask_swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{PACKAGE} is not installed: pip install {PACKAGE}")
    return Path(next(iter(spec.submodule_search_locations))) / "dist"


def assets_url() -> str:
    """Where /docs loads swagger-ui.css and the bundles from (same host, versioned path)."""
    return f"/docs/swagger-ui-{version(PACKAGE)}/"


INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def content_security_policy(page: bytes) -> str:
    """/docs's policy: this host only, no frames; flask-smorest's page starts Swagger UI from one inline script,
    allowed by its hash (CSP3 'sha256-…'), and Swagger UI sets style attributes ('unsafe-inline' for styles)."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'"
        for body in INLINE_SCRIPT.findall(page)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )


def _security_headers(app: Flask, response: Response) -> Response:
    """The page /docs and its assets get the web page's headers: a strict CSP, no framing, no sniffing."""
    docs = app.config.get("OPENAPI_SWAGGER_UI_PATH") or "/docs"
    if request.path != docs and not request.path.startswith(docs.rstrip("/") + "/"):
        return response
    if response.mimetype == "text/html" and not response.direct_passthrough:
        response.headers["Content-Security-Policy"] = content_security_policy(response.get_data())
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def init_app(app: Flask) -> None:
    """Serve the assets at OPENAPI_SWAGGER_UI_URL when it is a path on this host (the default); /docs and its
    assets get a strict Content-Security-Policy and no-framing headers."""
    app.after_request(lambda response: _security_headers(app, response))
    url = app.config.get("OPENAPI_SWAGGER_UI_URL") or ""
    if not url.startswith("/"):
        return  # an operator pointed /docs at assets hosted elsewhere
    directory = assets_dir()

    def swagger_ui_asset(filename: str):
        return send_from_directory(directory, filename, max_age=CACHE_MAX_AGE_S)

    app.add_url_rule(
        f"{url.rstrip('/')}/<path:filename>", endpoint="swagger_ui_asset", view_func=swagger_ui_asset
    )
