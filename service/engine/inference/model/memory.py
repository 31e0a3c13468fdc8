"""Serving memory: weights, KV cache, activations and engine overheads per device.

Parallel layouts (documented rule):
- vLLM and TensorRT-LLM use tensor parallelism of degree t: weights ÷ t, KV heads ÷ t (replicated when
  g < t), two all-reduces per layer. t must divide the attention heads and either divide g or be a
  multiple of g (vLLM `get_num_kv_heads`). MLA's latent is shared by all heads, so every rank holds it whole.
- SGLang (--tp-size) shards like vLLM.
- llama.cpp (--split-mode layer), hf-transformers (accelerate device_map="auto") and ExLlamaV2 (gpu_split; its
  experimental load_tp tensor-parallel loader is not modelled) split layers: weights and KV ÷ count, but devices
  run in turn.
- cnn/vit/mlp and encoder-only models are served as replicas: each device holds the whole model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from ...architecture import ModelSpec, mlp_parameters
from ...hardware import Accelerator
from ...i18n import _
from ...units import GIB
from .admission import held_tokens
from .draft import draft_per_device
from .efficiency import TENSOR_PARALLEL_ENGINES
from .formats import WeightFormat, input_embedding_bytes, weight_bytes
from .kv import shape_kv_bytes_per_token
from .schedule import STATIC, Schedule

MAX_DEVICES = 64  # largest count "auto" tries (8 nodes of 8)
_ACT_BYTES = 2  # activations in fp16/bf16 (fp32 models: 4)

# Engine memory budgets (docs/formulas.md "Engine budgets"):
# vLLM: gpu_memory_utilization 0.9 of total (EngineArgs default); TensorRT-LLM: KvCacheConfig
# free_gpu_memory_fraction 0.9 of what is free after weights; llama.cpp and transformers take what they allocate.
# SGLang: mem_fraction_static (weights + KV pool) 0.88 at TP1, 0.87 at TP2, 0.85 at TP4, 0.81 at TP8, 0.79 from
# TP16 (server_args.py ServerArgs.__post_init__, v0.4); ExLlamaV2 allocates what it needs (autosplit).
_USABLE_FRACTION = {
    "vllm": 0.9,
    "tensorrt-llm": 1.0,
    "llama.cpp": 1.0,
    "hf-transformers": 1.0,
    "sglang": 0.88,
    "exllamav2": 1.0,
}
_SGLANG_FRACTION = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
_TRT_FREE_FRACTION = 0.9
# Non-tensor memory: CUDA context + cuBLAS workspace 0.5-2 GiB (docs/formulas.md) plus CUDA-graph pools for the
# graph-capturing engines (vLLM/TRT-LLM); llama.cpp and eager transformers only pay the context.
_FIXED_OVERHEAD = {
    "vllm": 1.0 * GIB,
    "tensorrt-llm": 1.0 * GIB,
    "llama.cpp": 0.5 * GIB,
    "hf-transformers": 0.5 * GIB,
    "sglang": 1.0 * GIB,
    # ExLlamaV2 load_autosplit reserves 192 MiB on the first device for its own buffers (model.py reserve_vram)
    # on top of the CUDA context (0.5 GiB, as llama.cpp)
    "exllamav2": 0.5 * GIB + 192 * 2**20,
}
_HF_FRAGMENTATION = (
    0.10  # PyTorch caching-allocator fragmentation 5-10% (docs/formulas.md), upper end for eager
)
# Largest prefill chunk in flight: vLLM max_num_batched_tokens 8192 (assumed V1 online default), TensorRT-LLM
# max_num_tokens 8192 (trtllm-build default), llama.cpp n_ubatch 512 (common.h); transformers does not chunk.
# SGLang chunked_prefill_size 8192 (server_args.py; 2048 on GPUs under 25 GB, not modelled); ExLlamaV2
# max_input_len 2048 (config.py: longer inputs run in several forward passes).
PREFILL_CHUNK = {"vllm": 8192, "tensorrt-llm": 8192, "llama.cpp": 512, "sglang": 8192, "exllamav2": 2048}
_VLLM_BLOCK = 16  # vLLM PagedAttention block size (tokens) — KV is allocated in whole blocks
# Vision activations: ResNet-50's largest live map is 112×112×64 = 0.8 M elements at 8.2 GFLOP/sample; we keep
# 4 such buffers and scale with sqrt(FLOPs) (rough; vision activations are small next to device memory).
_VISION_ELEMENTS, _VISION_FLOPS = 4 * 0.8e6, 8.2e9


@dataclass(frozen=True)
class Workload:
    """Everything about the request that does not depend on the accelerator."""

    model: ModelSpec
    engine: str
    fmt: WeightFormat
    kv_precision: str
    batch: int
    prompt_tokens: int
    output_tokens: int
    apple_metal_fraction: float = 0.75
    schedule: Schedule = STATIC  # how the engine batches requests (schedule.py)

    @cached_property
    def derived(self) -> dict[str, object]:
        """Quantities other modules derive from the workload alone, kept by key for its life (the catalog ranking
        estimates one workload on every accelerator): e.g. speed.py's prefill and decode FLOPs."""
        return {}

    @cached_property
    def mode(self) -> str:
        """'token' for autoregressive models (decoder transformers, LSTMs); 'sample' for the rest."""
        s = self.model.shape
        if self.model.architecture == "lstm" or (s is not None and s.causal):
            return "token"
        return "sample"

    @property
    def context_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @cached_property
    def layout(self) -> str:
        if self.mode == "sample":
            return "replica"
        return "tensor" if self.engine in TENSOR_PARALLEL_ENGINES else "layer"

    @property
    def act_bytes(self) -> int:
        return 4 if self.fmt.precision == "fp32" else _ACT_BYTES

    @cached_property
    def weights_bytes(self) -> float:
        return weight_bytes(self.model, self.fmt)

    @cached_property
    def input_embedding_bytes(self) -> float:
        return input_embedding_bytes(self.model, self.fmt)

    @cached_property
    def counts(self) -> tuple[int, ...]:
        """Valid device counts for this layout (cached: the suggestion loop asks per accelerator)."""
        return _valid_counts(self)

    @cached_property
    def expert_bytes(self) -> float:
        """Bytes of all routed experts (what an MoE decode step reads only partly)."""
        s = self.model.shape
        if s is None or not s.is_moe:
            return 0.0
        return (
            float(s.moe_layers * s.experts * mlp_parameters(s, s.expert_ffn_hidden_size))
            * self.fmt.body_bits
            / 8
        )


