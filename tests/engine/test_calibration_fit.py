"""Calibration profiles, engine side: the fit recovers factors a synthetic cluster was built with, the prior keeps
two points from moving much and lets twenty move a lot, bounds clamp and say so, bad points are refused alone."""

from __future__ import annotations

import math

import pytest
from scalecost.engine import InvalidRequest
from scalecost.engine.calibration import Point, fit_profile, scaled_accelerator, scaled_catalog
from scalecost.engine.calibration.apply import estimate_calibrated
from scalecost.engine.calibration.fit import quiet, run
from scalecost.engine.calibration.metrics import predicted

ACC = "amd-mi300x"
TRUE = {"compute": 0.7, "memory_bandwidth": 0.6, "network": 1.0}


def _request(model: str, batch: int, prompt: int, count: int = 1) -> dict:
    return {
        "model": {"preset": model},
        "engine": "vllm",
        "batch_size": batch,
        "prompt_tokens": prompt,
        "output_tokens": 256,
        "hardware": {"accelerator": ACC, "count": count},
    }


def _points(catalog, factors=TRUE) -> list[Point]:
    """What a cluster whose achieved rates are `factors` × the defaults measures (the model run on the scaled part)."""
    truth = scaled_catalog(catalog, factors, (ACC,))
    out = []
    for model in ("llama-3-8b", "qwen3-8b"):
        for batch in (1, 4, 16, 64, 256):
            for prompt in (128, 2048):
                req = _request(model, batch, prompt)
                out.append(Point(req, predicted("inference", req, run("inference", quiet(req), truth))))
    return out


def _moved(profile, factor: str) -> float:
    """Share of the log-gap between the defaults and the truth that the fit closed."""
    return math.log(profile["factors"][factor]["value"]) / math.log(TRUE[factor])


def test_scaled_accelerator_scales_peaks_bandwidth_and_network_keeping_the_part(catalog):
    acc = catalog.accelerators["nvidia-h100-sxm-80gb"]
    scaled = scaled_accelerator(acc, {"compute": 0.5, "memory_bandwidth": 0.8, "network": 0.5})
    assert scaled.id == acc.id and scaled.vendor == acc.vendor
    assert scaled.peak("bf16") == pytest.approx(acc.peak("bf16") * 0.5)
    assert scaled.memory_bandwidth_bytes_per_s == pytest.approx(acc.memory_bandwidth_bytes_per_s * 0.8)
    assert scaled.interconnect_bandwidth_bytes_per_s == pytest.approx(
        acc.interconnect_bandwidth_bytes_per_s * 0.5
    )
    assert scaled.scale_out_bandwidth_bytes_per_s == pytest.approx(acc.scale_out_bandwidth_bytes_per_s * 0.5)


def test_twenty_points_recover_the_cluster_and_two_move_little(catalog):
    points = _points(catalog)
    few, many = fit_profile("inference", points[:2], catalog), fit_profile("inference", points, catalog)
    print("2 points:", {k: round(v["value"], 3) for k, v in few["factors"].items()}, few["fit"])
    print("20 points:", {k: round(v["value"], 3) for k, v in many["factors"].items()}, many["fit"])
    assert _moved(few, "memory_bandwidth") < 0.5
    assert _moved(many, "memory_bandwidth") > 0.75
    assert _moved(many, "compute") > 0.5
    assert (
        many["factors"]["memory_bandwidth"]["standard_deviation"]
        < few["factors"]["memory_bandwidth"]["standard_deviation"]
    )
    assert many["fit"]["median_abs_error_after"] < 0.5 * many["fit"]["median_abs_error_before"]
    for row in many["points"]:
        before = max(abs(e) for e in row["error_before"].values())
        after = max(abs(e) for e in row["error_after"].values())
        assert after < before
    assert len(many["residuals"]) == 60 and {"point", "metric", "log_ratio"} <= set(many["residuals"][0])


def test_network_on_single_device_points_stays_at_the_prior_and_is_reported(catalog):
    profile = fit_profile("inference", _points(catalog)[:6], catalog)
    network = profile["factors"]["network"]
    assert network["value"] == pytest.approx(1.0) and not network["informed"]
    assert network["log_standard_deviation"] == pytest.approx(0.15)
    assert any("network" in n for n in profile["notes"])


def test_a_factor_beyond_its_physical_bound_is_clamped_and_said(catalog):
    # a cluster twice as fast as the datasheet allows at the default MBU: the fit stops at the bound
    points = _points(catalog, {"compute": 1.0, "memory_bandwidth": 3.0, "network": 1.0})
    profile = fit_profile("inference", points, catalog)
    memory = profile["factors"]["memory_bandwidth"]
    assert memory["clamped"] and memory["value"] == pytest.approx(memory["high"])
    assert memory["high"] <= 2.0 and memory["unclamped_value"] > memory["high"]
    assert any("clamped" in n for n in profile["notes"])


