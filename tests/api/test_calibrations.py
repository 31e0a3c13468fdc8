"""Calibration profiles over HTTP: create (points and files), refused points, 422s, ETags and revisions, refit,
delete, and estimates / batches / scenarios / planners that name a profile."""

from __future__ import annotations

import json

import pytest

from tests.contract.strict_schema import StrictContract, committed_spec

ACC = "amd-mi300x"


def _request(batch: int, prompt: int = 512, accelerator: str = ACC) -> dict:
    return {
        "model": {"preset": "llama-3-8b"},
        "engine": "vllm",
        "batch_size": batch,
        "prompt_tokens": prompt,
        "output_tokens": 256,
        "hardware": {"accelerator": accelerator, "count": 1},
        "output": {"suggestions": False, "recommendations": False},
    }


def _measured(client, request: dict, slower: float = 1.6) -> dict:
    """What a cluster `slower` times slower than the defaults measures on `request`."""
    answer = client.post("/v1/estimates/inference", json=request).json
    return {
        "output_tokens_per_second": answer["throughput"]["output_tokens_per_second"] / slower,
        "time_to_first_token_s": answer["latency"]["time_to_first_token_s"] * slower,
        "time_per_output_token_s": answer["latency"]["time_per_output_token_s"] * slower,
    }


def _points(client, batches=(1, 4, 16, 64)) -> list[dict]:
    return [{"request": _request(b), "measured": _measured(client, _request(b))} for b in batches]


def _create(client, headers, name="mi300x", points=None, **extra):
    body = {
        "name": name,
        "kind": "inference",
        "points": points if points is not None else _points(client),
        **extra,
    }
    return client.post("/v1/calibrations", json=body, headers=headers)


def test_create_fits_factors_with_uncertainty_and_errors_before_and_after(client, editor_headers):
    response = _create(client, editor_headers)
    assert response.status_code == 201, response.json
    body = response.json
    assert response.headers["ETag"] and response.headers["Location"].endswith(
        f"/v1/calibrations/{body['id']}"
    )
    assert body["accelerator"] == ACC and body["stack"] == "rocm/vllm" and body["revision"] == 1
    memory = body["factors"]["memory_bandwidth"]
    assert memory["value"] < 1.0 and memory["standard_deviation"] > 0 and memory["informed"]
    assert not body["factors"]["network"]["informed"] and body["factors"]["network"]["value"] == 1.0
    for point in body["points"]:
        print(point["index"], point["error_before"], point["error_after"])
        assert point["status"] == "fitted"
        assert abs(point["error_after"]["time_per_output_token_s"]) < abs(
            point["error_before"]["time_per_output_token_s"]
        )
    assert {"point", "metric", "log_ratio"} <= set(body["residuals"][0])
    assert body["fit"]["median_abs_error_after"] < body["fit"]["median_abs_error_before"]
    assert body["inputs"][0]["request"]["batch_size"] == 1
    assert StrictContract(committed_spec()).errors("Calibration", body) == []


def test_an_invalid_point_is_refused_alone(client, editor_headers):
    points = _points(client, (1, 8))
    points.append(
        {"request": {**_request(2), "engine": "nope"}, "measured": {"time_per_output_token_s": 0.01}}
    )
    response = _create(client, editor_headers, points=points)
    assert response.status_code == 201, response.json
    refused = response.json["points"][2]
    assert refused["status"] == "refused" and "points.2.request.engine" in refused["problems"]
    assert response.json["fit"]["points_refused"] == 1


@pytest.mark.parametrize(
    ("points", "field"),
    [
        ([], "points"),
        (
            [{"request": {}, "measured": {"time_per_output_token_s": 0}}],
            "points.0.measured.time_per_output_token_s",
        ),
        (
            [{"request": {}, "measured": {"time_per_output_token_s": -2.0}}],
            "points.0.measured.time_per_output_token_s",
        ),
        ([{"request": {}, "measured": {"tokens_per_second": 5.0}}], "points.0.measured"),
    ],
)
def test_bad_profiles_are_422_naming_the_problem(client, editor_headers, points, field):
    response = _create(client, editor_headers, points=points)
    assert response.status_code == 422, response.json
    assert any(k.startswith(field) for k in response.json["errors"]), response.json


