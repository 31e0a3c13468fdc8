"""Run-level goodput (service/engine/training/model/goodput.py): interruptions, restarts, lost work, Young/Daly checkpoints.

Defaults come from Llama 3 (Dubey et al. 2024 §3.3.4): 466 interruptions in 54 days on 16,384 H100s with "more than
90 % effective training time". The model must reproduce that at Llama 3's scale and leave an 8-GPU fine-tune almost
untouched."""

from __future__ import annotations

import math

import pytest
from scalecost.engine import InvalidRequest, estimate_training
from scalecost.engine.hardware import Catalog
from scalecost.engine.training.model.goodput import (
    INTERRUPTIONS_PER_DEVICE_HOUR,
    RESTART_S,
    STRAGGLER_SHARE,
    goodput,
    optimal_interval_s,
    straggler_share,
)


def _llama3_405b(**training) -> dict:
    return {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "sequence_length": 8192, "global_batch_size": 2048,
                     "activation_recomputation": "full", **training},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16384,
                     "parallelism": {"data": 128, "tensor": 8, "pipeline": 16, "virtual_pipeline": 7,
                                     "zero_stage": 1, "sequence_parallel": True}},
        "cost": {"usd_per_accelerator_hour": 2.0},
        "output": {"recommendations": False},
    }  # fmt: skip


def test_default_rate_is_llama3s():
    assert INTERRUPTIONS_PER_DEVICE_HOUR == pytest.approx(466 / (54 * 24 * 16384))
    assert RESTART_S <= 0.1 * 54 * 24 * 3600 / 466  # within Llama 3's ">90 % effective training time" bound


def test_llama3_scale_goodput_near_90_percent(catalog: Catalog):
    out = estimate_training(_llama3_405b(), catalog)
    time = out["time"]
    assert 0.88 <= time["goodput"] <= 0.93
    # about one interruption every three hours (Meta: "one failure every three hours" on 16K GPUs)
    hours = time["seconds"] / 3600
    assert time["interruptions"] / hours == pytest.approx(16384 * INTERRUPTIONS_PER_DEVICE_HOUR, rel=1e-9)
    assert sum(time["breakdown"].values()) == pytest.approx(time["seconds"], rel=1e-12)
    g = out["assumptions"]["goodput"]
    assert g["checkpoint_interval_source"] == "Young/Daly optimum"
    assert g["checkpoint_interval_steps"] == g["optimal_checkpoint_interval_steps"] >= 1


def test_small_finetune_almost_untouched(catalog: Catalog):
    out = estimate_training(
        {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "parallelism": {"zero_stage": 1}},
        },
        catalog,
    )
    assert out["time"]["goodput"] > 0.995
    assert out["time"]["interruptions"] < 0.1


def test_given_goodput_sets_the_wall_time(catalog: Catalog):
    free = estimate_training(_llama3_405b(interruptions_per_device_hour=0), catalog)["time"]
    given = estimate_training(_llama3_405b(goodput=0.8), catalog)
    assert free["goodput"] == 1.0 and free["breakdown"]["interruptions_s"] == 0.0
    assert given["time"]["seconds"] == pytest.approx(free["seconds"] / 0.8, rel=1e-9)
    assert given["assumptions"]["goodput"]["source"] == "given"


def test_restart_time_and_rate_are_requests_fields(catalog: Catalog):
    base = estimate_training(_llama3_405b(), catalog)["time"]
    slow = estimate_training(_llama3_405b(restart_seconds=3600), catalog)["time"]
    rare = estimate_training(_llama3_405b(interruptions_per_device_hour=2e-6), catalog)["time"]
    assert slow["goodput"] < base["goodput"] < rare["goodput"]


