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
from .memory import Workload, max_batch_size
from .schedule import Pool, batched_tokens
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
        return _speed(w, acc, count, closed_loop(w, acc, count, np.array([float(w.batch)])), None)
    cap = max(1, w.schedule.max_concurrency or max_batch_size(w, acc, count))
    top = closed_loop(w, acc, count, np.array([float(cap)]))
    sustainable = float(top.requests_per_second[0])
    if rate >= SUSTAINABLE_SHARE * sustainable:
        return _saturated(w, acc, count, top, cap, sustainable)
    return _speed(w, acc, count, open_loop(w, acc, count, np.array([float(rate)])), sustainable)


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
    w: Workload, acc: Accelerator, count: int, top: LoadSpeeds, cap: int, sustainable: float
) -> Speed:
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
        load=_load(top, float(cap), sustainable, True, sustainable),
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
