"""Disaggregated prefill/decode: separate prefill and decode pools, the prompt's KV moved between them.

DistServe (Zhong et al., OSDI 2024), Splitwise (Patel et al., ISCA 2024), Mooncake (Qin et al., FAST 2025) and
NVIDIA Dynamo run prompts and generations on different engines so neither interferes with the other
(docs/formulas.md "Disaggregated prefill/decode"). The model, over numpy arrays like continuous.py and built on its
step time (engine_step.py) and queue formulas:
- prefill pool: each replica runs steps of prompt tokens only, up to its token budget (no decode rows); a prompt is
  served in ⌈P/budget⌉ full steps (continuous.own_prefill with no decoding requests), a replica's capacity is
  budget tokens per full step; prompts queue M/D/1 at utilisation ρ = X/(R_p·capacity) (continuous.queue_wait,
  continuous.queued_at: the same waits as the co-located model's).
- KV transfer: each decode rank receives its shard of the prompt's KV (memory.kv_bytes_per_token at the decode
  degree), each prefill rank sends its own (at the prefill degree), rank to rank over the scale-up fabric when both
  pools share one domain, else over each device's network link; the slower side sets the time. Sent after the
  prefill (DistServe, vLLM's connectors) unless `layerwise_kv_transfer`: then it streams layer by layer under the
  prefill (Splitwise §IV-C, Mooncake) and only the last layer's share and any excess over the prefill show.
- decode pool: continuous steps of d decoding requests per replica and no prefill chunk, T(d, 0);
  TPOT = T(d, 0)/tokens per step; a replica completes d/((O − 1)·T(d, 0)/tokens per step) requests/s.
- TTFT = front-end latency + prefill queue + own prefill + KV transfer; throughput limited by the slower pool.
The steady state is parametrised by d (a geometric grid up to the decode replica's largest batch): every figure is
explicit in d, so no fixed point is needed; a concurrency or a rate is read off the grid by interpolation in log.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...parallelism import domain_size, network_bytes_per_s, scale_up_bytes_per_s
from .arrays import FloatArray
from .continuous import GRID_POINTS, NAMES
from .engine_step import StepParts, step_parts, step_seconds
from .memory import Workload, kv_bytes_per_token, kv_running_max
from .prefill_wait import MAX_PREFILL_LOAD, own_prefill, prefill_rate, queue_wait, queued_at
from .schedule import Disaggregation, Pool, max_num_seqs, quantile_q

_UNIT = np.linspace(0.0, 1.0, GRID_POINTS)


@dataclass(frozen=True)
class PoolSpeeds:
    """A disaggregated deployment's steady state at one concurrency or rate (floats, base units)."""

    concurrency: float
    requests_per_second: float
    ttft: dict[str, float]  # p50 / p90 / p99
    tpot: dict[str, float]
    ttft_mean: float
    end_to_end_s: float
    prefill_s: float  # one prompt's own prefill steps
    prefill_wait_s: float  # mean queue before them
    kv_transfer_s: float  # what the transfer adds to TTFT
    kv_transfer_bytes: float  # received by each decode rank
    kv_link: str  # scale-up or scale-out
    decode_step_s: float
    decode_batch: float  # mean decoding requests per decode replica
    prefill_utilization: float
    prefill_capacity_rps: float  # the prefill pool's most prompts/s
    decode_capacity_rps: float  # the decode pool's most requests/s at its largest batch
    sustainable_rps: (
        float  # the slower pool's: min(the prefill queue's cap × its capacity, the decode pool's)
    )
    bottleneck: str  # prefill | decode: the pool that limits throughput
    saturated: bool  # the concurrency or rate is past what the pools sustain


def prefill_capacity(p: StepParts) -> FloatArray:
    """Prompts/s of one prefill replica running full steps with no decoding request (continuous.prefill_rate)."""
    return prefill_rate(p, np.zeros_like(np.asarray(p.prompt, dtype=float)))


def prefill_seconds(p: StepParts) -> FloatArray:
    """One prompt's own prefill on an idle prefill replica: its chunks with no decoding requests beside them."""
    return own_prefill(p, np.zeros_like(np.asarray(p.prompt, dtype=float)))


