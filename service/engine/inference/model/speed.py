"""Serving speed: prefill (time to first token), decode step (time per output token), vision batches.

Decode step = max(weight bytes ÷ (BW·MBU), 2·N_active·b ÷ (peak·eff)) + KV read ÷ (BW·MBU_kv)
              + L × per-layer overhead + tensor-parallel all-reduces (or layer-split hand-offs).
Linear layers and attention are separate kernels, so the KV-read time adds to the linear-layer time rather
than overlapping it; at batch 1 both are memory-bound and the sum is docs/formulas.md's (weights + KV)/(BW·MBU).
MoE decode reads only the experts touched: E·(1 − (1 − k/E)^B) per layer at batch B (docs/formulas.md).
Prefill = 2·N·tokens + L·s²·a·(d_qk + d_v) causal attention FLOPs (= 2·L·s²·h for d_qk = d_v) at a compute
efficiency that grows with the tokens per forward (efficiency.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ...architecture import TransformerShape, matmul_parameters_per_token
from ...hardware import Accelerator
from ...parallelism import all_reduce_seconds, group_bandwidth
from .efficiency import (
    EAGER_LAYER_OVERHEAD,
    LAYER_SPLIT_HOP_S,
    VISION_STEP_OVERHEAD_S,
    accelerator_class,
    allreduce_latency_s,
    bandwidth_efficiency,
    compute_efficiency,
    kv_bandwidth_efficiency,
    layer_overhead_s,
    mla_moe_layer_ratio,
    moe_expert_efficiency,
    moe_layer_floor_s,
    peak_flops,
    vision_efficiency,
)
from .formats import compute_precision_on
from .memory import PREFILL_CHUNK, Workload, kv_bytes_per_token
from .schedule import cuda_graph_max_batch
from .stacks import stack_factors


@dataclass(frozen=True)
class Speed:
    time_to_first_token_s: float | None
    time_per_output_token_s: float | None
    end_to_end_s: float
    prefill_bound: str
    decode_bound: str | None
    output_tokens_per_second: float | None
    per_sequence_tokens_per_second: float | None
    requests_per_second: float
    samples_per_second: float | None
    terms: dict[str, float] = field(default_factory=dict)  # intermediate values for `details`
    # continuous batching (load.py): {"time_to_first_token_s": {"p50", "p90", "p99"}, "time_per_output_token_s": …}
    percentiles: dict[str, dict[str, float]] | None = None
    load: dict[str, Any] | None = None  # steady state: concurrency, rate, saturated, sustainable rate

    def at(self, metric: str, percentile: str) -> float | None:
        """A latency at a percentile: the percentile when the scheduler gives them, else the single value."""
        if self.percentiles is not None and metric in self.percentiles:
            return self.percentiles[metric][percentile]
        value = getattr(self, metric)
        return float(value) if value is not None else None


def estimate_speed(w: Workload, acc: Accelerator, count: int) -> Speed:
    if w.mode == "sample":
        return _sample_speed(w, acc, count)
    return token_speed(w, acc, count)


class TokenWork(NamedTuple):
    """A token workload's accelerator-independent quantities, derived once per workload (Workload.derived)."""

    layers: int
    hidden: int
    matmul: float  # active weights in matmuls per token
    body_flops: float  # prefill FLOPs of the blocks over b·prompt tokens, attention scores included
    head_flops: float  # prefill FLOPs of the LM head (b rows: only each sequence's last position)
    prefill_weights: tuple[float, float]  # (dense, routed-expert) bytes the prefill streams
    decode_weights: tuple[float, float]  # (dense, routed-expert) bytes one decode step streams
    decode_attention_flops: float  # per sequence at the mean context of the generation
    ctx: float  # mean context of the generation: prompt + (output − 1)/2


class TokenDevice(NamedTuple):
    """What the token formulas take from the accelerator and the device count."""

    acc: Accelerator
    devices: int
    cls: str
    tensor: bool
    t: int  # devices working on each matmul at once
    bw: float
    mbu: float
    kv_mbu: float
    precision: str
    peak: float
    weight_only: bool
    step_overhead: float
    hops: float
    kv_token: float  # KV bytes per token per device working on the step
    graph_rows: float  # decode rows the engine replays as one CUDA graph (schedule.cuda_graph_max_batch)
    eager_s: float  # host time of one eager decode step beyond them: layers × per-layer launch overhead


