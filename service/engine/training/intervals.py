"""The training answer's prediction intervals: p10/p90 of the time, accelerator-hours and cost a run will measure.

The class of a request (accuracy/intervals.py): kind, metric, the kind of source its prediction compares with, and the
stack. A request whose answer includes the run-level losses (interruptions, stragglers: goodput.py) is a complete
run, compared with published complete runs; one without them (the request sets the interruption rate and straggler
share to 0, or goodput 1) is steady-state stepping, compared with published benchmark throughput. The time's
interval is predicted seconds × the class's factors; the hours scale with it and the cost follows through the one
cost formula (billing increments and minimums included). Where a class's residuals lean one way (complete runs
take longer than the model predicts), the interval need not contain the estimate.
"""

from __future__ import annotations

from typing import Any

from ..accuracy import lookup
from ..hardware import Accelerator
from ..units import human_duration, human_usd
from .model.cost import cost
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


def source_kind(ev: Evaluation) -> str:
    """complete_run when the answer's time includes run-level losses, else benchmark (module docstring)."""
    return "benchmark" if ev.interruptions_s == 0.0 and ev.stragglers_s == 0.0 else "complete_run"


def time_factors(plan: TrainingPlan, ev: Evaluation) -> tuple[str, int, float, float] | None:
    """(class, points, p10 factor, p90 factor) on the predicted time, or None when no class has enough points."""
    found = lookup(interval_class(plan.framework, plan.accelerator, source_kind(ev)))
    if found is None:
        return None
    name, row = found
    return name, row.points, row.p10_factor, row.p90_factor


def intervals(plan: TrainingPlan, ev: Evaluation) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The answer's `intervals` (time.seconds, cost.accelerator_hours and cost.total_usd at p10 and p90, human strings
    beside) and the class behind them (assumptions.intervals); (None, None) when the plan does not fit or no class
    answers."""
    factors = time_factors(plan, ev) if ev.fits else None
    if factors is None:
        return None, None
    name, points, low, high = factors
    devices, dec = plan.par.devices, plan.decimals
    seconds = {"p10": ev.seconds * low, "p90": ev.seconds * high}
    money = {q: cost(plan, devices, s) for q, s in seconds.items()}
    low_usd, high_usd = money["p10"].total_usd, money["p90"].total_usd
    priced = low_usd is not None and high_usd is not None
    section = {
        "time": {"seconds": seconds},
        "cost": {
            "accelerator_hours": {q: m.accelerator_hours for q, m in money.items()},
            "total_usd": {"p10": low_usd, "p90": high_usd} if priced else None,
        },
        "human": {
            "time": f"{human_duration(seconds['p10'], dec)} – {human_duration(seconds['p90'], dec)}",
            "total": f"{human_usd(low_usd)} – {human_usd(high_usd)}"
            if low_usd is not None and high_usd is not None
            else None,
        },
    }
    return section, {"class": name, "points": points}
