"""The web page at `/`: one HTML file, its CSS, JavaScript and language dictionaries, all in this package.

The page talks to the service only through the public HTTP API, by relative URLs (`v1/…`), so the files
could equally be served by a static host in front of the service: templates/index.html as `/`, static/ as
`/assets/` (the app's own `/static` route is Flask's). The HTML has no template syntax: it is sent as is. Registered on the Flask app directly (not through flask-smorest), so
the page is not part of the API contract (openapi.yaml).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, Response, request, send_from_directory

from ..api.extensions import compression

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
LANGUAGES = ("en", "es", "pt-BR", "fr")

# Only this host: scripts, styles and API calls from the service itself, nothing inline, no frames.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

COMPRESSIBLE_TYPES = ("text/html", "text/css", "text/javascript", "application/json", "image/svg+xml")

blp = Blueprint("web", __name__, static_folder="static", static_url_path="/assets")


@blp.get("/")
def index() -> Response:
    """The page (its language comes from ?lang=, read by the page's script)."""
    response = send_from_directory(TEMPLATES, "index.html", max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


# What every file needs; the policy and the framing rule are the document's (they govern what a page may load
# and who may frame it, and mean nothing on a script, style sheet or dictionary: ~260 bytes saved per file).
FILE_HEADERS = ("X-Content-Type-Options", "Referrer-Policy")


@blp.after_request
def _security_headers(response: Response) -> Response:
    document = response.mimetype == "text/html"
    for name, value in SECURITY_HEADERS.items():
        if document or name in FILE_HEADERS:
            response.headers.setdefault(name, value)
    return response


@blp.after_request
def _compress(response: Response) -> Response:
    """The page and its files gzipped for clients that accept it (api/extensions/compression.py). Browsers keep
    them and revalidate on each load (`Cache-Control: public, no-cache` + ETag → 304): the file names carry no
    version, and the ES modules must all be of one version, so a stale module is never used without asking."""
    if request.method != "GET" or response.status_code not in (200, 304):
        return response
    if response.mimetype not in COMPRESSIBLE_TYPES:
        return response
    response.cache_control.public = True
    response.cache_control.no_cache = True
    return compression.compress_file(response)


def init_app(app: Flask) -> None:
    app.register_blueprint(blp)