def token_work(w: Workload) -> TokenWork:
    work = w.derived.get("speed.token_work")
    if isinstance(work, TokenWork):
        return work
    s = w.model.shape
    matmul = _matmul_parameters(w)
    lm_head = float(s.vocab_size * s.hidden_size) if s is not None else 0.0
    b, prompt, out = w.batch, w.prompt_tokens, w.output_tokens
    tokens = b * prompt
    ctx = prompt + (out - 1) / 2.0
    work = TokenWork(
        layers=s.layers if s is not None else 2,  # LSTM presets: 2 layers (Zaremba et al. 2014)
        hidden=s.hidden_size if s is not None else 0,
        matmul=matmul,
        body_flops=2.0 * (matmul - lm_head) * tokens + b * _attention_flops(w, prompt, causal=True),
        head_flops=2.0 * lm_head * b,
        prefill_weights=weights_read(w, tokens),
        decode_weights=weights_read(w, b),
        decode_attention_flops=_attention_flops(w, ctx, causal=False, decode=True),
        ctx=ctx,
    )
    w.derived["speed.token_work"] = work
    return work


def token_device(w: Workload, acc: Accelerator, count: int, layers: int) -> TokenDevice:
    cls = accelerator_class(acc)
    tensor = w.layout == "tensor"
    t = count if tensor else 1
    precision, weight_only = compute_precision_on(w.fmt, acc.supports("fp4"))
    stack = stack_factors(w.engine, acc)  # the engine's build for this vendor's part (stacks.py)
    overhead = (
        layer_overhead_s(w.engine, cls).value if stack.layer_overhead_s is None else stack.layer_overhead_s
    )
    s = w.model.shape
    # MLA layers with routed experts run more kernels than a dense layer; a fused MoE call has a floor (efficiency.py)
    moe = s.moe_layers if s is not None else 0
    mla_moe = moe if s is not None and s.kv_lora_rank else 0
    launched = layers + mla_moe * (mla_moe_layer_ratio(w.engine, cls) - 1.0)
    return TokenDevice(
        acc=acc,
        devices=count,
        cls=cls,
        tensor=tensor,
        t=t,
        bw=acc.memory_bandwidth_bytes_per_s,
        mbu=bandwidth_efficiency(w.engine, cls, w.fmt.family).value * stack.bandwidth,
        kv_mbu=kv_bandwidth_efficiency(w.engine, cls).value * stack.kv_bandwidth,
        precision=precision,
        peak=peak_flops(acc, precision)[0]
        * stack.compute(precision),  # the build's achieved GEMM share (stacks.py)
        weight_only=weight_only,
        step_overhead=launched * overhead + moe * moe_layer_floor_s(w.engine, cls),
        hops=(count - 1) * LAYER_SPLIT_HOP_S.value if w.layout == "layer" else 0.0,
        # layer split: devices run in turn, so a step streams the whole model at one device's bandwidth
        kv_token=kv_bytes_per_token(w, t),
        graph_rows=cuda_graph_max_batch(w.schedule, w.engine, acc, t),
        eager_s=layers * EAGER_LAYER_OVERHEAD.value,
    )


def token_speed(w: Workload, acc: Accelerator, count: int) -> Speed:
    """The static-batch model: the whole batch is prefilled, then decoded together."""
    work = token_work(w)
    d = token_device(w, acc, count, work.layers)
    ttft, prefill_bound, prefill = _prefill(w, work, d)
    tpot, decode_bound, decode = _decode(w, work, d)
    b, out = w.batch, w.output_tokens
    e2e = ttft + (out - 1) * tpot
    return Speed(
        time_to_first_token_s=ttft,
        time_per_output_token_s=tpot,
        end_to_end_s=e2e,
        prefill_bound=prefill_bound,
        decode_bound=decode_bound,
        output_tokens_per_second=b * out / e2e,
        per_sequence_tokens_per_second=1.0 / tpot,
        requests_per_second=b / e2e,
        samples_per_second=None,
        terms={**prefill, **decode},
    )


