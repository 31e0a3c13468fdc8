"""speed.py's token formulas over an array of batch sizes at once (numpy): the serving planner's inner loop.

One model, not two: every per-workload and per-device quantity comes from speed.token_work / token_device (the
single estimate's own helpers, at batch 1 — each FLOP and byte term of speed.py is b × its batch-1 value), and
only the batch-dependent expressions are written here again, in the same order as _prefill and _decode.
tests/engine/test_planner_bulk.py checks this against estimate_speed on 1,000 random configurations (1e-9).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...hardware import Accelerator
from ...parallelism import group_bandwidth
from .efficiency import (
    allreduce_latency_s,
    compute_curve,
    compute_efficiency,
)
from .memory import PREFILL_CHUNK, Workload
from .speed import TokenDevice, TokenWork, stream_seconds, token_device, token_work, weights_read

FloatArray = np.ndarray


@dataclass(frozen=True)
class BatchSpeeds:
    """Seconds at each batch size of `batches` (same shape)."""

    batches: FloatArray
    time_to_first_token_s: FloatArray
    time_per_output_token_s: FloatArray
    end_to_end_s: FloatArray
    throughput: FloatArray | None = None  # requests/s when the scheduler says (continuous batching)

    @property
    def requests_per_second(self) -> FloatArray:
        """One replica's throughput: a batch of b requests every end-to-end time (speed.py's requests_per_second),
        or the continuous-batching model's steady-state rate."""
        return self.batches / self.end_to_end_s if self.throughput is None else self.throughput


def batch_speeds(w: Workload, acc: Accelerator, count: int, batches: FloatArray) -> BatchSpeeds:
    """TTFT, TPOT and end-to-end time of token workload `w` on `count` devices at every batch size given
    (w.batch is ignored). Sample-mode models have no tokens: the planner refuses them before this."""
    one = w if w.batch == 1 else replace(w, batch=1)
    work = token_work(one)
    d = token_device(one, acc, count, work.layers)
    b = np.asarray(batches, dtype=float)
    ttft = _prefill(one, work, d, b)
    tpot = _decode(one, work, d, b)
    e2e = ttft + (w.output_tokens - 1) * tpot
    return BatchSpeeds(b, ttft, tpot, e2e)


def efficiency(w: Workload, d: TokenDevice, tokens: FloatArray) -> FloatArray:
    """compute_efficiency over an array of token counts: eff_max · n/(n + n_half), n ≥ 1."""
    eff_max, n_half = compute_curve(w.engine, d.cls, d.precision, d.weight_only)
    n = np.maximum(tokens, 1.0)
    return eff_max * n / (n + n_half)


def _stream(w: Workload, d: TokenDevice, tokens: FloatArray, t: int) -> FloatArray:
    return stream_seconds(w, d, weights_read(w, tokens), t)


def tensor_allreduce(d: TokenDevice, layers: int, message_bytes: FloatArray) -> FloatArray | float:
    """speed._allreduce_s: two all-reduces per layer, latency + ring time (zero for an empty payload)."""
    if not d.tensor or d.devices <= 1:
        return 0.0
    bandwidth = group_bandwidth(d.acc, d.devices, 1)
    ring = np.where(message_bytes > 0, 2.0 * (d.devices - 1) / d.devices * message_bytes / bandwidth, 0.0)
    return 2 * layers * (allreduce_latency_s(d.acc) + ring)


def _prefill(w: Workload, work: TokenWork, d: TokenDevice, b: FloatArray) -> FloatArray:
    tokens = b * w.prompt_tokens
    body_flops, head_flops = work.body_flops * b, work.head_flops * b
    compute = (body_flops / efficiency(w, d, tokens) + head_flops / efficiency(w, d, b)) / d.t / d.peak
    chunk = PREFILL_CHUNK.get(w.engine)
    chunks = np.ceil(tokens / chunk) if chunk else np.ones_like(tokens)
    memory = chunks * _stream(w, d, tokens, d.t) + tokens * d.kv_token / (d.bw * d.kv_mbu)
    comm = tensor_allreduce(d, work.layers, tokens * work.hidden * w.act_bytes)
    return np.maximum(compute, memory) + comm + chunks * (d.step_overhead + d.hops)


def _decode(w: Workload, work: TokenWork, d: TokenDevice, b: FloatArray) -> FloatArray:
    t = d.t
    step_weights = _stream(w, d, b, t)
    eff = compute_efficiency(w.engine, d.cls, d.precision, d.weight_only, float("inf"))
    step_linear = 2.0 * work.matmul * b / t / (d.peak * eff)
    step_kv = b * work.ctx * d.kv_token / (d.bw * d.kv_mbu)
    attn_compute = b * work.decode_attention_flops / t / (d.peak * eff)
    comm = tensor_allreduce(d, work.layers, b * work.hidden * w.act_bytes)
    tpot = (
        np.maximum(step_weights, step_linear)
        + np.maximum(step_kv, attn_compute)
        + d.step_overhead
        + comm
        + d.hops
    )
    # beyond the CUDA-graph batch the host launches each layer's kernels (speed._decode)
    return np.where(b > d.graph_rows, np.maximum(tpot, d.eager_s), tpot)
