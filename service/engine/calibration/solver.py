"""Bounded Levenberg–Marquardt on log-factors with a Gaussian prior (numpy only).

Minimises S(θ) = ‖r(θ)‖² / σ_r² + ‖θ‖² / σ_p² over θ = log(factor) within [lo, hi], where r(θ) are the log-ratios
log(predicted / measured) of every metric of every point and each evaluation of r is the real estimate. The
Jacobian is taken by forward differences; the posterior covariance of θ is (JᵀJ / σ_r² + I / σ_p²)⁻¹ at the answer
(Gaussian approximation, e.g. Bishop 2006 §4.4, "The Laplace approximation").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..budget import Checkpoint, unlimited

STEP = (
    0.05  # finite-difference step in log units (5 %): wider than the model's kinks between roofline regimes
)
MAX_ITERATIONS = 12
TOLERANCE = 1e-3  # stop when no log-factor moves more than 0.1 %

Residuals = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Solution:
    theta: np.ndarray  # log-factors at the answer
    covariance: np.ndarray  # posterior covariance of theta
    residuals: np.ndarray  # r(theta)
    jacobian: np.ndarray  # dr/dθ at the answer
    wanted: (
        np.ndarray
    )  # where one unbounded step from the answer would go (a bound held the fit back when outside)
    iterations: int
    evaluations: int
    converged: bool
    complete: bool  # False: the time budget ended the fit early


def solve(
    residuals: Residuals,
    lo: np.ndarray,
    hi: np.ndarray,
    prior_sigma: float,
    noise_sigma: float,
    *,
    checkpoint: Checkpoint = unlimited,
    max_iterations: int = MAX_ITERATIONS,
) -> Solution:
    """The bounded maximum a posteriori log-factors. `residuals(theta)` may hold NaN (no figure at theta): a trial
    step there is refused, and a NaN difference counts as no derivative."""
    n = lo.size
    prior = np.eye(n) / prior_sigma**2
    theta = np.zeros(n)
    r = residuals(theta)
    jac = _jacobian(residuals, theta, r, lo, hi)
    evaluations, iterations, damping = 1 + n, 0, 1e-3
    converged = budget_out = False
    while iterations < max_iterations and not converged:
        a = jac.T @ jac / noise_sigma**2 + prior
        g = jac.T @ r / noise_sigma**2 + prior @ theta
        accepted = False
        while iterations < max_iterations and damping < 1e6:
            if not checkpoint():
                budget_out = True
                break
            iterations += 1
            step = np.linalg.solve(a + damping * np.diag(np.diag(a)), -g)
            trial = np.clip(theta + step, lo, hi)
            r_trial = residuals(trial)
            evaluations += 1
            if _objective(r_trial, trial, prior_sigma, noise_sigma) < _objective(
                r, theta, prior_sigma, noise_sigma
            ):
                converged = bool(np.max(np.abs(trial - theta)) < TOLERANCE)
                theta, r, accepted, damping = trial, r_trial, True, max(damping / 3.0, 1e-6)
                break
            damping *= 4.0
        if budget_out:
            break
        if not accepted:  # no step lowers S however damped: theta is the (bounded) minimum
            converged = damping >= 1e6
            break
        if not checkpoint():
            budget_out = True
            break
        jac = _jacobian(residuals, theta, r, lo, hi)
        evaluations += n
    return _solution(theta, r, jac, prior, noise_sigma, iterations, evaluations, converged, not budget_out)


def _solution(theta, r, jac, prior, noise_sigma, iterations, evaluations, converged, complete) -> Solution:
    a = jac.T @ jac / noise_sigma**2 + prior
    covariance = np.linalg.inv(a)
    g = jac.T @ r / noise_sigma**2 + prior @ theta
    wanted = theta - covariance @ g
    return Solution(theta, covariance, r, jac, wanted, iterations, evaluations, converged, complete)


def _objective(r: np.ndarray, theta: np.ndarray, prior_sigma: float, noise_sigma: float) -> float:
    if not np.all(np.isfinite(r)):
        return float("inf")
    return float(r @ r / noise_sigma**2 + theta @ theta / prior_sigma**2)


def _jacobian(
    residuals: Residuals, theta: np.ndarray, r: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Forward differences, stepping inward at an upper bound."""
    jac = np.zeros((r.size, theta.size))
    for k in range(theta.size):
        h = STEP if theta[k] + STEP <= hi[k] else -STEP
        shifted = theta.copy()
        shifted[k] += h
        column = (residuals(shifted) - r) / h
        jac[:, k] = np.where(np.isfinite(column), column, 0.0)
    return jac
