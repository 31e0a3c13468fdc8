"""Model resolution: JSON model forms (preset, shape, parameter count, HF config) → ModelSpec.

Public names: TransformerShape, ModelSpec, transformer_parameters, resolve_model, PRESETS, list_presets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .architecture import (
    ARCHITECTURES,
    FFN_TYPES,
    ModelSpec,
    TransformerShape,
    attention_score_flops_per_token,
    largest_layer_parameters,
    layer_parameters,
    matmul_parameters_per_token,
    transformer_parameters,
    transformer_training_flops_per_token,
)
from .errors import InvalidRequest
from .i18n import _
from .presets import PRESETS
from .units import parse_count

__all__ = [
    "ARCHITECTURES",
    "FFN_TYPES",
    "PRESETS",
    "ModelSpec",
    "TransformerShape",
    "attention_score_flops_per_token",
    "infer_transformer_shape",
    "largest_layer_parameters",
    "layer_parameters",
    "list_presets",
    "matmul_parameters_per_token",
    "resolve_model",
    "transformer_parameters",
    "transformer_training_flops_per_token",
]

# Default training context when a config only gives its maximum (Llama 3 was pre-trained at 8K; Llama 3 Herd §3.4)
TRAINING_CONTEXT_CAP = 8192


def resolve_model(spec: Mapping[str, Any]) -> ModelSpec:
    """Turn the request's `model` object into a ModelSpec; raise InvalidRequest on impossible input."""
    if "preset" in spec:
        preset = PRESETS.get(str(spec["preset"]))
        if preset is None:
            raise InvalidRequest.single(
                "model.preset",
                _("Unknown preset {value}; valid: {PRESETS}.").format(
                    value=repr(spec["preset"]), PRESETS=", ".join(sorted(PRESETS))
                ),
            )
        return preset
    if "hf_config" in spec:
        config = spec["hf_config"]
        if not isinstance(config, Mapping):
            raise InvalidRequest.single("model.hf_config", _("Must be a config.json object."))
        return _from_hf_config(config)
    architecture = spec.get("architecture")
    if architecture not in ARCHITECTURES:
        raise InvalidRequest.single(
            "model.architecture",
            _("Give 'preset', 'hf_config' or 'architecture' (one of {ARCHITECTURES}).").format(
                ARCHITECTURES=", ".join(ARCHITECTURES)
            ),
        )
    name = spec.get("name")
    if architecture == "transformer" and "layers" in spec:
        return _from_explicit_shape(spec)
    params = _parse_parameters(spec)
    if architecture in ("cnn", "vit"):
        fps = spec.get("flops_per_sample")
        try:
            flops_per_sample = parse_count(fps) if fps is not None else None
        except ValueError:
            flops_per_sample = None
        if not flops_per_sample:
            raise InvalidRequest.single(
                "model.flops_per_sample",
                _("Required (> 0) for architecture {architecture}: forward FLOPs per sample.").format(
                    architecture=repr(architecture)
                ),
            )
        return ModelSpec(name, architecture, params, params, flops_per_sample=flops_per_sample)
    if architecture == "transformer":
        shape = infer_transformer_shape(params)
        note = _(
            "Shape inferred from {params:.3g} parameters (Llama-like: head_dim 128, d_model/layers = "
            "128, SwiGLU, 32k untied vocabulary): {layers} layers × {hidden_size} wide; used only for "
            "attention FLOPs and activation memory."
        ).format(params=params, layers=shape.layers, hidden_size=shape.hidden_size)
        return ModelSpec(name, architecture, params, params, shape=shape, shape_inferred=True, notes=(note,))
    return ModelSpec(
        name, architecture, params, params, notes=(_("FLOPs per token taken as 6·N (no attention term)."),)
    )


def list_presets() -> list[dict[str, Any]]:
    """Summaries of the built-in presets, sorted by id."""
    return [
        {
            "id": key,
            "architecture": spec.architecture,
            "total_parameters": spec.total_parameters,
            "active_parameters": spec.active_parameters,
            "default_sequence_length": spec.default_sequence_length,
            "source": spec.source,
        }
        for key, spec in sorted(PRESETS.items())
    ]


