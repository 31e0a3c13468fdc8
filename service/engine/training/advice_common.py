"""What every recommendation rule shares: a change tried on the lean path, and the recommendation it becomes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidRequest
from ..hardware import Catalog
from ..patch import merge_patch, recommendation
from .evaluate import Evaluation, evaluate
from .plan import TrainingPlan
from .request import build_plan

Candidate = tuple[TrainingPlan, Evaluation]
__all__ = ["Candidate", "recommendation", "try_change"]


def try_change(request: Mapping[str, Any], change: dict, catalog: Catalog) -> Candidate | None:
    try:
        plan = build_plan(merge_patch(dict(request), change), catalog)
    except InvalidRequest:
        return None
    return plan, evaluate(plan)
