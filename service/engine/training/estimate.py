"""The training door: request dict + catalog → the JSON answer.

request.py (dict → TrainingPlan) → evaluate.py (plan → Evaluation, numbers only) → response.py (→ JSON) and
advice.py (recommendations, each verified by re-evaluating a patched plan)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hardware import Catalog
from ..i18n import _, num
from .advice.rules import recommend
from .fit_defaults import fit
from .model.evaluate import evaluate
from .request import build_plan
from .response import build_response
from .search.auto import resolve_auto, wants_auto


def estimate_training(request: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """Estimate FLOPs, memory, time and cost of a training run; raise InvalidRequest for impossible requests."""
    auto = None
    if wants_auto(request):  # count and/or layout chosen by the planner, then estimated as given
        request, auto = resolve_auto(request, catalog)
    plan = build_plan(request, catalog)
    # the defaults chosen to fit (fit_defaults.py), as for any request: a planned layout is answered as the request
    # naming it would be (the planners search the stack's default recomputation, not the ladder)
    plan, ev = fit(plan, evaluate(plan))
    response = build_response(plan, ev)
    wanted = (request.get("output") or {}).get("recommendations", True)
    # a planner sweeping thousands of layouts skips the advice scan (each piece of advice re-estimates)
    response["recommendations"] = recommend(request, catalog, plan, ev, auto is not None) if wanted else []
    if auto is not None:
        response["assumptions"]["auto"] = auto
        response["assumptions"]["notes"].append(
            _(
                "Chosen by the planner ({objective}, {configurations} configurations): {devices} devices, "
                "layout {layout}, micro-batch {micro_batch}."
            ).format(
                objective=_(auto["objective"]),
                configurations=num(auto["configurations_evaluated"], 0, grouping=True),
                devices=auto["chosen_count"],
                layout=auto["chosen_parallelism"],
                micro_batch=auto["chosen_micro_batch_size"],
            )
        )
    if wanted and catalog.unusable:  # the advice scanned the catalog without these
        response["assumptions"]["notes"].append(catalog.unusable_note())
    return response