def kv_bytes_per_token(w: Workload, count: int = 1) -> float:
    """KV bytes per token on one device (kv.py: 2·L·g·d·bytes, MLA (r_kv + d_rope)·L·bytes); 0 without a cache."""
    s = w.model.shape
    if s is None or w.mode != "token":
        return 0.0
    return shape_kv_bytes_per_token(s, w.engine, w.kv_precision, w.layout, count)


@dataclass(frozen=True)
class MemoryLayout:
    per_device_bytes: float
    capacity_bytes: float  # usable on one device under the engine's budget
    weights_bytes: float  # per device
    kv_cache_bytes: float  # per device
    activations_bytes: float  # per device
    overhead_bytes: float  # per device
    kv_bytes_per_token: float  # per device
    count: int
    draft_weights_bytes: float = 0.0  # per device: the speculative draft (draft.py)
    draft_kv_cache_bytes: float = 0.0  # per device

    @property
    def draft_bytes(self) -> float:
        return self.draft_weights_bytes + self.draft_kv_cache_bytes

    @property
    def fits(self) -> bool:
        return self.per_device_bytes <= self.capacity_bytes

    @property
    def total_bytes(self) -> float:
        return self.per_device_bytes * self.count


def device_memory_bytes(w: Workload, acc: Accelerator) -> float:
    """Raw capacity one device offers: Apple unified memory counts only the Metal-wirable share
    (recommendedMaxWorkingSetSize ≈ 65-75%, docs/formulas.md "Catalog conventions")."""
    if acc.kind == "apple":
        return acc.memory_bytes * w.apple_metal_fraction
    return float(acc.memory_bytes)


def memory_layout(
    w: Workload, acc: Accelerator, count: int, batch: int | None = None, context: int | None = None
) -> MemoryLayout:
    """Per-device memory for `batch` sequences of `context` tokens each (defaults: the request's)."""
    return MemoryModel(w, acc, count).layout(batch, context)


