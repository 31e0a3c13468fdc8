"""Validate JSON against a component of openapi.yaml with no undocumented property allowed.

The committed contract, made strict: every object schema that lists properties and says nothing about others
gets `additionalProperties: false`, so an answer carrying a property the contract does not list fails; and
apispec's way of writing a nullable reference in OpenAPI 3.0 (`anyOf: [{$ref}, {type: object, nullable:
true}]`) is read as what it means, the reference or null, not the reference or any object. The OpenAPI 3.0
dialect (`nullable`, …) is openapi-schema-validator's OAS30Validator."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from jsonschema.exceptions import ValidationError
from openapi_schema_validator import OAS30Validator
from referencing import Registry
from referencing.jsonschema import DRAFT4

ROOT = Path(__file__).resolve().parents[2]
SPEC_URI = "urn:scalecost:openapi"
COMPOSITIONS = ("oneOf", "anyOf", "allOf")

# Objects deliberately open, named as `walk` names them, and why.
OPEN_OBJECTS = {
    "Recommendation.change": "an RFC 7386 merge patch of the request: any part of the body, null deleting",
    "SavedRecommendation.change": "the same, in a saved answer",
    "HfConfig": "a saved request's Hugging Face config.json, taken with whatever keys it has",
    # maps keyed by catalog ids (known only at run time), their values typed by additionalProperties
    "TrainingRequest.prices": "a map: accelerator id -> USD per accelerator-hour (a number, bounded)",
    "InferenceRequest.prices": "the same map in an inference request",
}


def committed_spec() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))


def is_null_branch(node: Any) -> bool:
    """A composition branch that stands for null: `{type: object, nullable: true}` with nothing else to say
    (apispec's), or the same restricted to `enum: [null]` (the contract's own)."""
    return (
        isinstance(node, dict)
        and node.get("nullable") is True
        and node.get("type") == "object"
        and not node.get("properties")
        and node.get("enum", [None]) == [None]
        and "additionalProperties" not in node
    )


def strict(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of the spec where an object listing properties allows no other, and a null branch only null."""
    spec = copy.deepcopy(spec)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for keyword in COMPOSITIONS:
                for branch in node.get(keyword) or ():
                    if is_null_branch(branch):
                        branch["enum"] = [None]
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(spec["components"]["schemas"])
    return spec


def walk(spec: dict[str, Any], component: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object reachable from a component, once each, named `Component.property[]|branch…`
    (`[]` an array's items, `{}` a map's values, `|n` the n-th branch of a oneOf/anyOf/allOf)."""
    schemas = spec["components"]["schemas"]
    seen = {component}

    def visit(name: str, node: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        if "$ref" in node:
            target = node["$ref"].rsplit("/", 1)[-1]
            if target not in seen:
                seen.add(target)
                yield from visit(target, schemas[target])
            return
        yield name, node
        for key, value in (node.get("properties") or {}).items():
            yield from visit(f"{name}.{key}", value)
        if isinstance(node.get("items"), dict):
            yield from visit(f"{name}[]", node["items"])
        if isinstance(node.get("additionalProperties"), dict):
            yield from visit(f"{name}{{}}", node["additionalProperties"])
        for keyword in COMPOSITIONS:
            for i, branch in enumerate(node.get(keyword) or ()):
                yield from visit(f"{name}|{i}", branch)

    yield from visit(component, schemas[component])


def undescribed(spec: dict[str, Any], component: str) -> list[str]:
    """Schema objects under `component` that leave a value's shape open: an object without its properties or
    open to others, or a value with no type at all (no `type`, `enum`, composition or reference)."""
    out = []
    for name, node in walk(spec, component):
        if name in OPEN_OBJECTS or is_null_branch(node) or any(k in node for k in COMPOSITIONS):
            continue
        if "type" not in node and "enum" not in node:
            out.append(f"{name}: no type")
        elif node.get("type") == "object" and not node.get("properties"):
            if not _typed_map(node):
                out.append(f"{name}: object without properties")
        elif node.get("type") == "object" and node.get("additionalProperties", False) is not False:
            out.append(f"{name}: open to properties it does not list")
    return out


def _typed_map(node: dict[str, Any]) -> bool:
    """A map with run-time keys whose values the contract types (`additionalProperties: {type: …}`): quotas by
    provider, messages by field path. Its values are walked (`{}`) like any schema."""
    values = node.get("additionalProperties")
    return isinstance(values, dict) and any(k in values for k in ("type", "$ref", *COMPOSITIONS))


class StrictContract:
    """`errors(component, instance)`: why the instance does not conform to the strict component."""

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        self.spec = strict(spec if spec is not None else committed_spec())
        self._registry = Registry().with_resource(SPEC_URI, DRAFT4.create_resource(self.spec))
        self._validators: dict[str, OAS30Validator] = {}

    def validator(self, component: str) -> OAS30Validator:
        if component not in self._validators:
            self._validators[component] = OAS30Validator(
                {"$ref": f"{SPEC_URI}#/components/schemas/{component}"}, registry=self._registry
            )
        return self._validators[component]

    def errors(self, component: str, instance: Any) -> list[str]:
        found = sorted(self.validator(component).iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{_path(e) or '(root)'}: {_innermost(e)}" for e in found]


def _path(error: ValidationError) -> str:
    return ".".join(map(str, error.absolute_path))


def _innermost(error: ValidationError) -> str:
    """For a oneOf/anyOf failure, the message of the branch that got deepest into the instance."""
    while error.context:
        error = max(error.context, key=lambda e: len(e.absolute_path))
    return f"{error.message} (at {_path(error) or 'the root'})"
