"""Fit a calibration profile: the points a team measured → factors with their uncertainty, errors before and after.

Each point is an estimate request (validated by the caller's schema) and what was measured on it. A point the
engine refuses, whose figures the estimate cannot give, or that runs on another accelerator or stack than the
profile's first point is refused on its own; the rest are fitted (solver.py) and every point is answered.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..budget import Checkpoint, unlimited
from ..errors import InvalidRequest
from ..hardware import Catalog
from ..i18n import _
from ..inference.estimate import estimate_inference
from ..training.estimate import estimate_training
from . import factors as fx
from .metrics import default_shares, measured_problems, predicted, stack_of
from .solver import MAX_ITERATIONS, BudgetSpent, solve

ESTIMATORS = {"training": estimate_training, "inference": estimate_inference}
INFORMED_SHARE = 0.05  # a factor whose posterior precision is less than 5 % data is reported as not informed


@dataclass(frozen=True)
class Point:
    request: Mapping[str, Any]  # an estimate body as the schema loaded it
    measured: Mapping[str, float]


@dataclass
class _Accepted:
    index: int
    request: dict[str, Any]
    measured: dict[str, float]
    before: dict[str, float]


def quiet(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request without its advice and catalog ranking (the fit evaluates each point many times)."""
    body = dict(request)
    body["output"] = {**(request.get("output") or {}), "recommendations": False, "suggestions": False}
    return body


def run(kind: str, request: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    return ESTIMATORS[kind](request, catalog)


def fit_profile(
    kind: str,
    points: Sequence[Point],
    catalog: Catalog,
    *,
    refused: Mapping[int, Mapping[str, list[str]]] | None = None,
    checkpoint: Checkpoint = unlimited,
    max_iterations: int = MAX_ITERATIONS,
) -> dict[str, Any]:
    """The fitted profile (JSON-ready). `refused` holds the caller's own per-point problems (schema errors) by
    index; those points are answered as refused. Raises InvalidRequest when no point can be fitted."""
    problems: dict[int, dict[str, list[str]]] = {i: dict(p) for i, p in (refused or {}).items()}
    accepted, where, shares = _accept(kind, points, catalog, problems, checkpoint)
    if not accepted:
        raise InvalidRequest.single(
            "points",
            _("No point can be fitted: {count} refused (see each point's problems).").format(
                count=len(points)
            ),
        )
    residuals = _Residuals(kind, accepted, catalog, where["accelerator"], checkpoint)
    bounds = fx.bounds(kind, shares)
    lo = np.log([bounds[f].low for f in fx.FACTORS])
    hi = np.log([bounds[f].high for f in fx.FACTORS])
    sol = solve(
        residuals,
        lo,
        hi,
        fx.PRIOR_SIGMA,
        fx.NOISE_SIGMA,
        start=residuals.before(),
        checkpoint=checkpoint,
        max_iterations=max_iterations,
    )
    keys = residuals.keys
    return {
        **where,
        "factors": _factor_rows(sol, bounds, lo, hi),
        "points": _point_rows(len(points), accepted, problems, keys, sol.residuals),
        "residuals": [
            {"point": a.index, "metric": m, "log_ratio": float(r)}
            for (a, m), r in zip(keys, sol.residuals, strict=True)
        ],
        "fit": _fit_summary(sol, keys, len(accepted), len(points) - len(accepted)),
        "notes": _notes(sol, bounds, lo, hi),
    }


class _Residuals:
    """r(θ) = ln(predicted / measured) of every measured figure of every accepted point, each evaluation the real
    estimate on the part scaled by exp(θ). Asks the budget checkpoint every few points (BudgetSpent)."""

    EVERY = 16  # points between checkpoints

    def __init__(
        self, kind: str, accepted: list[_Accepted], catalog: Catalog, acc_id: str, checkpoint: Checkpoint
    ):
        self.kind, self.catalog, self.acc_id, self.checkpoint = kind, catalog, acc_id, checkpoint
        self.accepted = accepted
        self.keys = [(a, m) for a in accepted for m in a.measured]
        self.measured_log = np.array([math.log(a.measured[m]) for a, m in self.keys])

    def before(self) -> np.ndarray:
        """r at the defaults (θ = 0), from the answers the points were accepted on."""
        return np.array([math.log(a.before[m]) for a, m in self.keys]) - self.measured_log

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        scaled = fx.scaled_catalog(self.catalog, _factors(theta), (self.acc_id,))
        answers: dict[int, dict[str, float]] = {}
        for n, a in enumerate(self.accepted):
            if n % self.EVERY == 0 and n and not self.checkpoint():
                raise BudgetSpent
            try:
                answers[a.index] = predicted(self.kind, a.request, run(self.kind, a.request, scaled))
            except InvalidRequest:
                answers[a.index] = {}
        values = np.array([answers[a.index].get(m, math.nan) for a, m in self.keys])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan) - self.measured_log