def decode_rate(p: StepParts, batch: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(step seconds, requests/s) of one decode replica at `batch` decoding requests (no prefill chunks)."""
    t = step_seconds(p, batch, np.zeros_like(batch))
    steps = np.maximum(np.maximum(p.output - 1.0, 0.0) / p.tokens_per_step, 1e-9)  # decode steps per request
    return t, batch / (steps * t)


def kv_transfer(w: Workload, d: Disaggregation, prefill_s: float) -> tuple[float, float, str]:
    """(seconds the transfer adds to TTFT, bytes each decode rank receives, link) for one prompt."""
    pre, dec = d.prefill, d.decode
    link, bandwidth = _link(pre, dec)
    received = w.prompt_tokens * kv_bytes_per_token(w, dec.tensor_parallel)
    sent = w.prompt_tokens * kv_bytes_per_token(w, pre.tensor_parallel)
    seconds = max(received, sent) / bandwidth
    if d.layerwise_kv_transfer:  # streamed under the prefill: the last layer's share and any excess show
        layers = w.model.shape.layers if w.model.shape is not None else 1
        seconds = max(seconds - prefill_s, 0.0) + seconds / max(layers, 1)
    return seconds, received, link


def _link(pre: Pool, dec: Pool) -> tuple[str, float]:
    """Rank-to-rank bandwidth between the pools, one direction: the scale-up fabric when both pools of one part fit
    one domain, else the slower of the two devices' network links."""
    acc = pre.accelerator
    if acc.id == dec.accelerator.id and pre.devices + dec.devices <= domain_size(acc):
        return "scale-up", scale_up_bytes_per_s(acc)
    span = pre.devices + dec.devices
    return "scale-out", min(network_bytes_per_s(acc, span), network_bytes_per_s(dec.accelerator, span))


def pool_speeds(w: Workload, by: str, value: float) -> PoolSpeeds:
    """The steady state at `value` of `by` (concurrency: a closed loop; requests_per_second: Poisson arrivals)."""
    d = w.schedule.disaggregation
    assert d is not None
    pp = step_parts(w, d.prefill.accelerator, d.prefill.tensor_parallel)
    dp = step_parts(w, d.decode.accelerator, d.decode.tensor_parallel)
    service = float(prefill_seconds(pp))
    capacity = d.prefill.replicas * float(prefill_capacity(pp))
    transfer, received, link = kv_transfer(w, d, service)
    batch = _grid(dp, max(1, decode_slots(w, d.decode)), capacity / d.decode.replicas)
    step, rate = decode_rate(dp, batch)
    x = d.decode.replicas * rate
    decode_cap = float(x[-1])
    load = np.minimum(x / capacity, MAX_PREFILL_LOAD)
    fixed = float(pp.front_end_s) + service + transfer
    steps = max(w.output_tokens - 1.0, 0.0) / float(dp.tokens_per_step)
    conc = x * (fixed + queue_wait(load, service) + steps * step)
    cap = (
        MAX_PREFILL_LOAD * capacity
    )  # a concurrency: the grid's points under the prefill queue's cap; a rate: the
    # slower pool's capacity, judged on the rate itself (not on the grid point below it)
    if by == "concurrency":
        b, saturated = _locate(value, batch, conc, x < cap, None)
    else:
        b, saturated = _locate(value, batch, x, np.ones_like(x, dtype=bool), min(cap, decode_cap))
    t, r = (float(v[0]) for v in decode_rate(dp, np.array([b])))
    # the rate the prefill pool sees: the given one under Poisson arrivals, else the decode pool's at that batch
    xr = value if by != "concurrency" and not saturated else d.decode.replicas * r
    xr = min(xr, MAX_PREFILL_LOAD * capacity)
    rho = xr / capacity
    wait = float(queue_wait(np.array(rho), np.array(service)))
    ttft = {n: fixed + float(queued_at(np.array(rho), np.array(wait), quantile_q(n))) for n in NAMES}
    ttft_mean = fixed + wait
    if saturated and by == "concurrency":  # every slot busy: the rest queue in front of the pools
        ttft_mean = max(value / xr - steps * t, ttft_mean)
        ttft = {n: max(ttft_mean, v) for n, v in ttft.items()}
    tpot = t / float(dp.tokens_per_step)
    e2e = ttft_mean + max(w.output_tokens - 1.0, 0.0) * tpot
    return PoolSpeeds(
        concurrency=value if by == "concurrency" else xr * e2e,
        requests_per_second=xr if saturated else (value / e2e if by == "concurrency" else value),
        ttft=ttft,
        tpot=dict.fromkeys(NAMES, tpot),
        ttft_mean=ttft_mean,
        end_to_end_s=e2e,
        prefill_s=service,
        prefill_wait_s=wait,
        kv_transfer_s=transfer,
        kv_transfer_bytes=received,
        kv_link=link,
        decode_step_s=t,
        decode_batch=b,
        prefill_utilization=rho,
        prefill_capacity_rps=capacity,
        decode_capacity_rps=decode_cap,
        sustainable_rps=min(MAX_PREFILL_LOAD * capacity, decode_cap),
        bottleneck="prefill" if capacity * MAX_PREFILL_LOAD < decode_cap else "decode",
        saturated=saturated,
    )


def _locate(
    value: float, batch: FloatArray, key: FloatArray, ok: FloatArray, top: float | None
) -> tuple[float, bool]:
    """(decode batch per replica, saturated) where `key` (concurrency or rate at each batch of the grid) reaches
    `value`, by interpolation in log over the sustainable points `ok`; saturated past `top` (None: the last
    sustainable point's key)."""
    last = int(np.flatnonzero(ok)[-1]) if ok.any() else 0
    key = np.maximum.accumulate(key)
    limit = float(key[last]) if top is None else top
    saturated = bool(not ok.any() or value > limit * (1.0 + 1e-9))
    at = np.log(max(min(value, float(key[last])), 1e-300))
    return float(np.exp(np.interp(at, np.log(key[: last + 1]), np.log(batch[: last + 1])))), saturated


def _grid(p: StepParts, top: int, prefill_rate: float) -> FloatArray:
    """Decoding requests per decode replica, geometric from a load where the pools are idle (a replica's requests/s
    under 1e-3 of its share of the prefill pool's capacity, and 1e-4 of the largest batch) to the largest batch."""
    t0, r0 = (float(v[0]) for v in decode_rate(p, np.array([1.0])))
    idle = min(1e-4 * top, 1e-3 * prefill_rate / r0) if r0 > 0 else 1e-4 * top
    return top * (idle / top) ** (1.0 - _UNIT)


def decode_slots(w: Workload, pool: Pool) -> int:
    """Most requests one decode replica holds (its KV cache under the engine's admission, admission.py, or
    max_num_seqs where smaller: the request's or the engine's default on the decode pool's part)."""
    fits = kv_running_max(w, pool.accelerator, pool.tensor_parallel)
    cap = max_num_seqs(w.schedule, w.engine, pool.accelerator)[0]
    return min(fits, cap) if cap else fits
