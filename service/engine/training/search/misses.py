"""When nothing qualifies: why, with the plans closest to qualifying (each a Point and a sentence)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...i18n import _, num
from ...units import human_duration, human_usd
from .pool import first_row

Constraints = Any  # rank.Constraints (deadline_s, budget_usd); named here without importing rank
Point = Any  # rank.Point
Masks = tuple[np.ndarray, np.ndarray, np.ndarray]  # fits, in time, in budget


def _first(a: dict[str, np.ndarray], rows: np.ndarray, primary: str, secondary: str) -> int:
    """The first of `rows` by column `primary`, then `secondary` (pool.first_row)."""
    return int(first_row(rows, a[primary], a[secondary])[0])


def nearest_misses(
    a: dict[str, np.ndarray], masks: Masks, constraints: Constraints, point: Callable[[int], Point]
) -> list[dict[str, Any]]:
    """Why nothing qualified: no candidate, nothing fits, or the fastest / cheapest plans and what they miss."""
    if not len(a["seconds"]):
        return [
            {
                "reason": "no_candidates",
                "message": _("No accelerator in the search has a price and a valid layout."),
            }
        ]
    fits, in_time, in_budget = masks
    fitting = np.flatnonzero(fits)
    if not len(fitting):
        return [_does_not_fit(point(int(np.argmin(a["memory"]))))]
    misses: list[dict[str, Any]] = []
    if constraints.deadline_s is not None and not in_time[fitting].any():
        misses.append(_late(point(_first(a, fitting, "seconds", "usd")), constraints.deadline_s))
    timely = fitting[in_time[fitting]]
    if constraints.budget_usd is not None and len(timely):
        misses.append(
            _over_budget(point(_first(a, timely, "usd", "seconds")), constraints, constraints.budget_usd)
        )
    affordable = fitting[in_budget[fitting]]
    if constraints.deadline_s is not None and constraints.budget_usd is not None and len(affordable):
        quick = point(_first(a, affordable, "seconds", "usd"))
        misses.append(
            {
                "reason": "misses_deadline_within_budget",
                "message": _("Within the budget the fastest plan takes {seconds} ({value}).").format(
                    seconds=human_duration(quick.seconds), value=quick.describe()
                ),
                "plan": quick,
            }
        )
    if not misses:
        cheapest = point(_first(a, fitting, "usd", "seconds"))
        misses.append(
            {
                "reason": "cheapest",
                "message": _("The cheapest plan: {value}.").format(value=cheapest.describe()),
                "plan": cheapest,
            }
        )
    return misses


def _does_not_fit(p: Point) -> dict[str, Any]:
    return {
        "reason": "does_not_fit",
        "message": _(
            "No layout fits in memory; the least memory per device is {value} GiB on {id} ({value2} "
            "GiB): allow more devices, pipeline stages, ZeRO-3 or full recomputation."
        ).format(
            value=num(p.memory_bytes / 2**30, 1),
            id=p.plan.accelerator.id,
            value2=num(p.plan.accelerator.memory_bytes / 2**30, 1),
        ),
        "plan": p,
    }


def _late(fastest: Point, deadline_s: float) -> dict[str, Any]:
    return {
        "reason": "misses_deadline",
        "message": _("The fastest plan takes {seconds} ({value}); the deadline is {deadline_s}.").format(
            seconds=human_duration(fastest.seconds),
            value=fastest.describe(),
            deadline_s=human_duration(deadline_s),
        ),
        "plan": fastest,
    }


def _over_budget(best: Point, constraints: Constraints, budget_usd: float) -> dict[str, Any]:
    within = (
        _(" within {deadline_s}").format(deadline_s=human_duration(constraints.deadline_s))
        if constraints.deadline_s is not None
        else ""
    )
    return {
        "reason": "over_budget",
        "message": _(
            "The cheapest plan{within} needs a budget of {total_usd} ({value}); the budget is {budget_usd}."
        ).format(
            within=within,
            total_usd=human_usd(best.total_usd),
            value=best.describe(),
            budget_usd=human_usd(budget_usd),
        ),
        "plan": best,
    }
