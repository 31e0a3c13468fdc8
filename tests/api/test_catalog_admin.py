"""Catalog administration: If-Match, price history, as_of pricing, audit, and no lost updates."""

from __future__ import annotations

import threading

import pytest

H100 = "/v1/accelerators/nvidia-h100-sxm-80gb"


def _etag(client, path=H100) -> str:
    return client.get(path).headers["ETag"]


def test_price_change_needs_if_match_428_and_stale_is_412(client, admin_headers):
    assert (
        client.put(f"{H100}/prices/aws", json={"usd_per_hour": 5.5}, headers=admin_headers).status_code == 428
    )
    stale = {**admin_headers, "If-Match": '"0000"'}
    assert client.put(f"{H100}/prices/aws", json={"usd_per_hour": 5.5}, headers=stale).status_code == 412


def test_price_change_closes_the_old_row_and_opens_a_new_one(client, admin_headers):
    etag = _etag(client)
    response = client.put(
        f"{H100}/prices/aws",
        json={"usd_per_hour": 5.5, "effective_from": "2026-10-01", "source": "AWS price cut"},
        headers={**admin_headers, "If-Match": etag},
    )
    assert response.status_code == 200 and response.headers["ETag"] != etag
    aws = [p for p in response.json["prices"] if p["provider"] == "aws"]
    assert [p["usd_per_hour"] for p in aws] == ["5.500000"]
    assert aws[0]["instance_type"] == "p5.48xlarge"  # carried over from the row it replaces
    history = client.get(f"{H100}/prices/history?provider=aws").json
    assert [(p["usd_per_hour"], p["effective_from"], p["effective_to"]) for p in history] == [
        ("12.290000", "2024-01-01", "2025-07-01"),
        ("6.880000", "2025-07-01", "2026-08-22"),
        ("6.880000", "2026-08-22", "2026-10-01"),
        ("5.500000", "2026-10-01", None),
    ]


def test_new_price_cannot_start_before_the_current_one(client, admin_headers):
    response = client.put(
        f"{H100}/prices/aws",
        json={"usd_per_hour": 5.5, "effective_from": "2025-01-01"},
        headers={**admin_headers, "If-Match": _etag(client)},
    )
    assert response.status_code == 422 and "effective_from" in response.json["errors"]


def test_delete_price_ends_it_and_keeps_history(client, admin_headers):
    response = client.delete(f"{H100}/prices/lambda", headers={**admin_headers, "If-Match": _etag(client)})
    assert response.status_code == 204
    item = client.get(H100).json
    assert "lambda" not in {p["provider"] for p in item["prices"]}
    assert any(
        p["provider"] == "lambda" and p["effective_to"] for p in client.get(f"{H100}/prices/history").json
    )
    again = client.delete(f"{H100}/prices/lambda", headers={**admin_headers, "If-Match": _etag(client)})
    assert again.status_code == 404


def test_add_and_patch_accelerator(client, admin_headers):
    body = {
        "id": "acme-x1",
        "name": "Acme X1",
        "vendor": "Acme",
        "kind": "asic",
        "memory_bytes": 64 * 10**9,
        "memory_bandwidth_bytes_per_s": 2e12,
        "peak_flops_per_s": {"bf16": 5e14},
    }
    created = client.post("/v1/accelerators", json=body, headers=admin_headers)
    assert created.status_code == 201 and created.headers["Location"].endswith("/v1/accelerators/acme-x1")
    assert client.post("/v1/accelerators", json=body, headers=admin_headers).status_code == 409
    etag = _etag(client, "/v1/accelerators/acme-x1")
    patched = client.patch(
        "/v1/accelerators/acme-x1",
        json={"memory_bytes": 96 * 10**9},
        headers={**admin_headers, "If-Match": etag},
    )
    assert patched.status_code == 200 and patched.json["memory_bytes"] == 96 * 10**9
    assert patched.json["peak_flops_per_s"]["bf16"] == 5e14
    assert (
        client.patch(
            "/v1/accelerators/acme-x1", json={"name": "x"}, headers={**admin_headers, "If-Match": etag}
        ).status_code
        == 412
    )
    events = client.get("/v1/audit-events?target=accelerator:acme-x1", headers=admin_headers).json
    assert [e["action"] for e in events] == ["accelerator.update", "accelerator.create"]
    assert (
        events[0]["before"]["memory_bytes"] == 64 * 10**9 and events[0]["after"]["memory_bytes"] == 96 * 10**9
    )