def _factors(theta: np.ndarray) -> dict[str, float]:
    return {f: float(math.exp(t)) for f, t in zip(fx.FACTORS, theta, strict=True)}


def _accept(
    kind: str,
    points: Sequence[Point],
    catalog: Catalog,
    problems: dict[int, dict[str, list[str]]],
    checkpoint: Checkpoint,
) -> tuple[list[_Accepted], dict[str, Any], dict[str, float]]:
    """The points that can be fitted, the accelerator and stack of the profile, and the default shares (bounds).
    Points the request's time budget does not reach are refused as such (a profile of part of the points)."""
    accepted: list[_Accepted] = []
    where: dict[str, Any] = {}
    shares: dict[str, float] = {}
    budget_left = True
    for index, point in enumerate(points):
        if index in problems:
            continue
        budget_left = budget_left and (index % _Residuals.EVERY != 0 or not index or checkpoint())
        if not budget_left:
            problems[index] = {
                f"points.{index}": [_("Not reached within the request's time budget: send fewer points.")]
            }
            continue
        errors = _point_errors(kind, index, point, catalog, where)
        if isinstance(errors, dict):
            problems[index] = errors
            continue
        answer, before = errors
        for name, share in default_shares(kind, answer).items():
            shares[name] = max(shares.get(name, 0.0), share)
        accepted.append(_Accepted(index, quiet(point.request), dict(point.measured), before))
    return accepted, where, shares


def _point_errors(kind: str, index: int, point: Point, catalog: Catalog, where: dict[str, Any]):
    """The point's problems, or (its default answer, the predicted figures) when it can be fitted; the first
    accepted point sets `where` (accelerator and stack)."""
    bad = measured_problems(kind, point.measured)
    if bad:
        return {f"points.{index}.measured": bad}
    acc_id = str((point.request.get("hardware") or {}).get("accelerator") or "")
    if acc_id not in catalog.accelerators:
        return {f"points.{index}.request.hardware.accelerator": [catalog.missing_message(acc_id or None)]}
    try:
        answer = run(kind, quiet(point.request), catalog)
    except InvalidRequest as exc:
        return {f"points.{index}.request.{k}": v for k, v in exc.errors.items()}
    before = predicted(kind, point.request, answer)
    missing = [m for m in point.measured if not math.isfinite(before[m]) or before[m] <= 0]
    if missing:
        return {
            f"points.{index}.measured": [
                _(
                    "The estimate gives no {names} for this request (e.g. the arrival rate saturates it)."
                ).format(names=", ".join(missing))
            ]
        }
    stack = stack_of(kind, answer)
    if where and (where["accelerator"], where["stack"]) != (acc_id, stack):
        return {
            f"points.{index}.request.hardware.accelerator": [
                _(
                    "A profile describes one accelerator and stack: this point runs {got}, the profile {want}."
                ).format(got=f"{acc_id} ({stack})", want=f"{where['accelerator']} ({where['stack']})")
            ]
        }
    where.update(accelerator=acc_id, stack=stack)
    return answer, before


