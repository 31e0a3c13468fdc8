"""Prediction intervals from a calibration profile's own residuals, pooled with the default class's width.

A profile's residuals are kept as the fit computed them, ln(predicted / measured) per point and metric
(calibration/fit.py); an interval wants r = ln(measured / predicted) in the metric's own direction
(intervals.py). `from_profile` converts them here, once: r = −log_ratio for a figure the interval bounds as it is
(serving throughput, TTFT, TPOT; a training step's seconds), r = +log_ratio for a training throughput read as time
(time ∝ 1 / tokens per second).

The small-sample rule (docs/formulas.md, "Prediction intervals", "With a calibration profile"): the profile's n
residuals after the fit are in-sample, so their spread is inflated by √(N / (N − k)) (N residuals fitted, k
informed factors) and widened like a class's (interval_factors); the default class's half-width (the spread of the
uncalibrated model across public sources) is a prior worth PRIOR_POINTS points, pooled with the profile's squared
half-widths; the centre is the profile's median residual shrunk toward 0 (the calibrated model, unbiased a priori)
with the same weights. With 2 points the answer is mostly the prior's width, with 40 mostly the profile's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .intervals import MIN_POINTS, ClassStats, interval_factors, lookup

# the default class counts as this many points of the profile's own: the count below which a default class
# answers with its parent's (intervals.MIN_POINTS), one source's worth of evidence
PRIOR_POINTS = MIN_POINTS
TRAINING_TIME = "time"
# the profile's measured figure → (the interval metric it informs, sign taking ln(predicted/measured) to
# ln(measured/predicted) in that metric's direction); training's first present figure per point is used
METRIC_SIGNS: dict[str, dict[str, tuple[str, float]]] = {
    "training": {"tokens_per_second": (TRAINING_TIME, 1.0), "step_seconds": (TRAINING_TIME, -1.0)},
    "inference": {
        "output_tokens_per_second": ("output_tokens_per_second", -1.0),
        "time_to_first_token_s": ("time_to_first_token_s", -1.0),
        "time_per_output_token_s": ("time_per_output_token_s", -1.0),
    },
}


@dataclass(frozen=True)
class ProfileResiduals:
    """What a profile's intervals need: who it is, its residuals per interval metric ln(measured / predicted),
    how many residuals the fit had (N) and how many factors the data informed (k)."""

    id: int
    name: str
    revision: int
    residuals: tuple[tuple[str, tuple[float, ...]], ...]
    fitted: int
    informed: int
    # (metric, class) → pooled factors: the training planner asks once per candidate
    pooled: dict[tuple[str, str], tuple[float, float]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def of(self, metric: str) -> tuple[float, ...]:
        return dict(self.residuals).get(metric, ())

    def named(self, points: int) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "revision": self.revision, "points": points}


def from_profile(kind: str, profile: Mapping[str, Any]) -> ProfileResiduals | None:
    """The profile's residuals in the intervals' convention (module docstring); None when it kept none."""
    rows = profile.get("residuals") or []
    if not rows:
        return None
    signs = METRIC_SIGNS[kind]
    seen: set[tuple[str, int]] = set()
    by_metric: dict[str, list[float]] = {}
    fitted = 0
    for row in rows:
        value = row.get("log_ratio")
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            continue
        fitted += 1
        target = signs.get(str(row.get("metric")))
        if target is None or (target[0], row.get("point")) in seen:
            continue  # a training point measured twice (tokens/s and step seconds) counts once
        seen.add((target[0], row.get("point")))
        by_metric.setdefault(target[0], []).append(target[1] * float(value))
    informed = sum(1 for f in (profile.get("factors") or {}).values() if (f or {}).get("informed"))
    return ProfileResiduals(
        int(profile["id"]),
        str(profile["name"]),
        int(profile["revision"]),
        tuple((m, tuple(v)) for m, v in sorted(by_metric.items())),
        fitted,
        informed,
    )


def pooled_factors(
    residuals: Sequence[float], fitted: int, informed: int, prior: ClassStats
) -> tuple[float, float]:
    """(p10, p90) multipliers from a profile's `residuals` of one metric pooled with the default class `prior`
    (module docstring); the prior's own with fewer than 2 residuals."""
    n = len(residuals)
    prior_half = 0.5 * math.log(prior.p90_factor / prior.p10_factor)
    if n < 2:
        return prior.p10_factor, prior.p90_factor
    low, high = (math.log(f) for f in interval_factors(residuals))
    median = float(np.median(residuals))
    dof = fitted - informed
    if dof < 1:  # as many factors as residuals: the fit can match them all, their spread says nothing
        own_low = own_high = prior_half
    else:
        inflate = math.sqrt(fitted / dof)
        own_low, own_high = (median - low) * inflate, (high - median) * inflate
    weight = n / (n + PRIOR_POINTS)
    centre = weight * median
    half_low = math.sqrt(weight * own_low**2 + (1.0 - weight) * prior_half**2)
    half_high = math.sqrt(weight * own_high**2 + (1.0 - weight) * prior_half**2)
    return math.exp(centre - half_low), math.exp(centre + half_high)


def interval_for(
    key: str, metric: str, profile: ProfileResiduals | None
) -> tuple[float, float, dict[str, Any]] | None:
    """(p10 factor, p90 factor, basis) for the default class `key` ("kind/metric/.../stack"), from the profile's
    residuals of `metric` when a profile is used (pooled with the class: pooled_factors), else the class's own;
    None when no class answers (then no profile either: its width is pooled with one). The basis names the class;
    with a profile also the profile, its revision and its points behind this metric, and whether they set the
    interval (source "profile") or were too few (source "defaults": the class alone)."""
    found = lookup(key)
    if found is None:
        return None
    name, row = found
    basis: dict[str, Any] = {"class": name, "points": row.points}
    if profile is None:
        return row.p10_factor, row.p90_factor, basis
    residuals = profile.of(metric)
    low, high = profile.pooled.get((metric, name)) or profile.pooled.setdefault(
        (metric, name), pooled_factors(residuals, profile.fitted, profile.informed, row)
    )
    basis["source"] = "profile" if len(residuals) >= 2 else "defaults"
    basis["profile"] = {**profile.named(len(residuals)), "prior_points": PRIOR_POINTS}
    return low, high, basis
