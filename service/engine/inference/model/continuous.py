"""Continuous batching: step composition, TTFT/TPOT percentiles and throughput at a concurrency or arrival rate.

A queueing model in closed form, written once over numpy arrays (the single estimate passes one concurrency, the
serving planner every batch size at once). Why not a simulation: the planner evaluates thousands of
configurations per request within a one-second budget; a step-level simulation of a few thousand requests costs
tens of milliseconds each. The model (docs/formulas.md "Continuous batching"):

- Step time T(d, c) for d decoding requests and c prefill tokens in one step: the weights the d + c tokens touch
  are streamed once (max with the GEMM time of d decode rows at the asymptotic efficiency plus c prefill rows at the
  prefill curve's efficiency), plus the KV-cache read of the d sequences at the mean context, the chunk's KV write,
  per-layer overhead and tensor-parallel all-reduces of d + c rows: speed.py's decode step at c = 0 and its
  one-prompt prefill at d = 0 (the same terms, from speed.token_work / token_device).
- Steady state at concurrency C: a fraction f of the steps carry prefill; each carries c = min(budget − d, P·k)
  tokens where k ≥ 1 prompts wait for it (k = X·T̄: the prompts that arrive during one step). Mean step T̄ = f·T_mix +
  (1 − f)·T_dec; decoding requests d = X·(O − 1)·T̄ (Little's law); f = X·(P/c)·T̄; X = C / E2E. Solved by damped
  fixed-point iteration.
- TTFT = own prefill (P/c_own mixed steps, c_own = min(P, budget − d)) + the rest of the step in flight (uniform)
  + the wait behind other prompts (M/D/1: P(wait) = f, exponential tail, mean f/(2(1 − f))·service).
- TPOT of one request = T_dec + (T_mix − T_dec)·M/(O − 1) with M ~ Binomial(O − 1, f) mixed steps among its decode
  steps (normal approximation for the percentiles).
- When prefill demand exceeds the budget (f ≥ 1), every step is full (d + c = budget) and prompts queue:
  X = budget / ((P + O − 1)·T_full), TTFT = C·T_full·(P + O − 1)/budget − (O − 1)·T_full.
Arrival rates (Poisson, open loop): X = λ, C = λ·E2E (Little's law); a rate above what the largest batch that fits
sustains is `saturated`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...hardware import Accelerator
from .arrays import BatchSpeeds, FloatArray, batch_speeds, efficiency, stream_seconds, tensor_allreduce
from .efficiency import compute_efficiency
from .memory import Workload
from .schedule import batched_tokens, chunked, quantile_q, quantile_z
from .speed import TokenDevice, TokenWork, token_device, token_work

# Front-end latency of one request (HTTP, tokenization, admission, streaming the first token): the median of
# measured minus modelled TTFT at low load over the public sweeps (tests/engine/data/public_serving_sweeps.csv,
# 17 points at <= 8 concurrent requests or <= 2 req/s: vLLM 0.10-0.11, SGLang 0.4-0.5, TensorRT-LLM 1.2 and NIM
# 1.8; residuals -23 to +98 ms, median 37 ms). One constant for every continuous engine.
REQUEST_OVERHEAD_S = 0.035
ITERATIONS = 60  # at most; stops once X and f move < 1e-7 (relative) in a step (typically 20-40 steps)
TOLERANCE = 1e-7
MAX_PREFILL_LOAD = 0.97  # a prefill share f above this is a saturated prefill (every step full)
NAMES = ("p50", "p90", "p99")


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


@dataclass(frozen=True)
class StepParts:
    """What a step's time takes from the workload (at batch 1) and the devices."""

    w: Workload
    work: TokenWork
    d: TokenDevice
    budget: float
    chunked: bool
    eff_decode: float


def step_parts(w: Workload, acc: Accelerator, count: int) -> StepParts:
    one = w if w.batch == 1 else replace(w, batch=1)
    work = token_work(one)
    d = token_device(one, acc, count, work.layers)
    budget, _ = batched_tokens(w.schedule, w.engine, acc)
    eff = compute_efficiency(w.engine, d.cls, d.precision, d.weight_only, float("inf"))
    return StepParts(one, work, d, float(budget), chunked(w.schedule, w.engine), eff)