def _factor_rows(sol, bounds: Mapping[str, fx.Bounds], lo: np.ndarray, hi: np.ndarray) -> dict[str, Any]:
    rows = {}
    for k, name in enumerate(fx.FACTORS):
        log_sd = float(math.sqrt(sol.covariance[k, k]))
        data_share = max(0.0, 1.0 - sol.covariance[k, k] / fx.PRIOR_SIGMA**2)
        value = float(math.exp(sol.theta[k]))
        rows[name] = {
            "value": value,
            "standard_deviation": value * log_sd,
            "log_standard_deviation": log_sd,
            "low": bounds[name].low,
            "high": bounds[name].high,
            "bound": bounds[name].why,
            "clamped": _clamped(sol, k, lo, hi),
            "unclamped_value": float(math.exp(sol.wanted[k])),
            "data_share": float(data_share),
            "informed": bool(data_share >= INFORMED_SHARE),
        }
    return rows


def _clamped(sol, k: int, lo: np.ndarray, hi: np.ndarray) -> bool:
    at_high = sol.theta[k] >= hi[k] - 1e-9 and sol.wanted[k] > hi[k] + 1e-4
    at_low = sol.theta[k] <= lo[k] + 1e-9 and sol.wanted[k] < lo[k] - 1e-4
    return bool(at_high or at_low)


def _point_rows(count: int, accepted, problems, keys, residuals: np.ndarray) -> list[dict[str, Any]]:
    """Each point: refused with its problems, or its figures before and after (after = measured × exp(r) at the
    fitted factors: the residuals are the last evaluation of the model there)."""
    after: dict[int, dict[str, float]] = {}
    for (a, m), r in zip(keys, residuals, strict=True):
        after.setdefault(a.index, {})[m] = a.measured[m] * math.exp(r) if math.isfinite(r) else math.nan
    by_index = {a.index: a for a in accepted}
    rows = []
    for index in range(count):
        a = by_index.get(index)
        if a is None:
            rows.append({"index": index, "status": "refused", "problems": problems.get(index, {})})
            continue
        rows.append(
            {
                "index": index,
                "status": "fitted",
                "measured": a.measured,
                "predicted_before": {m: a.before[m] for m in a.measured},
                "predicted_after": after[index],
                "error_before": {m: a.before[m] / v - 1.0 for m, v in a.measured.items()},
                "error_after": {m: after[index][m] / v - 1.0 for m, v in a.measured.items()},
            }
        )
    return rows


def _fit_summary(sol, keys, fitted: int, refused: int) -> dict[str, Any]:
    before = [abs(a.before[m] / a.measured[m] - 1.0) for a, m in keys]
    after = [abs(math.expm1(r)) for r in sol.residuals if math.isfinite(r)]
    return {
        "points_fitted": fitted,
        "points_refused": refused,
        "metrics_fitted": len(keys),
        "iterations": sol.iterations,
        "evaluations": sol.evaluations,
        "converged": sol.converged,
        "complete": sol.complete,
        "prior_log_sigma": fx.PRIOR_SIGMA,
        "noise_log_sigma": fx.NOISE_SIGMA,
        "median_abs_error_before": statistics.median(before) if before else None,
        "median_abs_error_after": statistics.median(after) if after else None,
    }


def _notes(sol, bounds, lo, hi) -> list[str]:
    notes = []
    for k, name in enumerate(fx.FACTORS):
        share = 1.0 - sol.covariance[k, k] / fx.PRIOR_SIGMA**2
        if share < INFORMED_SHARE:
            notes.append(
                _(
                    "Almost no point informs {factor} (e.g. single-device points for network): it stays near the default, 1."
                ).format(factor=name)
            )
        if _clamped(sol, k, lo, hi):
            notes.append(
                _(
                    "The data would move {factor} to {wanted:.3g}, outside its bound [{low:g}, {high:.3g}] "
                    "({why}): clamped."
                ).format(
                    factor=name,
                    wanted=math.exp(sol.wanted[k]),
                    low=bounds[name].low,
                    high=bounds[name].high,
                    why=bounds[name].why,
                )
            )
    if not sol.complete:
        notes.append(
            _("The request's time budget ended the fit early: the factors are the best found by then.")
        )
    return notes
