"""Whole-run figures against published training runs (GPU-hours), with the error printed.

Touvron et al. 2023, "Llama 2", Table 2: pre-training on 2.0T tokens (4M-token batches, 4,096 context) on
A100-80GB took 184,320 (7B), 368,640 (13B) and 1,720,320 (70B) GPU-hours. Meta did not publish the parallel
layouts; the ones below are common Megatron-style choices. Our utilisation model is calibrated on
Megatron-LM and NeMo runs, which reach higher MFU than Meta's 2023 stack did at 7B/13B, so the small models
come out optimistic: the bounds below are the honest envelope of the current model, not a target."""

from __future__ import annotations

import statistics

import pytest
from scalecost.engine.training.estimate import estimate_training

from .reference_catalog import load_catalog

CATALOG = load_catalog()
LLAMA2 = [
    (
        "llama-2-7b",
        {"data": 128, "tensor": 2, "pipeline": 1, "zero_stage": 1, "sequence_parallel": True},
        184_320,
    ),
    (
        "llama-2-13b",
        {"data": 64, "tensor": 4, "pipeline": 1, "zero_stage": 1, "sequence_parallel": True},
        368_640,
    ),
    (
        "llama-2-70b",
        {"data": 64, "tensor": 8, "pipeline": 4, "zero_stage": 1, "sequence_parallel": True},
        1_720_320,
    ),
]


@pytest.mark.parametrize(("preset", "parallelism", "published_gpu_hours"), LLAMA2)
def test_llama2_pretraining_gpu_hours_within_30_percent(preset, parallelism, published_gpu_hours):
    devices = parallelism["data"] * parallelism["tensor"] * parallelism["pipeline"]
    estimate = estimate_training(
        {
            "model": {"preset": preset},
            "training": {"tokens": 2e12, "global_batch_size": 1024, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": devices, "parallelism": parallelism},
        },
        CATALOG,
    )
    hours = estimate["cost"]["accelerator_hours"]
    error = hours / published_gpu_hours - 1
    print(f"{preset}: {hours:,.0f} GPU-h vs published {published_gpu_hours:,} ({error:+.1%})")
    assert estimate["memory"]["fits"]
    assert abs(error) < 0.30


def test_complete_runs_accelerator_hours():
    """Every complete public run of tests/engine/data/public_training_runs.csv with its published (or stated
    assumed) layout: accelerator-hours incl. goodput vs published, printed per run
    (`pytest -s tests/engine/test_published_runs.py`). Issue 11's goal on the private set is ≤ 15 % median; these
    bounds keep the public figure from regressing and every run that really ran must fit."""
    from .public_points import RUNS_ADDED_LATER, evaluate_runs, run_summary, run_table

    outcomes = evaluate_runs(CATALOG)
    print("\n" + run_table(outcomes))
    # The error bounds were set on the first 17 runs and keep measuring those; runs added later
    # (public_points.RUNS_ADDED_LATER) are printed in the table and its all-runs summary, and must fit.
    first = [o for o in outcomes if o.label not in RUNS_ADDED_LATER]
    s = run_summary(first)
    assert s["runs"] >= 15
    assert s["not_fitting"] == 0
    # since the straggler share (goodput.STRAGGLER_SHARE): 23.5 % → 18.9 % median, 71 → 88 % within ±30 %; since the
    # attention re-fit and the two 2022 runs without FlashAttention (BLOOM, GPT-NeoX-20B): 17.7 %; with BLOOM on
    # Jean Zay's network (public_points.JEAN_ZAY_A100): 17.0 %; with the expected straggler share (0.104): 16.1 %;
    # Llama 3.1 405B as published (no activation checkpointing, ZeRO-2), fitting with the first stage a layer
    # short: 13.5 %; Pythia-1B with its published GPT-NeoX config (micro-batch 16, full recomputation): 13.3 %
    assert s["median_abs_error"] < 0.145
    assert s["within_30_percent"] >= 0.85
    # as the held-out check runs: the planner's layout ("auto") where none was published: 21.0 % → 18.7 % → 16.1 %
    # → 13.2 % (Pythia-1B's layout found published)
    auto = [abs(o.auto_error if o.auto_error is not None else o.error) for o in first if o.error is not None]
    assert statistics.median(auto) < 0.145
    every = run_summary(outcomes)
    assert every["not_fitting"] == 0
    # all 26: 27.1 % → 20.9 % → 19.2 % → 19.0 % → 16.9 % → 14.8 % (Pythia-1B's and SmolLM2-1.7B's configs published);
    # all 29 with MPT-7B, DeepSeek-V2 and DeepSeek 67B (per trillion tokens): 13.5 %; the H800 at the H100's GEMM
    # efficiency: 16.1 %; all 38 with the rest of the Pythia suite, SmolLM3-3B and Gopher (TPU v3), StarCoderBase at the
    # paper's 320,256 hours: 13.8 %; all 39 with Llama 2 34B: 14.2 %
    assert every["median_abs_error"] < 0.15
    every_auto = [
        abs(o.auto_error if o.auto_error is not None else o.error) for o in outcomes if o.error is not None
    ]
    assert (
        statistics.median(every_auto) < 0.15
    )  # 26 runs: 21.4 % → 17.4 %; 29 runs: 13.2 %; 38 runs: 13.7 %; 39 runs: 14.2 %
