"""Goodput of a whole run: interruptions (failures and maintenance), the work each one loses, and checkpointing.

A synchronous training job stops whenever any of its devices, hosts or links fails and restarts from its last
checkpoint. Over a run of wall time T on N devices with an interruption rate λ per device-hour the job expects
n = λ·N·T interruptions (Poisson, independent devices). Each costs the restart (detection, re-launch, checkpoint
load: RESTART_S) plus the work done since the last checkpoint, half an interval τ on average. Checkpoint writes
cost δ each, every τ. Young (1974) / Daly (2006): the τ minimising the loss is τ* = √(2·δ·M), M = 1/(λ·N) the
job's mean time between interruptions. Sources and the derivation of the defaults: docs/formulas.md, "Goodput".
"""

from __future__ import annotations

import math
from typing import NamedTuple

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
) -> Goodput:
    """Checkpoints, interruptions and the goodput fraction of a run whose stepping (and validation) takes
    `productive_s`, `step_s` per optimizer step over `all_steps` steps, on `devices` devices."""
    rate = rate_per_device_hour * devices / 3600.0  # job interruptions per second
    tau_opt = optimal_interval_s(checkpoint_write_s, rate)
    optimal = max(1, round(tau_opt / step_s)) if step_s > 0 and math.isfinite(tau_opt) else 0
    if optimal >= all_steps:
        optimal = 0  # the optimum lies past the end of the run: one final checkpoint at most
    interval = interval_steps if interval_steps else (optimal or max(all_steps, 1))
    checkpoints = all_steps // interval if interval_steps or optimal else 0
    checkpoint_s = checkpoints * checkpoint_write_s
    tau = min(interval, max(all_steps, 1)) * step_s  # work at risk between checkpoints
    busy = productive_s + checkpoint_s
    if given is not None:
        lost = max(
            0.0, productive_s / given - busy
        )  # checkpoint writes beyond the given share lengthen the run
        wall = busy + lost
        fraction = productive_s / wall if wall > 0 else 1.0
        return Goodput(interval, optimal, checkpoints, checkpoint_s, rate * wall, lost, fraction, True)
    share = min(rate * (restart_s + tau / 2.0), MAX_LOSS_SHARE)
    lost = busy * share / (1.0 - share)  # interruptions happen during the lost time too: T = busy + share·T
    wall = busy + lost
    fraction = productive_s / wall if wall > 0 else 1.0
    return Goodput(interval, optimal, checkpoints, checkpoint_s, rate * wall, lost, fraction, False)