def step_seconds(p: StepParts, decoding: FloatArray, chunk: FloatArray) -> FloatArray:
    """One engine step with `decoding` requests at the generation's mean context and `chunk` prefill tokens."""
    w, work, d = p.w, p.work, p.d
    dec = np.asarray(decoding, dtype=float)
    c = np.asarray(chunk, dtype=float)
    n = dec + c
    memory = stream_seconds(w, n, d.t, d.bw * d.mbu) + c * d.kv_token / (d.bw * d.kv_mbu)
    share = c / w.prompt_tokens  # the chunk's share of one prompt's prefill FLOPs (attention included)
    prefill = work.body_flops * share / efficiency(w, d, c) + work.head_flops * share / efficiency(
        w, d, np.maximum(share, 1.0)
    )
    compute = (2.0 * work.matmul * dec / p.eff_decode + prefill) / d.t / d.peak
    per_sequence = max(
        work.ctx * d.kv_token / (d.bw * d.kv_mbu), work.decode_attention_flops / d.t / (d.peak * p.eff_decode)
    )
    comm = tensor_allreduce(d, work.layers, n * work.hidden * w.act_bytes)
    return np.maximum(memory, compute) + dec * per_sequence + d.step_overhead + comm + d.hops


def closed_loop(w: Workload, acc: Accelerator, count: int, concurrency: FloatArray) -> LoadSpeeds:
    """Steady state with `concurrency` requests always in flight (a benchmark's --max-concurrency)."""
    return solve(step_parts(w, acc, count), np.asarray(concurrency, dtype=float), None)


def load_speeds(w: Workload, acc: Accelerator, count: int, batches: FloatArray) -> BatchSpeeds:
    """The serving planner's arrays: every batch size as a concurrency under the workload's scheduler, latencies
    at the schedule's percentile (the static model: arrays.batch_speeds)."""
    if not w.schedule.continuous:
        return batch_speeds(w, acc, count, batches)
    b = np.asarray(batches, dtype=float)
    ls = closed_loop(w, acc, count, b)
    q = w.schedule.percentile
    return BatchSpeeds(b, ls.ttft[q], ls.tpot[q], ls.end_to_end_s, throughput=ls.requests_per_second)


def open_loop(w: Workload, acc: Accelerator, count: int, rate: FloatArray) -> LoadSpeeds:
    """Steady state under Poisson arrivals at `rate` requests/s (callers check the rate is sustainable)."""
    return solve(step_parts(w, acc, count), None, np.asarray(rate, dtype=float))


@dataclass
class _State:
    x: FloatArray  # requests/s
    f: FloatArray  # share of steps that carry prefill
    dec: FloatArray  # decoding requests per step
    t_mean: FloatArray
    t_mix: FloatArray
    t_dec: FloatArray
    chunk: FloatArray
    seen: FloatArray  # share of a decoding request's steps that carry other requests' prompts
    t_seen: FloatArray  # mean step a decoding request waits for: its mean time per output token


def solve(p: StepParts, concurrency: FloatArray | None, rate: FloatArray | None) -> LoadSpeeds:
    """The damped fixed point of X, f and d (module docstring); `concurrency` (closed loop) or `rate` (open)."""
    given = concurrency if concurrency is not None else rate
    assert given is not None
    prompt, o1 = float(p.w.prompt_tokens), float(max(p.w.output_tokens - 1, 0))
    zeros = np.zeros(given.shape)
    t0 = step_seconds(p, zeros, zeros)
    x = rate if rate is not None else concurrency / ((o1 + 1.0) * t0)  # type: ignore[operator]
    s = _State(x, zeros, zeros, t0, t0, t0, zeros + prompt, zeros, t0)
    for _ in range(ITERATIONS):
        before = (s.x, s.f)
        room = np.maximum(p.budget - s.dec, 1.0)
        wanted = prompt * np.maximum(1.0, s.x * s.t_mean)  # the prompts that arrive during one step
        s.chunk = np.minimum(room, wanted) if p.chunked else np.maximum(prompt, np.minimum(room, wanted))
        s.t_mix = step_seconds(p, s.dec, s.chunk)
        s.t_dec = step_seconds(p, s.dec, zeros)
        s.f = 0.5 * s.f + 0.5 * np.minimum(s.x * prompt / s.chunk * s.t_mean, 1.0)
        s.t_mean = s.f * s.t_mix + (1.0 - s.f) * s.t_dec
        # a closed loop's own prompt is not among the steps it decodes through: (C − 1)/C of the mixed steps are
        s.seen = s.f * (concurrency - 1.0) / np.maximum(concurrency, 1.0) if concurrency is not None else s.f
        s.t_seen = s.seen * s.t_mix + (1.0 - s.seen) * s.t_dec
        e2e = _ttft_mean(p, s, concurrency, prompt) + o1 * s.t_seen
        if concurrency is not None:
            s.x = 0.5 * s.x + 0.5 * concurrency / e2e
        cap = concurrency if concurrency is not None else np.inf
        s.dec = np.minimum(s.x * o1 * s.t_seen, cap)
        if _converged(before, (s.x, s.f)):
            break
    return _answer(p, s, concurrency, prompt, o1)