def test_no_valid_point_more_than_10000_points_and_unknown_formats_are_422(client, editor_headers):
    only_bad = [{"request": {**_request(1), "engine": "nope"}, "measured": {"time_per_output_token_s": 0.01}}]
    response = _create(client, editor_headers, points=only_bad)
    assert response.status_code == 422 and "points" in response.json["errors"]
    many = [{"request": {}, "measured": {"time_per_output_token_s": 0.01}}] * 10_001
    response = _create(client, editor_headers, points=many)
    assert response.status_code == 422 and "points" in response.json["errors"]
    file = {"format": "excel", "request": _request(1), "content": "x"}
    response = client.post(
        "/v1/calibrations", json={"name": "f", "kind": "inference", "files": [file]}, headers=editor_headers
    )
    assert response.status_code == 422 and "files.0.format" in response.json["errors"]


def test_a_vllm_benchmark_file_and_a_csv_become_points(client, editor_headers):
    base = {k: v for k, v in _request(1).items() if k not in ("batch_size", "prompt_tokens", "output_tokens")}
    measured = _measured(client, _request(16))
    vllm = {  # the field names of vLLM's benchmark_serving.py --save-result JSON
        "backend": "vllm",
        "max_concurrency": 16,
        "request_rate": "inf",
        "completed": 100,
        "total_input_tokens": 51200,
        "total_output_tokens": 25600,
        "output_throughput": measured["output_tokens_per_second"],
        "median_ttft_ms": measured["time_to_first_token_s"] * 1000,
        "median_tpot_ms": measured["time_per_output_token_s"] * 1000,
    }
    csv_text = "batch_size,prompt_tokens,output_tokens,time_per_output_token_s\n1,512,256,{:.6f}\n".format(
        _measured(client, _request(1))["time_per_output_token_s"]
    )
    files = [
        {"format": "vllm-benchmark-serving", "request": base, "content": json.dumps(vllm)},
        {"format": "csv", "request": base, "content": csv_text},
    ]
    response = client.post(
        "/v1/calibrations",
        json={"name": "files", "kind": "inference", "files": files},
        headers=editor_headers,
    )
    assert response.status_code == 201, response.json
    inputs = response.json["inputs"]
    assert inputs[0]["request"]["batch_size"] == 16 and inputs[0]["request"]["prompt_tokens"] == 512
    assert inputs[0]["measured"]["time_per_output_token_s"] == pytest.approx(vllm["median_tpot_ms"] / 1000)
    assert inputs[1]["request"]["batch_size"] == 1 and set(inputs[1]["measured"]) == {
        "time_per_output_token_s"
    }
    bad_csv = {"format": "csv", "request": base, "content": "batch_size,time_per_output_token_s\n1,-3\n"}
    response = client.post(
        "/v1/calibrations",
        json={"name": "bad", "kind": "inference", "files": [bad_csv]},
        headers=editor_headers,
    )
    assert response.status_code == 422 and "files.0.content" in response.json["errors"]


