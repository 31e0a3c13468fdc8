"""The serving planner's door: plan request dict + catalog → the JSON answer of POST /v1/plans/inference.

plan_request.py (dict → ServingSearch, every impossible field at once) → planner.py (groups checked once, batch
sizes evaluated in arrays by bulk.py, frontier, exclusions, nearest misses; best and frontier re-evaluated through
evaluate.py) → plan_response.py (→ JSON, estimate bodies that reproduce each deployment).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..budget import Checkpoint, unlimited
from ..hardware import Catalog
from .search.disaggregated import best_disaggregated
from .search.rank import search
from .search.request import parse_plan_request
from .search.response import build_plan_response

__all__ = ["plan_serving"]


def plan_serving(
    request: Mapping[str, Any], catalog: Catalog, checkpoint: Checkpoint = unlimited
) -> dict[str, Any]:
    """The cheapest deployment of `request` on the catalog; raises InvalidRequest for impossible input. `checkpoint`
    is called between deployment groups and ends the search when it answers False (`search.complete` false)."""
    space = parse_plan_request(request, catalog)
    result = search(space, checkpoint)
    pools = best_disaggregated(space, result.groups, checkpoint) if space.disaggregation else None
    return build_plan_response(result, pools)
