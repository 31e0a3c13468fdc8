"""Model description dataclasses and exact transformer parameter / FLOP counts from a shape.

`service.engine.models` re-exports everything here; import from there. The counts are pure functions of a frozen
shape and are memoised (`SHAPE_CACHE` shapes): every estimate, and every candidate its advice re-evaluates, asks
for them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

ARCHITECTURES = ("transformer", "lstm", "mlp", "cnn", "vit")
SHAPE_CACHE = 512  # presets plus the shapes of recent requests (an HF config or explicit shape each)
FFN_TYPES = ("swiglu", "gelu")


@dataclass(frozen=True)
class TransformerShape:
    """Hyper-parameters of a (possibly MoE, possibly MLA) transformer, as in a HF config.json."""

    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    ffn_hidden_size: int
    ffn_type: str  # "swiglu" (gated, 3 matrices) or "gelu" (2 matrices)
    vocab_size: int
    tied_embeddings: bool
    experts: int = 1
    experts_per_token: int = 1
    shared_experts: int = 0
    moe_ffn_hidden_size: int | None = None  # per-expert FFN width; None = ffn_hidden_size
    dense_layers: int = 0  # leading dense layers of an MoE model (DeepSeek-V3 first_k_dense_replace = 3)
    max_context_tokens: int | None = None
    kv_lora_rank: int | None = None  # MLA latent width (DeepSeek-V2/V3); None = ordinary MHA/GQA
    qk_rope_head_dim: int | None = None  # MLA decoupled RoPE key width per head
    q_lora_rank: int | None = None  # MLA query low-rank width (None = full-rank query projection)
    qk_nope_head_dim: int | None = None  # MLA per-head query/key width without RoPE
    v_head_dim: int | None = None  # MLA per-head value width
    biases: bool = False  # linear + LayerNorm biases (GPT-2/3, BERT, GPT-NeoX)
    encoder_only: bool = False  # bidirectional attention (BERT); decoders are causal
    qkv_bias: bool = False  # bias on Q/K/V only (Qwen2)
    learned_position_embeddings: int = 0  # rows of learned position (+ token-type) embeddings
    explicit_head_dim: int | None = None  # head width when it is not hidden_size / attention_heads

    @property
    def head_dim(self) -> int:
        """Per-head width of Q/K/V (value width for MLA)."""
        if self.explicit_head_dim:
            return self.explicit_head_dim
        if self.v_head_dim:
            return self.v_head_dim
        return self.hidden_size // self.attention_heads

    @property
    def qk_head_dim(self) -> int:
        """Per-head width of the Q·K product (MLA: nope + rope parts)."""
        if self.kv_lora_rank:
            return (self.qk_nope_head_dim or 0) + (self.qk_rope_head_dim or 0)
        return self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def expert_ffn_hidden_size(self) -> int:
        return self.moe_ffn_hidden_size or self.ffn_hidden_size

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def causal(self) -> bool:
        return not self.encoder_only


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: what the estimators need, whichever JSON form it came from."""

    name: str | None
    architecture: str  # one of ARCHITECTURES
    total_parameters: float  # all weights held in memory (all experts)
    active_parameters: float  # weights a token touches (MoE: k routed + shared experts)
    shape: TransformerShape | None = None
    shape_inferred: bool = False
    flops_per_sample: float | None = None  # forward FLOPs per sample (cnn/vit)
    default_sequence_length: int | None = None
    source: str | None = None
    notes: tuple[str, ...] = ()


def attention_parameters(s: TransformerShape) -> int:
    """Q, K, V, O projections of one layer (+ biases / MLA low-rank norms)."""
    h, a, g = s.hidden_size, s.attention_heads, s.kv_heads
    if s.kv_lora_rank:
        # MLA: DeepSeek-V3 modeling_deepseek.py DeepseekV3Attention (q_a/q_b, kv_a_proj_with_mqa, kv_b, o_proj)
        dqk, dv, rope, r = s.qk_head_dim, s.head_dim, s.qk_rope_head_dim or 0, s.kv_lora_rank
        q = (h * s.q_lora_rank + s.q_lora_rank + s.q_lora_rank * a * dqk) if s.q_lora_rank else h * a * dqk
        kv = h * (r + rope) + r + r * a * ((s.qk_nope_head_dim or 0) + dv)
        return q + kv + a * dv * h
    d = s.head_dim
    # GQA attention h·d·(a + 2g) + a·d·h — Megatron theoretical_memory_usage.py (docs/formulas.md)
    params = h * d * (a + 2 * g) + a * d * h
    if s.biases or s.qkv_bias:
        params += (a + 2 * g) * d  # Q/K/V biases (GPT-2 c_attn, Qwen2 q/k/v_proj)
    if s.biases:
        params += h  # output projection bias
    return params


def mlp_parameters(s: TransformerShape, ffn: int) -> int:
    """One MLP (or one expert): SwiGLU 3·h·f, GELU 2·h·f — Shazeer 2020; Megatron (docs/formulas.md)."""
    h = s.hidden_size
    if s.ffn_type == "swiglu":
        return 3 * h * ffn + ((2 * ffn + h) if s.biases else 0)
    return 2 * h * ffn + ((ffn + h) if s.biases else 0)