def test_invalid_accelerator_body_is_422_naming_fields(client, admin_headers):
    response = client.post(
        "/v1/accelerators", json={"id": "Bad Id", "kind": "fpga", "memory_bytes": -1}, headers=admin_headers
    )
    assert response.status_code == 422
    assert {"id", "kind", "memory_bytes", "name", "vendor"} <= set(response.json["errors"])


def test_price_change_is_audited_with_before_after_and_request_id(client, admin_headers):
    client.put(
        f"{H100}/prices/runpod",
        json={"usd_per_hour": 2.49},
        headers={**admin_headers, "If-Match": _etag(client), "X-Request-ID": "price-req-1"},
    )
    event = client.get(
        "/v1/audit-events?target=accelerator:nvidia-h100-sxm-80gb&actor=test-admin", headers=admin_headers
    ).json[0]
    assert event["action"] == "price.set" and event["request_id"] == "price-req-1"
    assert event["before"]["prices"][0]["usd_per_hour"] == "2.990000"
    closed, opened = event["after"]["prices"]
    assert closed["usd_per_hour"] == "2.990000" and closed["effective_to"] is not None
    assert opened["usd_per_hour"] == "2.490000" and opened["effective_to"] is None


def test_audit_events_need_admin(client, editor_headers):
    assert client.get("/v1/audit-events", headers=editor_headers).status_code == 403


@pytest.mark.postgresql
def test_concurrent_price_updates_with_same_if_match_exactly_one_wins(app, db_backend, admin_headers):
    if db_backend != "postgresql":
        pytest.skip("concurrency is proven on PostgreSQL (SQLite serialises writers)")
    etag = _etag(app.test_client())
    barrier = threading.Barrier(2)
    results: dict[str, int] = {}

    def put(price: str) -> None:
        client = app.test_client()
        barrier.wait()
        results[price] = client.put(
            f"{H100}/prices/aws",
            json={"usd_per_hour": float(price)},
            headers={**admin_headers, "If-Match": etag},
        ).status_code

    threads = [threading.Thread(target=put, args=(p,)) for p in ("5.10", "5.20")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [200, 412], results
    winner = next(p for p, code in results.items() if code == 200)
    history = app.test_client().get(f"{H100}/prices/history?provider=aws").json
    assert [p["usd_per_hour"] for p in history if p["effective_to"] is None] == [f"{float(winner):.6f}"]
    assert len(history) == 4  # three seeded periods (2024, 2025-H2, 2026-08-22) + exactly the winner


def test_history_is_no_provider_name(client, admin_headers):
    """PUT/DELETE .../prices/history acted on a provider named "history" that no GET could show."""
    for method in (client.put, client.delete):
        kwargs = {"json": {"usd_per_hour": 1.0}} if method == client.put else {}
        response = method(
            f"{H100}/prices/History", headers={**admin_headers, "If-Match": _etag(client)}, **kwargs
        )
        assert response.status_code == 422 and "provider" in response.json["errors"], response.json
    assert "history" not in {p["provider"] for p in client.get(f"{H100}/prices/history").json}


@pytest.mark.parametrize(
    ("provider", "body", "field"),
    [
        ("İ" * 40, {"usd_per_hour": 1.0}, "provider"),  # 40 characters, 80 once lower-cased: past the column
        ("lam%01bda", {"usd_per_hour": 1.0}, "provider"),
        ("lambda", {"usd_per_hour": 1.0, "effective_from": "4223-01-01"}, "effective_from"),
        ("newcloud", {"usd_per_hour": 1.0, "effective_from": "1999-12-31"}, "effective_from"),  # none current
    ],
    ids=["lowercases-past-64", "control-character", "year-4223", "before-2000"],
)
def test_a_price_the_catalog_cannot_hold_is_a_422_naming_the_field(
    client, admin_headers, provider, body, field
):
    history = client.get(f"{H100}/prices/history").json
    response = client.put(
        f"{H100}/prices/{provider}", json=body, headers={**admin_headers, "If-Match": _etag(client)}
    )
    assert response.status_code == 422 and field in response.json["errors"], response.json
    assert client.get(f"{H100}/prices/history").json == history


def test_the_longest_provider_and_latest_day_the_bounds_allow_are_stored(client, admin_headers):
    import datetime as dt

    provider = "İ" * 32  # 64 characters once lower-cased
    ahead = (dt.date.today() + dt.timedelta(days=366)).isoformat()
    response = client.put(
        f"{H100}/prices/{provider}",
        json={"usd_per_hour": 1.0, "effective_from": ahead},
        headers={**admin_headers, "If-Match": _etag(client)},
    )
    assert response.status_code == 200, response.json
    assert any(p["provider"] == provider for p in client.get(f"{H100}/prices/history").json)