class MemoryModel:
    """memory_layout for one workload on `count` devices of one accelerator: what depends on neither the batch nor
    the context is computed once (max_batch_size and max_context_tokens ask ~20 batches or contexts each)."""

    def __init__(self, w: Workload, acc: Accelerator, count: int):
        self.w, self.count = w, count
        self.divide = count if w.layout in ("tensor", "layer") else 1
        self.weights = w.weights_bytes / self.divide
        self.kv_token = kv_bytes_per_token(w, count if w.layout != "replica" else 1)
        # the speculative draft's weights and KV per token, on the same devices (draft.py)
        self.draft_weights, self.draft_kv_token = draft_per_device(w, count, self.kv_token)
        self.fixed_overhead = _FIXED_OVERHEAD[w.engine] if acc.kind != "cpu" else 0.0
        self.raw = device_memory_bytes(w, acc)
        fraction = _USABLE_FRACTION[w.engine]
        if w.engine == "sglang":
            fraction = next(f for tp, f in _SGLANG_FRACTION if count >= tp)
        self.usable = None if w.engine == "tensorrt-llm" else self.raw * fraction

    def layout(self, batch: int | None = None, context: int | None = None) -> MemoryLayout:
        per_device, capacity, kv, acts, overhead = self._terms(batch, context)
        b, ctx = self._batch_context(batch, context)
        draft_kv = self.draft_kv_token * b * ctx
        return MemoryLayout(
            per_device,
            capacity,
            self.weights,
            kv,
            acts,
            overhead,
            self.kv_token,
            self.count,
            self.draft_weights,
            draft_kv,
        )

    def fits(self, batch: int | None = None, context: int | None = None) -> bool:
        per_device, capacity, *_ = self._terms(batch, context)
        return per_device <= capacity

    def _terms(self, batch: int | None, context: int | None) -> tuple[float, float, float, float, float]:
        """(per-device bytes, usable capacity, KV cache, activations, overhead); the draft's weights and KV are in
        the per-device bytes (MemoryLayout lists them apart)."""
        w = self.w
        b, ctx = self._batch_context(batch, context)
        kv = self.kv_token * b * ctx
        draft = self.draft_weights + self.draft_kv_token * b * ctx
        acts = _activations(w, b, ctx, self.divide)
        overhead = self.fixed_overhead
        if w.engine == "hf-transformers":
            overhead += _HF_FRAGMENTATION * (kv + acts)
        capacity = self.usable
        if capacity is None:
            # TRT-LLM hands 90% of what is free after weights and buffers to the KV pool; the rest stays unused
            raw = self.raw
            capacity = raw - (1.0 - _TRT_FREE_FRACTION) * max(
                raw - self.weights - draft - acts - overhead, 0.0
            )
        return self.weights + draft + kv + acts + overhead, capacity, kv, acts, overhead

    def _batch_context(self, batch: int | None, context: int | None) -> tuple[int, int]:
        """(batch, context) with the request's defaults; vLLM's context rounded up to whole 16-token blocks."""
        w = self.w
        b = w.batch if batch is None else batch
        ctx = w.context_tokens if context is None else context
        if w.engine == "vllm":
            ctx = math.ceil(ctx / _VLLM_BLOCK) * _VLLM_BLOCK
        return b, ctx


def _activations(w: Workload, batch: int, ctx: int, divide: int) -> float:
    """Peak transient activations of one forward pass on one device."""
    model, s = w.model, w.model.shape
    if w.mode == "sample" and (s is None or model.architecture in ("cnn", "vit", "mlp")):
        flops = model.flops_per_sample or 2.0 * model.total_parameters
        return batch * _VISION_ELEMENTS * math.sqrt(flops / _VISION_FLOPS) * w.act_bytes
    if s is None:  # LSTM: a few hidden-state vectors per sequence
        return batch * 16.0 * 4096 * w.act_bytes
    tokens = batch * (w.prompt_tokens if w.mode == "token" else ctx)
    chunk = min(tokens, PREFILL_CHUNK.get(w.engine, tokens))
    ffn = s.experts_per_token * s.expert_ffn_hidden_size + s.shared_experts * s.expert_ffn_hidden_size
    if not s.is_moe:
        ffn = s.ffn_hidden_size
    # live tensors per token: residual, normed input, q/k/v/o (~4h) + gate/up/act of the MLP (~3f) — Korthikanti
    # et al. 2022 Table 2 inventory, minus everything only training keeps; FlashAttention stores no s×s scores
    per_token = (6 * s.hidden_size + 3 * ffn / divide) * w.act_bytes
    logits = batch * s.vocab_size * 4 / divide  # fp32 logits of the last position of each sequence
    scores = 0.0
    if w.engine == "llama.cpp":
        # ggml without flash-attn materialises KQ: n_ubatch × n_ctx × heads × fp32 (llama.cpp compute buffer)
        scores = chunk * ctx * s.attention_heads * 4 / divide
    return chunk * per_token + logits + scores


