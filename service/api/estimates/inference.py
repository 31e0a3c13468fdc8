"""POST /v1/estimates/inference: request schema (every field with its unit and allowed values)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ...engine.i18n import N_
from ..extensions.fields import Float, Integer, String, fraction_range
from ..models.schemas import ModelSpecField
from .common import PRICE_OVERRIDES, CostSchema, OutputSchema

# one source for every enum: the engine's tuples
WEIGHT_PRECISIONS = list(engine.WEIGHT_PRECISIONS)
KV_PRECISIONS = list(engine.KV_PRECISIONS)
WEIGHT_FORMATS = list(engine.FORMATS)
ENGINES = list(engine.ENGINES)


class WeightsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    precision = String(validate=validate.OneOf(WEIGHT_PRECISIONS), metadata={"example": "fp16"})
    format = String(
        validate=validate.OneOf(WEIGHT_FORMATS),
        metadata={"description": "Quantisation format, with its real bytes per weight", "example": "awq"},
    )


class DeviceCount(ma.fields.Field):
    """A tensor-parallel degree, or "auto" for the fewest devices that fit."""

    default_error_messages = {"invalid": N_('Give an integer from 1 to 1024, or "auto".')}

    def __init__(self, **kwargs):
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault(
            "oneOf",
            [{"type": "integer", "minimum": 1, "maximum": 1024}, {"type": "string", "enum": ["auto"]}],
        )
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if value == "auto":
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
            raise self.make_error("invalid")
        return value


class InferenceHardwareSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerator = String(
        required=True,
        validate=validate.Length(1, 64),
        metadata={"description": "Catalog id (GET /v1/accelerators)", "example": "nvidia-rtx-4090"},
    )
    count = DeviceCount(metadata={"description": 'Tensor-parallel degree, or "auto" (default 1)'})
    apple_metal_memory_fraction = Float(
        validate=fraction_range(0.1, 1),
        metadata={"description": "Share of Apple unified memory Metal may use (default 0.75)"},
    )


class TargetsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    output_tokens_per_second = Float(
        validate=validate.Range(min=0.001, max=1e9),
        metadata={"description": "Aggregate tokens/s (0.001 to 1e9)"},
    )
    time_to_first_token_s = Float(
        validate=validate.Range(min=1e-6, max=86400), metadata={"description": "seconds (1e-6 to 86,400)"}
    )
    time_per_output_token_s = Float(
        validate=validate.Range(min=1e-6, max=3600), metadata={"description": "seconds (1e-6 to 3,600)"}
    )


class InferenceRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    model = ModelSpecField(required=True)
    weights = ma.fields.Nested(WeightsSchema)
    kv_cache_precision = String(
        validate=validate.OneOf(KV_PRECISIONS), metadata={"description": "Default: the activation precision"}
    )
    batch_size = Integer(
        validate=validate.Range(1, 100_000), metadata={"description": "Concurrent sequences", "example": 1}
    )
    prompt_tokens = Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 512})
    output_tokens = Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 256})
    engine = String(validate=validate.OneOf(ENGINES), metadata={"example": "vllm"})
    hardware = ma.fields.Nested(InferenceHardwareSchema, required=True)
    targets = ma.fields.Nested(TargetsSchema)
    cost = ma.fields.Nested(CostSchema)
    output = ma.fields.Nested(OutputSchema)
    prices = PRICE_OVERRIDES
