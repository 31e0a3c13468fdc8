"""The app's HTTP plumbing: path converters, strict JSON answers, and the trusted proxy's headers."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider
from werkzeug.routing import IntegerConverter, UnicodeConverter

from . import json_body

# Longest string path segment the routes take unless a rule says more (`<string(maxlength=128):name>`):
# accelerator ids and providers are 64-character columns, and PostgreSQL refuses a longer value on write.
PATH_SEGMENT_MAX = 64


def _converters():
    class NoNulStringConverter(UnicodeConverter):
        """The default `string` path converter, minus NUL (PostgreSQL text cannot hold it), at most
        PATH_SEGMENT_MAX characters unless the rule says otherwise; the contract states the bound."""

        def __init__(self, map, minlength=1, maxlength=PATH_SEGMENT_MAX, length=None):  # noqa: A002
            super().__init__(map, minlength, maxlength, length)
            self.regex = self.regex.replace("[^/]", "[^/\\x00]")

    class AsciiIntegerConverter(IntegerConverter):
        """werkzeug's `int` matches any Unicode digit (`\\d`) and int() reads them: /v1/scenarios/١٢ was
        scenario 12. Only ASCII digits name an id."""

        regex = r"[0-9]+"

    return NoNulStringConverter, AsciiIntegerConverter


def _json_provider():
    class StrictJSONProvider(DefaultJSONProvider):
        """Answers are strict JSON: a NaN or infinity is an error (a 500 we notice), never `NaN` on the wire.
        Bodies read through Flask are I-JSON (api/extensions/json_body.py)."""

        def dumps(self, obj: Any, **kwargs: Any) -> str:
            kwargs.setdefault("allow_nan", False)
            return super().dumps(obj, **kwargs)

        def loads(self, s: str | bytes, **kwargs: Any) -> Any:
            return json_body.loads(s, **kwargs)

    return StrictJSONProvider


def init_app(app: Flask) -> None:
    """Strict JSON, the two path converters, and X-Forwarded-* from TRUSTED_PROXIES hops (if any)."""
    no_nul_string, ascii_integer = _converters()
    app.json = _json_provider()(app)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # DefaultJSONProvider has it
    app.url_map.converters["string"] = no_nul_string  # ids with NUL can match nothing: 404
    app.url_map.converters["int"] = ascii_integer  # /v1/scenarios/١٢ is no id: 404
    if app.config.get("TRUSTED_PROXIES"):  # client address and scheme from the proxy's X-Forwarded-* headers
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = int(app.config["TRUSTED_PROXIES"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
