"""Recommendations, each with an RFC 7386 merge patch (`change`) that is verified before it is offered.

Every candidate change is re-evaluated on the lean path (build_plan + evaluate, never recommend), and a
recommendation is emitted only if its `expected` claim holds for the changed request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ...hardware import Catalog
from ...i18n import _, num, pct
from ...units import human_count, human_duration
from ..model.evaluate import Evaluation
from ..model.plan import TrainingPlan
from ..model.scaling import TOKENS_PER_PARAMETER, chinchilla_loss, loss_optimal_parameters
from .catalog import cheaper
from .common import recommendation, try_change
from .fit import fit_advice
from .interleave import interleave_advice

# a given checkpoint interval this far (either way) from the Young/Daly optimum is worth changing (Daly 2006:
# the loss is flat near the optimum, within a few % of it between half and twice the interval)
CHECKPOINT_INTERVAL_FACTOR = 2.0
OVERHEAD_WARNING_SHARE = 0.03  # checkpointing / validation above 3 % of wall time is worth tuning
OVERHEAD_TARGET_SHARE = 0.01
UTILIZATION_IMPLAUSIBLE = 1.3  # given utilization 30 % above our prediction exceeds comparable public runs
UNDERTRAINED_TOKENS_PER_PARAMETER = 5.0  # well below Chinchilla's ~20 (Hoffmann et al. 2022)
OVERTRAINED_TOKENS_PER_PARAMETER = 200.0  # 10× past Chinchilla-optimal
MIN_LOSS_GAIN = 0.01  # nats/token; smaller gains sit inside the fit error (Besiroglu et al. 2024)


def recommend(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, planned: bool = False
) -> list[dict]:
    """The answer's recommendations; `planned`: the planner chose the count or the layout (hardware "auto"): it
    searched the interleaving already, and re-chooses the count when a change is applied to the request."""
    recs: list[dict[str, Any]] = []
    rules = (
        fit_advice,
        _utilization,
        interleave_advice,
        _compute_optimal,
        _checkpointing,
        _validation,
        cheaper,
    )
    for rule in rules:
        if planned and rule is interleave_advice:
            continue
        rec = rule(request, catalog, plan, ev)
        if rec is not None:
            recs.append(rec)
    return recs


def _utilization(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    if plan.utilization is None or plan.utilization <= UTILIZATION_IMPLAUSIBLE * ev.predicted_utilization:
        return None
    predicted = round(ev.predicted_utilization, 3)
    change = {"hardware": {"utilization": predicted}}
    found = try_change(request, change, catalog)
    if not found or found[1].seconds <= ev.seconds:
        return None
    message = _(
        "Utilization {utilization} is well above what comparable public runs reach; the engine "
        "predicts {predicted} for this setup, i.e. {seconds} instead of {seconds2}."
    ).format(
        utilization=pct(plan.utilization, 0),
        predicted=pct(predicted, 0),
        seconds=human_duration(found[1].seconds),
        seconds2=human_duration(ev.seconds),
    )
    return recommendation(
        "utilization_above_typical", "warning", message, change, "time.seconds", ">", ev.seconds
    )


def _current_loss(plan: TrainingPlan) -> float:
    return chinchilla_loss(plan.model.active_parameters, plan.units + plan.pretraining_units)


def _compute_optimal(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    shape = plan.model.shape
    if plan.unit != "token" or plan.model.architecture != "transformer" or (shape and shape.is_moe):
        return None
    n, d = plan.model.active_parameters, plan.units + plan.pretraining_units
    ratio = d / n
    loss = _current_loss(plan)
    if 1.0 <= ratio < UNDERTRAINED_TOKENS_PER_PARAMETER and not plan.pretraining_units:
        tokens = float(round(TOKENS_PER_PARAMETER * n))
        change = {"training": {"tokens": tokens, "epochs": None, "samples": None}}
        message = _(
            "{ratio} tokens per parameter is far below the compute-optimal ~20 (Hoffmann et al. 2022); "
            "training on {tokens} tokens lowers the predicted loss from {loss} to {new_loss}."
        ).format(
            ratio=num(ratio, 1),
            tokens=human_count(tokens),
            loss=num(loss, 3),
            new_loss=num(chinchilla_loss(n, tokens), 3),
        )
        code = "undertrained"
    elif ratio > OVERTRAINED_TOKENS_PER_PARAMETER and not plan.pretraining_units:
        # the minimiser of the fitted L(N, D) at this compute, rounded to 3 significant figures
        n_opt = float(f"{loss_optimal_parameters(6.0 * n * d):.3g}")
        tokens = float(round(6.0 * n * d / (6.0 * n_opt)))
        if chinchilla_loss(n_opt, tokens) > loss - MIN_LOSS_GAIN:
            return None
        model_patch: dict[str, Any] = {key: None for key in request.get("model", {}) if key != "architecture"}
        model_patch.update({"architecture": "transformer", "parameters": n_opt})
        change = {"model": model_patch, "training": {"tokens": tokens, "epochs": None, "samples": None}}
        message = _(
            "{ratio} tokens per parameter is far past compute-optimal (Hoffmann et al. 2022): a "
            "{n_opt}-parameter model on {tokens} tokens would reach lower loss for the same compute "
            "({new_loss} vs {loss}). Over-training is reasonable when inference cost matters more."
        ).format(
            ratio=num(ratio, 0),
            n_opt=human_count(n_opt),
            tokens=human_count(tokens),
            new_loss=num(chinchilla_loss(n_opt, tokens), 3),
            loss=num(loss, 3),
        )
        code = "far_from_compute_optimal"
    else:
        return None
    found = try_change(request, change, catalog)
    if not found or _current_loss(found[0]) >= loss:
        return None
    return recommendation(code, "info", message, change, "scaling.predicted_loss", "<", loss)


def _overhead(
    request: Mapping[str, Any], catalog: Catalog, ev: Evaluation, part: float, interval: int | None,
    code: str, what: str, patch: Callable[[int], dict],
) -> dict | None:  # fmt: skip
    if not interval or ev.seconds <= 0 or part / ev.seconds <= OVERHEAD_WARNING_SHARE:
        return None
    new_interval = math.ceil(interval * (part / ev.seconds) / OVERHEAD_TARGET_SHARE)
    change = patch(new_interval)
    found = try_change(request, change, catalog)
    if not found or found[1].seconds >= ev.seconds:
        return None
    message = _(
        "{what} takes {value} of the run ({part}); every {new_interval} steps instead of "
        "{interval} brings it near {target} and the run to {seconds}."
    ).format(
        what=what,
        value=pct(part / ev.seconds, 1),
        part=human_duration(part),
        new_interval=new_interval,
        interval=interval,
        target=pct(OVERHEAD_TARGET_SHARE, 0),
        seconds=human_duration(found[1].seconds),
    )
    return recommendation(code, "warning", message, change, "time.seconds", "<", ev.seconds)


def _checkpointing(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    return _checkpoint_interval(request, catalog, plan, ev) or _overhead(
        request, catalog, ev, ev.checkpoint_s, plan.checkpoint_interval, "checkpointing_overhead",
        _("Checkpointing"), lambda k: {"training": {"checkpoint_interval_steps": k}},
    )  # fmt: skip


def _checkpoint_interval(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    """A given checkpoint interval more than CHECKPOINT_INTERVAL_FACTOR from the Young/Daly optimum, when the
    optimum saves at least OVERHEAD_WARNING_SHARE / 3 of the run (verified by re-evaluating it)."""
    run, interval = ev.run, plan.checkpoint_interval
    if run is None or run.given or not interval or not run.optimal_interval:
        return None
    optimal = run.optimal_interval
    if 1 / CHECKPOINT_INTERVAL_FACTOR <= interval / optimal <= CHECKPOINT_INTERVAL_FACTOR:
        return None
    change = {"training": {"checkpoint_interval_steps": optimal}}
    found = try_change(request, change, catalog)
    if not found or found[1].seconds > ev.seconds * (1 - OVERHEAD_WARNING_SHARE / 3):
        return None
    message = _(
        "A checkpoint every {interval} steps is far from the Young/Daly optimum for {interruptions} expected "
        "interruptions (every {optimal} steps: √(2 · write time · mean time between interruptions)); checkpoint "
        "writes and lost work take {extra} more than at the optimum, which brings the run to {seconds}."
    ).format(
        interval=interval,
        interruptions=num(run.interruptions, 1, grouping=True),
        optimal=optimal,
        extra=human_duration(ev.seconds - found[1].seconds),
        seconds=human_duration(found[1].seconds),
    )
    return recommendation("checkpoint_interval", "warning", message, change, "time.seconds", "<", ev.seconds)


def _validation(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    return _overhead(
        request, catalog, ev, ev.validation_s, plan.validation_interval, "validation_overhead",
        _("Validation"), lambda k: {"training": {"validation": {"interval_steps": k}}},
    )  # fmt: skip