def test_young_daly_interval():
    write_s, rate = 60.0, 1 / 10800  # one interruption every 3 h
    assert optimal_interval_s(write_s, rate) == pytest.approx(math.sqrt(2 * 60 * 10800))
    assert math.isinf(optimal_interval_s(write_s, 0.0))

    # the optimum (in steps) is never worse than half or twice it
    def wall(interval):
        return goodput(
            1e6, 10.0, 100_000, 1000, write_s, interval, 1 / 10800 / 1000 * 3600, 600.0, None, stragglers=0.0
        )

    opt = wall(None)
    assert opt.checkpoint_interval == round(math.sqrt(2 * 60 * 10800) / 10.0)
    for k in (opt.checkpoint_interval // 2, opt.checkpoint_interval * 2):
        other = wall(k)
        assert other.fraction < opt.fraction
    # with stragglers a step takes longer as it runs, so the optimum holds fewer of them
    slowed = goodput(1e6, 10.0, 100_000, 1000, write_s, None, 1 / 10800 / 1000 * 3600, 600.0, None, 0.2)
    assert slowed.checkpoint_interval == round(math.sqrt(2 * 60 * 10800) / (10.0 / 0.8))


def test_far_from_optimal_interval_is_advised(catalog: Catalog):
    request = _llama3_405b(checkpoint_interval_steps=2000)
    request["output"] = {"recommendations": True}
    out = estimate_training(request, catalog)
    codes = [r["code"] for r in out["recommendations"]]
    assert "checkpoint_interval" in codes
    rec = next(r for r in out["recommendations"] if r["code"] == "checkpoint_interval")
    assert (
        rec["change"]["training"]["checkpoint_interval_steps"]
        == (out["assumptions"]["goodput"]["optimal_checkpoint_interval_steps"])
    )


def test_straggler_share_grows_with_the_job_to_the_measured_expectation():
    # Lin et al. (OSDI 2025): 10.4 % of the GPU-hours of jobs of ≥ 128 GPUs lost to stragglers (median job 7.8 %)
    assert straggler_share(1) == 0.0
    assert straggler_share(8) == pytest.approx(STRAGGLER_SHARE * math.log(8) / math.log(128))
    assert straggler_share(128) == pytest.approx(0.104)
    assert straggler_share(16384) == straggler_share(128)  # not extrapolated past the study's jobs
    shares = [straggler_share(n) for n in (2, 8, 64, 128)]
    assert shares == sorted(shares) and len(set(shares)) == 4


def test_stragglers_lengthen_the_run_not_the_benchmark_throughput(catalog: Catalog):
    slow = estimate_training(_llama3_405b(), catalog)
    none = estimate_training(_llama3_405b(straggler_share=0), catalog)
    assert none["time"]["breakdown"]["stragglers_s"] == 0.0
    stepping = sum(
        slow["time"]["breakdown"][k]
        for k in ("compute_s", "pipeline_bubble_s", "communication_s", "validation_s")
    )
    # the steps wait 10.4 % of their running time on 16,384 GPUs
    assert slow["time"]["breakdown"]["stragglers_s"] == pytest.approx(stepping * 0.104 / (1 - 0.104))
    assert slow["time"]["seconds"] > none["time"]["seconds"] * 1.07
    assert slow["time"]["tokens_per_second"] == pytest.approx(none["time"]["tokens_per_second"], rel=2e-3)
    g = slow["assumptions"]["goodput"]
    assert g["straggler_share"] == pytest.approx(0.104) and "OSDI 2025" in g["straggler_source"]
    given = estimate_training(_llama3_405b(straggler_share=0.2), catalog)
    assert given["assumptions"]["goodput"]["straggler_share"] == 0.2
    assert given["assumptions"]["goodput"]["straggler_source"] == "given"
    # slowed steps still count as training time (an effective-training-time ratio), so goodput barely moves
    assert given["time"]["goodput"] == pytest.approx(none["time"]["goodput"], abs=0.03)


def test_a_straggler_share_past_half_is_refused(catalog: Catalog):
    with pytest.raises(InvalidRequest) as err:
        estimate_training(_llama3_405b(straggler_share=0.6), catalog)
    assert "training.straggler_share" in err.value.errors