def infer_transformer_shape(parameters: float) -> TransformerShape:
    """A plausible Llama-like shape for N parameters.

    Rule: N_body ≈ 12·L·h² (Kaplan et al. 2020 eq. 2.1, SwiGLU f ≈ 8h/3 keeps 12h² per layer) with aspect
    ratio h/L = 128 (Llama-2-7B 4096/32, 13B 5120/40; Kaplan §3.1: loss is flat for ratios 20-200),
    so h = (128·N_body/12)^(1/3) rounded to a multiple of 1024 (256 below 4096); untied 32k vocabulary (Llama 2);
    head_dim 128 (64 below h = 1024); 8 KV heads from h = 8192 (Llama-2-70B), MHA below.
    """
    vocab, n = 32000, max(float(parameters), 1.0)
    body = n
    hidden = 256
    for _step in range(4):  # fixed point: embeddings depend on h
        raw = (128.0 * body / 12.0) ** (1.0 / 3.0)
        quantum = 1024 if raw >= 4096 else 256  # keeps heads a multiple of 8 (resp. 2-4) for tensor parallel
        hidden = max(256, int(round(raw / quantum)) * quantum)
        body = max(n - 2.0 * vocab * hidden, 0.5 * n)
    layers = max(1, int(round(body / (12.0 * hidden * hidden))))
    head_dim = 128 if hidden >= 1024 else 64
    heads = max(1, hidden // head_dim)
    ffn = int(math.ceil(8 * hidden / 3 / 256)) * 256  # Llama multiple_of = 256 rounding (llama/model.py)
    return TransformerShape(
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=8 if hidden >= 8192 else heads,
        ffn_hidden_size=ffn,
        ffn_type="swiglu",
        vocab_size=vocab,
        tied_embeddings=False,
    )


def _parse_parameters(spec: Mapping[str, Any]) -> float:
    try:
        value = parse_count(spec.get("parameters"))
    except ValueError:
        value = 0.0
    if value <= 0:
        raise InvalidRequest.single(
            "model.parameters", _("Required: a positive count such as 7e9 or '7B' (or give a preset/shape).")
        )
    return value


def _from_explicit_shape(spec: Mapping[str, Any]) -> ModelSpec:
    errors: dict[str, list[str]] = {}
    for key in ("layers", "hidden_size", "attention_heads", "vocab_size"):
        if not isinstance(spec.get(key), int) or spec[key] < 1:
            errors.setdefault(f"model.{key}", []).append(
                _("Required positive integer for a transformer shape.")
            )
    if errors:
        raise InvalidRequest(errors)
    h, a = int(spec["hidden_size"]), int(spec["attention_heads"])
    ffn_type = spec.get("ffn_type", "swiglu")
    default_ffn = int(math.ceil(8 * h / 3 / 256)) * 256 if ffn_type == "swiglu" else 4 * h
    experts = int(spec.get("experts", 1) or 1)
    shape = TransformerShape(
        layers=int(spec["layers"]),
        hidden_size=h,
        attention_heads=a,
        kv_heads=int(spec.get("kv_heads") or a),
        ffn_hidden_size=int(spec.get("ffn_hidden_size") or default_ffn),
        ffn_type=ffn_type,
        vocab_size=int(spec["vocab_size"]),
        tied_embeddings=bool(spec.get("tied_embeddings", False)),
        experts=experts,
        experts_per_token=int(spec.get("experts_per_token", 2 if experts > 1 else 1) or 1),
        shared_experts=int(spec.get("shared_experts", 0) or 0),
        moe_ffn_hidden_size=spec.get("moe_ffn_hidden_size"),
        dense_layers=int(spec.get("dense_layers", 0) or 0),
        max_context_tokens=spec.get("max_context_tokens"),
        explicit_head_dim=spec.get("head_dim"),
    )
    return _transformer_spec(spec.get("name"), shape, "model", _("explicit shape"))


def _transformer_spec(name: Any, shape: TransformerShape, path: str, source: str) -> ModelSpec:
    _validate_shape(shape, path)
    total, active = transformer_parameters(shape)
    ctx = shape.max_context_tokens
    return ModelSpec(
        name=str(name) if name else None,
        architecture="transformer",
        total_parameters=float(total),
        active_parameters=float(active),
        shape=shape,
        shape_inferred=False,
        default_sequence_length=min(ctx, TRAINING_CONTEXT_CAP) if ctx else None,
        source=source,
    )


def _validate_shape(s: TransformerShape, path: str) -> None:
    errors: dict[str, list[str]] = {}

    def bad(field: str, message: str) -> None:
        errors.setdefault(f"{path}.{field}", []).append(message)

    if s.ffn_type not in FFN_TYPES:
        bad("ffn_type", _("Must be one of {FFN_TYPES}.").format(FFN_TYPES=", ".join(FFN_TYPES)))
    if not s.kv_lora_rank and not s.explicit_head_dim and s.hidden_size % s.attention_heads:
        bad("attention_heads", _("Must divide hidden_size {hidden_size}.").format(hidden_size=s.hidden_size))
    if s.kv_heads < 1 or s.attention_heads % s.kv_heads:
        bad(
            "kv_heads",
            _("Must divide attention_heads {attention_heads}.").format(attention_heads=s.attention_heads),
        )
    if s.ffn_hidden_size < 1:
        bad("ffn_hidden_size", _("Must be positive."))
    if s.experts < 1:
        bad("experts", _("Must be at least 1."))
    elif not 1 <= s.experts_per_token <= s.experts:
        bad("experts_per_token", _("Must be between 1 and experts ({experts}).").format(experts=s.experts))
    if s.dense_layers < 0 or (s.is_moe and s.dense_layers >= s.layers):
        bad("dense_layers", _("Must be between 0 and layers - 1 ({value}).").format(value=s.layers - 1))
    if s.max_context_tokens is not None and s.max_context_tokens < 1:
        bad("max_context_tokens", _("Must be positive."))
    if errors:
        raise InvalidRequest(errors)


# HF families: gated MLP (SwiGLU-like), default tie_word_embeddings, and bias conventions (transformers configs).
_GATED = {
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "phi3",
    "deepseek_v2",
    "deepseek_v3",
    "olmo",
    "olmo2",
    "yi",
    "internlm2",
}
_UNTIED_DEFAULT = {
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gpt_neox",
    "deepseek_v2",
    "deepseek_v3",
    "phi3",
    "olmo",
    "olmo2",
}
_BIASED = {"gpt2", "gpt_neox", "bert", "roberta", "gptj", "opt", "gpt_bigcode"}
_ENCODERS = {"bert", "roberta"}


def _first(cfg: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return None


def _from_hf_config(cfg: Mapping[str, Any]) -> ModelSpec:
    """Parse a Hugging Face config.json (Llama/Mistral/Mixtral/Qwen2/GPT-2/GPT-NeoX/BERT/DeepSeek)."""
    path = "model.hf_config"
    model_type = str(cfg.get("model_type") or "").lower()
    layers, h, a, vocab = _hf_required(cfg, path)
    act = str(_first(cfg, "hidden_act", "activation_function", "hidden_activation") or "").lower()
    gated = model_type in _GATED or (model_type not in _BIASED and act in ("silu", "swish", "swiglu"))
    ffn = _first(cfg, "intermediate_size", "n_inner", "ffn_dim") or 4 * h  # GPT-2 n_inner None → 4·n_embd
    kv = _first(cfg, "num_key_value_heads", "num_kv_heads") or (1 if cfg.get("multi_query") else a)
    head_dim = cfg.get("head_dim")
    shape = TransformerShape(
        layers=layers,
        hidden_size=h,
        attention_heads=a,
        kv_heads=int(kv),
        ffn_hidden_size=int(ffn),
        ffn_type="swiglu" if gated else "gelu",
        vocab_size=vocab,
        tied_embeddings=bool(cfg.get("tie_word_embeddings", model_type not in _UNTIED_DEFAULT)),
        max_context_tokens=_first(cfg, "max_position_embeddings", "n_positions", "n_ctx"),
        biases=model_type in _BIASED,
        encoder_only=model_type in _ENCODERS,
        qkv_bias=model_type in ("qwen2", "qwen2_moe") or bool(cfg.get("attention_bias")),
        learned_position_embeddings=_hf_learned_positions(cfg, model_type),
        explicit_head_dim=int(head_dim) if head_dim and head_dim * a != h else None,
        **_hf_experts(cfg),
        **_hf_latent_attention(cfg),
    )
    name = cfg.get("_name_or_path") or cfg.get("name") or model_type or None
    return _transformer_spec(name, shape, path, f"hf_config ({model_type or _('unknown model_type')})")


def _hf_required(cfg: Mapping[str, Any], path: str) -> tuple[int, int, int, int]:
    """(layers, hidden size, attention heads, vocabulary), under their HF names or GPT-2 aliases."""
    required = {
        "num_hidden_layers": _first(cfg, "num_hidden_layers", "n_layer", "num_layers"),
        "hidden_size": _first(cfg, "hidden_size", "n_embd", "d_model"),
        "num_attention_heads": _first(cfg, "num_attention_heads", "n_head"),
        "vocab_size": _first(cfg, "vocab_size"),
    }
    errors = {
        f"{path}.{key}": [_("Required positive integer (aliases: n_layer, n_embd, n_head as in GPT-2).")]
        for key, value in required.items()
        if not isinstance(value, int) or isinstance(value, bool) or value < 1
    }
    if errors:
        raise InvalidRequest(errors)
    layers, h, a, vocab = (int(v) for v in required.values())
    return layers, h, a, vocab


def _hf_experts(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Mixture-of-experts fields (Mixtral, Qwen2-MoE, DeepSeek): experts, routing, shared experts, dense layers."""
    experts = int(_first(cfg, "num_local_experts", "n_routed_experts", "num_experts") or 1)
    moe_ffn = cfg.get("moe_intermediate_size")
    shared = int(cfg.get("n_shared_experts") or 0)
    if cfg.get("shared_expert_intermediate_size") and moe_ffn:  # Qwen2-MoE: one wide shared expert
        shared = max(1, round(cfg["shared_expert_intermediate_size"] / moe_ffn))
    return {
        "experts": experts,
        "experts_per_token": int(cfg.get("num_experts_per_tok") or (1 if experts == 1 else 2)),
        "shared_experts": shared,
        "moe_ffn_hidden_size": int(moe_ffn) if moe_ffn and experts > 1 else None,
        "dense_layers": int(cfg.get("first_k_dense_replace") or 0) if experts > 1 else 0,
    }


def _hf_latent_attention(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Multi-head latent attention fields (DeepSeek-V2/V3), None without kv_lora_rank."""
    mla = bool(cfg.get("kv_lora_rank"))
    return {
        "kv_lora_rank": cfg.get("kv_lora_rank"),
        "qk_rope_head_dim": cfg.get("qk_rope_head_dim") if mla else None,
        "q_lora_rank": cfg.get("q_lora_rank") if mla else None,
        "qk_nope_head_dim": cfg.get("qk_nope_head_dim") if mla else None,
        "v_head_dim": cfg.get("v_head_dim") if mla else None,
    }


def _hf_learned_positions(cfg: Mapping[str, Any], model_type: str) -> int:
    """Rows of learned position (+ token-type) embeddings: GPT-2 and the BERT family have them."""
    if model_type == "gpt2":
        return int(_first(cfg, "n_positions", "n_ctx") or 1024)
    if model_type in _ENCODERS:
        return int(cfg.get("max_position_embeddings") or 512) + int(cfg.get("type_vocab_size") or 0)
    return 0
