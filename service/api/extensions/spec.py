"""The contract's settings for flask-smorest: title, version, the description every client reads, and /docs."""

from __future__ import annotations

from typing import Any

from . import docs_assets


def spec_config(api_version: str) -> dict[str, Any]:
    """flask-smorest's app settings (OPENAPI_*, API_SPEC_OPTIONS)."""
    return dict(
        API_TITLE="scalecost",
        API_VERSION=api_version,
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL=docs_assets.assets_url(),  # pinned assets served by this app, no CDN
        OPENAPI_SWAGGER_UI_CONFIG=docs_assets.SWAGGER_UI_CONFIG,
        API_SPEC_OPTIONS={
            "info": {
                "description": (
                    "Estimates what training or serving an ML model will cost before you spend a dollar: "
                    "FLOPs, memory per accelerator, wall-clock time, accelerator-hours and USD. Base units "
                    "(bytes, seconds, FLOPs, USD) in every field, human strings beside them. Errors are "
                    "RFC 9457 application/problem+json. Human strings (durations, money, advice, notes, error "
                    "titles, details and field messages) come in the language Accept-Language asks for: en "
                    "(default), es, pt-BR or fr, with the locale's number format; Content-Language says which. "
                    "Field names, enum values and base-unit numbers never change with the language. "
                    "JSON bodies are I-JSON (RFC 7493): every number, "
                    "free-form values included, fits a 64-bit float (|x| < 1.8e308; no NaN or Infinity) "
                    "and every string is Unicode text (no lone surrogates); anything else is a 422 naming "
                    "the field."
                ),
                "license": {"name": "Apache-2.0"},
            },
            "servers": [{"url": "/", "description": "This server"}],
        },
        JSON_SORT_KEYS=False,
    )
