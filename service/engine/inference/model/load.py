"""Serving speed under continuous batching, as the estimate's Speed: at a concurrency (closed loop, `batch_size`
requests always in flight) or at an arrival rate (Poisson, `workload.requests_per_second`).

The scalar fields keep their meaning for clients that read them (time to first token and time per output token
are the p50); `percentiles` holds p50/p90/p99 and `load` the steady state (concurrency, step composition,
whether the rate is sustainable). A rate the deployment cannot sustain answers `saturated` with the sustainable
rate and no latencies.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...hardware import Accelerator
from .continuous import NAMES, LoadSpeeds, closed_loop, open_loop
from .disaggregated import PoolSpeeds, pool_speeds
from .memory import MemoryModel, Workload, kv_running_max
from .schedule import Pool, batched_tokens, seqs_limit
from .speed import Speed, estimate_speed, token_speed

SUSTAINABLE_SHARE = 0.98  # a rate within 2 % of the largest batch's throughput has no steady state


def serving_speed(w: Workload, acc: Accelerator, count: int) -> Speed:
    """The estimate's speed under the workload's scheduler: continuous batching here, else speed.py's static batch
    (and sample models)."""
    if w.mode == "token" and w.schedule.disaggregation is not None:
        return disaggregated_speed(w)
    if w.mode == "token" and w.schedule.continuous:
        return continuous_speed(w, acc, count)
    return estimate_speed(w, acc, count)


def continuous_speed(w: Workload, acc: Accelerator, count: int) -> Speed:
    rate = w.schedule.requests_per_second
    if rate is None:
        running, limit = running_limit(w, acc, count)
        if 1 <= running < w.batch:
            return _queued(w, acc, count, running, limit)
        return _speed(w, acc, count, closed_loop(w, acc, count, np.array([float(w.batch)])), None)
    most, limit = running_limit(w, acc, count, at_batch=False)
    cap = max(1, most)
    top = closed_loop(w, acc, count, np.array([float(cap)]))
    sustainable = float(top.requests_per_second[0])
    if rate >= SUSTAINABLE_SHARE * sustainable:
        return _saturated(w, acc, count, top, cap, sustainable, limit)
    return _speed(w, acc, count, open_loop(w, acc, count, np.array([float(rate)])), sustainable)


def running_limit(w: Workload, acc: Accelerator, count: int, at_batch: bool = True) -> tuple[int, str | None]:
    """The most requests the engine runs at once and what sets it: `kv_cache` (the largest batch whose KV cache fits
    under the engine's admission, memory.kv_running_max: vLLM and SGLang allocate as tokens are computed, so a running
    request holds its prompt and about half its output; TensorRT-LLM reserves prompt + output; 0 when nothing fits)
    or `max_num_seqs` (serving.max_num_seqs or the engine's default, schedule.max_num_seqs, where smaller). Beyond it a continuous-batching engine admits requests as sequences
    finish and the rest wait in its queue (vLLM's waiting queue, SGLang's and TensorRT-LLM's request queues).
    `at_batch`: (batch, None) when the request's batch fits and is within max_num_seqs (the usual case: one memory
    check instead of a search)."""
    if (
        at_batch
        and seqs_limit(w.schedule, w.engine, acc, w.batch) == w.batch
        and MemoryModel(w, acc, count).fits()
    ):
        return w.batch, None
    kv = kv_running_max(w, acc, count)
    most = seqs_limit(w.schedule, w.engine, acc, kv)
    return most, ("max_num_seqs" if most < kv else "kv_cache")


def _queued(w: Workload, acc: Accelerator, count: int, running: int, limit: str | None) -> Speed:
    """More requests in flight (C = batch_size) than the engine runs (R): the engine runs R, each freed slot is taken
    by the next waiting request, so steps look like a closed loop of R; every request waits (C − R)/X in the queue
    before its prefill (X: completions/s at R; Little's law: C/X = E2E at R + that wait). Fixed lengths: the wait
    is the same for every request (first come, first served), so it shifts every TTFT percentile."""
    at_r = _speed(w, acc, count, closed_loop(w, acc, count, np.array([float(running)])), None)
    assert at_r.percentiles is not None and at_r.load is not None and at_r.time_to_first_token_s is not None
    wait = (w.batch - running) / at_r.requests_per_second
    ttft = {n: v + wait for n, v in at_r.percentiles["time_to_first_token_s"].items()}
    return replace(
        at_r,
        time_to_first_token_s=ttft["p50"],
        end_to_end_s=at_r.end_to_end_s + wait,
        percentiles={**at_r.percentiles, "time_to_first_token_s": ttft},
        load={
            **at_r.load,
            "concurrency": float(w.batch),
            "running_requests": float(running),
            "queued_requests": float(w.batch - running),
            "queue_wait_s": wait,
            "running_limit": limit,
        },
    )


def _static_parts(w: Workload, acc: Accelerator, count: int, concurrency: float) -> Speed:
    """The static model at the steady state's concurrency: its bounds and terms describe the steps."""
    return token_speed(replace(w, batch=max(1, round(concurrency))), acc, count)


def _prefill_share(ls: LoadSpeeds) -> float:
    """Share of the engine's time the prefill chunks add to the steps that carry them, f·(T_mix − T_dec) / T̄: what
    input tokens are charged (the decode rows of a mixed step would have run anyway; response.py); f·T_mix / T̄
    when prompts run in steps of their own."""
    f, mix, dec = (float(a[0]) for a in (ls.prefill_step_share, ls.mixed_step_s, ls.decode_step_s))
    mean = f * mix + (1.0 - f) * dec
    added = mix - dec if ls.mixed else mix  # a prompt-only step (no mixed steps) is all prefill
    return f * added / mean if mean > 0 else 0.0


def _load_terms(ls: LoadSpeeds) -> dict[str, float]:
    return {
        "decode_step_s": float(ls.decode_step_s[0]),
        "mixed_step_s": float(ls.mixed_step_s[0]),
        "prefill_step_share": float(ls.prefill_step_share[0]),
        "prefill_tokens_per_mixed_step": float(ls.prefill_tokens_per_step[0]),
        "max_num_batched_tokens": float(ls.budget_tokens),
    }


def _load(
    ls: LoadSpeeds, conc: float, rate: float, saturated: bool, sustainable: float | None
) -> dict[str, Any]:
    """The answer's `load` section from the steady state read at the request's concurrency or rate."""
    return {
        "scheduler": "continuous",
        "concurrency": conc,
        "requests_per_second": rate,
        "saturated": saturated,
        "sustainable_requests_per_second": sustainable,
        "prefill_queue_saturated": bool(ls.prefill_saturated[0]),
        "prefill_time_share": _prefill_share(ls),
        "max_num_batched_tokens": ls.budget_tokens,
        "running_requests": conc,
        "queued_requests": 0.0,
        "queue_wait_s": 0.0,
        "running_limit": None,
    }


def _speed(w: Workload, acc: Accelerator, count: int, ls: LoadSpeeds, sustainable: float | None) -> Speed:
    x = float(ls.requests_per_second[0])
    conc = float(ls.concurrency[0])
    static = _static_parts(w, acc, count, conc)
    ttft = {n: float(ls.ttft[n][0]) for n in NAMES}
    tpot = {n: float(ls.tpot[n][0]) for n in NAMES}
    return replace(
        static,
        time_to_first_token_s=ttft["p50"],
        time_per_output_token_s=tpot["p50"],
        end_to_end_s=float(ls.end_to_end_s[0]),
        output_tokens_per_second=x * w.output_tokens,
        per_sequence_tokens_per_second=1.0 / tpot["p50"],
        requests_per_second=x,
        terms={**static.terms, **_load_terms(ls)},
        percentiles={"time_to_first_token_s": ttft, "time_per_output_token_s": tpot},
        load=_load(ls, conc, x, False, sustainable),
    )


def _saturated(
    w: Workload,
    acc: Accelerator,
    count: int,
    top: LoadSpeeds,
    cap: int,
    sustainable: float,
    limit: str | None,
) -> Speed:
    """A rate past the sustainable one (the closed loop at the `cap` the engine runs, set by `limit`)."""
    static = _static_parts(w, acc, count, cap)
    return replace(
        static,
        time_to_first_token_s=None,
        time_per_output_token_s=None,
        end_to_end_s=float(top.end_to_end_s[0]),
        output_tokens_per_second=sustainable * w.output_tokens,
        per_sequence_tokens_per_second=None,
        requests_per_second=sustainable,
        terms={**static.terms, **_load_terms(top)},
        percentiles=None,
        load={**_load(top, float(cap), sustainable, True, sustainable), "running_limit": limit},
    )


def disaggregated_speed(w: Workload) -> Speed:
    """Separate prefill and decode pools (disaggregated.py) at the request's concurrency (`batch_size`, the whole
    deployment's) or arrival rate; the static model's bounds and terms describe a decode replica's steps."""
    d = w.schedule.disaggregation
    assert d is not None
    rate = w.schedule.requests_per_second
    ps = (
        pool_speeds(w, "requests_per_second", rate) if rate else pool_speeds(w, "concurrency", float(w.batch))
    )
    static = _static_parts(w, d.decode.accelerator, d.decode.tensor_parallel, ps.decode_batch)
    gone = ps.saturated and rate is not None  # a rate past the pools' capacity: no steady state
    ttft = None if gone else ps.ttft
    tpot = None if gone else ps.tpot
    budget = float(batched_tokens(w.schedule, w.engine, d.prefill.accelerator)[0])
    return replace(
        static,
        time_to_first_token_s=ttft["p50"] if ttft else None,
        time_per_output_token_s=tpot["p50"] if tpot else None,
        end_to_end_s=ps.end_to_end_s,
        output_tokens_per_second=ps.requests_per_second * w.output_tokens,
        per_sequence_tokens_per_second=1.0 / tpot["p50"] if tpot else None,
        requests_per_second=ps.requests_per_second,
        terms={
            **static.terms,
            "decode_step_s": ps.decode_step_s,
            "prefill_step_share": 0.0,
            "max_num_batched_tokens": budget,
        },
        percentiles={"time_to_first_token_s": ttft, "time_per_output_token_s": tpot}
        if ttft and tpot
        else None,
        load={
            "scheduler": "continuous",
            "concurrency": ps.concurrency,
            "requests_per_second": ps.requests_per_second,
            "saturated": gone,
            "sustainable_requests_per_second": ps.sustainable_rps,
            "prefill_queue_saturated": ps.saturated and ps.bottleneck == "prefill",
            "prefill_time_share": d.prefill.devices / (d.prefill.devices + d.decode.devices),
            "max_num_batched_tokens": int(budget),
            "disaggregation": _pools(w, ps),
        },
    )


def _pools(w: Workload, ps: PoolSpeeds) -> dict[str, Any]:
    """The answer's `load.disaggregation`: both pools and what moves between them."""
    d = w.schedule.disaggregation
    assert d is not None
    return {
        "prefill": {
            **_pool(d.prefill),
            "utilization": ps.prefill_utilization,
            "capacity_requests_per_second": ps.prefill_capacity_rps,
            "prefill_s": ps.prefill_s,
            "queue_wait_s": ps.prefill_wait_s,
        },
        "decode": {
            **_pool(d.decode),
            "batch_per_replica": ps.decode_batch,
            "capacity_requests_per_second": ps.decode_capacity_rps,
            "step_s": ps.decode_step_s,
        },
        "kv_transfer": {
            "bytes_per_request_per_decode_rank": ps.kv_transfer_bytes,
            "seconds": ps.kv_transfer_s,
            "link": ps.kv_link,
            "layerwise": d.layerwise_kv_transfer,
        },
        "bottleneck": ps.bottleneck,
    }


def _pool(p: Pool) -> dict[str, Any]:
    return {
        "accelerator": p.accelerator.id,
        "tensor_parallel": p.tensor_parallel,
        "replicas": p.replicas,
        "devices": p.devices,
    }