def test_etag_refit_revisions_and_delete(client, editor_headers, viewer_headers):
    created = _create(client, editor_headers).json
    url = f"/v1/calibrations/{created['id']}"
    got = client.get(url, headers=viewer_headers)
    assert got.status_code == 200 and got.headers["ETag"]
    body = {"name": "mi300x", "kind": "inference", "points": _points(client, (2, 32))}
    assert client.put(url, json=body, headers=editor_headers).status_code == 428
    stale = client.put(url, json=body, headers={**editor_headers, "If-Match": '"nope"'})
    assert stale.status_code == 412
    refit = client.put(url, json=body, headers={**editor_headers, "If-Match": got.headers["ETag"]})
    assert refit.status_code == 200 and refit.json["revision"] == 2
    assert client.post(f"{url}/refit", json={}, headers=editor_headers).status_code == 428
    stale = client.post(f"{url}/refit", json={}, headers={**editor_headers, "If-Match": got.headers["ETag"]})
    assert stale.status_code == 412
    more = client.post(
        f"{url}/refit",
        json={"points": _points(client, (8,))},
        headers={**editor_headers, "If-Match": refit.headers["ETag"]},
    )
    assert more.status_code == 200 and more.json["revision"] == 3 and len(more.json["inputs"]) == 3
    listed = client.get("/v1/calibrations?kind=inference", headers=viewer_headers)
    assert listed.status_code == 200 and [p["name"] for p in listed.json] == ["mi300x"]
    assert json.loads(listed.headers["X-Pagination"])["total"] == 1
    gone = client.delete(url, headers={**editor_headers, "If-Match": more.headers["ETag"]})
    assert gone.status_code == 204 and client.get(url, headers=viewer_headers).status_code == 404
    revisions = client.get(f"{url}/revisions", headers=viewer_headers).json
    assert [(r["revision"], r["action"]) for r in revisions] == [
        (1, "create"),
        (2, "refit"),
        (3, "refit"),
        (4, "delete"),
    ]
    assert revisions[0]["factors"] != revisions[1]["factors"]


def test_writes_need_an_editor(client, viewer_headers):
    assert _create(client, viewer_headers).status_code == 403


def test_estimates_batches_scenarios_and_planners_use_a_profile(client, editor_headers):
    created = _create(client, editor_headers).json
    request = _request(8)
    plain = client.post("/v1/estimates/inference", json=request).json
    calibrated = client.post("/v1/estimates/inference", json={**request, "calibration": "mi300x"})
    assert calibrated.status_code == 200, calibrated.json
    answer = calibrated.json
    assert answer["calibration"]["id"] == created["id"] and answer["calibration"]["revision"] == 1
    assert answer["assumptions"]["calibration"]["name"] == "mi300x"
    assert StrictContract(committed_spec()).errors("InferenceEstimate", answer) == []
    assert answer["latency"]["time_per_output_token_s"] > plain["latency"]["time_per_output_token_s"]
    by_id = client.post("/v1/estimates/inference", json={**request, "calibration": str(created["id"])})
    assert by_id.status_code == 200 and by_id.json["calibration"]["name"] == "mi300x"
    elsewhere = client.post(
        "/v1/estimates/inference",
        json={**_request(8, accelerator="nvidia-h100-sxm-80gb"), "calibration": "mi300x"},
    )
    assert elsewhere.status_code == 422 and "calibration" in elsewhere.json["errors"]
    unknown = client.post("/v1/estimates/inference", json={**request, "calibration": "nope"})
    assert unknown.status_code == 422 and "calibration" in unknown.json["errors"]
    # digits str.isdigit() accepts and int() refuses (make fuzz found a 500 on '¹'), and ids past the column
    for ref in ("¹", "²3", "9999999999"):
        odd = client.post("/v1/estimates/inference", json={**request, "calibration": ref})
        assert odd.status_code == 422 and "calibration" in odd.json["errors"], (ref, odd.json)
    batch = client.post(
        "/v1/estimates/inference/batch", json={"items": [{**request, "calibration": "mi300x"}]}
    )
    assert batch.json["results"][0]["estimate"]["calibration"]["name"] == "mi300x"
    scenario = client.post(
        "/v1/scenarios",
        json={"name": "s", "kind": "inference", "request": {**request, "calibration": "mi300x"}},
        headers=editor_headers,
    )
    assert scenario.status_code == 201, scenario.json
    assert scenario.json["estimate"]["calibration"]["name"] == "mi300x"
    again = client.get(f"/v1/scenarios/{scenario.json['id']}/estimate", headers=editor_headers)
    assert again.json["current"]["calibration"]["revision"] == 1


