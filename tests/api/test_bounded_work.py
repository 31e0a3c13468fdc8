"""Bounded work per request (api/extensions/work.py, engine/budget.py): the planners stop at the request's time
budget and say `search.complete: false`, a batch answers the items it reached and marks the rest, and heavy work
waits for a slot of its process at most its budget, then gets 503 with Retry-After."""

from __future__ import annotations

import pytest
from scalecost.api.extensions import work
from scalecost.engine import plan_serving, plan_training

from tests.engine.reference_catalog import load_catalog as reference_catalog

PLAN = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096},
    "search": {"max_devices": 64},
}
SERVE = {
    "model": {"preset": "llama-3-8b"},
    "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
    "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
}
ITEM = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
}


def _after(n: int):
    """A checkpoint that allows `n` calls, then says the budget is spent; counts its calls."""
    calls = {"n": 0}

    def checkpoint() -> bool:
        calls["n"] += 1
        return calls["n"] <= n

    return checkpoint, calls


def test_the_training_planner_stops_at_its_checkpoint_and_says_so():
    catalog = reference_catalog()
    whole = plan_training(PLAN, catalog)
    assert whole["search"]["complete"] is True
    checkpoint, calls = _after(3)
    cut = plan_training(PLAN, catalog, checkpoint)
    assert cut["search"]["complete"] is False and calls["n"] >= 4 + 1  # 3 allowed, 1 refused in each phase
    assert cut["search"]["candidates"] < whole["search"]["candidates"] or (
        cut["search"]["configurations_evaluated"] < whole["search"]["configurations_evaluated"]
    )
    assert cut["best"] is not None  # the best of what was evaluated, still a plan


def test_the_serving_planner_stops_at_its_checkpoint_and_says_so():
    catalog = reference_catalog()
    whole = plan_serving(SERVE, catalog)
    assert whole["search"]["complete"] is True
    checkpoint, _ = _after(2)
    cut = plan_serving(SERVE, catalog, checkpoint)
    assert cut["search"]["complete"] is False
    assert cut["search"]["groups_evaluated"] < whole["search"]["groups_evaluated"]


def test_a_plan_over_http_within_its_budget_is_complete(client):
    response = client.post("/v1/plans/training", json=PLAN)
    assert response.status_code == 200 and response.json["search"]["complete"] is True


def test_a_plan_out_of_budget_answers_what_it_found(app, client):
    app.config["REQUEST_BUDGET_SECONDS"] = 0.0  # spent on arrival: one candidate, then stop
    response = client.post("/v1/plans/training", json=PLAN)
    assert response.status_code == 200 and response.json["search"]["complete"] is False
    serving = client.post("/v1/plans/inference", json=SERVE)
    assert serving.status_code == 200 and serving.json["search"]["complete"] is False


def test_a_batch_out_of_budget_marks_the_items_it_did_not_reach(app, client):
    app.config["REQUEST_BUDGET_SECONDS"] = 0.0
    response = client.post("/v1/estimates/training/batch", json={"items": [ITEM] * 5})
    body = response.json
    assert response.status_code == 200 and body["complete"] is False
    assert body["succeeded"] == 1 and body["not_reached"] == 4 and body["failed"] == 4
    assert [r["status"] for r in body["results"]] == [200, 503, 503, 503, 503]
    assert body["results"][1]["problem"]["type"] == "urn:scalecost:problem:not-reached"
    assert [r["index"] for r in body["results"]] == list(range(5))


def test_a_batch_within_budget_is_complete(client):
    body = client.post("/v1/estimates/training/batch", json={"items": [ITEM] * 3}).json
    assert body["complete"] is True and body["not_reached"] == 0 and body["succeeded"] == 3


@pytest.mark.parametrize("path", ["/v1/plans/training", "/v1/estimates/training/batch"])
def test_heavy_work_waits_for_a_slot_at_most_its_budget_then_503(app, client, path):
    app.config.update(REQUEST_BUDGET_SECONDS=0.2, HEAVY_WORK_CONCURRENCY=1)
    body = PLAN if path.endswith("training") else {"items": [ITEM]}
    with app.test_request_context():
        slots = work._slots()
    assert slots.acquire(timeout=1)  # another request holds this process's only slot
    try:
        response = client.post(path, json=body)
    finally:
        slots.release()
    assert response.status_code == 503 and response.mimetype == "application/problem+json"
    assert int(response.headers["Retry-After"]) >= 1
    assert client.get("/healthz").status_code == 200  # probes never wait for a slot
    ordinary = client.post("/v1/estimates/training", json=ITEM)
    assert ordinary.status_code == 200  # nor do single estimates


def test_a_plan_counts_against_the_estimate_budget_by_what_it_evaluated(migrated_url):
    """One estimate per 10,000 configurations evaluated (limits.plan_cost); a refused plan (429) charges nothing."""
    from scalecost import create_app
    from scalecost.api.extensions.limits import plan_cost

    from tests.conftest import reset_rows

    app = create_app(
        {"DATABASE_URL": migrated_url, "RATELIMIT_ESTIMATES": "60 per minute", "RATELIMIT_ENABLED": True}
    )
    reset_rows(app.extensions["scalecost.db"])
    client = app.test_client()
    first = client.post("/v1/plans/training", json=PLAN)
    assert first.status_code == 200
    units = plan_cost(first.json["search"]["configurations_evaluated"])
    assert 1 < units < 60, units
    left = 60 - units
    for _ in range(left):
        assert client.post("/v1/estimates/training", json=ITEM).status_code == 200
    assert client.post("/v1/estimates/training", json=ITEM).status_code == 429
    assert client.post("/v1/plans/training", json=PLAN).status_code == 429
    app.extensions["scalecost.db"].dispose()


def test_plan_cost_units():
    from scalecost.api.extensions.limits import plan_cost

    assert [plan_cost(n) for n in (0, 1, 10_000, 10_001, 4_686_420)] == [1, 1, 1, 2, 469]
