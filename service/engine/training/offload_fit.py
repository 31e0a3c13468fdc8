"""The fewest layers of activation offload that make a plan fit on a Grace part, when the request leaves
training.activation_offload_layers out (offload.COHERENT_HOST_PARTS; docs/formulas.md "Activation offload")."""

from __future__ import annotations

from .evaluate import Evaluation, evaluate
from .offload import coherent_host_link
from .plan import TrainingPlan
from .recompute_modules import DEFAULT_RECOMPUTE_MODULES


def offload_allowed(plan: TrainingPlan) -> bool:
    """Megatron-Core refuses activation offload with pipeline parallelism and with activation recomputation
    (TransformerConfig: "Currently there is no support for Pipeline parallelism with CPU offloading", "CPU offloading
    does not work when activation recomputation is enabled"): only a one-stage plan that recomputes nothing, or only
    core attention under a fused kernel (which keeps and re-runs what no recomputation does), is offered one."""
    if plan.par.pipeline > 1:
        return False
    if plan.recompute == "none":
        return True
    return (
        plan.recompute == "selective"
        and plan.flash_attention
        and plan.recompute_modules == DEFAULT_RECOMPUTE_MODULES
    )


def offload_to_fit(plan: TrainingPlan, ev: Evaluation) -> tuple[TrainingPlan, Evaluation]:
    """(plan, ev) unchanged unless the plan does not fit, names no offload, runs on a part with a coherent host link
    and is one Megatron-Core can offload (offload_allowed); then the plan with the fewest offloaded layers per stage that fit (memory falls as layers leave,
    so a bisection finds it), or unchanged when even all but one layer offloaded do not fit."""
    shape = plan.model.shape
    if ev.fits or plan.offload_source != "default" or shape is None or plan.unit != "token":
        return plan, ev
    if not coherent_host_link(plan.accelerator) or not offload_allowed(plan):
        return plan, ev
    most = -(-shape.layers // plan.par.pipeline) - 1
    if most < 1:
        return plan, ev

    def trial(layers: int) -> tuple[TrainingPlan, Evaluation]:
        candidate = plan.with_fields(offload_layers=layers, offload_source="fit")
        return candidate, evaluate(candidate)

    best = trial(most)
    if not best[1].fits:
        return plan, ev
    low, high = 1, most  # high fits; find the fewest that fit
    while low < high:
        middle = (low + high) // 2
        tried = trial(middle)
        if tried[1].fits:
            best, high = tried, middle
        else:
            low = middle + 1
    return best