def _prefill(w: Workload, work: TokenWork, d: TokenDevice) -> tuple[float, str, dict[str, float]]:
    """Time to first token: b·prompt tokens through the model; logits only at each sequence's last position."""
    tokens = w.batch * w.prompt_tokens
    body_flops, head_flops = work.body_flops, work.head_flops
    flops = body_flops + head_flops
    # each GEMM runs at the efficiency of its own row count: the blocks see b·prompt rows, the LM head b rows
    eff_prefill = compute_efficiency(w.engine, d.cls, d.precision, d.weight_only, tokens)
    eff_head = compute_efficiency(w.engine, d.cls, d.precision, d.weight_only, w.batch)
    prefill_compute = (body_flops / eff_prefill + head_flops / eff_head) / d.t / d.peak
    chunks = math.ceil(tokens / PREFILL_CHUNK.get(w.engine, tokens))
    prefill_memory = chunks * stream_seconds(w, d, work.prefill_weights, d.t) + tokens * d.kv_token / (
        d.bw * d.kv_mbu
    )
    prefill_comm = (
        _allreduce_s(d.acc, d.devices, work.layers, tokens * work.hidden * w.act_bytes) if d.tensor else 0.0
    )
    ttft = max(prefill_compute, prefill_memory) + prefill_comm + chunks * (d.step_overhead + d.hops)
    bound = "compute" if prefill_compute >= prefill_memory else "memory-bandwidth"
    terms = {
        "prefill_flops": flops,
        "prefill_compute_s": prefill_compute,
        "prefill_memory_s": prefill_memory,
        "prefill_compute_efficiency": eff_prefill,
    }
    return ttft, bound, terms


def _decode(w: Workload, work: TokenWork, d: TokenDevice) -> tuple[float, str, dict[str, float]]:
    """Time per output token: one token for each of b sequences at the mean context of the generation."""
    b, t = w.batch, d.t
    step_weights = stream_seconds(w, d, work.decode_weights, t)
    # roofline: small-batch GEMMs are memory-bound (left term); their compute ceiling is the asymptotic
    # efficiency — the prefill curve's n_half absorbs per-layer latency that `step_overhead` already counts
    eff_decode = compute_efficiency(w.engine, d.cls, d.precision, d.weight_only, float("inf"))
    step_linear = 2.0 * work.matmul * b / t / (d.peak * eff_decode)
    kv_read = b * work.ctx * d.kv_token
    attn_compute = b * work.decode_attention_flops / t / (d.peak * eff_decode)
    step_kv = kv_read / (d.bw * d.kv_mbu)
    step_comm = (
        _allreduce_s(d.acc, d.devices, work.layers, b * work.hidden * w.act_bytes) if d.tensor else 0.0
    )
    tpot = max(step_weights, step_linear) + max(step_kv, attn_compute) + d.step_overhead + step_comm + d.hops
    # beyond the CUDA-graph batch the host launches each layer's kernels (engine_step.py)
    if b > d.graph_rows:
        tpot = max(tpot, d.eager_s)
    decode_compute = step_linear + attn_compute
    bound = "compute" if decode_compute > step_weights + step_kv else "memory-bandwidth"
    terms = {
        "decode_weight_bytes_per_device": sum(work.decode_weights) / t,
        "decode_kv_bytes_per_device": kv_read,
        "decode_weights_s": step_weights,
        "decode_linear_compute_s": step_linear,
        "decode_kv_s": step_kv,
        "decode_compute_efficiency": eff_decode,
        "mbu": d.mbu,
        "kv_mbu": d.kv_mbu,
        "step_overhead_s": d.step_overhead,
        "allreduce_s": step_comm,
        "peak_flops_per_s": d.peak,
    }
    return tpot, bound, terms


def _matmul_parameters(w: Workload) -> float:
    """Active weights in matmuls per token (memoised per shape: the suggestion loop calls this per device)."""
    s = w.model.shape
    return float(w.model.active_parameters) if s is None else _shape_matmul_parameters(s)


@lru_cache(maxsize=256)
def _shape_matmul_parameters(s: TransformerShape) -> float:
    return float(matmul_parameters_per_token(s))


def weights_read(w: Workload, tokens: Any) -> tuple[float, Any]:
    """(dense, routed-expert) weight bytes one forward pass over `tokens` tokens streams (all devices); `tokens` may
    be an array (arrays.py: one per batch size), the expert bytes then are too.

    The input embedding is gathered row by row (never streamed); an MoE layer reads only the experts its
    tokens touch: E·(1 − (1 − k/E)^B) of E (docs/formulas.md "MoE decode").
    """
    dense = w.weights_bytes - w.input_embedding_bytes - w.expert_bytes
    s = w.model.shape
    if s is None or not s.is_moe:
        return dense, 0.0
    touched = 1.0 - (1.0 - s.experts_per_token / s.experts) ** np.maximum(tokens, 1.0)
    return dense, w.expert_bytes * touched


