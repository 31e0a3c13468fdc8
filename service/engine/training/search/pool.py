"""The search's evaluated configurations, reduced part by part to the rows any answer can name.

A part is one candidate's layouts priced on one offer. The ranking used to sort every evaluated row at once (4.7M
rows for Kimi K2 up to 65,536 devices: a 0.8 s block nothing could interrupt). Each answer is a minimum or a
frontier over the rows in their order, so the rows that can be named are found within each part, between the
search's checkpoints, and the ranking then runs on those alone, with the same result:
- the time-vs-cost frontier of all rows is the frontier of the parts' frontiers (a row beaten inside its part is
  beaten overall); ties keep the earlier row, as the parts keep the rows' order;
- the first `limit` rows of the cheapest / fastest / fewest-devices order are among each part's first `limit`;
- the nearest misses (only when nothing is feasible) are each part's own minima of the same keys.
Counts (excluded by reason, feasible, evaluated) are added up part by part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.arrays import LayoutNumbers, Layouts

COLUMNS = ("candidate", "offer", "row", "part", "seconds", "usd", "usd_p90", "memory", "fits", "devices")


@dataclass(frozen=True)
class Limits:
    """What the search keeps rows for: the constraints, the objective and how many results it answers."""

    deadline_s: float | None
    budget_usd: float | None
    objective: str
    limit: int


def feasibility(
    seconds: np.ndarray, usd: np.ndarray, fits: np.ndarray, limits: Limits
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fits, in time, in budget) masks; a NaN price (searched unpriced, fastest only) is within any budget."""
    deadline = limits.deadline_s if limits.deadline_s is not None else np.inf
    budget = limits.budget_usd if limits.budget_usd is not None else np.inf
    fits = fits.astype(bool)
    in_time = seconds <= deadline
    in_budget = (usd <= budget) | (limits.budget_usd is None)
    return fits, in_time, in_budget


