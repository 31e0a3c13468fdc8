"""Schemathesis against the app and the committed openapi.yaml: no 5xx, responses conform to the
documented schemas and content types, and schema-valid requests are never rejected as invalid fields.

In-process (WSGI), derandomized, a fixed budget of examples per operation; authenticated operations run
with an admin key. `make fuzz` runs the same with a much larger budget (FUZZ_EXAMPLES)."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from scalecost.api.extensions.errors import IMPOSSIBLE_REQUEST, UNREADABLE_FILE
from schemathesis import GenerationMode
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tests.conftest import make_key

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
REPORT = os.environ.get("FUZZ_REPORT")


@schemathesis.check
def schema_valid_requests_are_not_rejected(ctx, response, case) -> None:
    """Positive (schema-valid) data may only be refused for what a schema cannot say: a combination that
    is physically impossible (typed impossible-request), a missing resource, a conflict or a precondition."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if response.status_code == 422:
        problem = response.json()
        if set(problem.get("errors") or {}) == {"query.cursor"}:
            return None  # an opaque pagination cursor: the contract can only say "a string from next_cursor"
        problem_type = problem.get("type")
        assert problem_type in (IMPOSSIBLE_REQUEST, UNREADABLE_FILE), (
            f"schema-valid request rejected: {response.text[:500]} body={case.body!r}"[:3000]
        )
    assert response.status_code not in (400, 413, 415), (
        f"schema-valid request rejected: {response.text[:500]}"
    )
    return None


_NON_FINITE_WORD = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


def _refuse_constant(name: str):
    raise AssertionError(f"{name} in a response: not JSON")


def _non_finite(value, path: str = "", human: bool = False):
    """Paths of non-finite numbers, and of human strings that show one ("nan years")."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, str) and human and _NON_FINITE_WORD.search(value):
        yield path
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _non_finite(child, f"{path}.{key}", human or key == "human")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _non_finite(child, f"{path}.{i}", human)


@schemathesis.check
def every_number_is_finite(ctx, response, case) -> None:
    """Every number in every answer is a finite JSON number (no NaN/Infinity, no "nan years")."""
    content_type = (response.headers.get("content-type") or [""])[0]
    if not response.content or "json" not in content_type or len(response.content) < response.content_size:
        return None
    text = response.content.decode("utf-8")
    value = json.loads(text, parse_constant=_refuse_constant)
    bad = list(_non_finite(value))
    assert not bad, f"non-finite numbers at {bad[:10]}: {text[:500]} body={case.body!r}"[:3000]
    return None


SCHEMA = schemathesis.openapi.from_path(ROOT / "openapi.yaml")
OPERATIONS = {result.ok().label: result.ok() for result in SCHEMA.get_all_operations()}
POSITIVE_ACCEPTANCE = [positive_data_acceptance]
# A batch answers an invalid item with that item's own problem inside a 200, by contract ("one bad item does not
# fail the others"): schema-invalid items are not rejected whole (tests/api/test_estimate_batches.py checks them).
BATCH_EXCLUDED = [positive_data_acceptance, negative_data_rejection]
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_api_conforms_to_its_contract(app, label, mode):
    SCHEMA.app = app
    operation = OPERATIONS[label]
    auth = {"Authorization": f"Bearer {make_key(app, 'fuzz-admin', 'admin')}"}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def run(case):
        cases["n"] += 1
        # A negative case may drop or garble headers on purpose (e.g. Authorization): keep its headers then. The
        # WSGI transport does not undo gzip: answers are asked uncompressed (gzip: tests/api/test_compression.py).
        meta = case.meta
        identity = {"Accept-Encoding": "identity"}
        negative = meta is not None and meta.is_negative_at(ParameterLocation.HEADER)
        headers = identity if negative else {**auth, **identity}
        response = case.call(headers=headers, app=app)
        case.validate_response(
            response,
            headers=headers,
            transport_kwargs={"app": app, "headers": headers},
            excluded_checks=BATCH_EXCLUDED if label.endswith("/batch") else POSITIVE_ACCEPTANCE,
            additional_checks=[schema_valid_requests_are_not_rejected, every_number_is_finite],
        )

    cases = {"n": 0}
    outcome = "failed"  # until run() returns or the mode has nothing to generate
    try:
        run()
        outcome = "passed"
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        outcome = "skipped"
        pytest.skip(f"{label} has no input that can be made schema-invalid")
    finally:
        if REPORT:  # make fuzz totals operations, cases and failures from these lines
            with open(REPORT, "a", encoding="utf-8") as out:
                database = app.config["DATABASE_URL"].split(":")[0]
                out.write(f"{label}\t{mode.value}\t{database}\t{cases['n']}\t{outcome}\n")