def stream_seconds(w: Workload, d: TokenDevice, weights_read: tuple[float, Any], t: int) -> Any:
    """Time to stream the (dense, routed-expert) weights a forward pass reads, per device, at the MBU; routed
    experts at the engine's MoE kernel rate on this part (efficiency.moe_expert_efficiency). The expert bytes may be
    an array (arrays.py: one per batch size)."""
    dense, expert = weights_read
    return (dense + expert / moe_expert_efficiency(w.engine, d.cls).value) / t / (d.bw * d.mbu)


def _attention_flops(w: Workload, ctx: float, causal: bool, decode: bool = False) -> float:
    """Attention-score FLOPs per sequence.

    Prefill over s tokens: L·s²·a·(d_qk + d_v) with causal masking (2·L·s²·h for d = h/a; docs/formulas.md).
    Decode of one token at context c: 2·L·c·a·(d_qk + d_v); absorbed MLA: 2·L·c·a·(2·r + d_rope)
    (DeepSeek-V2 paper §2.1 weight absorption).
    """
    s = w.model.shape
    if s is None:
        return 0.0
    if decode:
        if s.kv_lora_rank:
            width = 2 * s.kv_lora_rank + (s.qk_rope_head_dim or 0)
        else:
            width = s.qk_head_dim + s.head_dim
        return 2.0 * s.layers * ctx * s.attention_heads * width
    full = s.layers * ctx * ctx * s.attention_heads * (s.qk_head_dim + s.head_dim)
    return full if causal else 2.0 * full


def _allreduce_s(acc: Accelerator, t: int, layers: int, message_bytes: float) -> float:
    """Two all-reduces per layer (Megatron-LM tensor parallel: after attention and after the MLP), each a
    fixed latency plus the ring time of parallelism.all_reduce_seconds over the group's link."""
    if t <= 1:
        return 0.0
    bandwidth = group_bandwidth(acc, t, 1)
    return 2 * layers * (allreduce_latency_s(acc) + all_reduce_seconds(message_bytes, t, bandwidth))


def _sample_speed(w: Workload, acc: Accelerator, count: int) -> Speed:
    """Vision/MLP/encoder models: one forward per batch; replicas multiply throughput, not latency."""
    model, s, cls = w.model, w.model.shape, accelerator_class(acc)
    b = w.batch
    compute_precision, _weight_only = compute_precision_on(w.fmt, acc.supports("fp4"))
    precision = w.fmt.precision if w.fmt.precision in ("int8", "int4") else compute_precision
    peak, _ = peak_flops(acc, precision)
    if s is not None and model.architecture == "transformer":  # encoder-only transformer over prompt tokens
        per_sample = 2.0 * matmul_parameters_per_token(s) * w.prompt_tokens + _attention_flops(
            w, w.prompt_tokens, causal=False
        )
        eff = compute_efficiency(w.engine, cls, compute_precision, False, b * w.prompt_tokens)
    else:
        per_sample = model.flops_per_sample or 2.0 * model.total_parameters
        eff = vision_efficiency(b)
    compute = b * per_sample / (peak * eff)
    mbu = bandwidth_efficiency(w.engine, cls, w.fmt.family).value
    memory = w.weights_bytes / (acc.memory_bandwidth_bytes_per_s * mbu)
    latency = max(compute, memory) + VISION_STEP_OVERHEAD_S
    return Speed(
        time_to_first_token_s=None,
        time_per_output_token_s=None,
        end_to_end_s=latency,
        prefill_bound="compute" if compute >= memory else "memory-bandwidth",
        decode_bound=None,
        output_tokens_per_second=None,
        per_sequence_tokens_per_second=None,
        requests_per_second=b * count / latency,
        samples_per_second=b * count / latency,
        terms={
            "flops_per_sample": per_sample,
            "compute_efficiency": eff,
            "compute_s": compute,
            "memory_s": memory,
            "peak_flops_per_s": peak,
        },
    )
