"""The service returns the recorded JSON for every request of the golden corpus (floats within 1e-12 relative).

Guards refactors: moving code must not move a number, a message or a field. A change that means to move them
re-records with `python -m tests.golden.record`, in its own commit that says why."""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import pytest

from .record import GOLDEN, answers, app_on_fresh_database

REL_TOL = 1e-12


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{path}.{k}: missing" for k in expected if k not in actual]
        out += [f"{path}.{k}: unexpected" for k in actual if k not in expected]
        for k in expected:
            if k in actual:
                out += differences(expected[k], actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items recorded, {len(actual)} now"]
        return [
            d
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in differences(e, a, f"{path}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and not isinstance(expected, bool):
        if isinstance(actual, bool) or not math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=0.0):
            return [f"{path}: {expected!r} recorded, {actual!r} now"]
        return []
    return [] if expected == actual else [f"{path}: {expected!r} recorded, {actual!r} now"]


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_corpus_is_large_and_varied(recorded):
    assert len(recorded) >= 300
    kinds = {r["kind"] for r in recorded}
    statuses = {r["status"] for r in recorded}
    assert kinds == {"training", "inference"} and {200, 422} <= statuses


def test_every_answer_is_unchanged(recorded, tmp_path):
    app = app_on_fresh_database(str(tmp_path))
    try:
        now = answers(app.test_client())
    finally:
        app.extensions["scalecost.db"].dispose()
    assert [r["request"] for r in now] == [r["request"] for r in recorded], "the corpus changed: re-record"
    failures = []
    for i, (old, new) in enumerate(zip(recorded, now, strict=True)):
        diff = differences(
            {"status": old["status"], "body": old["body"]}, {"status": new["status"], "body": new["body"]}
        )
        if diff:
            failures.append(
                f"#{i} {old['kind']} {json.dumps(old['request'])[:120]}:\n    " + "\n    ".join(diff[:5])
            )
    print(f"golden corpus: {len(now)} requests, {len(failures)} changed")
    assert not failures, f"{len(failures)} of {len(now)} answers changed:\n" + "\n".join(failures[:10])
