"""Prediction intervals with a calibration profile over HTTP (issue 31 §2 + §3): an estimate that names a profile
takes its intervals from the profile's residuals after the fit, names the profile, its revision and its points,
and a batch, a saved scenario and both planners carry the same ones. The expected factors are recomputed here from
the profile's stored residuals, ln(predicted / measured), with the sign turned by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scalecost.engine.accuracy import lookup
from scalecost.engine.accuracy.profile import PRIOR_POINTS

from tests.api.test_calibrations import ACC, _create, _points, _request
from tests.contract.strict_schema import StrictContract, committed_spec

LATENCY = ("time_to_first_token_s", "time_per_output_token_s")


def _expected(residuals: list[float], fitted: int, informed: int, prior_class: str) -> tuple[float, float]:
    """docs/formulas.md, "With a calibration profile", written out again: the profile's spread (empirical
    10/50/90 % widened for n, inflated √(N/(N−k))) pooled with the class's half-width as PRIOR_POINTS points."""
    _, row = lookup(prior_class)
    n = len(residuals)
    q10, median, q90 = np.quantile(residuals, (0.1, 0.5, 0.9))
    widen = _t90(n - 1) * math.sqrt(1 + 1 / n) / 1.2815515655446004
    inflate = math.sqrt(fitted / (fitted - informed))
    own_low, own_high = (median - q10) * widen * inflate, (q90 - median) * widen * inflate
    prior_half = math.log(row.p90_factor / row.p10_factor) / 2
    w = n / (n + PRIOR_POINTS)
    low = math.sqrt(w * own_low**2 + (1 - w) * prior_half**2)
    high = math.sqrt(w * own_high**2 + (1 - w) * prior_half**2)
    return math.exp(w * median - low), math.exp(w * median + high)


def _t90(dof: int) -> float:
    from scalecost.engine.accuracy.intervals import t90

    return t90(dof)


def test_a_profile_sets_the_intervals_and_names_itself_in_every_answer(
    client, editor_headers, viewer_headers
):
    created = _create(client, editor_headers, points=_points(client, (1, 4, 16, 64, 2))).json
    stored = client.get(f"/v1/calibrations/{created['id']}", headers=viewer_headers).json
    informed = sum(1 for f in stored["factors"].values() if f["informed"])
    request = {**_request(8), "calibration": "mi300x"}
    answer = client.post("/v1/estimates/inference", json=request).json
    plain = client.post("/v1/estimates/inference", json=_request(8)).json
    assert StrictContract(committed_spec()).errors("InferenceEstimate", answer) == []
    for metric in LATENCY:
        basis = answer["assumptions"]["intervals"][metric]
        assert basis["source"] == "profile" and basis["class"].startswith(f"inference/{metric}")
        assert basis["profile"] == {
            "id": created["id"],
            "name": "mi300x",
            "revision": 1,
            "points": 5,
            "prior_points": PRIOR_POINTS,
        }
        # the interval's convention is ln(measured / predicted): minus the stored ln(predicted / measured)
        own = [-r["log_ratio"] for r in stored["residuals"] if r["metric"] == metric]
        low, high = _expected(own, len(stored["residuals"]), informed, basis["class"])
        value, bounds = answer["latency"][metric], answer["intervals"]["latency"][metric]
        assert bounds["p10"] == pytest.approx(value * low, rel=1e-9)
        assert bounds["p90"] == pytest.approx(value * high, rel=1e-9)
        assert "source" not in plain["assumptions"]["intervals"][metric]
    # the answer moved by the profile is bracketed by its own interval, not by the default one's factors
    tpot = answer["intervals"]["latency"]["time_per_output_token_s"]
    plain_tpot = plain["intervals"]["latency"]["time_per_output_token_s"]
    assert tpot["p90"] / answer["latency"]["time_per_output_token_s"] != pytest.approx(
        plain_tpot["p90"] / plain["latency"]["time_per_output_token_s"]
    )
    _same_in_batch_scenario_and_planner(client, editor_headers, request, answer)


def _same_in_batch_scenario_and_planner(client, editor_headers, request: dict, answer: dict) -> None:
    batch = client.post("/v1/estimates/inference/batch", json={"items": [request]}).json
    batched = batch["results"][0]["estimate"]
    assert batched["intervals"] == answer["intervals"]
    assert batched["assumptions"]["intervals"] == answer["assumptions"]["intervals"]
    scenario = client.post(
        "/v1/scenarios", json={"name": "s", "kind": "inference", "request": request}, headers=editor_headers
    ).json
    assert scenario["estimate"]["assumptions"]["intervals"] == answer["assumptions"]["intervals"]
    again = client.get(f"/v1/scenarios/{scenario['id']}/estimate", headers=editor_headers).json
    assert again["current"]["intervals"] == answer["intervals"]
    body = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
        "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
        "search": {"accelerators": [ACC], "engines": ["vllm"], "devices_per_replica": [1]},
        "calibration": "mi300x",
    }
    plan = client.post("/v1/plans/inference", json=body).json["plan"]
    assert plan["interval_basis"]["time_per_output_token_s"]["source"] == "profile"
    reproduced = client.post("/v1/estimates/inference", json=plan["estimate_request"]).json
    assert plan["interval_basis"] == reproduced["assumptions"]["intervals"]