def test_bad_points_are_refused_alone_and_the_rest_still_fit(catalog):
    points = _points(catalog)[:4]
    bad_request = Point({**points[0].request, "engine": "nope"}, points[0].measured)
    bad_value = Point(points[1].request, {"time_per_output_token_s": -1.0})
    other_part = Point(
        {**points[2].request, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1}},
        points[2].measured,
    )
    # the first point fitted sets the profile's accelerator and stack; a later point on another part is refused
    profile = fit_profile("inference", [bad_request, bad_value, points[3], other_part], catalog)
    status = [p["status"] for p in profile["points"]]
    assert status == ["refused", "refused", "fitted", "refused"]
    assert "points.0.request.engine" in profile["points"][0]["problems"]
    assert "points.1.measured" in profile["points"][1]["problems"]
    assert "points.3.request.hardware.accelerator" in profile["points"][3]["problems"]
    assert profile["fit"]["points_refused"] == 3


def test_no_valid_point_is_an_invalid_request(catalog):
    point = _points(catalog)[0]
    with pytest.raises(InvalidRequest) as err:
        fit_profile("inference", [Point(point.request, {"output_tokens_per_second": math.inf})], catalog)
    assert "points" in err.value.errors


def test_the_fit_stops_when_the_budget_checkpoint_says_so(catalog):
    calls = []

    def checkpoint() -> bool:
        calls.append(1)
        return len(calls) < 2

    profile = fit_profile("inference", _points(catalog), catalog, checkpoint=checkpoint)
    assert not profile["fit"]["complete"] and profile["fit"]["iterations"] <= 1
    assert any("budget" in n for n in profile["notes"])


def test_a_profile_applies_to_its_part_and_refuses_another(catalog):
    fitted = fit_profile("inference", _points(catalog), catalog)
    profile = {"id": 1, "name": "mi300x", "revision": 1, "kind": "inference", "apply_to": "same", **fitted}
    request = quiet(_request("llama-3-8b", 8, 512))
    answer = estimate_calibrated("inference", request, catalog, profile)
    assert answer["calibration"]["name"] == "mi300x" and answer["calibration"]["revision"] == 1
    plain = run("inference", request, catalog)
    assert answer["latency"]["time_per_output_token_s"] > plain["latency"]["time_per_output_token_s"]
    elsewhere = {**request, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1}}
    with pytest.raises(InvalidRequest) as err:
        estimate_calibrated("inference", elsewhere, catalog, profile)
    assert "calibration" in err.value.errors
    anywhere = estimate_calibrated("inference", elsewhere, catalog, {**profile, "apply_to": "any"})
    assert anywhere["calibration"]["apply_to"] == "any"


def test_training_points_across_nodes_inform_the_network(catalog):
    acc = "nvidia-h100-sxm-80gb"
    truth = scaled_catalog(catalog, {"compute": 0.85, "memory_bandwidth": 1.0, "network": 0.5}, (acc,))
    points = []
    for count in (16, 32, 64, 256):
        for tensor in (1, 8):
            layout = {"data": count // tensor, "tensor": tensor, "zero_stage": 3}
            run_ = {"tokens": 1e9, "global_batch_size": 512, "sequence_length": 4096, "framework": "megatron"}
            req = {
                "model": {"preset": "llama-2-70b"},
                "training": run_,
                "hardware": {"accelerator": acc, "count": count, "parallelism": layout},
            }
            seen = predicted("training", req, run("training", quiet(req), truth))
            points.append(Point(req, {"tokens_per_second": seen["tokens_per_second"]}))
    profile = fit_profile("training", points, catalog)
    print(
        profile["stack"],
        {k: (round(v["value"], 3), round(v["data_share"], 2)) for k, v in profile["factors"].items()},
    )
    assert profile["stack"] == "cuda/megatron" and profile["accelerator"] == acc
    assert profile["factors"]["compute"]["informed"] and profile["factors"]["network"]["informed"]
    assert (
        profile["factors"]["network"]["value"] < 0.95
    )  # toward the cluster's 0.5 (exposed ZeRO-3 and TP traffic)
    assert profile["factors"]["compute"]["high"] == pytest.approx(1 / 0.8)
    assert profile["factors"]["memory_bandwidth"]["high"] == 1.0
    assert profile["fit"]["median_abs_error_after"] < 0.5 * profile["fit"]["median_abs_error_before"]


def test_points_past_the_time_budget_are_refused_as_not_reached(catalog):
    profile = fit_profile("inference", _points(catalog), catalog, checkpoint=lambda: False)
    status = [p["status"] for p in profile["points"]]
    assert status[:16] == ["fitted"] * 16 and status[16:] == ["refused"] * 4
    assert "points.16" in profile["points"][16]["problems"]
    assert not profile["fit"]["complete"] and profile["fit"]["iterations"] == 0
    assert profile["factors"]["compute"]["value"] == pytest.approx(
        1.0
    )  # nothing moved: the defaults, said so