def test_any_profile_applies_elsewhere_and_kind_must_match(client, editor_headers):
    assert _create(client, editor_headers, name="anywhere", apply_to="any").status_code == 201
    answer = client.post(
        "/v1/estimates/inference",
        json={**_request(8, accelerator="nvidia-h100-sxm-80gb"), "calibration": "anywhere"},
    )
    assert answer.status_code == 200 and answer.json["calibration"]["apply_to"] == "any"
    training = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {"accelerator": ACC, "count": 8, "parallelism": {"data": 8}},
        "calibration": "anywhere",
    }
    refused = client.post("/v1/estimates/training", json=training)
    assert refused.status_code == 422 and "calibration" in refused.json["errors"]


def test_planners_search_with_a_profile_and_name_it(client, editor_headers):
    assert _create(client, editor_headers).status_code == 201
    body = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
        "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
        "search": {"accelerators": [ACC], "engines": ["vllm"], "devices_per_replica": [1]},
    }
    plain = client.post("/v1/plans/inference", json=body)
    calibrated = client.post("/v1/plans/inference", json={**body, "calibration": "mi300x"})
    assert plain.status_code == 200 and calibrated.status_code == 200, calibrated.json
    assert calibrated.json["calibration"]["name"] == "mi300x" and "calibration" not in plain.json
    assert calibrated.json != plain.json
    plan = calibrated.json["plan"]
    assert plan is not None  # the plan's body reproduces it with the profile
    assert plan["estimate_request"]["calibration"] == "mi300x"
    again = client.post("/v1/estimates/inference", json=plan["estimate_request"])
    assert again.status_code == 200 and again.json["calibration"]["name"] == "mi300x"
    training = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "20B", "global_batch_size": 256, "sequence_length": 4096},
        "search": {"accelerators": [ACC]},
        "calibration": "mi300x",
    }
    refused = client.post("/v1/plans/training", json=training)
    assert refused.status_code == 422 and "calibration" in refused.json["errors"]


def test_a_training_profile_slows_the_training_planner_and_its_bodies_reproduce(client, editor_headers):
    h100 = "nvidia-h100-sxm-80gb"
    points = []
    for count in (8, 16):
        request = {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 256, "sequence_length": 4096},
            "hardware": {"accelerator": h100, "count": count, "parallelism": {"data": count}},
            "output": {"recommendations": False},
        }
        answer = client.post("/v1/estimates/training", json=request).json
        points.append(
            {"request": request, "measured": {"tokens_per_second": answer["time"]["tokens_per_second"] / 1.4}}
        )
    created = client.post(
        "/v1/calibrations",
        json={"name": "h100-train", "kind": "training", "points": points},
        headers=editor_headers,
    )
    assert created.status_code == 201, created.json
    assert created.json["stack"] == "cuda/megatron" and created.json["factors"]["compute"]["value"] < 1.0
    body = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "20B", "global_batch_size": 1024, "sequence_length": 4096},
        "search": {"accelerators": [h100], "device_counts": [8, 16]},
        "objective": "fastest",
    }
    plain = client.post("/v1/plans/training", json=body).json
    calibrated = client.post("/v1/plans/training", json={**body, "calibration": "h100-train"}).json
    assert calibrated["calibration"]["name"] == "h100-train"
    assert calibrated["best"]["seconds"] > plain["best"]["seconds"]
    again = client.post("/v1/estimates/training", json=calibrated["best"]["estimate_request"])
    assert again.status_code == 200 and again.json["time"]["seconds"] == pytest.approx(
        calibrated["best"]["seconds"]
    )


@pytest.mark.parametrize("fmt", ["csv", "vllm-benchmark-serving"])
def test_a_null_file_content_is_an_unreadable_file_not_a_schema_error(client, editor_headers, fmt):
    """The contract lets `content` be any JSON value (null too); what the format cannot read is refused by name
    (schemathesis' positive cases sent null and got 'Field may not be null')."""
    file = {"format": fmt, "request": _request(1), "content": None}
    response = client.post(
        "/v1/calibrations",
        json={"name": f"null-{fmt}", "kind": "inference", "files": [file]},
        headers=editor_headers,
    )
    assert response.status_code == 422, response.json
    assert "invalid-field" not in response.json["type"], response.json
    assert any(k.startswith("files.0") for k in response.json.get("errors", {})), response.json