def _converged(before: tuple[FloatArray, FloatArray], after: tuple[FloatArray, FloatArray]) -> bool:
    (x0, f0), (x1, f1) = before, after
    return bool(np.all(np.abs(x1 - x0) <= TOLERANCE * np.abs(x1)) and np.all(np.abs(f1 - f0) <= TOLERANCE))


def _own_prefill(p: StepParts, s: _State, concurrency: FloatArray | None, prompt: float) -> FloatArray:
    """Seconds of the steps that carry one request's own prompt, in chunks of at most budget − d tokens beside
    the other requests' decodes: d·(C − 1)/C of them in a closed loop (the request is not decoding while it is
    prefilled), d under Poisson arrivals (an arrival sees the time average)."""
    others = s.dec * (concurrency - 1.0) / np.maximum(concurrency, 1.0) if concurrency is not None else s.dec
    room = np.maximum(p.budget - others, 1.0)
    if p.chunked:
        return np.maximum(prompt / room, 1.0) * step_seconds(p, others, np.minimum(room, prompt))
    return step_seconds(p, others, np.full_like(others, prompt))


def _busy(concurrency: FloatArray | None, s: _State) -> FloatArray:
    """Chance a new request finds a step in flight: (C − 1)/C in a closed loop; 1 − e^(−d) under Poisson
    arrivals (d requests decoding)."""
    if concurrency is not None:
        return (concurrency - 1.0) / np.maximum(concurrency, 1.0)
    return 1.0 - np.exp(-np.maximum(s.dec, 0.0))


def _ttft_mean(p: StepParts, s: _State, concurrency: FloatArray | None, prompt: float) -> FloatArray:
    service = _own_prefill(p, s, concurrency, prompt)
    return REQUEST_OVERHEAD_S + _queued_prefill(service, s, concurrency)


def _queued_prefill(service: FloatArray, s: _State, concurrency: FloatArray | None) -> FloatArray:
    load = np.minimum(s.f, MAX_PREFILL_LOAD)
    return service + _busy(concurrency, s) * s.t_mean / 2.0 + load / (2.0 * (1.0 - load)) * service


def _answer(p: StepParts, s: _State, concurrency: FloatArray | None, prompt: float, o1: float) -> LoadSpeeds:
    service = _own_prefill(p, s, concurrency, prompt)
    busy = _busy(concurrency, s)
    load = np.minimum(s.f, MAX_PREFILL_LOAD)
    wait_if_any = load / (2.0 * (1.0 - load)) * service / np.maximum(load, 1e-12)  # M/D/1, exponential tail
    spread = np.sqrt(s.seen * (1.0 - s.seen) / max(o1, 1.0))
    ttft: dict[str, FloatArray] = {}
    tpot: dict[str, FloatArray] = {}
    for name in NAMES:
        q = quantile_q(name)
        wait = np.where(load > 1.0 - q, wait_if_any * np.log(np.maximum(load, 1e-12) / (1.0 - q)), 0.0)
        ttft[name] = REQUEST_OVERHEAD_S + service + busy * s.t_mean * q + wait
        tpot[name] = s.t_dec + (s.t_mix - s.t_dec) * np.clip(s.seen + quantile_z(name) * spread, 0.0, 1.0)
    ttft_mean = _ttft_mean(p, s, concurrency, prompt)
    t_mean, x = s.t_seen, s.x
    conc = concurrency if concurrency is not None else x * (ttft_mean + o1 * t_mean)
    saturated = s.f >= MAX_PREFILL_LOAD
    if np.any(saturated):  # every step full (d + c = budget): prompts queue for the token budget
        dec = np.minimum(s.dec, p.budget - 1.0)
        full = step_seconds(p, dec, p.budget - dec)
        queued = REQUEST_OVERHEAD_S + np.maximum(conc * full * (prompt + o1) / p.budget - o1 * full, service)
        for name in NAMES:
            ttft[name] = np.where(saturated, queued, ttft[name])
            tpot[name] = np.where(saturated, full, tpot[name])
        x = np.where(saturated, np.minimum(x, p.budget / ((prompt + o1) * full)), x)
        ttft_mean = np.where(saturated, queued, ttft_mean)
        t_mean = np.where(saturated, full, t_mean)
    return LoadSpeeds(
        concurrency=np.asarray(conc, dtype=float),
        requests_per_second=np.asarray(x, dtype=float),
        ttft=ttft,
        tpot=tpot,
        ttft_mean=ttft_mean,
        tpot_mean=t_mean,
        end_to_end_s=ttft_mean + o1 * t_mean,
        decode_step_s=s.t_dec,
        mixed_step_s=s.t_mix,
        prefill_step_share=s.f,
        prefill_tokens_per_step=s.chunk,
        budget_tokens=int(p.budget),
        prefill_saturated=saturated,
    )
