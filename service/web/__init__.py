"""The web page at `/`: one HTML file, its CSS, JavaScript and language dictionaries, all in this package.

The page talks to the service only through the public HTTP API, by relative URLs (`v1/…`), so the files
could equally be served by a static host in front of the service: templates/index.html as `/`, static/ as
`/assets/` (the app's own `/static` route is Flask's). The HTML has no template syntax: it is sent as is. Registered on the Flask app directly (not through flask-smorest), so
the page is not part of the API contract (openapi.yaml).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, Response, send_from_directory

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

blp = Blueprint("web", __name__, static_folder="static", static_url_path="/assets")


@blp.get("/")
def index() -> Response:
    """The page (its language comes from ?lang=, read by the page's script)."""
    response = send_from_directory(TEMPLATES, "index.html", max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.after_request
def _security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def init_app(app: Flask) -> None:
    app.register_blueprint(blp)