def valid_counts(w: Workload) -> list[int]:
    """Device counts the layout allows, ascending (tensor parallel: the head divisibility rule)."""
    return list(w.counts)


def _valid_counts(w: Workload) -> tuple[int, ...]:
    return tuple(_counts(w))


def _counts(w: Workload) -> list[int]:
    s = w.model.shape
    if w.layout == "tensor" and s is not None:
        return [
            t
            for t in range(1, MAX_DEVICES + 1)
            if tensor_degree_error(s.attention_heads, s.kv_heads, t) is None
        ]
    if w.layout == "layer" and s is not None:
        return list(range(1, min(MAX_DEVICES, s.layers) + 1))
    return list(range(1, MAX_DEVICES + 1))


def tensor_degree_error(heads: int, kv_heads: int, t: int) -> str | None:
    """Why tensor degree t cannot shard these heads, or None (vLLM config.verify_with_parallel_config)."""
    if heads % t:
        return _("must divide the {heads} attention heads").format(heads=heads)
    if kv_heads % t and t % kv_heads:
        return _(
            "must divide the {kv_heads} KV heads or be a multiple of them (KV heads replicate when t > g)"
        ).format(kv_heads=kv_heads)
    return None


def fewest_fitting(w: Workload, acc: Accelerator) -> int | None:
    """Fewest devices whose per-device memory fits, or None up to MAX_DEVICES."""
    if w.layout == "replica":
        return 1 if MemoryModel(w, acc, 1).fits() else None
    return _fewest(w, acc, lambda count: MemoryModel(w, acc, count).fits())


def fewest_running(w: Workload, acc: Accelerator) -> int | None:
    """Fewest devices on which the engine runs every request of the batch at once under its KV admission
    (kv_running_max; more than fewest_fitting's only where it allocates KV as tokens are computed), or None."""
    if w.layout == "replica":
        return None
    return _fewest(w, acc, lambda count: kv_running_max(w, acc, count, upper=w.batch) >= w.batch)


def _fewest(w: Workload, acc: Accelerator, ok: Callable[[int], bool]) -> int | None:
    """The first of the layout's device counts whose share of the weights fits one device and for which `ok`."""
    raw = device_memory_bytes(w, acc)
    return next((count for count in w.counts if w.weights_bytes / count <= raw and ok(count)), None)


def max_batch_size(
    w: Workload, acc: Accelerator, count: int, upper: int = 1 << 20, context: int | None = None
) -> int:
    """Largest batch up to `upper` at the request's context (or `context` tokens each) that fits (0 if even one
    sequence does not)."""
    model = MemoryModel(w, acc, count)
    return _largest(lambda b: model.fits(batch=b, context=context), upper)


def kv_running_max(w: Workload, acc: Accelerator, count: int, upper: int = 1 << 20) -> int:
    """Most requests the KV cache lets the engine run at once under its admission (admission.py): sequences of the
    tokens one running request holds on average; the whole context where the engine reserves it. 0 when one
    sequence's whole context does not fit: vLLM refuses to start and SGLang rejects the request."""
    if not MemoryModel(w, acc, count).fits(batch=1):
        return 0
    return max_batch_size(w, acc, count, upper, context=held_tokens(w))


def max_context_tokens(w: Workload, acc: Accelerator, count: int) -> int:
    """Largest per-sequence context (prompt + output) at the request's batch that fits, capped by the model."""
    s = w.model.shape
    cap = (s.max_context_tokens if s is not None else None) or (1 << 22)
    if w.mode == "sample":
        cap = min(cap, w.context_tokens) if s is not None else w.context_tokens
    model = MemoryModel(w, acc, count)
    return _largest(lambda c: model.fits(context=c), int(cap))


def _largest(ok: Callable[[int], bool], upper: int) -> int:
    """Largest n in [1, upper] with ok(n), assuming ok is monotone decreasing; 0 when ok(1) is False."""
    if not ok(1):
        return 0
    if ok(upper):
        return upper
    lo, hi = 1, upper  # ok(lo), not ok(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
