"""The planner's default degrees: what a count with an odd factor adds to the pipeline degrees."""

from __future__ import annotations

from scalecost.engine.training.search.space import (
    DEFAULT_PIPELINE,
    MAX_PIPELINE_FOR_ODD_COUNTS,
    pipeline_for_counts,
)


def test_a_power_of_two_count_adds_nothing():
    assert pipeline_for_counts((1024,), DEFAULT_PIPELINE) == DEFAULT_PIPELINE


def test_an_odd_factor_is_added_with_its_power_of_two_multiples_that_divide_the_count():
    # BLOOM's 384 = 3 × 128 GPUs (TP4 × PP12 × DP8)
    assert pipeline_for_counts((384,), (1, 2, 4)) == (1, 2, 3, 4, 6, 12, 24, 48)
    assert pipeline_for_counts((40,), (1, 2)) == (1, 2, 5, 10, 20, 40)  # 40 = 5 × 8: 80 does not divide it


def test_odd_factors_past_the_cap_are_not_pipeline_degrees():
    count = 67 * 8  # a prime factor above the cap: no pipeline takes it
    assert pipeline_for_counts((count,), DEFAULT_PIPELINE) == DEFAULT_PIPELINE
    assert all(d <= MAX_PIPELINE_FOR_ODD_COUNTS for d in pipeline_for_counts((3 * 1024,), DEFAULT_PIPELINE))


def test_count_auto_reaches_counts_whose_odd_factor_the_pipeline_takes(catalog):
    from scalecost.engine import estimate_training

    request = {
        "model": {"preset": "llama-2-70b"},
        "training": {"tokens": 1e11, "global_batch_size": 1024, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto", "parallelism": "auto"},
        "constraints": {"deadline": "P5D"},
        "output": {"recommendations": False},
    }
    answer = estimate_training(request, catalog)
    # 224 = 7 × 32 devices meet the deadline with a 14-stage pipeline; only powers of two were reachable before
    assert answer["assumptions"]["auto"]["chosen_count"] == 224
    assert answer["assumptions"]["parallelism"]["pipeline"] % 7 == 0
    assert answer["time"]["seconds"] <= 5 * 86400


def test_the_default_catalog_wide_search_of_the_largest_moe_preset_stays_within_the_grid_bound(catalog):
    from scalecost.engine import plan_training

    request = {
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 1e11, "global_batch_size": 512, "sequence_length": 4096},
        "constraints": {"deadline": "P30D"},
    }
    assert plan_training(request, catalog)["best"] is not None


def test_a_count_no_layout_can_split_is_named_as_such_not_as_out_of_memory(catalog):
    import pytest
    from scalecost.engine import InvalidRequest, estimate_training

    request = {
        "model": {"preset": "llama-2-70b"},
        "training": {"tokens": 1e9, "global_batch_size": 1024, "sequence_length": 4096},
        # 1,000 = 8 × 125: the odd factor 125 exceeds every pipeline degree, the data degree cannot take it
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1000, "parallelism": "auto"},
        "output": {"recommendations": False},
    }
    with pytest.raises(InvalidRequest) as err:
        estimate_training(request, catalog)
    message = " ".join(err.value.errors["hardware.parallelism"])
    assert message.startswith("No layout splits 1000 devices") and "memory" not in message
