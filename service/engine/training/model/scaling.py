"""Scaling-law figures: compute-optimal size and tokens, predicted loss (Hoffmann 2022; Kaplan 2020)."""

from __future__ import annotations

import math
from typing import Any

from ...i18n import _

# Chinchilla parametric loss L(N, D) = E + A/N^α + B/D^β — Hoffmann et al. 2022, eq. 10 / §D.2 (approach 3).
CHINCHILLA_E = 1.69
CHINCHILLA_A = 406.4
CHINCHILLA_B = 410.7
CHINCHILLA_ALPHA = 0.34
CHINCHILLA_BETA = 0.28
TOKENS_PER_PARAMETER = 20.0  # compute-optimal D ≈ 20·N (Hoffmann et al. 2022, Table 3)
KAPLAN_ALPHA_N = 0.076  # L ∝ N^−0.076 (Kaplan et al. 2020, eq. 1.1)
KAPLAN_ALPHA_D = 0.095  # L ∝ D^−0.095 (Kaplan et al. 2020, eq. 1.2)


def chinchilla_loss(parameters: float, tokens: float) -> float:
    """Predicted pre-training loss (nats/token on MassiveText) — Hoffmann et al. 2022 eq. 10."""
    return CHINCHILLA_E + CHINCHILLA_A / parameters**CHINCHILLA_ALPHA + CHINCHILLA_B / tokens**CHINCHILLA_BETA


def compute_optimal_parameters(compute_flops: float) -> float:
    """N_opt ≈ √(C/120): C = 6·N·D with D = 20·N (Hoffmann et al. 2022; docs/formulas.md)."""
    return math.sqrt(compute_flops / (6.0 * TOKENS_PER_PARAMETER))


def loss_optimal_parameters(compute_flops: float) -> float:
    """argmin_N L(N, C/6N) of the parametric fit: N* = G·(C/6)^(β/(α+β)), G = (αA/βB)^(1/(α+β)) —
    Hoffmann et al. 2022 eq. (4) applied to eq. (10). Larger than √(C/120) at large C (Besiroglu et al. 2024)."""
    alpha, beta = CHINCHILLA_ALPHA, CHINCHILLA_BETA
    g = (alpha * CHINCHILLA_A / (beta * CHINCHILLA_B)) ** (1.0 / (alpha + beta))
    return g * (compute_flops / 6.0) ** (beta / (alpha + beta))


def scaling_summary(parameters: float, tokens: float, is_moe: bool) -> dict[str, Any]:
    """The response's `scaling` object for a token model with N parameters trained on D tokens."""
    compute = 6.0 * parameters * tokens  # C = 6·N·D (Kaplan et al. 2020 §2.1)
    n_opt = compute_optimal_parameters(compute)
    d_opt = TOKENS_PER_PARAMETER * n_opt
    relative = (parameters / n_opt) ** -KAPLAN_ALPHA_N * (tokens / d_opt) ** -KAPLAN_ALPHA_D
    notes = [_("Chinchilla fits dense decoder LMs on MassiveText; treat the loss as a relative guide.")]
    if is_moe:
        notes.append(
            _("MoE model: laws applied to active parameters, which understates what all experts add.")
        )
    return {
        "tokens_per_parameter": tokens / parameters,
        "compute_optimal_tokens": TOKENS_PER_PARAMETER * parameters,
        "compute_optimal_parameters": n_opt,
        "compute_optimal_tokens_for_this_compute": d_opt,
        "predicted_loss": chinchilla_loss(parameters, tokens),
        "compute_optimal_loss": chinchilla_loss(n_opt, d_opt),
        "loss_optimal_parameters": loss_optimal_parameters(compute),
        "kaplan": {
            "alpha_parameters": KAPLAN_ALPHA_N,
            "alpha_tokens": KAPLAN_ALPHA_D,
            "loss_ratio_if_parameters_doubled": 2.0**-KAPLAN_ALPHA_N,
            "loss_ratio_if_tokens_doubled": 2.0**-KAPLAN_ALPHA_D,
            "loss_ratio_vs_compute_optimal": relative,
        },
        "notes": notes,
    }