def frontier(seconds: np.ndarray, usd: np.ndarray, memory: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows no other row beats on both time and cost (ties: the one with less memory), fastest first."""
    if not len(rows):
        return rows
    order = rows[np.lexsort((memory[rows], usd[rows], seconds[rows]))]
    cost = usd[order]
    best_before = np.minimum.accumulate(np.concatenate(([np.inf], cost[:-1])))
    return order[cost < best_before]


def objective_order(
    seconds: np.ndarray,
    usd: np.ndarray,
    memory: np.ndarray,
    devices: np.ndarray,
    rows: np.ndarray,
    objective: str,
) -> np.ndarray:
    """`rows` best first for a ranking objective: fastest, fewest_devices, else cheapest (cheapest_p90: the caller
    passes the p90 cost as `usd`)."""
    s, u, m = seconds[rows], usd[rows], memory[rows]
    if objective == "fastest":
        return rows[np.lexsort((m, u, s))]
    if objective == "fewest_devices":  # hardware.count "auto": the smallest count that qualifies
        return rows[np.lexsort((m, s, devices[rows]))]
    return rows[np.lexsort((m, s, u))]


def first_row(rows: np.ndarray, primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """The first of `rows` by `primary`, then `secondary` (stable: the earlier row wins a tie), as a 0- or 1-element
    array of row indices. The nearest misses (misses.py) pick their plans with it, and miss_rows keeps those rows."""
    if not len(rows):
        return rows
    return rows[[np.lexsort((secondary[rows], primary[rows]))[0]]]


def miss_rows(
    seconds: np.ndarray,
    usd: np.ndarray,
    memory: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """The rows the nearest misses can name: least memory, and the first fitting rows by time and by cost (all
    fitting, in time, within budget), as rank._nearest_misses picks them."""
    fits, in_time, in_budget = masks
    fitting = np.flatnonzero(fits)
    picks = [np.array([int(np.argmin(memory))]) if len(memory) else np.zeros(0, dtype=np.int64)]
    picks.append(first_row(fitting, seconds, usd))
    picks.append(first_row(fitting, usd, seconds))
    picks.append(first_row(fitting[in_time[fitting]], usd, seconds))
    picks.append(first_row(fitting[in_budget[fitting]], seconds, usd))
    return np.concatenate(picks).astype(np.int64)


@dataclass
class Pool:
    """The kept rows of every part as parallel arrays, and the counts of all rows."""

    limits: Limits
    parts: list[tuple[int, int, Layouts, LayoutNumbers, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = (
        field(default_factory=list)
    )
    evaluated: int = 0
    feasible: int = 0
    excluded: dict[str, int] = field(
        default_factory=lambda: {
            "not_sold": 0,
            "startup_dominates": 0,
            "does_not_fit": 0,
            "misses_deadline": 0,
            "over_budget": 0,
        }
    )

    def add(
        self,
        candidate: int,
        offer: int,
        layouts: Layouts,
        numbers: LayoutNumbers,
        usd: np.ndarray,
        sold: np.ndarray | None = None,
        usd_p90: np.ndarray | None = None,
        waiting: np.ndarray | None = None,
    ) -> None:
        """Count the part's rows and keep those an answer can name (module docstring). `sold`: the rows whose device
        count the offer sells (engine/offers.py buyable); the others are counted as not_sold and never kept. `usd_p90`:
        the cost at the time's p90 (objective cheapest_p90 ranks by it; the constraints hold the estimate).
        `waiting`: rows on more than one instance that would spend too much of their time starting up
        (offers.startup_dominates), counted as startup_dominates and never kept."""
        sold = np.ones(len(usd), dtype=bool) if sold is None else sold
        self.excluded["not_sold"] += int(np.count_nonzero(~sold))
        if waiting is not None:
            self.excluded["startup_dominates"] += int(np.count_nonzero(sold & waiting))
            sold = sold & ~waiting
        fits_sold = numbers.fits.astype(bool) & sold
        fits, in_time, in_budget = feasibility(numbers.seconds, usd, fits_sold, self.limits)
        self.evaluated += len(usd)
        self.excluded["does_not_fit"] += int(np.count_nonzero(sold & ~fits))
        self.excluded["misses_deadline"] += int(np.count_nonzero(fits & ~in_time))
        self.excluded["over_budget"] += int(np.count_nonzero(fits & in_time & ~in_budget))
        feasible = np.flatnonzero(fits & in_time & in_budget)
        self.feasible += len(feasible)
        seconds, memory = numbers.seconds, numbers.memory_bytes
        keep = [frontier(seconds, usd, memory, feasible)]
        usd_p90 = usd if usd_p90 is None else usd_p90
        if self.limits.objective != "pareto":
            ranked_usd = usd_p90 if self.limits.objective == "cheapest_p90" else usd
            order = objective_order(
                seconds, ranked_usd, memory, numbers.devices, feasible, self.limits.objective
            )
            keep.append(order[: self.limits.limit])
        if not self.feasible:  # nothing feasible yet: the nearest misses may name this part's rows
            on_sale = np.flatnonzero(sold)
            sold_masks = (fits[on_sale], in_time[on_sale], in_budget[on_sale])
            picks = miss_rows(seconds[on_sale], usd[on_sale], memory[on_sale], sold_masks)
            keep.append(on_sale[picks])
        rows = np.unique(np.concatenate(keep).astype(np.int64))  # sorted: the part's own order
        self.parts.append((candidate, offer, layouts, numbers, usd, rows, fits_sold, usd_p90))

    def arrays(self) -> dict[str, np.ndarray]:
        """The kept rows, parts in order and rows in their order within each."""
        if not self.parts:
            return {k: np.zeros(0) for k in COLUMNS}
        cols: dict[str, list[np.ndarray]] = {k: [] for k in COLUMNS}
        for index, (candidate, offer, _layouts, numbers, usd, rows, fits, usd_p90) in enumerate(self.parts):
            n = len(rows)
            cols["candidate"].append(np.full(n, candidate))
            cols["offer"].append(np.full(n, offer))
            cols["row"].append(rows)
            cols["part"].append(np.full(n, index))
            cols["seconds"].append(numbers.seconds[rows])
            cols["usd"].append(usd[rows])
            cols["usd_p90"].append(usd_p90[rows])
            cols["memory"].append(numbers.memory_bytes[rows])
            cols["fits"].append(fits[rows])
            cols["devices"].append(numbers.devices[rows])
        return {k: np.concatenate(v) for k, v in cols.items()}
