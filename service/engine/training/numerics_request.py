"""The training request's numerics: precision (the best the part supports when not given), optimizer and its memory
multiplier, and activation recomputation (part of request.build_plan)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hardware import Accelerator, Catalog
from ..i18n import _
from .fit_defaults import default_recompute_note
from .model.framework import default_recomputation
from .model.plan import OPTIMIZERS, RECOMPUTATION, TRAINING_PRECISIONS

# training.precision when not given: the first the accelerator supports. bf16 mixed precision is the default of
# Megatron-LM, NeMo and the Llama/OPT runs; fp16 mixed precision with loss scaling (Micikevicius et al. 2018)
# where there is no bf16 (V100, T4); else the 4-byte formats. fp8 is never chosen for the user: it needs a
# recipe (delayed scaling, Transformer Engine) and is asked for explicitly.
DEFAULT_PRECISIONS = ("bf16", "fp16", "tf32", "fp32")


def parse_numerics(
    training: Mapping[str, Any],
    acc: Accelerator | None,
    notes: list[str],
    bad: Any,
    catalog: Catalog | None = None,
    transformer: bool = True,
) -> tuple[str, str, Any, str]:
    """(precision, optimizer, optimizer memory multiplier as given, activation recomputation; its default follows
    the part's stack for a transformer with a known shape, framework.default_recomputation)."""
    if training.get("precision") is None:  # not given: the best the accelerator supports, said in the notes
        precision = default_precision(acc, notes) if acc is not None else DEFAULT_PRECISIONS[0]
        if not precision:
            bad(
                "training.precision",
                _("{name} supports none of {precisions}.").format(
                    name=acc.name if acc else _("The device"), precisions=", ".join(DEFAULT_PRECISIONS)
                ),
            )
    elif (precision := str(training["precision"])) not in TRAINING_PRECISIONS:
        bad(
            "training.precision",
            _("Must be one of {TRAINING_PRECISIONS}.").format(
                TRAINING_PRECISIONS=", ".join(TRAINING_PRECISIONS)
            ),
        )
    elif acc is not None and not acc.supports(precision):
        supported = [p for p in TRAINING_PRECISIONS if acc.supports(p)]
        message = _("{name} has no {precision} support; supported: {value}.").format(
            name=acc.name, precision=precision, value=", ".join(supported) or _("none")
        )
        if precision == "fp4" and catalog is not None:  # few parts have it: say which
            having = sorted(i for i, a in catalog.accelerators.items() if a.supports("fp4"))
            message += " " + _("Accelerators with an fp4 peak in the catalog: {ids}.").format(
                ids=", ".join(having) or _("none")
            )
        bad("training.precision", message)
    optimizer = str(training.get("optimizer", "adamw"))
    if optimizer not in OPTIMIZERS:
        bad("training.optimizer", _("Must be one of {OPTIMIZERS}.").format(OPTIMIZERS=", ".join(OPTIMIZERS)))
    multiplier = training.get("optimizer_memory_multiplier")
    if multiplier is not None and float(multiplier) < 0:
        bad("training.optimizer_memory_multiplier", _("Must be ≥ 0."))
    recompute = training.get("activation_recomputation")
    if recompute is None:  # the stack's own default; "selective" when the modules it recomputes are named
        recompute = (
            "selective"
            if training.get("recompute_modules") is not None
            else default_recomputation(acc, transformer)
        )
        if recompute != "selective":
            notes.append(default_recompute_note(recompute))
    recompute = str(recompute)
    if recompute not in RECOMPUTATION:
        bad(
            "training.activation_recomputation",
            _("Must be one of {RECOMPUTATION}.").format(RECOMPUTATION=", ".join(RECOMPUTATION)),
        )
    return precision, optimizer, multiplier, recompute


def default_precision(acc: Accelerator, notes: list[str]) -> str:
    """The precision used when the request gives none (DEFAULT_PRECISIONS), said in the notes; "" if none."""
    chosen = next((p for p in DEFAULT_PRECISIONS if acc.supports(p)), "")
    if chosen == "bf16":
        notes.append(
            _("training.precision not given: bf16 mixed precision, the best {name} supports.").format(
                name=acc.name
            )
        )
    elif chosen:
        lacking = ", ".join(p for p in DEFAULT_PRECISIONS[: DEFAULT_PRECISIONS.index(chosen)])
        notes.append(
            (
                _(
                    "training.precision not given: {chosen} mixed precision, the best {name} supports (it has no {lacking})."
                )
                if chosen == "fp16"
                else _(
                    "training.precision not given: {chosen}, the best {name} supports (it has no {lacking})."
                )
            ).format(chosen=chosen, name=acc.name, lacking=lacking)
        )
    return chosen
