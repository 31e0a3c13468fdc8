"""The `model` object shared by the training and inference requests, and GET /v1/models."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ...engine import ARCHITECTURES, FFN_TYPES, PRESETS
from ...engine.i18n import N_
from ..extensions.fields import Boolean, Count, Float, Integer, String


def _int(low: int, high: int, description: str, required: bool = False, **extra) -> ma.fields.Integer:
    return Integer(
        required=required, validate=validate.Range(low, high), metadata={"description": description, **extra}
    )


NAME = String(validate=validate.Length(max=200), metadata={"description": "Label for the model"})


class PresetModelSchema(ma.Schema):
    """A built-in model: `{"preset": "llama-2-70b"}` (GET /v1/models lists them)."""

    class Meta:
        unknown = ma.RAISE

    preset = String(
        required=True,
        validate=validate.OneOf(sorted(PRESETS)),
        metadata={"description": "Preset id", "example": "llama-2-7b"},
    )
    name = NAME


def _hf_int(low: int, high: int, description: str) -> ma.fields.Integer:
    """A config.json key the estimate reads: null (as real configs write it) or an integer in range."""
    return Integer(allow_none=True, validate=validate.Range(low, high), metadata={"description": description})


def _hf_text(description: str) -> ma.fields.String:
    return String(allow_none=True, validate=validate.Length(max=200), metadata={"description": description})


def _hf_flag(description: str) -> ma.fields.Boolean:
    return Boolean(allow_none=True, metadata={"description": description})


# The keys of a config.json that the estimate reads, typed and bounded like the explicit shape (a string
# `intermediate_size` or a 10^29-wide model was a 500 or a meaningless figure); every other key is kept and
# ignored.
_HfConfigBase = ma.Schema.from_dict(
    {
        "model_type": _hf_text("llama, mistral, mixtral, qwen2, gpt2, gpt_neox, bert, deepseek_v2…"),
        "_name_or_path": _hf_text("Model name"),
        "name": _hf_text("Model name"),
        "num_hidden_layers": _hf_int(1, 1000, "Transformer blocks (aliases n_layer, num_layers)"),
        "n_layer": _hf_int(1, 1000, "GPT-2: transformer blocks"),
        "num_layers": _hf_int(1, 1000, "Transformer blocks"),
        "hidden_size": _hf_int(1, 1_000_000, "Model width (aliases n_embd, d_model)"),
        "n_embd": _hf_int(1, 1_000_000, "GPT-2: model width"),
        "d_model": _hf_int(1, 1_000_000, "Model width"),
        "num_attention_heads": _hf_int(1, 10_000, "Query heads (alias n_head)"),
        "n_head": _hf_int(1, 10_000, "GPT-2: query heads"),
        "vocab_size": _hf_int(1, 10_000_000, "Vocabulary size"),
        "hidden_act": _hf_text("Activation (silu/swish make a gated FFN)"),
        "activation_function": _hf_text("GPT-2: activation"),
        "hidden_activation": _hf_text("Gemma: activation"),
        "intermediate_size": _hf_int(1, 10_000_000, "FFN inner width (aliases n_inner, ffn_dim)"),
        "n_inner": _hf_int(1, 10_000_000, "GPT-2: FFN inner width (null: 4·n_embd)"),
        "ffn_dim": _hf_int(1, 10_000_000, "FFN inner width"),
        "num_key_value_heads": _hf_int(1, 10_000, "Key/value heads (alias num_kv_heads)"),
        "num_kv_heads": _hf_int(1, 10_000, "Key/value heads"),
        "multi_query": _hf_flag("One key/value head"),
        "num_local_experts": _hf_int(1, 10_000, "MoE routed experts (aliases n_routed_experts, num_experts)"),
        "n_routed_experts": _hf_int(1, 10_000, "DeepSeek: routed experts"),
        "num_experts": _hf_int(1, 10_000, "Qwen-MoE: routed experts"),
        "num_experts_per_tok": _hf_int(1, 10_000, "Experts active per token"),
        "moe_intermediate_size": _hf_int(1, 10_000_000, "Routed expert FFN width"),
        "n_shared_experts": _hf_int(0, 10_000, "DeepSeek: shared experts"),
        "shared_expert_intermediate_size": _hf_int(1, 10_000_000, "Qwen2-MoE: shared expert FFN width"),
        "first_k_dense_replace": _hf_int(0, 1000, "DeepSeek: leading dense layers"),
        "max_position_embeddings": _hf_int(1, 100_000_000, "Longest context, tokens"),
        "n_positions": _hf_int(1, 100_000_000, "GPT-2: longest context, tokens"),
        "n_ctx": _hf_int(1, 100_000_000, "GPT-2: longest context, tokens"),
        "type_vocab_size": _hf_int(0, 1_000_000, "BERT: token type embeddings"),
        "head_dim": _hf_int(1, 10_000, "Per-head width"),
        "tie_word_embeddings": _hf_flag("LM head shares the embedding matrix"),
        "attention_bias": _hf_flag("Biases in the attention projections"),
        "kv_lora_rank": _hf_int(1, 1_000_000, "DeepSeek MLA: compressed KV rank"),
        "q_lora_rank": _hf_int(1, 1_000_000, "DeepSeek MLA: compressed query rank"),
        "qk_rope_head_dim": _hf_int(1, 10_000, "DeepSeek MLA: rotary head width"),
        "qk_nope_head_dim": _hf_int(1, 10_000, "DeepSeek MLA: non-rotary head width"),
        "v_head_dim": _hf_int(1, 10_000, "DeepSeek MLA: value head width"),
    },
    name="HfConfigBase",
)


class HfConfigSchema(_HfConfigBase):  # type: ignore[valid-type,misc]  # a class made at run time
    """A Hugging Face config.json. The keys listed are the ones the estimate reads; any other key is
    accepted and ignored."""

    class Meta:
        unknown = ma.INCLUDE


class HfConfigModelSchema(ma.Schema):
    """A Hugging Face config.json pasted as an object, read offline (Llama, Mistral, Mixtral, Qwen, GPT-2, NeoX)."""

    class Meta:
        unknown = ma.RAISE

    hf_config = ma.fields.Nested(
        HfConfigSchema, required=True, metadata={"description": "The config.json object"}
    )
    name = NAME


class TransformerShapeModelSchema(ma.Schema):
    """An explicit transformer shape; total and active parameter counts are derived exactly from it."""

    class Meta:
        unknown = ma.RAISE

    architecture = String(required=True, validate=validate.OneOf(["transformer"]))
    name = NAME
    layers = _int(1, 1000, "Transformer blocks", required=True, example=32)
    hidden_size = _int(1, 1_000_000, "Model width d_model", required=True, example=4096)
    attention_heads = _int(1, 10_000, "Query heads", required=True, example=32)
    kv_heads = _int(1, 10_000, "Key/value heads (GQA/MQA); default = attention_heads", example=8)
    head_dim = _int(1, 10_000, "Per-head width when not hidden_size / attention_heads")
    ffn_hidden_size = _int(
        1, 10_000_000, "FFN inner width (default 4·h for gelu, Llama rule for swiglu)", example=11008
    )
    ffn_type = String(validate=validate.OneOf(FFN_TYPES), metadata={"example": "swiglu"})
    vocab_size = _int(1, 10_000_000, "Vocabulary size", required=True, example=32000)
    tied_embeddings = Boolean(metadata={"description": "LM head shares the embedding matrix"})
    experts = _int(1, 10_000, "MoE routed experts (1 = dense)")
    experts_per_token = _int(1, 10_000, "MoE experts active per token")
    max_context_tokens = _int(1, 100_000_000, "Longest context the model supports, tokens")


class ParameterCountModelSchema(ma.Schema):
    """A bare parameter count; for transformers a plausible shape is inferred (said so in the answer)."""

    class Meta:
        unknown = ma.RAISE

    architecture = String(required=True, validate=validate.OneOf(["transformer", "lstm", "mlp"]))
    name = NAME
    parameters = Count(
        required=True, metadata={"description": "Parameter count (number or '7B'/'350M'/'1.2T'), ≤ 1e14"}
    )
    max_context_tokens = _int(1, 100_000_000, "Longest context the model supports, tokens")


class VisionModelSchema(ma.Schema):
    """A CNN or vision transformer: not 6·N per token, so forward FLOPs per sample are required."""

    class Meta:
        unknown = ma.RAISE

    architecture = String(required=True, validate=validate.OneOf(["cnn", "vit"]))
    name = NAME
    parameters = Count(required=True, metadata={"description": "Parameter count, ≤ 1e14", "example": 25.6e6})
    flops_per_sample = Count(
        required=True,
        max_value=1e16,
        metadata={
            "description": "Forward FLOPs per sample, e.g. 8.2e9 for ResNet-50 at 224²",
            "example": 8.2e9,
        },
    )


MODEL_FORMS = {
    "PresetModel": PresetModelSchema,
    "HfConfigModel": HfConfigModelSchema,
    "TransformerShapeModel": TransformerShapeModelSchema,
    "ParameterCountModel": ParameterCountModelSchema,
    "VisionModel": VisionModelSchema,
}


def _form_of(data: dict) -> type[ma.Schema]:
    """The one form the keys point at (the forms are told apart by their required keys)."""
    if "preset" in data:
        return PresetModelSchema
    if "hf_config" in data:
        return HfConfigModelSchema
    if data.get("architecture") in ("cnn", "vit"):
        return VisionModelSchema
    if "layers" in data or ("architecture" in data and "parameters" not in data):
        return TransformerShapeModelSchema
    return ParameterCountModelSchema


_LOADERS: dict[type[ma.Schema], ma.Schema] = {}


class ModelSpecField(ma.fields.Field):
    """The `model` object: exactly one of the documented forms (oneOf in the contract)."""

    default_error_messages = {
        "type": N_("Must be an object: a preset, a shape, a parameter count or an hf_config.")
    }

    def __init__(self, **kwargs):
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault("oneOf", [{"$ref": f"#/components/schemas/{name}"} for name in MODEL_FORMS])
        metadata.setdefault(
            "description",
            "One of: preset, explicit transformer shape, parameter count, "
            "vision model (cnn/vit with FLOPs per sample), or a Hugging Face config.json.",
        )
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, dict):
            raise self.make_error("type")
        form = _form_of(value)
        schema = _LOADERS.get(form)
        if schema is None:
            schema = _LOADERS[form] = form()  # schemas are stateless once built; building one is costly
        return schema.load(value)

    def _serialize(self, value, attr, obj, **kwargs):
        return value


class PresetShapeSchema(ma.Schema):
    """A preset's full shape (engine/architecture.py TransformerShape, head_dim resolved): every property is
    always there, null where it does not apply. Widths and counts are plain numbers (no unit: dimensions)."""

    def on_bind_field(self, field_name: str, field_obj: ma.fields.Field) -> None:
        field_obj.required = True  # documentation only: the route builds the dict (dataclasses.asdict)

    layers = Integer(metadata={"description": "Transformer blocks"})
    hidden_size = Integer(metadata={"description": "Model width d_model"})
    attention_heads = Integer(metadata={"description": "Query heads"})
    kv_heads = Integer(metadata={"description": "Key/value heads (GQA/MQA)"})
    ffn_hidden_size = Integer(metadata={"description": "FFN inner width (dense layers)"})
    ffn_type = String(metadata={"enum": list(FFN_TYPES)})
    vocab_size = Integer(metadata={"description": "Vocabulary size, tokens"})
    tied_embeddings = Boolean(metadata={"description": "LM head shares the embedding matrix"})
    experts = Integer(metadata={"description": "MoE routed experts (1 = dense)"})
    experts_per_token = Integer(metadata={"description": "MoE routed experts active per token"})
    shared_experts = Integer(metadata={"description": "MoE shared experts every token uses"})
    moe_ffn_hidden_size = Integer(
        allow_none=True, metadata={"description": "Per-expert FFN width; null = ffn_hidden_size"}
    )
    dense_layers = Integer(metadata={"description": "Leading dense layers of an MoE model"})
    max_context_tokens = Integer(allow_none=True, metadata={"description": "Longest context, tokens"})
    kv_lora_rank = Integer(allow_none=True, metadata={"description": "MLA latent width; null = MHA/GQA"})
    qk_rope_head_dim = Integer(allow_none=True, metadata={"description": "MLA decoupled RoPE key width"})
    q_lora_rank = Integer(allow_none=True, metadata={"description": "MLA query low-rank width"})
    qk_nope_head_dim = Integer(allow_none=True, metadata={"description": "MLA query/key width without RoPE"})
    v_head_dim = Integer(allow_none=True, metadata={"description": "MLA per-head value width"})
    biases = Boolean(metadata={"description": "Linear and LayerNorm biases (GPT-2/3, BERT)"})
    encoder_only = Boolean(metadata={"description": "Bidirectional attention (BERT); decoders are causal"})
    qkv_bias = Boolean(metadata={"description": "Bias on Q/K/V only (Qwen2)"})
    learned_position_embeddings = Integer(
        metadata={"description": "Rows of learned position (+ token-type) embeddings"}
    )
    explicit_head_dim = Integer(
        allow_none=True, metadata={"description": "Head width when not hidden_size / attention_heads"}
    )
    head_dim = Integer(metadata={"description": "Per-head width of Q/K/V used (value width for MLA)"})


class PresetSchema(ma.Schema):
    id = String(metadata={"example": "llama-2-7b"})
    name = String(allow_none=True)
    architecture = String(metadata={"enum": list(ARCHITECTURES)})
    total_parameters = Float(metadata={"description": "All weights (all experts)", "example": 6.74e9})
    active_parameters = Float(metadata={"description": "Weights a token touches (MoE: k experts)"})
    default_sequence_length = Integer(allow_none=True, metadata={"description": "tokens"})
    max_context_tokens = Integer(allow_none=True, metadata={"description": "tokens"})
    flops_per_sample = Float(allow_none=True, metadata={"description": "Forward FLOPs per sample"})
    shape = ma.fields.Nested(
        PresetShapeSchema,
        allow_none=True,
        metadata={"description": "The full transformer shape; null for vision models"},
    )
    source = String(allow_none=True, metadata={"description": "Where the shape comes from"})
    notes = ma.fields.List(String())
