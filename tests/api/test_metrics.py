"""GET /metrics (api/extensions/metrics.py), scraped in-process: Prometheus text whose series move with the
requests, labelled by the URL rule (not the raw path) and status; heavy-work slots held and refused; 429s.
tests/contract/test_operations_gunicorn.py checks the counts add up over gunicorn's workers."""

from __future__ import annotations

import uuid

from prometheus_client.parser import text_string_to_metric_families
from scalecost import create_app
from scalecost.api.extensions import work

PLAN = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096},
    "search": {"max_devices": 64},
}


def scrape(client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one GET /metrics."""
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_requests_and_latency_move_by_url_rule_and_status(client):
    before = scrape(client)
    for _ in range(3):
        assert client.get("/livez").status_code == 200
    assert client.get("/v1/accelerators/no-such-987654").status_code == 404
    assert client.get("/no/such/path").status_code == 404
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("scalecost_http_requests_total", method="GET", route="/livez", status="200") == 3
    assert (
        moved("scalecost_http_request_duration_seconds_count", method="GET", route="/livez", status="200")
        == 3
    )
    assert moved(
        "scalecost_http_request_duration_seconds_bucket", method="GET", route="/livez", status="200", le="+Inf"
    ) == 3  # fmt: skip
    assert (
        moved("scalecost_http_request_duration_seconds_sum", method="GET", route="/livez", status="200") > 0
    )
    rule = "/v1/accelerators/<string:accelerator_id>"
    assert moved("scalecost_http_requests_total", method="GET", route=rule, status="404") == 1
    assert moved("scalecost_http_requests_total", method="GET", route="<unmatched>", status="404") == 1
    assert not any("987654" in str(key) or "/no/such" in str(key) for key in after), "raw paths are no label"
    assert moved("scalecost_http_requests_total", method="GET", route="/metrics", status="200") == 1


def test_heavy_work_slots_in_use_and_refused(app, client):
    app.config.update(REQUEST_BUDGET_SECONDS=0.2, HEAVY_WORK_CONCURRENCY=1)
    before = scrape(client)
    assert value(before, "scalecost_heavy_work_slots_in_use") == 0
    with app.test_request_context(), work.heavy():  # a request holds the process's only slot
        held = scrape(client)
        refused = client.post("/v1/plans/training", json=PLAN)
    assert value(held, "scalecost_heavy_work_slots_in_use") == 1
    assert refused.status_code == 503
    after = scrape(client)
    assert value(after, "scalecost_heavy_work_slots_in_use") == 0
    route = {"route": "/v1/plans/training"}
    assert value(after, "scalecost_heavy_work_refused_total", **route) - value(
        before, "scalecost_heavy_work_refused_total", **route
    ) == 1  # fmt: skip
    assert value(after, "scalecost_heavy_work_slots") >= 1


def test_rate_limit_refusals_are_counted(migrated_url):
    app = create_app(
        {
            "DATABASE_URL": migrated_url,
            "RATELIMIT_ENABLED": True,
            "RATELIMIT_WRITES": "1 per minute",
            "RATELIMIT_KEY_PREFIX": uuid.uuid4().hex,
        }
    )
    client = app.test_client()
    before = scrape(client)
    codes = [client.post("/v1/keys", json={"name": "x", "role": "viewer"}).status_code for _ in range(3)]
    assert codes == [401, 429, 429]
    after = scrape(client)
    assert value(after, "scalecost_rate_limited_total", route="/v1/keys") - value(
        before, "scalecost_rate_limited_total", route="/v1/keys"
    ) == 2  # fmt: skip
    app.extensions["scalecost.db"].dispose()


def test_metrics_is_outside_the_api_contract(offline_app):
    spec = offline_app.test_client().get("/openapi.json").get_json()
    assert "/metrics" not in spec["paths"]
