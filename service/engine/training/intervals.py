"""The training answer's prediction intervals: p10/p90 of the time, accelerator-hours and cost a run will measure.

The class of a request (accuracy/intervals.py): kind, metric, the kind of source its prediction compares with, and the
stack. A request whose answer includes the run-level losses (interruptions, stragglers: goodput.py) is a complete
run, compared with published complete runs; one that sets them off (training.goodput 1 or
interruptions_per_device_hour 0, and straggler_share 0) is steady-state stepping, compared with published benchmark
throughput. The time's
interval is predicted seconds × the class's factors; the hours scale with it and the cost follows through the one
cost formula (billing increments and minimums included). Where a class's residuals lean one way (complete runs
take longer than the model predicts), the interval need not contain the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..accuracy.profile import TRAINING_TIME, interval_for
from ..hardware import Accelerator
from ..units import SECONDS_PER_HOUR, human_duration, human_usd
from .model.cost import total_usd
from .model.evaluate import Evaluation
from .model.framework import JAX_STACKS
from .model.plan import TrainingPlan
from .model.stacks import training_family

SOURCES = ("benchmark", "complete_run")


def interval_class(framework: str, acc: Accelerator, source: str) -> str:
    """e.g. training/time/complete_run/cuda, training/time/benchmark/jax-gpu."""
    family = training_family(acc)
    if family == "cuda" and framework in JAX_STACKS:
        family = "jax-gpu"  # JAX/XLA on NVIDIA GPUs (MaxText, Paxml): its own public points
    return f"training/time/{source}/{family}"


def source_kind(plan: TrainingPlan) -> str:
    """benchmark when the plan leaves the run-level losses out (no interruptions: goodput 1 or a zero interruption
    rate; straggler share 0), else complete_run (module docstring)."""
    no_interruptions = plan.goodput == 1.0 or (
        plan.goodput is None and plan.interruptions_per_device_hour == 0.0
    )
    return "benchmark" if no_interruptions and plan.straggler_share == 0.0 else "complete_run"


def time_factors(plan: TrainingPlan) -> tuple[float, float, dict[str, Any]] | None:
    """(p10 factor, p90 factor, basis) on the predicted time, or None when no class has enough points or the
    request gives the utilization (the residuals measure the engine's predicted one, not a given figure: `range`
    spreads that). On a part a calibration profile scaled, the profile's residuals set the factors
    (accuracy/profile.py). A dict lookup: the planner calls it once per candidate."""
    if plan.utilization is not None:
        return None
    key = interval_class(plan.framework, plan.accelerator, source_kind(plan))
    return interval_for(key, TRAINING_TIME, plan.accelerator.residual_profile)


def intervals(plan: TrainingPlan, ev: Evaluation) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The estimate's `intervals` and the class behind them (assumptions.intervals); (None, None) when the plan does
    not fit or no class answers."""
    if not ev.fits:
        return None, None
    devices, usd = plan.par.devices, plan.usd_per_hour

    def usd_at(seconds: float) -> float | None:  # the one cost formula, as cost.total_usd computes it
        return float(total_usd(float(devices), seconds, usd, plan)) if usd is not None else None

    return bounds(plan, devices, ev.seconds, usd_at)


def bounds(
    plan: TrainingPlan, devices: int, seconds: float, usd_at: Callable[[float], float | None]
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """time.seconds, cost.accelerator_hours and cost.total_usd at p10 and p90 (human strings beside) of a run of
    `seconds` on `devices`, `usd_at(seconds)` its cost (None: no price), and the class behind them. The estimate and
    the planner's answered plans both call it."""
    factors = time_factors(plan)
    if factors is None:
        return None, None
    low, high, basis = factors
    at = {"p10": seconds * low, "p90": seconds * high}
    low_usd, high_usd = usd_at(at["p10"]), usd_at(at["p90"])
    total = None
    if low_usd is not None and high_usd is not None:
        total = {"p10": low_usd, "p90": high_usd}
    section = {
        "time": {"seconds": at},
        "cost": {
            "accelerator_hours": {q: devices * s / SECONDS_PER_HOUR for q, s in at.items()},
            "total_usd": total,
        },
        "human": {
            "time": f"{human_duration(at['p10'], plan.decimals)} – {human_duration(at['p90'], plan.decimals)}",
            "total": f"{human_usd(total['p10'])} – {human_usd(total['p90'])}" if total else None,
        },
    }
    return section, basis
