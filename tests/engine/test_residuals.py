"""The prediction intervals' class table against the public points, and their coverage out of sample.

`pytest -s tests/engine/test_residuals.py` prints every class (n, mean, sd, p10 and p90 multipliers) and the share of
measurements inside [p10, p90] when each source is left out of the table (`python -m tests.engine.residuals` prints
the same and rewrites the table)."""

from __future__ import annotations

import pytest
from scalecost.engine.accuracy.intervals import MIN_POINTS, lookup

from .reference_catalog import load_catalog
from .residuals import TABLE_PATH, class_table, coverage, leave_one_source_out, render, report, residuals

CATALOG = load_catalog()


@pytest.fixture(scope="module")
def points():
    return residuals(CATALOG)


def test_the_committed_table_is_what_the_public_points_give_now(points):
    """Like openapi.yaml's drift check: a change of the engine's predictions or of the points moves the residuals, and
    the committed table must be regenerated (`python -m tests.engine.residuals`) and its diff read."""
    assert render(class_table(points)) == TABLE_PATH.read_text(encoding="utf-8"), (
        "service/engine/accuracy/residual_table.py is stale: run `python -m tests.engine.residuals`"
    )


def test_every_kind_of_source_and_stack_has_residuals(points):
    leaves = {r.leaf for r in points}
    assert {
        "training/time/benchmark/cuda",
        "training/time/benchmark/tpu",
        "training/time/benchmark/jax-gpu",
        "training/time/benchmark/gaudi",
        "training/time/benchmark/neuron",
        "training/time/complete_run/cuda",
        "inference/output_tokens_per_second/cuda",
        "inference/output_tokens_per_second/rocm",
        "inference/output_tokens_per_second/gaudi",
        "inference/time_to_first_token_s/neuron",
        "inference/time_per_output_token_s/cuda",
    } <= leaves
    assert len(points) >= 500
    assert len({r.source for r in points}) >= 70


def test_coverage_on_unseen_sources_is_between_70_and_90_percent(points):
    """Each source's measurements against the table fitted without it: the share inside [p10, p90] should be near 80 %
    (a p10-p90 interval); 70-90 % is the issue's goal. When written: 76.4 % of 508 overall,
    training 76.1 % of 251, inference 76.7 % of 257."""
    table = class_table(points)
    print("\n" + report(points, table))
    shares = coverage(leave_one_source_out(points))
    for key in ("all", "training", "inference"):
        share, n = shares[key]
        assert n >= 200, key
        assert 0.70 <= share <= 0.90, (key, share)


def test_a_class_under_the_minimum_answers_with_its_parent(points):
    table = class_table(points)
    gaudi = table["training/time/benchmark/gaudi"]
    assert gaudi.points < MIN_POINTS
    found = lookup("training/time/benchmark/gaudi", table)
    assert found is not None and found[0] == "training/time/benchmark"
    own = lookup("training/time/complete_run/cuda", table)
    assert own is not None and own[0] == "training/time/complete_run/cuda"
    assert lookup("nothing/at/all", table) is None
