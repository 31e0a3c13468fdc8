"""Megatron-Core's selective recomputation of named modules (training.recompute_modules).

Megatron-Core recomputes, under `recompute_granularity="selective"`, the submodules listed in
`TransformerConfig.recompute_modules` (megatron/core/transformer/transformer_config.py @core_v0.15.0 and @d98e8a6,
default ["core_attn"]; every check is `recompute_granularity == 'selective' and name in recompute_modules`, so the
list does nothing without "selective"). What each one drops, in the per-layer terms activations._layer_terms counts
(bytes per s·b·h at 2-byte activations; q = bytes per saved GEMM input, activations.saved_input_bytes), for the
Transformer Engine layer spec NeMo and Megatron-Bridge build (megatron/core/models/gpt/gpt_layer_specs.py
get_gpt_layer_with_transformer_engine_spec: the input norm is fused into the QKV linear except under MLA, and the
pre-MLP norm into the MLP's first linear except in MoE layers):

* core_attn: the attention scores 2·a·s/h (Korthikanti et al. 2022 §5, without dropout) — the engine's
  "selective"; nothing more under a fused attention kernel, which keeps Q, K, V and the output either way.
* layernorm: the output of each norm that is its own module (CheckpointWithoutOutput discards it, the backward
  re-runs the norm): the MoE layers' pre-MLP norm output and, under MLA, the input norm output — q each.
* moe_act: the routed experts' activation output, the FC2 input q·k·f_e/h (experts.py TEGroupedMLP).
* mlp: a dense layer's whole MLP (normal checkpoint; its input is the residual the fused norm keeps anyway): the
  FC1 input q, the FC1 outputs and the FC2 input. Dense layers only (transformer_layer.py skips MoELayer).
* moe: the whole MoE layer (moe_layer.py): every expert's FC1 outputs and FC2 input; its input, the pre-MLP norm
  output, is the checkpoint's input and stays.
* shared_experts: the shared experts' FC1 outputs and FC2 input.
* mla_up_proj: MLA's up projections and RoPE (multi_latent_attention.py): the core attention inputs Q, K, V.

The engine counts every layer of an MoE model as an MoE layer (activations._active_ffn_width), so "mlp" frees nothing
there (DeepSeek-V3's three leading dense layers are not counted apart). Recomputed matmuls add their forward
FLOPs (1 + share/3 of the training GEMM FLOPs, as op-level checkpointing); recomputed norms and activations add
the bytes of one more forward pass of them (input read, output written). Not counted (assumption, small at the
published layouts): the extra tensor-parallel collectives of a recomputed MLP and the extra expert-parallel
all-to-alls of a recomputed MoE layer.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ...architecture import SHAPE_CACHE, TransformerShape, matmul_parameters_per_token, mlp_parameters
from ...i18n import _

# TransformerConfig.recompute_modules choices that act on a transformer the engine models (Megatron-Core
# transformer_config.py @d98e8a6 also lists gdn_norm_out, gdp_in_proj, gdp_qkv and mhc, for GatedDeltaNet and
# hyper-connection layers the engine has no shape for).
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")
DEFAULT_RECOMPUTE_MODULES = ("core_attn",)  # Megatron-Core's default: the engine's "selective"
_MOE_ONLY = ("moe_act", "moe")


def parse_recompute_modules(
    training: Mapping[str, Any], recompute: str, shape: TransformerShape | None, bad: Any
) -> tuple[str, ...]:
    """training.recompute_modules: the modules "selective" recomputes (default core_attn), in RECOMPUTE_MODULES order."""
    given = training.get("recompute_modules")
    if given is None:
        return DEFAULT_RECOMPUTE_MODULES
    field = "training.recompute_modules"
    if not isinstance(given, list | tuple) or not all(isinstance(m, str) for m in given):
        bad(field, _("Must be a list of module names: {names}.").format(names=", ".join(RECOMPUTE_MODULES)))
        return DEFAULT_RECOMPUTE_MODULES
    unknown = [m for m in given if m not in RECOMPUTE_MODULES]
    if unknown:
        bad(
            field,
            _("Unknown module {unknown}; must be among {names}.").format(
                unknown=", ".join(unknown), names=", ".join(RECOMPUTE_MODULES)
            ),
        )
    if recompute != "selective":
        bad(
            field,
            _('Only with training.activation_recomputation "selective" (given: {value}).').format(
                value=recompute
            ),
        )
    if shape is not None:
        _check_parts(field, set(given), shape, bad)
    return tuple(m for m in RECOMPUTE_MODULES if m in given)


def _check_parts(field: str, given: set[str], shape: TransformerShape, bad: Any) -> None:
    """A module the model does not have is refused, as Megatron-Core refuses moe_act without grouped experts and
    mla_up_proj without multi-latent attention."""
    lacking = [m for m in _MOE_ONLY if m in given and not shape.is_moe]
    if "shared_experts" in given and not (shape.is_moe and shape.shared_experts):
        lacking.append("shared_experts")
    if "mla_up_proj" in given and not shape.kv_lora_rank:
        lacking.append("mla_up_proj")
    if lacking:
        bad(
            field,
            _("{modules}: this model has no such part (moe_act, moe: experts; shared_experts: shared experts; "
              "mla_up_proj: multi-latent attention).").format(modules=", ".join(lacking)),
        )  # fmt: skip


def keeps_scores(recompute: str, modules: tuple[str, ...], flash_attention: bool) -> bool:
    """The layer keeps the 2·a·s/h attention scores: no fused kernel, and core attention is not recomputed."""
    if flash_attention:
        return False
    return recompute == "none" or (recompute == "selective" and "core_attn" not in modules)


def recomputes_attention(recompute: str, modules: tuple[str, ...], flash_attention: bool) -> bool:
    """The backward runs the attention scores again: a fused kernel always does; so do full, dots and op-level
    recomputation, and selective when it recomputes core attention."""
    return (
        flash_attention
        or recompute in ("full", "dots", "selective_op")
        or (recompute == "selective" and "core_attn" in modules)
    )


@lru_cache(maxsize=SHAPE_CACHE)
def saved_terms(
    sh: TransformerShape, modules: tuple[str, ...], input_bytes: float = 2.0
) -> tuple[float, float]:
    """Bytes per s·b·h (2-byte activations) the modules free per layer, in activations._layer_terms' two parts: (kept
    whole unless sequence parallel, split by t). See the module docstring for what each frees."""
    if not modules or modules == DEFAULT_RECOMPUTE_MODULES:
        return 0.0, 0.0
    gated = sh.ffn_type == "swiglu"
    q = input_bytes  # activations._layer_terms: the GEMM inputs at q bytes per value
    h = sh.hidden_size
    whole = split = 0.0
    if "layernorm" in modules:
        whole += q * (int(sh.is_moe) + int(bool(sh.kv_lora_rank)))
    if sh.is_moe:
        routed = sh.experts_per_token * sh.expert_ffn_hidden_size / h
        shared = sh.shared_experts * sh.expert_ffn_hidden_size / h
        if "moe" in modules:
            split += mlp_kept_per_hidden(routed + shared, gated, q)
        else:
            split += q * routed if "moe_act" in modules else 0.0
            split += mlp_kept_per_hidden(shared, gated, q) if "shared_experts" in modules else 0.0
    elif "mlp" in modules:
        whole += q
        split += mlp_kept_per_hidden(sh.ffn_hidden_size / h, gated, q)
    if "mla_up_proj" in modules:
        split += 2.0 + 4.0 * sh.kv_heads * sh.head_dim / h  # the Q and K, V terms of activations._layer_terms
    return whole, split


def mlp_kept_per_hidden(width: float, gated: bool, q: float) -> float:
    """An MLP's kept bytes per s·b·h past its input at width f/h (activations._layer_terms): SwiGLU's gate and up
    outputs 4·f/h, a GELU's activation input 2·f/h, plus the FC2 (down-projection) input q·f/h."""
    return ((4.0 if gated else 2.0) + q) * width


