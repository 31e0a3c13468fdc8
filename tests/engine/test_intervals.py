"""Prediction intervals on the estimates (engine/accuracy/intervals.py, engine/{training,inference}/intervals.py)."""

from __future__ import annotations

import math

import pytest
from scalecost.engine import estimate_inference, estimate_training
from scalecost.engine.accuracy.intervals import TABLE, interval_factors, t90

from .reference_catalog import load_catalog

CATALOG = load_catalog()


@pytest.mark.parametrize(("dof", "table"), [(3, 1.638), (5, 1.476), (10, 1.372), (30, 1.310), (120, 1.289)])
def test_t90_matches_the_printed_t_table(dof, table):
    """Student's t 0.90 quantiles as printed in any t table (e.g. NIST/SEMATECH e-Handbook, Table 1.3.6.7.2)."""
    assert t90(dof) == pytest.approx(table, rel=0.003)


def test_interval_factors_by_hand():
    """Eleven residuals -0.5 … 0.5: q10 -0.4, median 0, q90 0.4 (linear interpolation), widened by
    t(0.90, 10) · √(1 + 1/11) / z(0.90) = 1.3722 · 1.04447 / 1.28155 = 1.1184."""
    low, high = interval_factors([i / 10 for i in range(-5, 6)])
    assert low == pytest.approx(math.exp(-0.4 * 1.1184), rel=2e-3)
    assert high == pytest.approx(math.exp(0.4 * 1.1184), rel=2e-3)


def test_fewer_points_give_a_wider_interval_for_the_same_spread():
    few = interval_factors([-0.2, -0.1, 0.0, 0.1, 0.2] * 2)
    many = interval_factors([-0.2, -0.1, 0.0, 0.1, 0.2] * 20)
    assert few[0] < many[0] < 1.0 < many[1] < few[1]


def test_interval_factors_keep_a_bias_and_need_two_points():
    low, high = interval_factors([0.2, 0.25, 0.3, 0.35, 0.4, 0.3, 0.28, 0.33])
    assert 1.0 < low < high  # measured always above predicted: the interval does not contain the prediction
    with pytest.raises(ValueError):
        interval_factors([0.1])


def _training(accelerator: str = "nvidia-h100-sxm-80gb", **training) -> dict:
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 2e11, **training},
        "hardware": {"accelerator": accelerator, "count": 64},
        "cost": {"usd_per_accelerator_hour": 2.0},
        "output": {"recommendations": False},
    }
    return estimate_training(request, CATALOG)


def test_a_training_run_has_intervals_of_time_hours_and_cost():
    answer = _training()
    iv, basis = answer["intervals"], answer["assumptions"]["intervals"]
    assert basis["class"] == "training/time/complete_run/cuda"
    row = TABLE["training/time/complete_run/cuda"]
    assert basis["points"] == row.points
    seconds = answer["time"]["seconds"]
    assert iv["time"]["seconds"]["p10"] == pytest.approx(seconds * row.p10_factor)
    assert iv["time"]["seconds"]["p90"] == pytest.approx(seconds * row.p90_factor)
    hours = iv["cost"]["accelerator_hours"]
    assert hours["p90"] == pytest.approx(64 * iv["time"]["seconds"]["p90"] / 3600)
    usd = iv["cost"]["total_usd"]
    assert usd["p10"] < usd["p90"]
    # at a given price the cost is the billed hours × the price: the same multipliers but for the rounding of the
    # billed seconds to the offer's increment
    assert usd["p90"] / answer["cost"]["total_usd"] == pytest.approx(row.p90_factor, rel=1e-4)
    assert " – " in iv["human"]["time"] and iv["human"]["total"].startswith("$")


def test_steady_state_stepping_is_compared_with_benchmarks_and_jax_on_gpus_with_its_own_points():
    steady = _training(interruptions_per_device_hour=0, straggler_share=0)
    assert steady["assumptions"]["intervals"]["class"] == "training/time/benchmark/cuda"
    jax = _training(framework="maxtext", interruptions_per_device_hour=0, straggler_share=0)
    assert jax["assumptions"]["intervals"]["class"] == "training/time/benchmark/jax-gpu"
    gaudi = _training("intel-gaudi2", interruptions_per_device_hour=0, straggler_share=0)
    # Gaudi's five benchmark points are under the minimum: the parent answers
    assert gaudi["assumptions"]["intervals"]["class"] == "training/time/benchmark"


def test_no_price_no_cost_interval():
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "nvidia-h800-sxm-80gb", "count": 64},  # no catalog price
        "output": {"recommendations": False},
    }
    answer = estimate_training(request, CATALOG)
    assert answer["cost"]["total_usd"] is None
    assert answer["intervals"]["cost"]["total_usd"] is None and answer["intervals"]["human"]["total"] is None
    assert answer["intervals"]["cost"]["accelerator_hours"]["p90"] > answer["cost"]["accelerator_hours"]


def test_a_plan_that_does_not_fit_has_no_intervals():
    answer = estimate_training(
        {
            "model": {"preset": "llama-3.1-405b"},
            "training": {"tokens": 2e11},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "parallelism": {"data": 8}},
            "output": {"recommendations": False},
        },
        CATALOG,
    )
    assert not answer["memory"]["fits"]
    assert answer["intervals"] is None and answer["assumptions"]["intervals"] is None


def _serving(accelerator: str, **extra) -> dict:
    request = {
        "model": {"preset": "llama-3.1-70b"},
        "weights": {"precision": "fp8"},
        "hardware": {"accelerator": accelerator, "count": 8},
        "output": {"suggestions": False, "recommendations": False},
        **extra,
    }
    return estimate_inference(request, CATALOG)


def test_a_serving_estimate_has_intervals_per_metric_and_the_cost_follows_the_throughput():
    answer = _serving("amd-mi300x", cost={"usd_per_accelerator_hour": 3.0})
    iv, basis = answer["intervals"], answer["assumptions"]["intervals"]
    assert basis["output_tokens_per_second"]["class"] == "inference/output_tokens_per_second/rocm"
    thr = answer["throughput"]["output_tokens_per_second"]
    bounds = iv["throughput"]["output_tokens_per_second"]
    assert bounds["p10"] < thr < bounds["p90"]
    usd = answer["cost"]["usd_per_million_output_tokens"]
    per_million = iv["cost"]["usd_per_million_output_tokens"]
    assert per_million["p10"] == pytest.approx(
        usd * thr / bounds["p90"]
    )  # dearer when slower: the bounds swap
    assert per_million["p90"] == pytest.approx(usd * thr / bounds["p10"])
    ttft = iv["latency"]["time_to_first_token_s"]
    assert ttft["p10"] < answer["latency"]["time_to_first_token_s"] < ttft["p90"]


def test_a_saturated_rate_has_no_intervals():
    answer = _serving("nvidia-h100-sxm-80gb", workload={"requests_per_second": 1e5})
    assert answer["load"]["saturated"]
    assert answer["intervals"] is None and answer["assumptions"]["intervals"] is None


def test_a_given_utilization_has_no_interval_from_the_engines_errors():
    """The residuals measure the engine's predicted utilization; a figure the request gives is the client's own."""
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 64, "utilization": 0.4},
        "output": {"recommendations": False},
    }
    given = estimate_training(request, CATALOG)
    assert given["time"]["utilization_source"] == "given"
    assert given["intervals"] is None and given["assumptions"]["intervals"] is None
