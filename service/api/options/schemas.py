"""GET /v1/options: the values each enumerated field of a request accepts, by request and field path.

One source: the engine's tuples (the same ones the request schemas validate with), so a value the engine adds
reaches every client that builds its choices from here, the page first among them."""

from __future__ import annotations

import marshmallow as ma

from ... import engine
from ..extensions.fields import String

# request → field path in its body → the accepted values, in the engine's order
MODEL = {"model.architecture": engine.ARCHITECTURES, "model.ffn_type": engine.FFN_TYPES}
OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "training": {
        **MODEL,
        "training.precision": engine.TRAINING_PRECISIONS,
        "training.optimizer": engine.OPTIMIZERS,
        "training.activation_recomputation": engine.RECOMPUTATION,
        "training.framework": engine.FRAMEWORKS,
        "hardware.parallelism.pipeline_schedule": engine.PIPELINE_SCHEDULES,
    },
    "inference": {
        **MODEL,
        "weights.precision": engine.WEIGHT_PRECISIONS,
        "weights.format": engine.FORMATS,
        "kv_cache_precision": engine.KV_PRECISIONS,
        "engine": engine.ENGINES,
        "serving.scheduler": engine.SCHEDULERS,
        "serving.speculative.method": engine.SPECULATIVE_METHODS,
        "slo.percentile": engine.PERCENTILES,
    },
    "training_plan": {
        "objective": engine.PLAN_OBJECTIVES,
        "search.pricing_models": engine.PRICING_MODELS,
    },
    "price": {"pricing_model": engine.PRICING_MODELS},
}

REQUESTS = {
    "training": (
        "TrainingOptions",
        "POST /v1/estimates/training (a training plan's `model` and `training` take the same)",
    ),
    "inference": ("InferenceOptions", "POST /v1/estimates/inference"),
    "training_plan": ("TrainingPlanOptions", "POST /v1/plans/training"),
    "price": ("PriceOptions", "PUT /v1/accelerators/{accelerator_id}/prices/{provider}"),
}


def options() -> dict[str, dict[str, list[str]]]:
    """The body of GET /v1/options."""
    return {
        request: {path: list(values) for path, values in fields.items()}
        for request, fields in OPTIONS.items()
    }


class _ByPath(ma.Schema):
    """Fields named by a dotted path, read from the dict's key of that name (not as nested attributes)."""

    def get_attribute(self, obj, attr, default):
        return obj.get(attr, default)


def _request_schema(request: str) -> type[ma.Schema]:
    name, where = REQUESTS[request]
    fields: dict[str, ma.fields.Field] = {
        path: ma.fields.List(
            String(metadata={"enum": list(values)}),
            required=True,
            metadata={"description": f"`{path}` in the body of {where}"},
        )
        for path, values in OPTIONS[request].items()
    }
    return _ByPath.from_dict(fields, name=name)


class OptionsSchema(ma.Schema):
    training = ma.fields.Nested(_request_schema("training"), required=True)
    inference = ma.fields.Nested(_request_schema("inference"), required=True)
    training_plan = ma.fields.Nested(_request_schema("training_plan"), required=True)
    price = ma.fields.Nested(_request_schema("price"), required=True)
