"""Saved answers in the contract: `Saved…` copies of the estimate components with nothing required below the top.

A scenario keeps the estimate of its day (GET /v1/scenarios/{id} `estimate`, its revisions, GET
/v1/scenarios/{id}/estimate `saved`), sent as it was saved; an answer saved by an older version may lack a
nested property added since. The fresh answers (POST /v1/estimates/…) mark every property they always carry as
required; the saved ones are the same components, copied under `Saved<Name>` with `required` dropped, but for the
top-level sections every version has sent (they also tell a training answer from an inference one in a oneOf).
"""

from __future__ import annotations

import copy
from typing import Any

from apispec import APISpec

ROOTS = ("TrainingEstimate", "InferenceEstimate")
# top-level sections added since answers were first saved: required in fresh answers, not in saved ones
ADDED_SINCE = frozenset({"intervals"})
PREFIX = "#/components/schemas/"


def saved(name: str) -> str:
    return f"Saved{name}"


def _reachable(schemas: dict[str, Any], roots: tuple[str, ...]) -> list[str]:
    found: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            target = node.get("$ref")
            if isinstance(target, str) and target.startswith(PREFIX):
                name = target[len(PREFIX) :]
                if name not in found:
                    found.append(name)
                    visit(schemas[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for root in roots:
        found.append(root)
        visit(schemas[root])
    return found


def _lenient(node: Any, names: set[str]) -> Any:
    """The schema with references to `names` renamed to their saved copies and no `required` list."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "required" and isinstance(value, list):
                continue
            if key == "$ref" and isinstance(value, str) and value[len(PREFIX) :] in names:
                value = PREFIX + saved(value[len(PREFIX) :])
            out[key] = (
                _lenient(value, names)
                if key != "properties"
                else {prop: _lenient(sub, names) for prop, sub in value.items()}
            )
        return out
    if isinstance(node, list):
        return [_lenient(value, names) for value in node]
    return node


def register(spec: APISpec) -> None:
    """Add the `Saved…` components (after the blueprints, which register the estimate components)."""
    schemas = spec.components.schemas
    names = _reachable(schemas, ROOTS)
    for name in names:
        component = _lenient(copy.deepcopy(schemas[name]), set(names))
        if name in ROOTS:
            component["required"] = [r for r in schemas[name]["required"] if r not in ADDED_SINCE]
        spec.components.schema(saved(name), component=component)
