"""HTTP layer: one folder per resource (routes and schemas), the general machinery in `extensions/`.

`register(app)` is the whole api as the app factory sees it: the extensions first (JSON, converters, database,
logging, errors, languages), then the resources' blueprints and the components the contract names, then the
limits and query checks that wrap the registered views.
"""

from __future__ import annotations

from flask import Flask

from .. import API_VERSION
from . import audit, health, keys, saved_answers
from .accelerators import admin as catalog_admin
from .accelerators import routes as accelerators
from .calibrations import routes as calibrations
from .estimates import batches as estimate_batches
from .estimates import routes as estimates
from .estimates.training import ParallelismSchema
from .extensions import (
    compression,
    db,
    docs_assets,
    errors,
    http,
    json_body,
    languages,
    limits,
    metrics,
    observability,
    query_args,
)
from .extensions.smorest import Api
from .extensions.spec import spec_config
from .models import routes as models
from .models.schemas import MODEL_FORMS
from .options import routes as options
from .plans import inference_routes as plans_inference
from .plans import routes as plans_training
from .price_imports import routes as price_imports
from .scenarios import routes as scenarios
from .scenarios.schemas import SCENARIO_BODY_DOC, InferenceScenarioWriteSchema, TrainingScenarioWriteSchema

BLUEPRINTS = (
    *(health, accelerators, catalog_admin, keys, audit, models, estimates, estimate_batches),
    *(plans_training, plans_inference, scenarios, calibrations, price_imports, options),
)


def configure(app: Flask) -> None:
    """The contract's settings (title, version, description, /docs), below any the caller already set."""
    for key, value in spec_config(API_VERSION).items():
        app.config.setdefault(key, value)


def register(app: Flask) -> Api:
    """Install the extensions and every resource on `app`; returns the flask-smorest Api (also in app.extensions)."""
    configure(app)
    http.init_app(app)
    compression.init_app(app)  # first registered, so the last to see each answer
    observability.configure_logging(app.config["LOG_LEVEL"])
    db.init_app(app)
    observability.init_app(app)
    metrics.init_app(app)  # GET /metrics, outside the contract
    errors.register(app)
    languages.init_app(app)
    json_body.init_app(
        app,
        batch_endpoints=estimate_batches.BATCH_ENDPOINTS | calibrations.LARGE_BODY_ENDPOINTS,
        raw_body_endpoints=price_imports.RAW_BODY_ENDPOINTS,
    )
    api = Api(app)
    for resource in BLUEPRINTS:
        api.register_blueprint(resource.blp)
    _components(api)
    app.extensions["scalecost.limiter"] = limits.init_app(
        app,
        write_blueprints=[catalog_admin.blp, scenarios.blp, calibrations.blp, price_imports.blp],
        all_method_blueprints=[keys.blp],
        estimate_blueprints=[estimates.blp],
        batch_blueprints=[estimate_batches.blp],
        plan_blueprints=[plans_training.blp, plans_inference.blp],
    )
    app.extensions["scalecost.api"] = api
    query_args.init_app(app)
    docs_assets.init_app(app)
    return api


def _components(api: Api) -> None:
    """Schemas the contract names but no view declares: the `model` oneOf branches, the scenario bodies."""
    for name, schema in MODEL_FORMS.items():  # the oneOf branches of every request's `model`
        api.spec.components.schema(name, schema=schema)
    api.spec.components.schema("TrainingScenarioWrite", schema=TrainingScenarioWriteSchema)
    api.spec.components.schema("InferenceScenarioWrite", schema=InferenceScenarioWriteSchema)
    if "Parallelism" not in api.spec.components.schemas:  # referenced from hardware.parallelism's oneOf
        api.spec.components.schema("Parallelism", schema=ParallelismSchema)
    saved_answers.register(api.spec)  # GET /v1/scenarios/{id} `estimate`: the answer of its day
    api.document_request_body("/v1/scenarios", "post", SCENARIO_BODY_DOC)
    api.document_request_body("/v1/scenarios/{scenario_id}", "put", SCENARIO_BODY_DOC)