def norm_parameters(s: TransformerShape) -> int:
    """Two norms per layer: RMSNorm h each, LayerNorm 2h each (weight + bias)."""
    return 2 * s.hidden_size * (2 if s.biases else 1)


@lru_cache(maxsize=SHAPE_CACHE)
def layer_parameters(s: TransformerShape) -> tuple[int, int, int]:
    """(dense layer, MoE layer total, MoE layer active) parameter counts."""
    base = attention_parameters(s) + norm_parameters(s)
    dense = base + mlp_parameters(s, s.ffn_hidden_size)
    if not s.is_moe:
        return dense, dense, dense
    expert = mlp_parameters(s, s.expert_ffn_hidden_size)
    router = s.hidden_size * s.experts  # router h·E (Fedus et al. 2021; docs/formulas.md)
    shared = s.shared_experts * expert
    total = base + s.experts * expert + shared + router
    active = base + s.experts_per_token * expert + shared + router
    return dense, total, active


@lru_cache(maxsize=SHAPE_CACHE)
def embedding_parameters(s: TransformerShape) -> int:
    """Token embeddings V·h, doubled when the LM head is untied, + learned positions."""
    tokens = s.vocab_size * s.hidden_size * (1 if s.tied_embeddings else 2)
    return tokens + s.learned_position_embeddings * s.hidden_size


@lru_cache(maxsize=SHAPE_CACHE)
def transformer_parameters(s: TransformerShape) -> tuple[int, int]:
    """(total, active) parameters; active = what one token uses (MoE: k routed + shared experts)."""
    dense, moe_total, moe_active = layer_parameters(s)
    n_dense = s.dense_layers if s.is_moe else s.layers
    n_moe = s.layers - n_dense
    final_norm = s.hidden_size * (2 if s.biases else 1)
    rest = embedding_parameters(s) + final_norm
    total = n_dense * dense + n_moe * moe_total + rest
    active = n_dense * dense + n_moe * moe_active + rest
    return total, active


@lru_cache(maxsize=SHAPE_CACHE)
def largest_layer_parameters(s: TransformerShape, expert_parallel: int = 1) -> float:
    """Largest single gathered unit under ZeRO-3 (a layer, or the embedding). An MoE layer's routed experts are
    split over the `expert_parallel` ranks before any sharding, so a rank gathers only its own experts: Megatron-Core
    shards expert weights over the expert-data-parallel group; NeMo AutoModel's FSDP2 leaves them out of the block's
    unit under EP (nemo_automodel/components/moe/parallelizer.py apply_fsdp @89e3a9f, ignored_params)."""
    return max(layer_parameter_parts(s, expert_parallel))


def layer_parameter_parts(s: TransformerShape, expert_parallel: Any = 1) -> tuple[Any, Any, int]:
    """(dense layer, MoE layer with its routed experts over `expert_parallel` ranks, embedding) parameters: the
    candidates of largest_layer_parameters; `expert_parallel` may be an array (the planner's layouts)."""
    dense, moe_total, _ = layer_parameters(s)
    routed = s.experts * mlp_parameters(s, s.expert_ffn_hidden_size) if s.is_moe else 0
    moe = (moe_total - routed) + routed / expert_parallel if s.is_moe else 0 * expert_parallel
    return dense, moe, s.vocab_size * s.hidden_size


@lru_cache(maxsize=SHAPE_CACHE)
def matmul_parameters_per_token(s: TransformerShape) -> float:
    """Active weights that take part in a matmul per token: layers + LM head (not the embedding lookup)."""
    _, active = transformer_parameters(s)
    lookup = (
        s.vocab_size * s.hidden_size * (0 if s.tied_embeddings else 1)
        + s.learned_position_embeddings * s.hidden_size
    )
    # Tied: the one V·h matrix is counted once in `active` and used as the LM head matmul.
    return float(active - lookup)


@lru_cache(maxsize=SHAPE_CACHE)
def attention_score_flops_per_token(s: TransformerShape, sequence_length: int) -> float:
    """Training FLOPs per token of Q·Kᵀ and scores·V (not in 6N).

    Non-causal: 3 (fwd + 2×bwd) × 2 (mul-add) × L × s × a × (d_qk + d_v) = 12·L·s·h for d_qk = d_v
    — PaLM (Chowdhery et al. 2022) App. B "6N + 12·L·H·Q·T"; Megatron num_floating_point_operations.
    Causal masking skips half the score matrix (Megatron-LM training.py, causal factor 0.5).
    """
    per_head = s.qk_head_dim + s.head_dim
    flops = 6.0 * s.layers * sequence_length * s.attention_heads * per_head
    return flops * (0.5 if s.causal else 1.0)


def transformer_training_flops_per_token(s: TransformerShape, sequence_length: int) -> float:
    """Model FLOPs per trained token: 6 × matmul weights (incl. LM head 6·h·V) + attention scores."""
    # 6·N per token: forward 2N + backward 4N — Kaplan et al. 2020 §2.1; Megatron logit term 6·h·V
    return 6.0 * matmul_parameters_per_token(s) + attention_score_flops_per_token(s, sequence_length)