@lru_cache(maxsize=SHAPE_CACHE)
def recomputed_matmul_share(sh: TransformerShape | None, modules: tuple[str, ...]) -> float:
    """Share of the forward matmul weights per token that the modules run again in backward: a dense MLP (mlp),
    the active experts and router (moe), the shared experts (shared_experts), MLA's up projections (mla_up_proj)."""
    if sh is None or not modules or modules == DEFAULT_RECOMPUTE_MODULES:
        return 0.0
    weights = 0.0
    # "mlp" is a dense model's: saved_terms counts an MoE model's layers as MoE layers, so the few dense layers of
    # one (DeepSeek-V3's first three) neither free memory nor cost recompute here
    if "mlp" in modules and not sh.is_moe:
        weights += sh.layers * mlp_parameters(sh, sh.ffn_hidden_size)
    expert = mlp_parameters(sh, sh.expert_ffn_hidden_size) if sh.is_moe else 0
    if "moe" in modules:
        weights += sh.moe_layers * (
            (sh.experts_per_token + sh.shared_experts) * expert + sh.hidden_size * sh.experts
        )
    elif "shared_experts" in modules:
        weights += sh.moe_layers * sh.shared_experts * expert
    if "mla_up_proj" in modules and sh.kv_lora_rank:
        a, nope = sh.attention_heads, sh.qk_nope_head_dim or 0
        q_up = (sh.q_lora_rank or sh.hidden_size) * a * sh.qk_head_dim
        weights += sh.layers * (q_up + sh.kv_lora_rank * a * (nope + sh.head_dim))
    return min(1.0, weights / max(1.0, matmul_parameters_per_token(sh)))


@lru_cache(maxsize=SHAPE_CACHE)
def recomputed_elementwise_bytes(sh: TransformerShape | None, modules: tuple[str, ...]) -> float:
    """Bytes per token per layer (2-byte activations, averaged over the layers) that one more forward pass of the
    recomputed norms and activation functions moves: a norm reads and writes h values (4·h bytes), a SwiGLU reads
    2·f and writes f (6·f), a GELU reads and writes f (4·f)."""
    if sh is None or not modules or modules == DEFAULT_RECOMPUTE_MODULES:
        return 0.0
    act = 6.0 if sh.ffn_type == "swiglu" else 4.0
    f_e = sh.expert_ffn_hidden_size
    moe_bytes = 0.0
    if "layernorm" in modules and sh.is_moe:
        moe_bytes += 4.0 * sh.hidden_size
    if "moe" in modules:
        moe_bytes += act * (sh.experts_per_token + sh.shared_experts) * f_e
    else:
        moe_bytes += act * sh.experts_per_token * f_e if "moe_act" in modules else 0.0
        moe_bytes += act * sh.shared_experts * f_e if "shared_experts" in modules else 0.0
    dense_layers = 0 if sh.is_moe else sh.layers  # "mlp" on an MoE model: see recomputed_matmul_share
    dense_bytes = act * sh.ffn_hidden_size if "mlp" in modules else 0.0
    mla_norm = 4.0 * sh.hidden_size if "layernorm" in modules and sh.kv_lora_rank else 0.0
    return (sh.moe_layers * moe_bytes + dense_layers * dense_bytes) / sh.layers + mla_norm
