"""Continuous batching: step composition, TTFT/TPOT percentiles and throughput at a concurrency or arrival rate.

A queueing model in closed form, written once over numpy arrays (the single estimate passes one concurrency, the
serving planner every batch size at once; docs/formulas.md "Continuous batching"). Why not a simulation: the
planner evaluates every batch size of thousands of deployments per request within a second; a step-level
simulation of a few thousand requests costs tens of milliseconds each.

The steady state is parametrised by a, the prompts that arrive per engine step (a = X·T̄): given a, everything is
explicit, so one grid of a (geometric, GRID_POINTS values up to the budget's limit) gives the curve concurrency →
figures, and any concurrency (or rate) is read off it by linear interpolation in log space: the same grid for the
single estimate and the planner, so both give the same figure. For each a, two passes (the second with the first
pass's concurrency and decode-phase share):
- chunk c = min(budget − d, P·max(1, a)) (without chunking: at least P), prefill share of steps f = a·P/c;
  T_mix = T(d, c), T_dec = T(d, 0), T̄ = f·T_mix + (1 − f)·T_dec, X = a/T̄ (engine_step.py: T);
- a decoding request steps with 1 + d_o requests, d_o = d·(C − 1)/C in a closed loop (it is not among the others),
  d under Poisson arrivals, and sees other prompts in f_seen = f·(C − 1)/C (or f) of its steps:
  T_seen = f_seen·T(1 + d_o, c) + (1 − f_seen)·T(1 + d_o, 0), and d = X·(O − 1)·T_seen (Little's law);
- TTFT = front-end latency + own prefill (⌈P/(budget − d_o)⌉ steps of T(d_o, min(P, budget − d_o))) + the rest of
  the step in flight (uniform; busy (C − 1)/C, or 1 − e^(−d)) + the wait behind other prompts (M/D/1: P(wait) = f,
  exponential tail, mean f/(2(1 − f))·service); C = X·(TTFT + (O − 1)·T_seen).
- TPOT of one request = T_dec + (T_mix − T_dec)·M/(O − 1), M ~ Binomial(O − 1, f_seen) (normal approximation).
- Past the last a whose prompts fit the budget (a·P > budget − d) every step is full: d = budget·(O − 1)/(P + O − 1),
  X = budget/((P + O − 1)·T_full), and prompts queue: TTFT = C/X − (O − 1)·T_full.
- Engines that do not mix (SGLang's default, schedule.mixed_chunk): a step carries prompt tokens or decodes, never
  both. Prompt steps take the whole budget with no decode row beside, T_mix = T(0, c), and the decoding requests
  stall through them: a request's token takes one decode step plus K prompt steps, K geometric with mean
  s/(1 − s) (s = f_seen, the share of prompt steps while it decodes), so T_seen = T(1 + d_o, 0) + s/(1 − s)·T(0, c)
  and its TPOT spread is that of the mean of O − 1 such K (variance s/(1 − s)² each).
- Overlap scheduling (SGLang's default, schedule.overlap_schedule): the next step is launched before the last
  one's results are read, so a prompt that arrives during a step waits for it and for the one already queued: one
  mean step more in the in-flight wait.
- Fixed lengths (workload.lengths "fixed", closed loop): the C requests come back as one burst, prefilled in
  groups of g = min(C, ⌊room/P⌋) one step after the other; a prompt waits for its group's step T(d, g·P) and the
  group steps before it (the mean over the burst, or ⌈qC/g⌉ − 1 at quantile q) instead of the M/D/1 wait, and the
  chunk is g·P. Groups of one (P ≥ room/2) are the spread model.
Arrival rates (Poisson, open loop) are read off the grid by X instead of C.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...hardware import Accelerator
from .arrays import BatchSpeeds, FloatArray, batch_speeds
from .engine_step import StepParts, stack_parts, step_parts, step_seconds
from .memory import Workload
from .prefill_wait import (
    MAX_PREFILL_LOAD,
    burst_size,
    either,
    group_prefill,
    groups_ahead,
    own_prefill,
    prefill_rate,
    queue_wait,
    queued_at,
    rows_beside,
)
from .schedule import quantile_q, quantile_z

# values of a per deployment: adjacent points 5-10 % apart, linear interpolation in log space
GRID_POINTS = 192
# two passes, then secant steps on the concurrency: within 0.03 % of the fixed point (40 passes) on five workloads
PASSES = 4
# without mixed steps, the decodes' share of steps is floored here (stalls diverge at 0)
MIN_DECODE_SHARE = 1e-3
NAMES = ("p50", "p90", "p99")
_UNIT = np.linspace(0.0, 1.0, GRID_POINTS)


@dataclass(frozen=True)
class LoadSpeeds:
    """Steady-state figures at each concurrency (or arrival rate) given, all arrays of the same shape."""

    concurrency: FloatArray  # mean requests in flight (given, or implied by the rate)
    requests_per_second: FloatArray
    ttft: dict[str, FloatArray]  # p50 / p90 / p99
    tpot: dict[str, FloatArray]
    ttft_mean: FloatArray
    tpot_mean: FloatArray
    end_to_end_s: FloatArray  # mean
    decode_step_s: FloatArray
    mixed_step_s: FloatArray
    prefill_step_share: FloatArray  # f
    prefill_tokens_per_step: FloatArray  # c
    budget_tokens: int
    prefill_saturated: FloatArray  # bool: every step full, prompts queue for the budget
    mixed: bool = True  # prompt chunks share steps with decodes (else mixed_step_s is a prompt-only step)


def closed_loop(w: Workload, acc: Accelerator, count: int, concurrency: FloatArray) -> LoadSpeeds:
    """Steady state with `concurrency` requests always in flight (a benchmark's --max-concurrency)."""
    p = step_parts(w, acc, count)
    curve = _curve(stack_parts([p]), closed=True)
    return _read(p, {k: v[0] for k, v in curve.items()}, "concurrency", np.asarray(concurrency, dtype=float))


def open_loop(w: Workload, acc: Accelerator, count: int, rate: FloatArray) -> LoadSpeeds:
    """Steady state under Poisson arrivals at `rate` requests/s (callers check the rate is sustainable)."""
    p = step_parts(w, acc, count)
    curve = _curve(stack_parts([p]), closed=False)
    return _read(p, {k: v[0] for k, v in curve.items()}, "requests_per_second", np.asarray(rate, dtype=float))


Deployment = tuple[Workload, Accelerator, int, FloatArray]  # workload, part, devices, batch sizes


def load_speeds(deployments: Sequence[Deployment]) -> list[BatchSpeeds]:
    """The serving planner's arrays: for each deployment, every batch size as a concurrency under the workload's
    scheduler, latencies at the schedule's percentile (static workloads: arrays.batch_speeds). The continuous
    deployments are stacked and their curves computed in one array (the cost is per array operation)."""
    out: list[BatchSpeeds | None] = [None] * len(deployments)
    continuous: list[int] = []
    for i, (w, acc, count, batches) in enumerate(deployments):
        if w.schedule.continuous:
            continuous.append(i)
        else:
            out[i] = batch_speeds(w, acc, count, batches)
    if continuous:
        parts = [step_parts(*deployments[i][:3]) for i in continuous]
        curves = _curve(stack_parts(parts), closed=True)
        for k, i in enumerate(continuous):
            w, b = deployments[i][0], np.asarray(deployments[i][3], dtype=float)
            q = w.schedule.percentile
            names = ("concurrency", "requests_per_second", "ttft_mean", "tpot_mean", f"ttft_{q}", f"tpot_{q}")
            ls = _read(parts[k], {key: v[k] for key, v in curves.items()}, "concurrency", b, names)
            out[i] = BatchSpeeds(
                b, ls.ttft[q], ls.tpot[q], ls.end_to_end_s, throughput=ls.requests_per_second
            )
    return [s for s in out if s is not None]


def _grid(p: StepParts) -> FloatArray:
    """Prompts arriving per step, from a light load (one request in 1,000 generations) to the budget's limit
    (a (K, GRID_POINTS) array for K stacked deployments)."""
    o1 = np.maximum(p.output - 1.0, 0.0)
    high = np.where(p.chunked, p.budget / p.prompt, np.maximum(p.budget / p.prompt, 1.0))
    low = np.minimum(1e-3 / (o1 + 1.0), high * 1e-3)
    return low * (high / low) ** _UNIT


def _curve(p: StepParts, closed: bool) -> dict[str, FloatArray]:
    """Every figure at each a of the grid (two passes: module docstring)."""
    a = _grid(p)
    o1 = np.maximum(p.output - 1.0, 0.0) / p.tokens_per_step  # decode steps per request
    zeros = 0.0  # no prompt tokens: a scalar chunk costs the prefill terms one column (engine_step._step)
    d = a * o1
    # a first estimate of the concurrency: the own prefill beside every decoding request, no queueing
    t0 = step_seconds(p, d, zeros)
    conc = a / t0 * (p.front_end_s + own_prefill(p, d) + o1 * t0)
    tried: list[tuple[FloatArray, FloatArray]] = []  # (concurrency in, concurrency out) of each pass
    for _ in range(PASSES):
        if len(tried) == 2:  # a secant step on C ↦ C_out − C: the map is nearly linear, one step lands on it
            (c0, g0), (c1, g1) = ((cin, cout - cin) for cin, cout in tried)
            slope = g1 - g0
            safe = np.abs(slope) > 1e-12 * np.maximum(np.abs(c1), 1.0)
            conc = np.where(safe, c1 - g1 * (c1 - c0) / np.where(safe, slope, 1.0), c1 + g1)
            conc = np.maximum(conc, 0.0)
        conc_in = conc
        d_beside = rows_beside(p, d)  # decode rows in a step that carries prompt tokens: all, or none
        room = np.maximum(p.budget - d_beside * p.verify_rows, 1.0)
        burst = burst_size(p, conc, room) if closed else 1.0
        wanted = p.prompt * np.maximum(a, burst)
        c = np.minimum(room, wanted)
        c = np.where(p.chunked, c, np.maximum(p.prompt, c))
        f = np.minimum(a * p.prompt / c, 1.0)
        t_mix, t_dec = step_seconds(p, d_beside, c), step_seconds(p, d, zeros)
        t_mean = f * t_mix + (1.0 - f) * t_dec
        x = a / t_mean
        others_share = np.maximum(conc - 1.0, 0.0) / np.maximum(conc, 1.0) if closed else np.ones_like(a)
        others = d * others_share
        seen = f * others_share
        seen_mix, seen_dec = (
            step_seconds(p, rows_beside(p, 1.0 + others), c),
            step_seconds(p, 1.0 + others, zeros),
        )
        t_seen = either(p, _mixed_token, _stalled_token, seen, seen_mix, seen_dec)
        service = own_prefill(p, others) if np.all(burst == 1.0) else group_prefill(p, others, burst)
        busy = others_share if closed else 1.0 - np.exp(-d)
        # the share of the prefill's time (not of steps) the other requests' prompts fill: an M/D/1 utilisation
        load = np.minimum(x * others_share / prefill_rate(p, others), MAX_PREFILL_LOAD)
        wait = queue_wait(load, service)
        # fixed lengths: the burst's group steps before a prompt's own (mean) replace the M/D/1 wait
        ahead = groups_ahead(burst, conc)
        if ahead is not None:
            wait = np.where(np.asarray(burst) > 1.0, ahead * service, wait)
        ttft_mean = p.front_end_s + service + busy * t_mean * (0.5 + p.overlap) + wait
        conc = x * (ttft_mean + o1 * t_seen)
        d = x * o1 * t_seen
        tried = (tried + [(conc_in, conc)])[-2:]
    curve = {
        "a": a,
        "concurrency": conc,
        "requests_per_second": x,
        "ttft_mean": ttft_mean,
        "tpot_mean": t_seen / p.tokens_per_step,
        "decode_step_s": seen_dec,
        "mixed_step_s": seen_mix,
        "prefill_step_share": f,
        "prefill_tokens_per_step": c,
        "saturated": a * p.prompt > room,
    }
    spread = np.sqrt(seen / np.maximum(o1, 1.0))  # × √(1 − s) for the mixed steps, ÷ (1 − s) for the stalls
    for name in NAMES:
        q, z = quantile_q(name), quantile_z(name)
        in_flight = busy * t_mean * (q + p.overlap)
        queued = queued_at(load, wait, q)
        if ahead is not None:
            # the burst's groups are prefilled in turn: the q-quantile prompt is in group ⌈qC/g⌉; that count is a
            # step in C, so _read adds it at the concurrency asked (interpolating would blur it by a group step)
            queued = np.where(np.asarray(burst) > 1.0, 0.0, queued)
        curve["ttft_" + name] = p.front_end_s + service + in_flight + queued
        added = either(p, _mixed_added, _stalled_added, seen, seen_mix, seen_dec, z * spread)
        curve["tpot_" + name] = (seen_dec + added) / p.tokens_per_step
    if ahead is not None:  # the group's room in prompts (g = min(C, that) at the C asked) and its step
        curve["group_room"] = np.where(
            np.asarray(burst) > 1.0, np.floor(room / p.prompt), 1.0
        ) + np.zeros_like(a)
        curve["group_s"] = service
    return curve


def _mixed_token(seen: FloatArray, mix: FloatArray, dec: FloatArray) -> FloatArray:
    """Seconds per token of a decoding request that shares a share `seen` of its steps with prompt chunks."""
    return dec + seen * (mix - dec)


def _stalled_token(seen: FloatArray, mix: FloatArray, dec: FloatArray) -> FloatArray:
    """Seconds per token of a decoding request that waits through s/(1 − s) prompt-only steps per decode step."""
    return dec + _stall(seen) * mix


def _mixed_added(seen: FloatArray, mix: FloatArray, dec: FloatArray, zs: FloatArray) -> FloatArray:
    """The mixed steps' share of a token at z standard deviations (zs = z·√(s/(O − 1))): Binomial share, clipped."""
    return (mix - dec) * np.clip(seen + zs * np.sqrt(1.0 - seen), 0.0, 1.0)


def _stalled_added(seen: FloatArray, mix: FloatArray, dec: FloatArray, zs: FloatArray) -> FloatArray:
    """The prompt steps waited through per token at z standard deviations: mean s/(1 − s), sd √(s/(O − 1))/(1 − s)."""
    return mix * np.maximum(_stall(seen) + zs / np.maximum(1.0 - seen, MIN_DECODE_SHARE), 0.0)


def _stall(seen: FloatArray) -> FloatArray:
    """Prompt-only steps per decode step when a share `seen` of the steps are prompt steps: s/(1 − s)."""
    return seen / np.maximum(1.0 - seen, MIN_DECODE_SHARE)


_READ = (
    "concurrency",
    "requests_per_second",
    "ttft_mean",
    "tpot_mean",
    "decode_step_s",
    "mixed_step_s",
    "prefill_step_share",
    "prefill_tokens_per_step",
    *(f"ttft_{n}" for n in NAMES),
    *(f"tpot_{n}" for n in NAMES),
)


def _read(
    p: StepParts, curve: dict[str, FloatArray], by: str, values: FloatArray, names: tuple[str, ...] = _READ
) -> LoadSpeeds:
    """The figures at `values` of curve[by] (concurrency or rate), interpolated linearly in log(curve[by]) on the
    unsaturated part (the grid is geometric), the full-budget regime past it; only `names` are read (the others
    are NaN: the planner reads six)."""
    ok = ~curve["saturated"]
    last = int(np.flatnonzero(ok)[-1]) if ok.any() else 0
    # past its peak the curve is the overloaded branch (without mixed steps, prompt-only steps crowd the decodes out
    # and fewer requests complete as more arrive): read up to the peak, the full-budget regime beyond it
    last = int(np.argmax(curve[by][: last + 1]))
    key = np.maximum.accumulate(np.log(np.maximum(curve[by][: last + 1], 1e-300)))
    at = np.log(np.maximum(values, 1e-300))
    # one NaN array shared by the figures not read (never written in place)
    unread = np.full_like(values, np.nan)
    out = {name: unread for name in _READ if name not in names}
    out.update({name: np.interp(at, key, curve[name][: last + 1]) for name in names})
    if "group_room" in curve and by == "concurrency":
        _burst_percentiles(curve, out, (at, key, last), values, names)
    # Little's law exactly at the point read: the given quantity and the interpolated latencies fix the other
    e2e = out["ttft_mean"] + max(p.output - 1.0, 0.0) * out["tpot_mean"]
    other = "requests_per_second" if by == "concurrency" else "concurrency"
    out[other] = values / e2e if by == "concurrency" else values * e2e
    out[by] = values
    beyond = values > curve[by][last] * (1.0 + 1e-9) if ok.any() else np.ones_like(values, dtype=bool)
    if np.any(beyond):
        _full_budget(p, out, values, by, beyond)
    return LoadSpeeds(
        concurrency=out["concurrency"],
        requests_per_second=out["requests_per_second"],
        ttft={n: out[f"ttft_{n}"] for n in NAMES},
        tpot={n: out[f"tpot_{n}"] for n in NAMES},
        ttft_mean=out["ttft_mean"],
        tpot_mean=out["tpot_mean"],
        end_to_end_s=out["ttft_mean"] + max(p.output - 1.0, 0.0) * out["tpot_mean"],
        decode_step_s=out["decode_step_s"],
        mixed_step_s=out["mixed_step_s"],
        prefill_step_share=out["prefill_step_share"],
        prefill_tokens_per_step=out["prefill_tokens_per_step"],
        budget_tokens=int(p.budget),
        prefill_saturated=beyond,
        mixed=bool(p.mixed),
    )


def _burst_percentiles(
    curve: dict[str, FloatArray],
    out: dict[str, FloatArray],
    grid: tuple[FloatArray, FloatArray, int],
    values: FloatArray,
    names: tuple[str, ...],
) -> None:
    """Fixed lengths: the TTFT percentiles with the group steps ahead, ⌈qC/g⌉ − 1, counted at the concurrency C asked
    (`grid`: _read's log-concurrency at C, the curve's keys and its last point read)."""
    at, key, last = grid

    def at_c(name: str) -> FloatArray:
        return np.interp(at, key, curve[name][: last + 1])

    group = np.maximum(np.minimum(values, np.floor(at_c("group_room") + 1e-9)), 1.0)
    group_s = at_c("group_s")
    for name in NAMES:
        ahead = groups_ahead(group, values, quantile_q(name))
        if f"ttft_{name}" in names and ahead is not None:  # the curve's figure is the burst's without them
            out[f"ttft_{name}"] = out[f"ttft_{name}"] + np.where(group > 1.0, ahead * group_s, 0.0)


def _full_budget(
    p: StepParts, out: dict[str, FloatArray], values: FloatArray, by: str, beyond: FloatArray
) -> None:
    """Every step full (c + r·d = budget, r rows per decoding request): the engine's most requests/s; the rest
    queue for the budget."""
    steps = max(p.output - 1.0, 0.0) / p.tokens_per_step  # decode steps per request
    d = p.budget * steps / (p.prompt + p.verify_rows * steps)
    full = float(step_seconds(p, np.array(d), np.array(p.budget - p.verify_rows * d)))
    x = p.budget / ((p.prompt + p.verify_rows * steps) * full)
    conc = values if by == "concurrency" else np.full_like(values, np.inf)
    queued = np.maximum(p.front_end_s + conc / x - steps * full, out["ttft_mean"])
    per_token = full / p.tokens_per_step
    fill = {
        "requests_per_second": x,
        "tpot_mean": per_token,
        "decode_step_s": full,
        "mixed_step_s": full,
        "prefill_step_share": 1.0,
        "prefill_tokens_per_step": p.budget - p.verify_rows * d,
        "ttft_mean": queued,
        **{f"ttft_{n}": queued for n in NAMES},
        **{f"tpot_{n}": per_token for n in NAMES},
    }
    for name, value in fill.items():
        out[name] = np.where(beyond, value, out[name])
    out["concurrency"] = np.where(beyond, conc, out["concurrency"])
