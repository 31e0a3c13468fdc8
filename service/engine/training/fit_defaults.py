"""Defaults chosen to fit, after the plan is built (docs/formulas.md):

- the fewest layers of activation offload that make a plan fit on a Grace part or a TPU, when the request leaves
  training.activation_offload_layers out (offload.offloads_to_fit; "Activation offload");
- the least recomputation a TPU stack runs that fits, when the request leaves training.activation_recomputation out
  ("Default activation recomputation");
- fit() chains them as estimate_training answers a request."""

from __future__ import annotations

from ..i18n import _
from .model.evaluate import Evaluation, evaluate
from .model.framework import TPU_DEFAULT_RECOMPUTATION
from .model.offload import offloads_to_fit
from .model.plan import TrainingPlan
from .model.recompute import DEFAULT_RECOMPUTE_MODULES

# MaxText's remat policies run from the least recomputed ('minimal': keep the matmul outputs, the engine's "dots") to
# 'full', its default (MaxText/configs/base.yml: "a trade-off between speed (fastest to slowest) and HBM usage
# (highest to lowest)"); its published v5p configurations use 'minimal' where it fits and 'full' beyond (configs/v5p
# README @76bd53b: 32B-256B minimal, 512B-1024B full)
TPU_REMAT_LADDER = ("dots", TPU_DEFAULT_RECOMPUTATION)


def offload_allowed(plan: TrainingPlan) -> bool:
    """Megatron-Core refuses activation offload with pipeline parallelism and with activation recomputation
    (TransformerConfig: "Currently there is no support for Pipeline parallelism with CPU offloading", "CPU offloading
    does not work when activation recomputation is enabled"): only a one-stage plan that recomputes nothing, or only
    core attention under a fused kernel (which keeps and re-runs what no recomputation does), is offered one. On a TPU
    MaxText offloads as part of its remat policy (remat_policy 'custom': each saved tensor 'remat', 'device' or
    'offload'), so its policies (TPU_REMAT_LADDER: 'minimal' = dots, 'full') take one; not the Megatron settings
    (none, selective), whose saved set no recipe moves to the host; one stage only, as the recipes run (pure FSDP)."""
    if plan.par.pipeline > 1:
        return False
    if plan.accelerator.kind == "tpu":
        return plan.recompute in TPU_REMAT_LADDER
    if plan.recompute == "none":
        return True
    return (
        plan.recompute == "selective"
        and plan.flash_attention
        and plan.recompute_modules == DEFAULT_RECOMPUTE_MODULES
    )


def offload_to_fit(plan: TrainingPlan, ev: Evaluation) -> tuple[TrainingPlan, Evaluation]:
    """(plan, ev) unchanged unless the plan does not fit, names no offload, runs on a part whose recipes offload to fit
    (offload.offloads_to_fit) and is one its stack can offload (offload_allowed); then the plan with the fewest
    offloaded layers per stage that fit (memory falls as layers leave, so a bisection finds it), or unchanged when
    even all but one layer offloaded do not fit."""
    shape = plan.model.shape
    if ev.fits or plan.offload_source != "default" or shape is None or plan.unit != "token":
        return plan, ev
    if not offloads_to_fit(plan.accelerator) or not offload_allowed(plan):
        return plan, ev
    most = -(-shape.layers // plan.par.pipeline) - 1
    if most < 1:
        return plan, ev

    def trial(layers: int) -> tuple[TrainingPlan, Evaluation]:
        # the recomputation stays the plan's, a chosen one included (with_fields re-chooses it otherwise)
        candidate = plan.with_fields(
            offload_layers=layers,
            offload_source="fit",
            recompute=plan.recompute,
            recompute_source=plan.recompute_source,
        )
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


def _takes_the_ladder(plan: TrainingPlan) -> bool:
    """A transformer on a TPU that took its stack's default recomputation (the request named none; a named module
    list means selective)."""
    return (
        plan.recompute_source == "default"
        and plan.recompute == TPU_DEFAULT_RECOMPUTATION
        and plan.accelerator.kind == "tpu"
        and plan.model.shape is not None
    )


def _on_the_ladder(plan: TrainingPlan, policy: str) -> TrainingPlan:
    """`plan` (which _takes_the_ladder) under `policy`, chosen to fit, with the note that says so."""
    default_note = default_recompute_note(plan.recompute)
    notes = tuple(fitted_recompute_note(policy) if n == default_note else n for n in plan.notes)
    return plan.with_fields(recompute=policy, recompute_source="fit", notes=notes)


def remat_to_fit(plan: TrainingPlan, ev: Evaluation) -> tuple[TrainingPlan, Evaluation]:
    """(plan, ev) unchanged unless _takes_the_ladder; then the first of TPU_REMAT_LADDER that fits, or the default
    when none does."""
    if not _takes_the_ladder(plan):
        return plan, ev
    for policy in TPU_REMAT_LADDER:
        if policy == plan.recompute:
            return plan, ev
        candidate = _on_the_ladder(plan, policy)
        fitted = evaluate(candidate)
        if fitted.fits:
            return candidate, fitted
    return plan, ev


def fit(plan: TrainingPlan, ev: Evaluation) -> tuple[TrainingPlan, Evaluation]:
    """The defaults chosen to fit, as estimate_training answers a request: the remat ladder, then an offload. On a
    TPU whose least remat ('minimal') does not fit on its own, 'minimal' with the fewest offloaded layers that fit is
    weighed against the next step of the ladder (with an offload where it needs one) and the faster taken: MaxText's
    recipes offload tensors rather than recompute them (tpu-recipes' remat_policy 'custom')."""
    laddered = offload_to_fit(*remat_to_fit(plan, ev))
    if not _takes_the_ladder(plan) or laddered[0].recompute == TPU_REMAT_LADDER[0]:
        return laddered
    lighter = _on_the_ladder(plan, TPU_REMAT_LADDER[0])
    offloaded = offload_to_fit(lighter, evaluate(lighter))
    if offloaded[1].fits and (not laddered[1].fits or offloaded[1].seconds < laddered[1].seconds):
        return offloaded
    return laddered


def default_recompute_note(value: str) -> str:
    """The note request.py adds when a TPU stack's default recomputation is taken."""
    return _(
        "activation_recomputation {value}: the default on a TPU (MaxText's remat_policy 'full'); give "
        "training.activation_recomputation to say otherwise."
    ).format(value=value)


def fitted_recompute_note(value: str) -> str:
    return _(
        "activation_recomputation {value}: the least a TPU stack recomputes that fits (MaxText remat_policy "
        "'minimal' before its default 'full'); give training.activation_recomputation to say otherwise."
    ).format(value=value)
