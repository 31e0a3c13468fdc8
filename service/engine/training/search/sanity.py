"""Batch and step sanity of a training plan (issue 29 item 4): enough optimizer steps, a global batch not far above
the compute-optimal batch, and a start-up not longer than the run (docs/formulas.md, "Batch and step sanity").

The planner keeps the global batch as given (data × micro-batch × accumulation divides it: search/space.py), so the
optimizer steps and the batch are the request's, the same for every plan it answers.
"""

from __future__ import annotations

from typing import Any

from ...i18n import _
from ...offers import DEFAULT_MAX_STARTUP_SHARE
from ..model.plan import TrainingPlan

# Compute-optimal batch size in tokens, B_opt = 0.2920 · C^0.3271 with C the training FLOPs (DeepSeek LLM, Bi et al.
# 2024, arXiv 2401.02954 §3.1, fitted on 1e17–3e20 FLOP runs); C here is 6 · active parameters · tokens (Kaplan et
# al. 2020), an approximation of their non-embedding FLOPs per token × tokens.
BATCH_OPT_COEFFICIENT = 0.2920
BATCH_OPT_EXPONENT = 0.3271
# Warn above this multiple of B_opt: the fit's near-optimal band is broad, a batch several times larger is not.
BATCH_WARN_FACTOR = 4.0


def optimizer_steps(plan: TrainingPlan) -> float:
    """Optimizer steps of the run: training units / units per global batch."""
    per_step = plan.global_batch * (plan.sequence_length if plan.unit == "token" else 1)
    return plan.units / per_step if per_step else 0.0


def check_steps(plan: TrainingPlan, minimum: int | None, errors: dict[str, list[str]]) -> None:
    """`constraints.min_optimizer_steps`: a run with fewer steps trains a worse model; no plan can change the count
    (the global batch is kept as given), so the request is refused with the batch that would meet it."""
    if minimum is None:
        return
    steps = optimizer_steps(plan)
    if steps >= minimum:
        return
    per_sequence = plan.sequence_length if plan.unit == "token" else 1
    largest = int(plan.units // (minimum * per_sequence)) if minimum else 0
    errors["constraints.min_optimizer_steps"] = [
        _(
            "training.global_batch_size {batch} leaves {steps:,.0f} optimizer steps, fewer than {minimum:,}: a "
            "global batch of at most {largest} meets it."
        ).format(batch=plan.global_batch, steps=steps, minimum=minimum, largest=max(largest, 1))
    ]


def batch_notes(plan: TrainingPlan) -> list[str]:
    """A warning when the global batch (tokens) is more than BATCH_WARN_FACTOR × the compute-optimal batch."""
    if plan.unit != "token" or not plan.units:
        return []
    flops = 6.0 * plan.model.active_parameters * plan.units
    optimum = BATCH_OPT_COEFFICIENT * flops**BATCH_OPT_EXPONENT
    batch_tokens = plan.global_batch * plan.sequence_length
    if batch_tokens <= BATCH_WARN_FACTOR * optimum:
        return []
    return [
        _(
            "The global batch ({tokens:,.0f} tokens) is {factor:.0f} × the compute-optimal batch for this run "
            "(about {optimum:,.0f} tokens: B = 0.292 · C^0.327, DeepSeek LLM 2024 §3.1): above it, more tokens "
            "per step buy less loss; a smaller training.global_batch_size trains a better model for the same "
            "compute."
        ).format(tokens=batch_tokens, factor=batch_tokens / optimum, optimum=optimum)
    ]


def startup_flag(point: dict[str, Any]) -> bool:
    """Whether a plan's start-up (provisioning to the first step) is longer than its run."""
    return bool(point.get("startup_seconds", 0.0) > point.get("seconds", 0.0))


def startup_share(given: Any, errors: dict[str, list[str]]) -> float:
    """`constraints.max_startup_share`: the most of a multi-instance plan's billed time its start-up may take
    (offers.startup_dominates), a fraction in (0, 1]; default offers.DEFAULT_MAX_STARTUP_SHARE."""
    if given is None:
        return DEFAULT_MAX_STARTUP_SHARE
    if isinstance(given, bool) or not isinstance(given, int | float) or not 0 < given <= 1:
        errors["constraints.max_startup_share"] = [_("Must be a fraction in (0, 1], e.g. 0.75.")]
        return DEFAULT_MAX_STARTUP_SHARE
    return float(given)
