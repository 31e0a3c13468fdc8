"""/docs works without internet: Swagger UI's assets are pinned and served by the app itself (issue 9, item 8)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib.metadata import version
from urllib.parse import urlsplit

from scalecost.api.extensions import docs_assets

EXTERNAL = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+")


class _References(HTMLParser):
    """Every URL the page makes the browser load: scripts, stylesheets, images, frames."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in {"src", "href"} and value:
                self.urls.append(value)


def _page(offline_app) -> tuple[str, list[str]]:
    response = offline_app.test_client().get("/docs")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    parser = _References()
    parser.feed(html)
    return html, parser.urls


def test_docs_page_names_no_external_host(offline_app):
    html, urls = _page(offline_app)
    assert urls, "the page loads Swagger UI's script and stylesheet"
    assert not EXTERNAL.search(html), EXTERNAL.findall(html)
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, url
    # Swagger UI's default validatorUrl would fetch a badge from validator.swagger.io
    assert '"validatorUrl": null' in html


def test_every_asset_the_page_loads_is_served_by_the_app(offline_app):
    _html, urls = _page(offline_app)
    client = offline_app.test_client()
    kinds = set()
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert len(response.data) > 1000, url
        kinds.add(response.mimetype)
        if url.endswith(".css"):
            css = response.get_data(as_text=True)
            assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", css), "the stylesheet loads nothing remote"
    assert {"text/css", "text/javascript"} <= kinds


def test_assets_are_pinned_to_the_installed_package_and_ship_their_licence():
    installed = version(docs_assets.PACKAGE)
    assert docs_assets.assets_url() == f"/docs/swagger-ui-{installed}/"
    directory = docs_assets.assets_dir()
    assert (directory / "VERSION").read_text().strip() == f"v{installed}"
    assert "Apache License" in (directory / "LICENSE").read_text()


def test_unknown_or_escaping_asset_paths_are_404(offline_app):
    client = offline_app.test_client()
    base = docs_assets.assets_url()
    assert client.get(base + "missing.js").status_code == 404
    assert client.get(base + "../../service/config.py").status_code == 404
    assert client.get(base + "%2e%2e/%2e%2e/pyproject.toml").status_code == 404


def test_docs_has_a_strict_policy_that_allows_its_own_inline_script(offline_app):
    """/docs had no CSP or frame headers; its one inline script (flask-smorest's Swagger UI start-up) is allowed
    by its hash and nothing else inline runs."""
    import base64
    import hashlib

    response = offline_app.test_client().get("/docs")
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert response.headers["X-Frame-Options"] == "DENY"
    scripts = re.findall(rb"<script>(.*?)</script>", response.data, re.DOTALL)
    assert scripts, "the page starts Swagger UI from an inline script"
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    allowed = set(directives["script-src"].split())
    for body in scripts:
        digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
        assert f"'sha256-{digest}'" in allowed
    assert "'unsafe-inline'" not in allowed and "'unsafe-eval'" not in allowed
    asset = offline_app.test_client().get(docs_assets.assets_url() + "swagger-ui.css")
    assert asset.headers["X-Content-Type-Options"] == "nosniff"
