"""Saved scenarios: create/read/update/delete with ETags, revisions, re-pricing, compare, import/export."""

from __future__ import annotations

import json
import re
import threading

import pytest

TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": 8,
        "parallelism": {"data": 8, "zero_stage": 3},
    },
    "cost": {"provider": "aws"},
}
INFERENCE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
}


def _create(client, headers, name="plan-a", kind="training", request=TRAINING, tags=("q3",)):
    return client.post(
        "/v1/scenarios",
        json={"name": name, "kind": kind, "request": request, "tags": list(tags)},
        headers=headers,
    )


def test_create_returns_201_location_etag_and_keeps_estimate_prices_owner(client, editor_headers):
    response = _create(client, editor_headers)
    assert response.status_code == 201, response.json
    assert response.headers["Location"].endswith(f"/v1/scenarios/{response.json['id']}")
    assert response.headers["ETag"]
    body = response.json
    assert body["owner"] == "test-editor" and body["version"] == 1
    assert body["estimate"]["cost"]["total_usd"] > 0
    assert body["prices"]["usd_per_accelerator_hour"] == pytest.approx(6.88)
    assert body["summary"]["accelerator"] == "nvidia-h100-sxm-80gb"


def test_create_validates_request_exactly_like_the_estimate_endpoint(client, editor_headers):
    bad = {**TRAINING, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 0}}
    response = _create(client, editor_headers, request=bad)
    assert response.status_code == 422
    assert "request.hardware.count" in response.json["errors"]
    direct = client.post("/v1/estimates/training", json=bad)
    assert direct.status_code == 422 and "hardware.count" in direct.json["errors"]
    unknown = {**TRAINING, "hardware": {"accelerator": "nvidia-h900", "count": 8}}
    response = _create(client, editor_headers, request=unknown)
    assert response.status_code == 422 and "request.hardware.accelerator" in response.json["errors"]


def test_scenario_writes_need_editor_and_reads_need_a_key(client, viewer_headers):
    assert _create(client, {}).status_code == 401
    assert _create(client, viewer_headers).status_code == 403
    assert client.get("/v1/scenarios").status_code == 401


def test_duplicate_name_is_409(client, editor_headers):
    assert _create(client, editor_headers).status_code == 201
    assert _create(client, editor_headers).status_code == 409


def test_get_etag_and_if_none_match_304(client, editor_headers, viewer_headers):
    created = _create(client, editor_headers)
    path = created.headers["Location"]
    first = client.get(path, headers=viewer_headers)
    assert first.status_code == 200 and first.headers["ETag"] == created.headers["ETag"]
    assert (
        client.get(path, headers={**viewer_headers, "If-None-Match": first.headers["ETag"]}).status_code
        == 304
    )
    assert client.get("/v1/scenarios/999999", headers=viewer_headers).status_code == 404


def test_put_requires_if_match_creates_revision_and_rejects_stale(client, editor_headers):
    created = _create(client, editor_headers)
    path, etag = created.headers["Location"], created.headers["ETag"]
    update = {"name": "plan-a", "kind": "training", "request": {**TRAINING, "cost": {"provider": "lambda"}}}
    assert client.put(path, json=update, headers=editor_headers).status_code == 428
    updated = client.put(path, json=update, headers={**editor_headers, "If-Match": etag})
    assert updated.status_code == 200 and updated.json["version"] == 2
    # Lambda's 8x H100 SXM on demand, seeded from a reading of 2026-09-28
    assert updated.json["prices"]["usd_per_accelerator_hour"] == pytest.approx(3.99)
    assert client.put(path, json=update, headers={**editor_headers, "If-Match": etag}).status_code == 412
    revisions = client.get(f"{path}/revisions", headers=editor_headers).json
    assert [(r["revision"], r["action"], r["author"]) for r in revisions] == [
        (1, "create", "test-editor"),
        (2, "update", "test-editor"),
    ]
    assert revisions[0]["request"]["cost"] == {"provider": "aws"}  # the old version is kept intact


