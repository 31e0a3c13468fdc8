"""InferencePlan → InferenceEvaluation: the numbers of serving a request (device count, memory, speed, what
the targets need). Numbers only: response.py renders them, advice.py re-evaluates patched plans with it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

from ...hardware import Accelerator
from ...i18n import _
from ...parallelism import built_at
from .admission import ON_DEMAND, held_tokens, kv_admission
from .load import serving_speed
from .memory import (
    MemoryLayout,
    MemoryModel,
    Workload,
    fewest_fitting,
    fewest_running,
    kv_running_max,
    max_batch_size,
    max_context_tokens,
    memory_layout,
)
from .plan import InferencePlan
from .speed import Speed


@dataclass(frozen=True)
class InferenceEvaluation:
    """What serving the plan takes, in base units (bytes, seconds, tokens/s)."""

    plan: InferencePlan
    count: int  # devices (tensor-parallel degree or layer split) used for the figures
    to_fit: int | None  # fewest devices that hold the request
    to_meet: int | None  # fewest devices that meet every target (None without targets or when none does)
    memory: MemoryLayout
    speed: Speed
    targets_met: bool | None  # None without targets
    count_note: str | None = None  # why `count` was picked when nothing fits

    @cached_property
    def max_batch_size(self) -> int:
        return max_batch_size(self.plan.workload, self.plan.accelerator, self.count)

    @cached_property
    def kv_running_max(self) -> int:
        """Most requests the KV cache lets the engine run at once under its admission (admission.py)."""
        return kv_running_max(self.plan.workload, self.plan.accelerator, self.count)

    @property
    def queued_requests(self) -> float:
        """Requests waiting in the engine's queue (continuous batching past the KV cache or max_num_seqs)."""
        return _queued(self.speed)

    @property
    def resident(self) -> bool:
        """Every request in flight held at once: memory fits and none waits in the engine's queue."""
        return self.memory.fits and not self.queued_requests

    @cached_property
    def max_context_tokens(self) -> int | None:
        w = self.plan.workload
        if w.model.architecture != "transformer":
            return None
        return max_context_tokens(w, self.plan.accelerator, self.count)


def evaluate(p: InferencePlan) -> InferenceEvaluation:
    """Numbers for a validated plan; `count` "auto" is the fewest devices that fit."""
    w, acc = p.workload, p.accelerator
    split = w.schedule.disaggregation
    if split is not None:  # the pools are given: memory and speed of a decode replica
        return _evaluate_pools(p, split.decode.accelerator, split.decode.tensor_parallel)
    to_fit = fewest_fitting(w, acc)
    count, note = (p.count, None) if p.count is not None else _auto_count(w, acc, to_fit)
    speed = serving_speed(w, acc, count)
    queued = _queued(speed)
    memory = resident_layout(_running(w, speed), acc, count)
    if p.count is None and to_fit is None and queued:
        note = _(
            "No device count up to {count} holds all {batch} requests at once; showing {count} devices, where "
            "{running} run at once and the rest wait in the engine's queue."
        ).format(count=count, batch=w.batch, running=round(w.batch - queued))
    return InferenceEvaluation(
        plan=p,
        count=count,
        to_fit=to_fit,
        to_meet=_devices_to_meet(w, acc, p.targets, to_fit) if p.targets else None,
        memory=memory,
        speed=speed,
        targets_met=meets_targets(speed, p.targets, w.schedule.percentile) if p.targets else None,
        count_note=note,
    )


def _auto_count(w: Workload, acc: Accelerator, to_fit: int | None) -> tuple[int, str | None]:
    """count "auto": the fewest devices that hold the request at its whole context (at most one server of a
    one-server part); where none does, the fewest on which an engine that allocates KV as tokens are computed runs
    every request of a closed loop (memory.fewest_running), else the most devices."""
    if to_fit is not None:
        if built_at(acc, to_fit):
            return to_fit, None
        count = max(c for c in w.counts if built_at(acc, c))
        return count, _(
            "{id} fits only on {to_fit} devices, more than one server of it holds (nobody builds clusters of it); "
            "showing {count} devices."
        ).format(id=acc.id, to_fit=to_fit, count=count)
    most = w.counts[-1]
    held = fewest_running(w, acc) if w.schedule.requests_per_second is None else None
    if held is not None and built_at(acc, held):
        return held, _(
            "No device count up to {most} holds all {batch} requests at their whole context; showing {count} "
            "devices, the fewest on which {engine} runs them all because it allocates KV-cache blocks as tokens are "
            "computed."
        ).format(most=most, batch=w.batch, count=held, engine=w.engine)
    return most, _("No device count up to {count} fits; showing {count} devices.").format(count=most)


def _queued(speed: Speed) -> float:
    """Requests waiting in the engine's queue (load.queued_requests; 0 where the scheduler has no queue)."""
    return float((speed.load or {}).get("queued_requests") or 0.0)


def resident_layout(w: Workload, acc: Accelerator, count: int) -> MemoryLayout:
    """Memory of the running batch at the whole context; where that does not fit but the engine admits on demand
    (vLLM, SGLang: admission.py) and the tokens its requests hold on average do, the latter: the engine runs them
    all and preempts a request when its blocks run out."""
    model = MemoryModel(w, acc, count)
    whole = model.layout()
    if whole.fits or kv_admission(w) != ON_DEMAND or not model.fits(batch=1):
        return whole
    held = model.layout(context=held_tokens(w))
    return held if held.fits else whole


def _running(w: Workload, speed: Speed) -> Workload:
    """The workload at the batch the engine runs: fewer than the requests in flight when the rest wait in its queue
    (load.running_limit), so memory is laid out for what is resident."""
    return replace(w, batch=round(w.batch - _queued(speed))) if _queued(speed) > 0 else w


def _evaluate_pools(p: InferencePlan, acc: Accelerator, count: int) -> InferenceEvaluation:
    speed = serving_speed(p.workload, acc, count)
    met = meets_targets(speed, p.targets, p.workload.schedule.percentile) if p.targets else None
    return InferenceEvaluation(
        plan=p,
        count=count,
        to_fit=fewest_fitting(p.workload, acc),
        to_meet=None,
        memory=memory_layout(p.workload, acc, count),
        speed=speed,
        targets_met=met,
    )


def meets_targets(speed: Speed, targets: Mapping[str, float], percentile: str = "p90") -> bool:
    """All given targets met, latencies at `percentile` where the scheduler gives percentiles (token targets are
    vacuous for sample models; a saturated rate has no latency and meets no latency target)."""
    if speed.load is not None and speed.load.get("saturated") and set(targets) - {"output_tokens_per_second"}:
        return False
    checks = {
        "output_tokens_per_second": (speed.output_tokens_per_second, lambda v, t: v >= t),
        "time_to_first_token_s": (speed.at("time_to_first_token_s", percentile), lambda v, t: v <= t),
        "time_per_output_token_s": (speed.at("time_per_output_token_s", percentile), lambda v, t: v <= t),
    }
    for key, target in targets.items():
        value, ok = checks[key]
        if value is not None and not ok(value, target):
            return False
    return True


def _devices_to_meet(
    w: Workload, acc: Accelerator, targets: Mapping[str, float], to_fit: int | None
) -> int | None:
    if to_fit is None:
        return None
    best = math.inf
    for count in (c for c in w.counts if c >= to_fit):
        speed = serving_speed(w, acc, count)
        if meets_targets(speed, targets, w.schedule.percentile):
            return count
        if speed.end_to_end_s > 0.98 * best:
            return None  # past the knee: more devices add all-reduce time faster than they remove stream time
        best = speed.end_to_end_s
    return None
