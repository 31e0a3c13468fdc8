"""What every recommendation rule shares: a change tried on the lean path, and the recommendation it becomes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidRequest
from ...hardware import Catalog
from ...patch import merge_patch, recommendation
from ..fit_defaults import remat_to_fit
from ..model.evaluate import Evaluation, evaluate
from ..model.plan import TrainingPlan
from ..request import build_plan

Candidate = tuple[TrainingPlan, Evaluation]
__all__ = ["Candidate", "recommendation", "try_change"]


def try_change(request: Mapping[str, Any], change: dict, catalog: Catalog) -> Candidate | None:
    try:
        plan = build_plan(merge_patch(dict(request), change), catalog)
    except InvalidRequest:
        return None
    # as estimate_training answers the changed request: a TPU stack's default recomputation is the least that fits
    # (fit_defaults.remat_to_fit); an offload is never chosen for a change (no recommendation leans on one)
    return remat_to_fit(plan, evaluate(plan))