def test_delete_requires_if_match_and_keeps_revisions(client, editor_headers):
    created = _create(client, editor_headers)
    path = created.headers["Location"]
    assert client.delete(path, headers=editor_headers).status_code == 428
    assert client.delete(path, headers={**editor_headers, "If-Match": '"stale"'}).status_code == 412
    assert (
        client.delete(path, headers={**editor_headers, "If-Match": created.headers["ETag"]}).status_code
        == 204
    )
    assert client.get(path, headers=editor_headers).status_code == 404
    assert [r["action"] for r in client.get(f"{path}/revisions", headers=editor_headers).json] == [
        "create",
        "delete",
    ]


def test_list_filters_sorts_and_paginates(client, editor_headers):
    _create(client, editor_headers, name="alpha-train", tags=("q3", "big"))
    _create(client, editor_headers, name="beta-serve", kind="inference", request=INFERENCE, tags=("q4",))
    _create(client, editor_headers, name="gamma-train", tags=("q4",))
    names = lambda q: [s["name"] for s in client.get(f"/v1/scenarios{q}", headers=editor_headers).json]  # noqa: E731
    assert names("?sort=name") == ["alpha-train", "beta-serve", "gamma-train"]
    assert names("?sort=-name") == ["gamma-train", "beta-serve", "alpha-train"]
    assert names("?name=train&sort=name") == ["alpha-train", "gamma-train"]
    assert names("?tag=q4&sort=name") == ["beta-serve", "gamma-train"]
    assert names("?kind=inference") == ["beta-serve"]
    assert names("?owner=nobody") == []
    assert names("?sort=-updated_at")[0] == "gamma-train"
    page = client.get("/v1/scenarios?page=2&page_size=2&sort=name", headers=editor_headers)
    assert [s["name"] for s in page.json] == ["gamma-train"]
    assert '"total": 3' in page.headers["X-Pagination"]
    assert client.get("/v1/scenarios?sort=cost", headers=editor_headers).status_code == 422


def _pages(client, headers, url):
    """Follow Link rel="next" from `url`; (names, X-Pagination of each page)."""
    names, metas = [], []
    while url:
        reply = client.get(url, headers=headers)
        assert reply.status_code == 200, reply.json
        meta = json.loads(reply.headers["X-Pagination"])
        names += [s["name"] for s in reply.json]
        metas.append(meta)
        link = reply.headers.get("Link")
        assert (link is None) == ("next_cursor" not in meta), (link, meta)
        url = link and re.fullmatch(r'<(/v1/scenarios\?[^>]+)>; rel="next"', link).group(1)
        if url:
            assert f"cursor={meta['next_cursor']}" in url and "&page=" not in url and "?page=" not in url
    return names, metas


