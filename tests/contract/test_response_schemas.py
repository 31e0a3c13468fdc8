"""The documented estimate answers are the JSON the service sends: every golden answer (tests/golden, 306 of
status 200) validates against its response schema in openapi.yaml with no undocumented property allowed, and
every object in those schemas lists its properties.

The estimate endpoints send the engine's JSON as it is (no pass through the schema), so this test is what
keeps the contract from drifting away from it."""

from __future__ import annotations

import copy
import gzip
import json
from typing import Any

import pytest

from tests.golden.record import GOLDEN
from tests.golden.record_plans import PLANS

from .strict_schema import StrictContract, committed_spec, undescribed

COMPONENT = {"training": "TrainingEstimate", "inference": "InferenceEstimate"}
PLAN_COMPONENT = {"training": "TrainingPlan", "inference": "ServingPlan"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return committed_spec()


@pytest.fixture(scope="module")
def contract(spec) -> StrictContract:
    return StrictContract(spec)


@pytest.fixture(scope="module")
def plans() -> list[dict[str, Any]]:
    with gzip.open(PLANS, "rt", encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def golden() -> list[dict[str, Any]]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as f:
        return [r for r in json.load(f) if r["status"] == 200]


def test_the_golden_corpus_covers_both_kinds(golden):
    assert {r["kind"] for r in golden} == {"training", "inference"} and len(golden) >= 300


def test_every_golden_answer_conforms_to_its_documented_schema(contract, golden):
    failures = []
    for i, answer in enumerate(golden):
        errors = contract.errors(COMPONENT[answer["kind"]], answer["body"])
        failures += [f"#{i} {answer['kind']} {e}" for e in errors[:3]]
    assert not failures, f"{len(failures)} answers stray from openapi.yaml:\n" + "\n".join(failures[:30])


@pytest.mark.parametrize(
    "component",
    [
        "TrainingEstimate",
        "InferenceEstimate",
        "Scenario",
        "Revision",
        "Repriced",
        "TrainingPlan",
        "ServingPlan",
        "BatchResponse",
        "Preset",
        "Problem",
    ],
)
def test_every_nested_object_is_described(spec, component):
    assert undescribed(spec, component) == []


def _fits(schemas: dict[str, Any], branch: dict[str, Any], value: Any) -> bool:
    """A oneOf/anyOf branch that may hold the value: an object for a dict (not the null branch), an array for a list."""
    resolved = schemas[branch["$ref"].rsplit("/", 1)[-1]] if "$ref" in branch else branch
    if isinstance(value, dict):
        return ("properties" in resolved or resolved.get("type") == "object") and not resolved.get("nullable")
    return isinstance(value, list) and resolved.get("type") == "array"


def request_components(spec) -> set[str]:
    """Components a request body uses (a plan's `estimate_request` is one): the requests' optional properties are
    optional whatever an answer happens to carry, so the presence count leaves them out."""
    schemas = spec["components"]["schemas"]
    found: set[str] = set()

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            name = ref.rsplit("/", 1)[-1]
            if ref.startswith("#/components/schemas/") and name not in found:
                found.add(name)
                collect(schemas[name])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for operations in spec["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict):
                collect(operation.get("requestBody"))
    return found


def _presence(spec, answers) -> dict[str, tuple[int, dict[str, int]]]:
    """Component → (answers holding one, how many of them carry each property), over (component, body) pairs."""
    schemas = spec["components"]["schemas"]
    requests = request_components(spec)
    counts: dict[str, tuple[int, dict[str, int]]] = {}

    def visit(node: dict[str, Any], value: Any) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in requests:
                return
            target = schemas[name]
            if isinstance(value, dict) and "properties" in target:
                seen, carried = counts.setdefault(name, (0, {}))
                counts[name] = (seen + 1, carried)
                for key in value:
                    carried[key] = carried.get(key, 0) + 1
            visit(target, value)
            return
        for branch in node.get("allOf") or ():
            visit(branch, value)
        for branch in [*(node.get("oneOf") or ()), *(node.get("anyOf") or ())]:
            if _fits(schemas, branch, value):
                visit(branch, value)
        if isinstance(value, dict):
            for key, sub in (node.get("properties") or {}).items():
                if key in value:
                    visit(sub, value[key])
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for item in value:
                visit(node["items"], item)

    for component, body in answers:
        visit({"$ref": f"#/components/schemas/{component}"}, body)
    return counts


def _always_present_but_not_required(spec, answers) -> list[str]:
    schemas = spec["components"]["schemas"]
    missing = []
    for name, (seen, carried) in sorted(_presence(spec, answers).items()):
        required = set(schemas[name].get("required") or ())
        missing += [f"{name}.{key}" for key, n in carried.items() if n == seen and key not in required]
    return missing


def _recorded(golden, plans) -> list[tuple[str, Any]]:
    return [(COMPONENT[r["kind"]], r["body"]) for r in golden] + [
        (PLAN_COMPONENT[r["kind"]], r["body"]) for r in plans
    ]


def test_what_every_answer_carries_is_required(spec, golden, plans):
    """A property present in every recorded answer (estimates and plans: components such as ParallelismUsed are
    shared) that holds its object is `required` (a generated client types it without `Unset`); the strict
    validation checks the other way (a required one is always there)."""
    missing = _always_present_but_not_required(spec, _recorded(golden, plans))
    assert missing == [], "always present but not required: " + ", ".join(missing)


def test_the_plan_corpus_covers_plans_and_nothing_qualifies(plans):
    kinds = [(r["kind"], bool(r["body"].get("best") or r["body"].get("plan"))) for r in plans]
    assert set(kinds) == {("training", True), ("training", False), ("inference", True), ("inference", False)}
    assert all(r["status"] == 200 for r in plans)


def test_every_recorded_plan_conforms_to_its_documented_schema(contract, plans):
    """A property marked required but absent from a recorded plan answer fails here (as does an undocumented
    one); the presence test above fails when an always-present one is not marked."""
    failures = []
    for i, answer in enumerate(plans):
        errors = contract.errors(PLAN_COMPONENT[answer["kind"]], answer["body"])
        failures += [f"#{i} {answer['kind']} plan {e}" for e in errors[:3]]
    assert not failures, f"{len(failures)} plan answers stray from openapi.yaml:\n" + "\n".join(failures[:30])


@pytest.mark.parametrize(
    "kind, path",
    [
        ("training", ("best", "seconds")),
        ("training", ("search", "complete")),
        ("inference", ("plan", "replicas")),
    ],
)
def test_a_plan_lacking_a_required_property_fails(contract, plans, kind, path):
    answer = copy.deepcopy(next(r["body"] for r in plans if r["kind"] == kind and r["body"].get(path[0])))
    node = answer
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    errors = contract.errors(PLAN_COMPONENT[kind], answer)
    assert any(f"'{path[-1]}' is a required property" in e for e in errors), errors


def test_an_unmarked_always_present_property_is_reported(spec, golden, plans):
    """The presence check can fail: drop `required` from one plan component and it names the properties."""
    loosened = copy.deepcopy(spec)
    loosened["components"]["schemas"]["PlanLatency"].pop("required", None)
    missing = _always_present_but_not_required(loosened, _recorded(golden, plans))
    assert "PlanLatency.time_to_first_token_s" in missing


def test_saved_answers_require_only_the_top_sections(spec):
    """A scenario's answer of its day may lack a nested property added since: the Saved copies require nothing
    below the top-level sections."""
    schemas = spec["components"]["schemas"]
    for name, schema in schemas.items():
        if name.startswith("Saved"):
            fresh = schemas[name.removeprefix("Saved")]
            if name in ("SavedTrainingEstimate", "SavedInferenceEstimate"):
                assert set(schema["required"]) <= set(fresh["required"])
            else:
                assert "required" not in schema, name
            assert set(schema.get("properties") or ()) == set(fresh.get("properties") or ()), name


def _first(golden, kind: str, has: str) -> dict[str, Any]:
    return copy.deepcopy(
        next(r["body"] for r in golden if r["kind"] == kind and has in json.dumps(r["body"]))
    )


@pytest.mark.parametrize(
    "kind, path, value",
    [
        ("training", ("cost", "human", "surprise"), "x"),
        ("training", ("assumptions", "parallelism", "surprise"), 2),
        ("training", ("cost", "price_source", "surprise"), 1),
        ("inference", ("hardware", "surprise"), "x"),
        ("inference", ("devices_needed", "to_fit"), "2"),
        ("inference", ("cost", "price_source"), "catalog"),
        ("inference", ("surprise",), {}),
    ],
)
def test_an_undocumented_or_mistyped_field_fails(contract, golden, kind, path, value):
    """The strict reading is strict: one extra property or one wrong type anywhere is reported."""
    answer = _first(golden, kind, '"provider"')
    node = answer
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert contract.errors(COMPONENT[kind], answer)


@pytest.mark.parametrize("price_source", ["override", None])
def test_price_source_is_override_a_catalog_row_or_null(contract, golden, price_source):
    answer = _first(golden, "training", '"provider"')
    assert isinstance(answer["cost"]["price_source"], dict)
    answer["cost"]["price_source"] = price_source
    assert contract.errors("TrainingEstimate", answer) == []


def test_a_training_answer_is_not_an_inference_answer(contract, golden):
    """Scenario.estimate is oneOf the two: each answer matches exactly one of them."""
    for kind, other in (("training", "inference"), ("inference", "training")):
        assert contract.errors(COMPONENT[other], _first(golden, kind, "{"))


def test_a_presets_shape_lists_every_field_of_the_engines_shape(spec):
    """GET /v1/models dumps the shape through PresetShape: a field the engine adds and the contract lacks would
    be dropped from the answer, so the two lists must match (head_dim is the resolved property)."""
    from dataclasses import fields

    from scalecost.engine.architecture import TransformerShape

    documented = spec["components"]["schemas"]["PresetShape"]
    assert set(documented["properties"]) == {f.name for f in fields(TransformerShape)} | {"head_dim"}
    assert set(documented["required"]) == set(documented["properties"])
