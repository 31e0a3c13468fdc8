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


class BudgetSpent(Exception):
    """Raised by a residual function when the request's time budget ends mid-evaluation."""


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


@dataclass
class _State:
    """Where the fit stands: theta and r(theta) change together on each accepted step."""

    theta: np.ndarray
    r: np.ndarray
    jac: np.ndarray
    iterations: int = 0
    evaluations: int = 0
    converged: bool = False


def solve(
    residuals: Residuals,
    lo: np.ndarray,
    hi: np.ndarray,
    prior_sigma: float,
    noise_sigma: float,
    *,
    start: np.ndarray | None = None,
    checkpoint: Checkpoint = unlimited,
    max_iterations: int = MAX_ITERATIONS,
) -> Solution:
    """The bounded maximum a posteriori log-factors. `residuals(theta)` may hold NaN (no figure at theta): a trial
    step there is refused, and a NaN difference counts as no derivative; it may raise BudgetSpent, which ends the
    fit at the best point found so far (`complete` False). `start`: r(0) when the caller has it already."""
    n = lo.size
    prior = np.eye(n) / prior_sigma**2
    theta = np.zeros(n)
    r = residuals(theta) if start is None else start
    state = _State(theta, r, np.zeros((r.size, n)), evaluations=1 if start is None else 0)
    complete = True
    try:
        state.jac = _jacobian(residuals, theta, r, lo, hi)
        state.evaluations += n
        _iterate(state, residuals, lo, hi, prior, (prior_sigma, noise_sigma), checkpoint, max_iterations)
    except BudgetSpent:
        complete = False
    return _solution(state, prior, noise_sigma, complete)


def _iterate(state: _State, residuals, lo, hi, prior, sigmas, checkpoint, max_iterations) -> None:
    """Levenberg–Marquardt steps (damping on the diagonal, Marquardt 1963) from state.theta, in place; raises
    BudgetSpent when the request's budget ends."""
    prior_sigma, noise_sigma = sigmas
    damping = 1e-3
    while state.iterations < max_iterations and not state.converged:
        a = state.jac.T @ state.jac / noise_sigma**2 + prior
        g = state.jac.T @ state.r / noise_sigma**2 + prior @ state.theta
        accepted = False
        while state.iterations < max_iterations and damping < 1e6:
            if not checkpoint():
                raise BudgetSpent
            state.iterations += 1
            step = np.linalg.solve(a + damping * np.diag(np.diag(a)), -g)
            trial = np.clip(state.theta + step, lo, hi)
            r_trial = residuals(trial)
            state.evaluations += 1
            now = _objective(state.r, state.theta, prior_sigma, noise_sigma)
            if _objective(r_trial, trial, prior_sigma, noise_sigma) < now:
                state.converged = bool(np.max(np.abs(trial - state.theta)) < TOLERANCE)
                state.theta, state.r, accepted = trial, r_trial, True
                damping = max(damping / 3.0, 1e-6)
                break
            damping *= 4.0
        if not accepted:  # no step lowers S however damped: theta is the (bounded) minimum
            state.converged = damping >= 1e6
            return
        if not checkpoint():
            raise BudgetSpent
        state.jac = _jacobian(residuals, state.theta, state.r, lo, hi)
        state.evaluations += state.theta.size


def _solution(state: _State, prior: np.ndarray, noise_sigma: float, complete: bool) -> Solution:
    """The answer with its Laplace covariance (JᵀJ/σ_r² + prior precision)⁻¹ and one unbounded step's target."""
    a = state.jac.T @ state.jac / noise_sigma**2 + prior
    covariance = np.linalg.inv(a)
    g = state.jac.T @ state.r / noise_sigma**2 + prior @ state.theta
    wanted = state.theta - covariance @ g
    return Solution(
        state.theta,
        covariance,
        state.r,
        state.jac,
        wanted,
        state.iterations,
        state.evaluations,
        state.converged and complete,
        complete,
    )


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
