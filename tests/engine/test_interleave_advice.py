"""The interleaving advice (training/interleave.py; docs/formulas.md, "Interleaving advice"): offered for a
Megatron-class pipeline of one chunk per stage when a verified change to `virtual_pipeline` saves time and fits;
never for stacks without Megatron-Core's interleaved schedule, nor where the request already interleaves."""

from __future__ import annotations

from typing import Any

import pytest
from scalecost.engine.hardware import Catalog
from scalecost.engine.patch import merge_patch
from scalecost.engine.training.advice.interleave import MIN_SAVING_SHARE, chunk_candidates
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.request import build_plan


def _request(**parallelism: Any) -> dict:
    return {
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 1e11, "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 64,
            "parallelism": {
                "tensor": 8,
                "pipeline": 8,
                "sequence_parallel": True,
                "zero_stage": 1,
                **parallelism,
            },
        },
    }


def _advice(request: dict, catalog: Catalog) -> dict | None:
    out = estimate_training(request, catalog)
    return next((r for r in out["recommendations"] if r["code"] == "interleave_pipeline"), None)


def test_a_pipeline_with_a_bubble_gets_the_fastest_interleaving_that_fits(catalog: Catalog) -> None:
    request = _request()
    before = estimate_training(request, catalog)
    advice = _advice(request, catalog)
    assert advice is not None and advice["severity"] == "info"
    v = advice["change"]["hardware"]["parallelism"]["virtual_pipeline"]
    assert v in chunk_candidates(build_plan(request, catalog))
    after = estimate_training(merge_patch(request, advice["change"]), catalog)
    assert after["memory"]["fits"]
    assert after["time"]["seconds"] < before["time"]["seconds"] * (1 - MIN_SAVING_SHARE)
    bubble = after["assumptions"]["efficiency"]["pipeline_bubble_fraction"]
    assert bubble < before["assumptions"]["efficiency"]["pipeline_bubble_fraction"]
    for other in chunk_candidates(build_plan(request, catalog)):  # no other candidate is faster and fits
        alt = estimate_training(
            merge_patch(request, {"hardware": {"parallelism": {"virtual_pipeline": other}}}), catalog
        )
        assert not alt["memory"]["fits"] or alt["time"]["seconds"] >= after["time"]["seconds"]
    assert "8" in advice["message"] or str(v) in advice["message"]


@pytest.mark.parametrize(
    "change",
    [
        {"training": {"framework": "deepspeed"}},  # DeepSpeed's pipeline engine has no interleaved schedule
        {"training": {"framework": "torchtitan"}},
        {"hardware": {"parallelism": {"virtual_pipeline": 2}}},  # already interleaved
        {"hardware": {"parallelism": {"pipeline_schedule": "zero_bubble"}}},
        {"hardware": {"parallelism": {"pipeline": 1, "tensor": 8, "data": 8}}},  # no pipeline, no bubble
    ],
)
def test_no_interleaving_advice_where_it_does_not_apply(change: dict, catalog: Catalog) -> None:
    assert _advice(merge_patch(_request(), change), catalog) is None


def test_no_interleaving_advice_for_a_run_that_does_not_fit(catalog: Catalog) -> None:
    request = merge_patch(_request(), {"training": {"micro_batch_size": 16, "global_batch_size": 128}})
    assert not estimate_training(request, catalog)["memory"]["fits"]
    assert _advice(request, catalog) is None


def test_chunks_never_exceed_the_layers(catalog: Catalog) -> None:
    """Llama 3 70B has 80 layers: PP16 allows 2 and 4 chunks (64 ≤ 82), not 8 (128 > 82)."""
    plan = build_plan(_request(pipeline=16, tensor=4), catalog)
    assert chunk_candidates(plan) == (2, 4)


def test_interleaving_with_fewer_micro_batches_than_stages_keeps_most_of_the_bubble() -> None:
    """m < p: micro-batch i enters chunk slot j at time i + j; a device works m·v of the v·p + m − 1 slots."""
    from scalecost.engine.parallelism import pipeline_bubble_fraction

    assert pipeline_bubble_fraction(8, 4, 8) == pytest.approx(35 / 67)  # (8·4 + 3)/(64 + 3), not 7/39
    assert pipeline_bubble_fraction(8, 4, 1) == pytest.approx(7 / 11)  # plain 1F1B
    for v in (2, 4, 8):  # the two forms meet at m = p
        at_p = pipeline_bubble_fraction(8, 8, v)
        assert at_p == pytest.approx(7 / (8 * v + 7))
        assert pipeline_bubble_fraction(8, 7, v) > at_p


@pytest.mark.parametrize("batch", [4, 12])  # 4 micro-batches on 8 stages; 12, not a multiple of 8
def test_no_interleaving_advice_when_megatron_could_not_run_it(batch: int, catalog: Catalog) -> None:
    """Megatron-Core's interleaved schedule needs the micro-batches in groups of one per stage."""
    request = merge_patch(
        _request(data=1, tensor=8, pipeline=8),
        {"training": {"global_batch_size": batch, "micro_batch_size": 1}, "hardware": {"count": 64}},
    )
    assert _advice(request, catalog) is None


@pytest.mark.parametrize(
    "hardware",
    [
        {"count": "auto", "parallelism": {"tensor": 8, "pipeline": 8, "sequence_parallel": True}},
        {"count": 64, "parallelism": "auto"},
    ],
)
def test_no_interleaving_advice_on_a_planned_answer(hardware: dict, catalog: Catalog) -> None:
    """The planner searched the chunks already, and re-chooses the count when a change is applied."""
    request = merge_patch(_request(), {"hardware": hardware, "constraints": {"deadline": "P60D"}})
    if hardware["count"] != "auto":
        request.pop("constraints")
    out = estimate_training(request, catalog)
    assert all(r["code"] != "interleave_pipeline" for r in out["recommendations"])


@pytest.mark.parametrize("chunks", [2, 4, 8])
def test_the_advices_plan_is_the_changed_request_parsed(chunks: int, catalog: Catalog) -> None:
    """interleave.interleaved skips the re-parse: it must build exactly what the changed request validates to."""
    from scalecost.engine.training.advice.interleave import interleaved

    request = _request()
    change = {"hardware": {"parallelism": {"virtual_pipeline": chunks}}}
    assert interleaved(build_plan(request, catalog), chunks) == build_plan(
        merge_patch(request, change), catalog
    )
