"""The `model` object shared by the training and inference requests, and GET /v1/models."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from service.engine.models import ARCHITECTURES, FFN_TYPES, PRESETS

from .fields import Count

FORMS = ("preset", "hf_config", "architecture")


class ModelSpecSchema(ma.Schema):
    """One of: `{preset}`; `{architecture: transformer, layers, hidden_size, …}`; `{architecture, parameters}`;
    `{architecture: cnn|vit, parameters, flops_per_sample}`; `{hf_config: {…}}`."""

    class Meta:
        unknown = ma.RAISE

    preset = ma.fields.String(
        validate=validate.OneOf(sorted(PRESETS)),
        metadata={"description": "A built-in model (GET /v1/models lists them)", "example": "llama-2-7b"},
    )
    hf_config = ma.fields.Dict(
        metadata={"description": "A Hugging Face config.json pasted as an object (read offline)"}
    )
    architecture = ma.fields.String(
        validate=validate.OneOf(ARCHITECTURES), metadata={"example": "transformer"}
    )
    name = ma.fields.String(
        validate=validate.Length(max=200), metadata={"description": "Label for the model"}
    )
    parameters = Count(
        metadata={"description": "Total parameter count (number or '7B'/'350M'/'1.2T'); at most 1e14"}
    )
    flops_per_sample = Count(
        max_value=1e16,
        metadata={"description": "Forward FLOPs per sample (cnn/vit), e.g. 8.2e9 for ResNet-50 at 224²"},
    )
    layers = ma.fields.Integer(validate=validate.Range(1, 1000), metadata={"example": 32})
    hidden_size = ma.fields.Integer(validate=validate.Range(1, 1_000_000), metadata={"example": 4096})
    attention_heads = ma.fields.Integer(validate=validate.Range(1, 10_000), metadata={"example": 32})
    kv_heads = ma.fields.Integer(
        validate=validate.Range(1, 10_000),
        metadata={"description": "Key/value heads (GQA/MQA); default = attention_heads", "example": 8},
    )
    head_dim = ma.fields.Integer(
        validate=validate.Range(1, 10_000),
        metadata={"description": "Per-head width when not hidden_size / attention_heads"},
    )
    ffn_hidden_size = ma.fields.Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 11008})
    ffn_type = ma.fields.String(validate=validate.OneOf(FFN_TYPES), metadata={"example": "swiglu"})
    vocab_size = ma.fields.Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 32000})
    tied_embeddings = ma.fields.Boolean(metadata={"description": "LM head shares the embedding matrix"})
    experts = ma.fields.Integer(
        validate=validate.Range(1, 10_000), metadata={"description": "MoE routed experts"}
    )
    experts_per_token = ma.fields.Integer(
        validate=validate.Range(1, 10_000), metadata={"description": "MoE experts active per token"}
    )
    max_context_tokens = ma.fields.Integer(
        validate=validate.Range(1, 100_000_000),
        metadata={"description": "Longest context the model supports, tokens"},
    )

    @ma.validates_schema
    def _one_form(self, data, **kwargs):
        given = [f for f in FORMS if f in data]
        if len(given) != 1:
            raise ma.ValidationError(
                f"Give exactly one of {', '.join(FORMS)} (got {', '.join(given) or 'none'}).", "_schema"
            )


class PresetSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "llama-2-7b"})
    name = ma.fields.String(allow_none=True)
    architecture = ma.fields.String(metadata={"enum": list(ARCHITECTURES)})
    total_parameters = ma.fields.Float(
        metadata={"description": "All weights (all experts)", "example": 6.74e9}
    )
    active_parameters = ma.fields.Float(metadata={"description": "Weights a token touches (MoE: k experts)"})
    default_sequence_length = ma.fields.Integer(allow_none=True, metadata={"description": "tokens"})
    max_context_tokens = ma.fields.Integer(allow_none=True, metadata={"description": "tokens"})
    flops_per_sample = ma.fields.Float(allow_none=True, metadata={"description": "Forward FLOPs per sample"})
    shape = ma.fields.Dict(allow_none=True, metadata={"description": "The full transformer shape"})
    source = ma.fields.String(allow_none=True, metadata={"description": "Where the shape comes from"})
    notes = ma.fields.List(ma.fields.String())
