"""The inference (serving) door: request dict + catalog → the JSON answer.

request.py (dict → InferencePlan; formats.py: bytes per weight) → evaluate.py (memory.py: what fits, speed.py: how
fast, efficiency.py: calibrated factors) → response.py (→ JSON) and advice.py (catalog-wide suggestions and
recommendations, each verified by re-evaluating a patched plan).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hardware import Catalog
from .advice.rules import recommendations
from .advice.suggestions import suggestions
from .model.evaluate import evaluate
from .request import parse_request
from .response import build_response

__all__ = ["estimate_inference"]


def estimate_inference(request: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """Estimate serving `request` on the catalog's hardware; raises InvalidRequest for impossible input."""
    p = parse_request(request, catalog)
    ev = evaluate(p)
    result = build_response(p, ev)
    result["suggestions"] = suggestions(p, catalog) if p.suggestions else []
    wanted = (request.get("output") or {}).get("recommendations", True)
    result["recommendations"] = recommendations(request, p, ev, catalog) if wanted else []
    if (p.suggestions or wanted) and catalog.unusable:  # the scans went over the catalog without these
        result["notes"].append(catalog.unusable_note())
    return result
