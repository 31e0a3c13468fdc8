"""Goodput of a whole run: interruptions (failures and maintenance), the work each one loses, and checkpointing.

A synchronous training job stops whenever any of its devices, hosts or links fails and restarts from its last
checkpoint. Over a run of wall time T on N devices with an interruption rate λ per device-hour the job expects
n = λ·N·T interruptions (Poisson, independent devices). Each costs the restart (detection, re-launch, checkpoint
load: RESTART_S) plus the work done since the last checkpoint, half an interval τ on average. Checkpoint writes
cost δ each, every τ. Young (1974) / Daly (2006): the τ minimising the loss is τ* = √(2·δ·M), M = 1/(λ·N) the
job's mean time between interruptions. Between interruptions a synchronous step waits for its slowest worker:
stragglers stretch the stepping by a share that grows with the job (STRAGGLER_SHARE). Sources and the derivation
of the defaults: docs/formulas.md, "Goodput".
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models" §3.3.4): 466 job interruptions (47 planned, 419
# unexpected) in a 54-day snapshot of pre-training on 16,384 H100 GPUs → 466 / (54 · 24 · 16,384) per GPU-hour.
# Cross-checks: BigScience BLOOM-176B chronicles, about one GPU lost a week on 384 A100s (1.55e-5 per GPU-hour).
INTERRUPTIONS_PER_DEVICE_HOUR = 466.0 / (54.0 * 24.0 * 16384.0)
# Time from an interruption to training again, lost work aside: failure detection (PyTorch's NCCL watchdog times
# out a hung collective after 10 min by default), re-launch and checkpoint load. Llama 3 kept "more than 90 %
# effective training time" through those 466 interruptions, i.e. at most 0.1 · 54 · 24 h / 466 = 16.7 min lost
# per interruption, everything included; 15 min reproduces that bound at Llama 3's scale.
RESTART_S = 900.0
# An interruption loses at most this share of the run to itself: beyond it the job makes no progress (λ·N·(R + τ/2)
# ≥ 1 would mean more time lost than there is); the answer says so in a note.
MAX_LOSS_SHARE = 0.9
# Stragglers: in a synchronous job every step waits for its slowest worker. ByteDance's study of 3,079 production
# pre-training jobs of at least 128 GPUs over five months (Lin et al., "Understanding Stragglers in Large Model
# Training Using What-if Analysis", OSDI 2025, arXiv 2505.05713) measured the share of each job's GPU-hours lost
# to stragglers against the same job without them: median 7.8 %, P90 21.3 %, P99 45 %, and 10.4 % of all the
# fleet's GPU-hours, mostly from compute imbalance (pipeline stages, sequence lengths of real data, Python garbage
# collection), rarely from faulty hardware. An estimate of a run's hours and cost is an expectation, so the default
# is the expected share of a GPU-hour, 10.4 % (the fleet's GPU-hour-weighted figure), not the median job's: the
# per-job losses are right-skewed (a log-normal through the median and P90 has mean 10.6 % and puts P99 at 48 %,
# the study's 45 %). It applies from STRAGGLER_REFERENCE_DEVICES on; below, the share falls with ln N / ln 128 to
# none on one device (assumption: the expected slowest of N workers grows with ln N; the study has no jobs under
# 128 GPUs). Benchmarks of steady-state throughput run on uniform synthetic data, so the share is run-level:
# time.tokens_per_second leaves it out, time.seconds and the hours include it.
STRAGGLER_SHARE = 0.104
STRAGGLER_REFERENCE_DEVICES = 128
MAX_STRAGGLER_SHARE = (
    0.5  # a request's straggler_share: beyond half the step waiting, the job is broken, not slow
)


class Goodput(NamedTuple):
    """The run-level overheads of evaluate()."""

    checkpoint_interval: int  # steps between checkpoints (given, or the Young/Daly optimum)
    optimal_interval: int  # the Young/Daly optimum in steps (0: no checkpoint needed within the run)
    checkpoints: int
    checkpoint_s: float
    interruptions: float  # expected interruptions over the run
    interruptions_s: float  # restarts + lost work
    fraction: float  # productive seconds / wall seconds
    given: bool  # the request gave training.goodput
    stragglers_s: float = 0.0  # steps waiting for their slowest worker
    straggler_share: float = 0.0  # share of the stepping (and validation) time those waits take
    evictions: float = 0.0  # of the interruptions, those of spot capacity reclaimed (offers.py)
    rate_per_hour: float = 0.0  # the job's interruptions per hour (failures and evictions)


def straggler_shares(devices: np.ndarray) -> np.ndarray:
    """The default share of a job's stepping time lost to stragglers on each of `devices` device counts
    (STRAGGLER_SHARE; none on one device), for the array model and, through straggler_share, the single estimate."""
    counts = np.maximum(np.asarray(devices, dtype=np.float64), 1.0)
    return STRAGGLER_SHARE * np.minimum(1.0, np.log(counts) / math.log(STRAGGLER_REFERENCE_DEVICES))


def straggler_share(devices: int) -> float:
    """straggler_shares of one device count."""
    return float(straggler_shares(np.array([devices]))[0])


def combined_rate(
    rate_per_device_hour: float, restart_s: float, evictions_per_device_hour: float, eviction_restart_s: float
) -> tuple[float, float]:
    """(interruptions per device-hour, seconds per restart) of failures and spot evictions together. Both are
    Poisson processes, independent: interruptions come at λ = λ_f + λ_e and a restart costs, on average, the
    rate-weighted R = (λ_f·R_f + λ_e·R_e)/λ. Each loses the work since the last checkpoint (τ/2), so the loss share
    λ·(R + τ/2) is the sum of the two processes' own, and Young/Daly's optimum τ* = √(2·δ/λ) takes the total rate.
    An eviction's restart is the offer's start-up (new capacity provisioned, image pulled, checkpoint loaded: the
    provider's notice — 2 min on AWS, 30 s on GCP and Azure — leaves no hung collective to time out)."""
    rate = rate_per_device_hour + evictions_per_device_hour
    if rate <= 0.0 or evictions_per_device_hour <= 0.0:
        return rate_per_device_hour, restart_s
    return rate, (rate_per_device_hour * restart_s + evictions_per_device_hour * eviction_restart_s) / rate


def optimal_interval_s(checkpoint_write_s: float, job_rate_per_s: float) -> float:
    """Young/Daly: τ* = √(2·δ·M), M = 1/(λ·N); infinite when nothing fails."""
    if job_rate_per_s <= 0.0:
        return math.inf
    return math.sqrt(2.0 * checkpoint_write_s / job_rate_per_s)


def goodput(
    productive_s: float,
    step_s: float,
    all_steps: int,
    devices: int,
    checkpoint_write_s: float,
    interval_steps: int | None,
    rate_per_device_hour: float,
    restart_s: float,
    given: float | None,
    stragglers: float | None = None,
    evictions: tuple[float, float] = (0.0, 0.0),
) -> Goodput:
    """Checkpoints, stragglers, interruptions and the goodput fraction of a run whose stepping (and validation)
    takes `productive_s`, `step_s` per optimizer step over `all_steps` steps, on `devices` devices; `stragglers`
    is the share of that time lost to slow workers (None: straggler_share(devices)); `evictions`: spot evictions
    per device-hour and the seconds each restart takes (combined_rate)."""
    evicted = evictions[0] * devices / 3600.0  # job evictions per second
    rate_per_device_hour, restart_s = combined_rate(rate_per_device_hour, restart_s, *evictions)
    rate = rate_per_device_hour * devices / 3600.0  # job interruptions per second
    slow = straggler_share(devices) if stragglers is None else stragglers
    step_s /= 1.0 - slow  # a step as it runs, waiting for its slowest worker
    tau_opt = optimal_interval_s(checkpoint_write_s, rate)
    optimal = max(1, round(tau_opt / step_s)) if step_s > 0 and math.isfinite(tau_opt) else 0
    if optimal >= all_steps:
        optimal = 0  # the optimum lies past the end of the run: one final checkpoint at most
    interval = interval_steps if interval_steps else (optimal or max(all_steps, 1))
    checkpoints = all_steps // interval if interval_steps or optimal else 0
    checkpoint_s = checkpoints * checkpoint_write_s
    tau = min(interval, max(all_steps, 1)) * step_s  # work at risk between checkpoints
    # stragglers slow the stepping down but the job is training: the goodput fraction, like Llama 3's "effective
    # training time", counts them as stepping, and a given training.goodput replaces only interruptions and writes
    productive_s += productive_s * slow / (1.0 - slow)
    slow_s = productive_s * slow
    busy = productive_s + checkpoint_s
    if given is not None:
        lost = max(
            0.0, productive_s / given - busy
        )  # checkpoint writes beyond the given share lengthen the run
        wall = busy + lost
        fraction = productive_s / wall if wall > 0 else 1.0
        return Goodput(
            interval, optimal, checkpoints, checkpoint_s, rate * wall, lost, fraction, True, slow_s, slow,
            evicted * wall, rate * 3600.0,
        )  # fmt: skip
    share = min(rate * (restart_s + tau / 2.0), MAX_LOSS_SHARE)
    lost = busy * share / (1.0 - share)  # interruptions happen during the lost time too: T = busy + share·T
    wall = busy + lost
    fraction = productive_s / wall if wall > 0 else 1.0
    return Goodput(
        interval, optimal, checkpoints, checkpoint_s, rate * wall, lost, fraction, False, slow_s, slow,
        evicted * wall, rate * 3600.0,
    )  # fmt: skip