def test_a_metric_the_profile_did_not_measure_keeps_the_default_class_and_says_so(client, editor_headers):
    points = [
        {
            "request": p["request"],
            "measured": {"output_tokens_per_second": p["measured"]["output_tokens_per_second"]},
        }
        for p in _points(client, (1, 4, 16))
    ]
    assert _create(client, editor_headers, name="thr", points=points).status_code == 201
    answer = client.post("/v1/estimates/inference", json={**_request(8), "calibration": "thr"}).json
    plain = client.post("/v1/estimates/inference", json=_request(8)).json
    basis = answer["assumptions"]["intervals"]
    assert basis["output_tokens_per_second"]["source"] == "profile"
    assert basis["output_tokens_per_second"]["profile"]["points"] == 3
    ttft = basis["time_to_first_token_s"]
    assert (
        ttft["source"] == "defaults" and ttft["profile"]["points"] == 0 and ttft["profile"]["name"] == "thr"
    )
    said = [n for n in answer["notes"] if "fewer than 2 residuals" in n]
    assert said and "time_to_first_token_s" in said[0] and "output_tokens_per_second" not in said[0]
    spanish = client.post(
        "/v1/estimates/inference",
        json={**_request(8), "calibration": "thr"},
        headers={"Accept-Language": "es"},
    ).json
    assert any("menos de 2 residuos" in n for n in spanish["notes"])
    # the default class's factors, on the calibrated prediction
    value, bounds = answer["latency"]["time_to_first_token_s"], answer["intervals"]["latency"]
    plain_value, plain_bounds = plain["latency"]["time_to_first_token_s"], plain["intervals"]["latency"]
    for q in ("p10", "p90"):
        assert bounds["time_to_first_token_s"][q] / value == pytest.approx(
            plain_bounds["time_to_first_token_s"][q] / plain_value, rel=1e-9
        )


def test_a_training_profile_sets_the_time_and_cost_intervals_and_the_p90_planner(client, editor_headers):
    h100 = "nvidia-h100-sxm-80gb"
    points = []
    for count, slower in ((8, 1.3), (16, 1.5)):
        request = {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 256, "sequence_length": 4096},
            "hardware": {"accelerator": h100, "count": count, "parallelism": {"data": count}},
            "output": {"recommendations": False},
        }
        answer = client.post("/v1/estimates/training", json=request).json
        measured = {"tokens_per_second": answer["time"]["tokens_per_second"] / slower}
        points.append({"request": request, "measured": measured})
    created = client.post(
        "/v1/calibrations",
        json={"name": "h100-t", "kind": "training", "points": points},
        headers=editor_headers,
    )
    assert created.status_code == 201, created.json
    request = {**points[0]["request"], "calibration": "h100-t"}
    answer = client.post("/v1/estimates/training", json=request).json
    basis = answer["assumptions"]["intervals"]
    assert basis["source"] == "profile" and basis["profile"]["points"] == 2
    assert StrictContract(committed_spec()).errors("TrainingEstimate", answer) == []
    seconds, bounds = answer["time"]["seconds"], answer["intervals"]["time"]["seconds"]
    # 2 points: mostly the class's width (prior worth 8 points), never a zero-width interval
    _, row = lookup(basis["class"])
    assert bounds["p90"] / bounds["p10"] > (row.p90_factor / row.p10_factor) ** 0.8
    assert bounds["p10"] < seconds < bounds["p90"]
    plans = client.post(
        "/v1/plans/training",
        json={
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "20B", "global_batch_size": 1024, "sequence_length": 4096},
            "search": {"accelerators": [h100], "device_counts": [8, 16]},
            "objective": "cheapest_p90",
            "calibration": "h100-t",
        },
    ).json
    assert plans["best"]["interval_basis"]["profile"]["name"] == "h100-t"
    again = client.post("/v1/estimates/training", json=plans["best"]["estimate_request"]).json
    assert again["intervals"]["time"]["seconds"]["p90"] == pytest.approx(
        plans["best"]["intervals"]["time"]["seconds"]["p90"], rel=1e-9
    )
