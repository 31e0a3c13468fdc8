"""scalecost: estimate what training or serving an ML model will cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import config as config_module

if TYPE_CHECKING:  # the engine imports this package: keep Flask out of its import graph
    from flask import Flask

API_VERSION = "0.1.0"


# Longest string path segment the routes take unless a rule says more (`<string(maxlength=128):name>`):
# accelerator ids and providers are 64-character columns, and PostgreSQL refuses a longer value on write.
PATH_SEGMENT_MAX = 64


def _converters():
    from werkzeug.routing import IntegerConverter, UnicodeConverter

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
    from flask.json.provider import DefaultJSONProvider

    from .api import json_body

    class StrictJSONProvider(DefaultJSONProvider):
        """Answers are strict JSON: a NaN or infinity is an error (a 500 we notice), never `NaN` on the wire.
        Bodies read through Flask are I-JSON (service.api.json_body)."""

        def dumps(self, obj: Any, **kwargs: Any) -> str:
            kwargs.setdefault("allow_nan", False)
            return super().dumps(obj, **kwargs)

        def loads(self, s: str | bytes, **kwargs: Any) -> Any:
            return json_body.loads(s, **kwargs)

    return StrictJSONProvider


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the WSGI app. Needs no database connection (the spec can be generated offline)."""
    from flask import Flask, request

    NoNulStringConverter, AsciiIntegerConverter = _converters()
    from werkzeug.exceptions import UnsupportedMediaType

    from .api import errors, json_body, limits, observability, strict_query
    from .api.deps import DB_KEY, close_session
    from .api.smorest import Api
    from .store.session import Database

    app = Flask(__name__)
    app.json = _json_provider()(app)
    app.url_map.converters["string"] = NoNulStringConverter  # ids with NUL can match nothing: 404
    app.url_map.converters["int"] = AsciiIntegerConverter  # /v1/scenarios/١٢ is no id: 404
    app.config.update(config_module.from_env())
    from .api import docs_assets

    app.config.update(
        API_TITLE="scalecost",
        API_VERSION=API_VERSION,
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
    if config:
        app.config.update(config)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # DefaultJSONProvider has it
    if app.config.get("TRUSTED_PROXIES"):  # client address and scheme from the proxy's X-Forwarded-* headers
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = int(app.config["TRUSTED_PROXIES"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]

    observability.configure_logging(app.config["LOG_LEVEL"])
    app.extensions[DB_KEY] = Database(
        app.config["DATABASE_URL"],
        pool_size=app.config["DB_POOL_SIZE"],
        statement_timeout_ms=app.config["DB_STATEMENT_TIMEOUT_MS"],
    )
    app.teardown_appcontext(close_session)
    observability.init_app(app)
    errors.register(app)

    from .api import languages
    from .api.estimate_batches import BATCH_ENDPOINTS
    from .api.price_imports import RAW_BODY_ENDPOINTS

    languages.init_app(app)

    @app.before_request
    def _require_json_bodies():
        if request.endpoint in BATCH_ENDPOINTS:  # up to 1,000 estimate bodies
            request.max_content_length = app.config["BATCH_MAX_BYTES"]
        if request.endpoint in RAW_BODY_ENDPOINTS:  # a price list, JSON or CSV: the view checks and reads it
            request.max_content_length = app.config["PRICE_IMPORT_MAX_BYTES"]
            return
        if request.method in {"POST", "PUT", "PATCH"} and (request.content_length or request.data):
            if not request.is_json:
                raise UnsupportedMediaType()
            refused = json_body.check(request.get_data(cache=True))
            if refused:  # a 5,000-digit integer, 1e999, NaN, a lone surrogate: 422 naming the field
                errors.abort_invalid_fields(refused)

    api = Api(app)
    from .api import (
        accelerators,
        audit,
        catalog_admin,
        estimate_batches,
        estimates,
        health,
        keys,
        models_api,
        plans_inference,
        plans_training,
        price_imports,
        scenarios,
    )

    api.register_blueprint(health.blp)
    api.register_blueprint(accelerators.blp)
    api.register_blueprint(catalog_admin.blp)
    api.register_blueprint(keys.blp)
    api.register_blueprint(audit.blp)
    api.register_blueprint(models_api.blp)
    api.register_blueprint(estimates.blp)
    api.register_blueprint(estimate_batches.blp)
    api.register_blueprint(plans_training.blp)
    api.register_blueprint(plans_inference.blp)
    api.register_blueprint(scenarios.blp)
    api.register_blueprint(price_imports.blp)
    from .api.scenario_schemas import SCENARIO_BODY_DOC
    from .api.training_schemas import ParallelismSchema

    if "Parallelism" not in api.spec.components.schemas:  # referenced from hardware.parallelism's oneOf
        api.spec.components.schema("Parallelism", schema=ParallelismSchema)

    api.document_request_body("/v1/scenarios", "post", SCENARIO_BODY_DOC)
    api.document_request_body("/v1/scenarios/{scenario_id}", "put", SCENARIO_BODY_DOC)
    limits.init_app(
        app,
        write_blueprints=[catalog_admin.blp, scenarios.blp, price_imports.blp],
        all_method_blueprints=[keys.blp],
        estimate_blueprints=[estimates.blp, plans_training.blp, plans_inference.blp],
        batch_blueprints=[estimate_batches.blp],
    )
    app.extensions["scalecost.api"] = api
    strict_query.init_app(app)
    docs_assets.init_app(app)
    from . import web  # the page at `/`, outside the API contract

    web.init_app(app)
    return app
