"""Prediction intervals: (p10, p90) of the measured value given the prediction, from measured log residuals.

A residual is r = log(measured / predicted) in the metric's own direction (a time's residual is the log of measured
over predicted seconds; a throughput's of measured over predicted tokens/s), so the interval of a new measurement is
[predicted · exp(q10), predicted · exp(q90)] with q10, q90 the quantiles of the next residual of its class.

The quantiles are the class's empirical 10th and 90th percentiles (linear interpolation), kept skewed as the
residuals are (a model optimistic on one stack is rarely pessimistic by as much), and widened about the median for the
sample's size by the factor that turns a normal quantile into the prediction interval of one new draw from n points,
t(0.90, n − 1) · √(1 + 1/n) / z(0.90) (e.g. Hahn & Meeker, "Statistical Intervals", 1991, §4.7): 1.3 at 8 points,
1.04 at 100. One function serves the defaults (the class table generated from the public points, residual_table.py)
and any other set of residuals (a calibration profile's own). Chosen over a normal fit of mean and sd (84 % out of
sample, but 4× wide where one source is 6-14× off) and the plain empirical percentiles (75 %, narrower at few points)
by coverage out of sample, leave-one-source-out: docs/formulas.md, "Prediction intervals".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from . import residual_table

# a class with fewer residuals than this answers with its parent's (training/time/complete_run/cuda →
# training/time/complete_run → training/time): below it one source can move the quantiles by itself
MIN_POINTS = 8
# standard normal 90th percentile, Φ⁻¹(0.9)
Z90 = 1.2815515655446004


class ClassStats(NamedTuple):
    """One class of residuals: how many, their mean and sd (log units), and the multipliers they give."""

    points: int
    mean: float
    sd: float
    p10_factor: float
    p90_factor: float


def interval_factors(log_residuals: Sequence[float]) -> tuple[float, float]:
    """(p10, p90) multipliers on a prediction from log(measured / predicted) residuals (module docstring); at least
    two residuals."""
    n = len(log_residuals)
    if n < 2:
        raise ValueError("interval_factors needs at least two residuals")
    q10, median, q90 = np.quantile(np.asarray(log_residuals, dtype=float), (0.1, 0.5, 0.9))
    widen = t90(n - 1) * math.sqrt(1.0 + 1.0 / n) / Z90
    return math.exp(median - (median - q10) * widen), math.exp(median + (q90 - median) * widen)


def t90(dof: int) -> float:
    """Student's t 90th percentile for `dof` degrees of freedom: the Cornish-Fisher expansion around the normal
    quantile (Abramowitz & Stegun 26.7.5), within 0.3 % of the tables from 3 degrees of freedom on."""
    z, v = Z90, float(dof)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    return z + g1 / v + g2 / v**2 + g3 / v**3


def stats(log_residuals: Sequence[float]) -> ClassStats:
    """The class table's row for a set of residuals (the generator and a profile's residuals both call it)."""
    n = len(log_residuals)
    mean = math.fsum(log_residuals) / n
    sd = math.sqrt(math.fsum((r - mean) ** 2 for r in log_residuals) / (n - 1))
    low, high = interval_factors(log_residuals)
    return ClassStats(n, mean, sd, low, high)


# the generated defaults: class → (points, mean, sd, p10 factor, p90 factor)
TABLE: dict[str, ClassStats] = {name: ClassStats(*row) for name, row in residual_table.ROWS.items()}


def lookup(key: str, table: Mapping[str, ClassStats] = TABLE) -> tuple[str, ClassStats] | None:
    """The class that answers for `key` ("kind/metric/.../stack"): the key itself when it has MIN_POINTS residuals,
    else its nearest parent that has; None when no level has (no interval)."""
    parts = key.split("/")
    while parts:
        name = "/".join(parts)
        found = table.get(name)
        if found is not None and found.points >= MIN_POINTS:
            return name, found
        parts.pop()
    return None