def test_list_by_cursor_follows_link_next_through_every_sort_and_filter(client, editor_headers):
    for i in range(5):
        _create(client, editor_headers, name=f"walk-{i}", tags=("odd",) if i % 2 else ("even",))
    for query in ("sort=-updated_at", "sort=updated_at", "sort=name", "sort=-name", "tag=even&sort=-name"):
        everything = client.get(f"/v1/scenarios?{query}&page_size=100", headers=editor_headers)
        expected = [s["name"] for s in everything.json]
        names, metas = _pages(client, editor_headers, f"/v1/scenarios?{query}&page_size=2")
        assert names == expected and len(metas) == -(-len(expected) // 2)
        assert metas[0]["page"] == 1 and metas[0].get("next_page") == 2  # the first page is a numbered page
        for meta in metas[1:]:  # cursor pages: no page numbers, the same total
            assert "page" not in meta and "next_page" not in meta and "previous_page" not in meta
        assert {(m["total"], m["total_is_lower_bound"]) for m in metas} == {(len(expected), False)}


def test_list_cursor_from_a_numbered_page_continues_it(client, editor_headers):
    for i in range(5):
        _create(client, editor_headers, name=f"n-{i}")
    second = client.get("/v1/scenarios?sort=name&page=2&page_size=2", headers=editor_headers)
    cursor = json.loads(second.headers["X-Pagination"])["next_cursor"]
    third = client.get(f"/v1/scenarios?sort=name&page_size=2&cursor={cursor}", headers=editor_headers)
    assert [s["name"] for s in second.json + third.json] == ["n-2", "n-3", "n-4"]
    assert "next_cursor" not in json.loads(third.headers["X-Pagination"]) and "Link" not in third.headers


def _tampered(sort: str, key: list) -> str:
    import base64

    raw = json.dumps({"v": 1, "s": sort, "k": key}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_list_cursor_refusals_name_the_parameter(client, editor_headers):
    for i in range(3):
        _create(client, editor_headers, name=f"c-{i}")
    first = client.get("/v1/scenarios?sort=name&page_size=1", headers=editor_headers)
    cursor = json.loads(first.headers["X-Pagination"])["next_cursor"]
    for query, field in (
        (f"cursor={cursor}&sort=-name", "query.cursor"),  # a cursor belongs to its sort
        (f"cursor={cursor}", "query.cursor"),
        (f"cursor={cursor}&sort=name&page=2", "query.page"),
        ("cursor=garbage", "query.cursor"),
        ("cursor=" + "A" * 1001, "query.cursor"),
        # a tampered cursor whose timestamp is past the last UTC instant a datetime holds was a 500
        (
            "sort=updated_at&cursor=" + _tampered("updated_at", ["9999-12-31T23:59:59-14:00", 1]),
            "query.cursor",
        ),
        (
            "sort=updated_at&cursor=" + _tampered("updated_at", ["0001-01-01T00:00:00+14:00", 1]),
            "query.cursor",
        ),
    ):
        reply = client.get(f"/v1/scenarios?{query}", headers=editor_headers)
        assert reply.status_code == 422 and field in reply.json["errors"], (query, reply.json)


def test_list_filtered_total_is_a_lower_bound_past_the_cap(client, editor_headers, monkeypatch):
    from scalecost.store import scenario_listing

    monkeypatch.setattr(scenario_listing, "COUNT_CAP", 2)
    for i in range(4):
        _create(client, editor_headers, name=f"cap-{i}")

    def meta(query):
        return json.loads(
            client.get(f"/v1/scenarios?{query}", headers=editor_headers).headers["X-Pagination"]
        )

    first = meta("name=cap&page_size=1")
    assert (first["total"], first["total_is_lower_bound"], first["next_page"]) == (2, True, 2)
    second = meta("name=cap&page_size=1&page=2")  # counted one page further: the next page is known
    assert (second["total"], second["total_is_lower_bound"], second["next_page"]) == (3, True, 3)
    last = meta("name=cap&page_size=1&page=4")
    assert (last["total"], last["total_is_lower_bound"], last.get("next_page")) == (4, False, None)
    assert (meta("page_size=1")["total"], meta("page_size=1")["total_is_lower_bound"]) == (4, False)


def test_repriced_estimate_moves_with_the_catalog(client, editor_headers, admin_headers):
    created = _create(client, editor_headers).json
    h100 = "/v1/accelerators/nvidia-h100-sxm-80gb"
    etag = client.get(h100).headers["ETag"]
    put = client.put(
        f"{h100}/prices/aws", json={"usd_per_hour": 3.44}, headers={**admin_headers, "If-Match": etag}
    )
    assert put.status_code == 200
    repriced = client.get(f"/v1/scenarios/{created['id']}/estimate", headers=editor_headers).json
    saved, current = repriced["saved"]["cost"]["total_usd"], repriced["current"]["cost"]["total_usd"]
    assert current == pytest.approx(saved / 2, rel=1e-6)  # $6.88 → $3.44
    assert repriced["delta"]["total_usd"] == pytest.approx(current - saved)
    assert repriced["delta"]["percent"] == pytest.approx(-50.0)


def test_compare_side_by_side(client, editor_headers):
    a = _create(client, editor_headers, name="a").json
    b = _create(client, editor_headers, name="b", request={**TRAINING, "cost": {"provider": "lambda"}}).json
    result = client.post(
        "/v1/scenarios/compare", json={"ids": [a["id"], b["id"]]}, headers=editor_headers
    ).json
    assert [s["name"] for s in result["scenarios"]] == ["a", "b"]
    assert result["cheapest_id"] == b["id"]
    assert {"total_usd", "seconds", "fits", "accelerator"} <= set(result["scenarios"][0])
    missing = client.post("/v1/scenarios/compare", json={"ids": [a["id"], 424242]}, headers=editor_headers)
    assert missing.status_code == 404


def test_export_format_imports_back(client, editor_headers):
    created = _create(client, editor_headers, kind="inference", request=INFERENCE).json
    exported = client.get(f"/v1/scenarios/{created['id']}", headers=editor_headers).json
    exported["name"] = "imported-copy"
    imported = client.post("/v1/scenarios", json=exported, headers=editor_headers)
    assert imported.status_code == 201, imported.json
    assert imported.json["request"] == created["request"] and imported.json["kind"] == "inference"


def test_scenarios_survive_an_app_restart(migrated_url, editor_headers, app):
    from scalecost import create_app

    created = _create(app.test_client(), editor_headers, name="durable").json
    app.extensions["scalecost.db"].dispose()
    restarted = create_app({"DATABASE_URL": migrated_url, "TESTING": True})
    read = restarted.test_client().get(f"/v1/scenarios/{created['id']}", headers=editor_headers)
    assert read.status_code == 200 and read.json["estimate"] == created["estimate"]
    restarted.extensions["scalecost.db"].dispose()


@pytest.mark.postgresql
def test_concurrent_scenario_updates_with_same_if_match_exactly_one_wins(app, db_backend, editor_headers):
    if db_backend != "postgresql":
        pytest.skip("concurrency is proven on PostgreSQL (SQLite serialises writers)")
    created = _create(app.test_client(), editor_headers)
    path, etag = created.headers["Location"], created.headers["ETag"]
    barrier = threading.Barrier(2)
    results: dict[str, int] = {}

    def put(provider: str) -> None:
        body = {"name": "plan-a", "kind": "training", "request": {**TRAINING, "cost": {"provider": provider}}}
        client = app.test_client()
        barrier.wait()
        results[provider] = client.put(
            path, json=body, headers={**editor_headers, "If-Match": etag}
        ).status_code

    threads = [threading.Thread(target=put, args=(p,)) for p in ("lambda", "runpod")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [200, 412], results
    winner = next(p for p, code in results.items() if code == 200)
    revisions = app.test_client().get(f"{path}/revisions", headers=editor_headers).json
    assert [r["request"]["cost"]["provider"] for r in revisions] == ["aws", winner]


def test_listing_totals_follow_creates_kind_changes_and_deletes(client, editor_headers):
    def total(query=""):
        import json

        return json.loads(
            client.get(f"/v1/scenarios{query}", headers=editor_headers).headers["X-Pagination"]
        )["total"]

    a = _create(client, editor_headers, name="a")
    _create(client, editor_headers, name="b", kind="inference", request=INFERENCE)
    assert (total(), total("?kind=training"), total("?kind=inference")) == (2, 1, 1)
    body = {"name": "a", "kind": "inference", "request": INFERENCE}
    client.put(a.headers["Location"], json=body, headers={**editor_headers, "If-Match": a.headers["ETag"]})
    assert (total(), total("?kind=training"), total("?kind=inference")) == (2, 0, 2)
    etag = client.get(a.headers["Location"], headers=editor_headers).headers["ETag"]
    client.delete(a.headers["Location"], headers={**editor_headers, "If-Match": etag})
    assert (total(), total("?kind=inference"), total("?owner=test-editor&kind=inference")) == (1, 1, 1)
