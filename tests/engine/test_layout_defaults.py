"""Defaults of a published layout given without its ZeRO stage or sequence parallelism (layout_request): what large
runs and their recipes do, so that a layout that really ran is not "does not fit" for a field its authors left out."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest, estimate_training

from .conftest import load_catalog
from .public_points import throughput_request, throughput_rows

CATALOG = load_catalog()


def _llama405b(parallelism: dict) -> dict:
    # Llama 3.1 405B as Meta published its 8K stage (Llama 3 paper Table 4): TP8 CP1 PP16 DP128, 16M-token batches
    return {
        "model": {"preset": "llama-3.1-405b"},
        "training": {
            "tokens": 1e12,
            "sequence_length": 8192,
            "global_batch_size": 2048,
            "micro_batch_size": 1,
        },
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16384, "parallelism": parallelism},
        "output": {"recommendations": False},
    }


def test_tensor_parallelism_brings_sequence_parallelism_and_data_ranks_shard_the_optimizer():
    out = estimate_training(_llama405b({"tensor": 8, "pipeline": 16, "data": 128}), CATALOG)
    par = out["assumptions"]["parallelism"]
    assert par["sequence_parallel"] is True and par["zero_stage"] == 1
    # 238.5 GiB with the old defaults (no sequence parallelism, Adam states replicated); 81.3 GiB with these but 8
    # layers on every stage; 77.1 GiB with the first stage one layer short (126 layers on 16 stages, as Meta ran)
    assert out["memory"]["fits"]
    # Meta's FSDP also sharded the gradients (zero_stage 2)
    meta = estimate_training(_llama405b({"tensor": 8, "pipeline": 16, "data": 128, "zero_stage": 2}), CATALOG)
    assert meta["memory"]["fits"] and meta["assumptions"]["parallelism"]["sequence_parallel"] is True


@pytest.mark.parametrize(
    ("given", "zero", "sequence_parallel"),
    [
        ({"tensor": 8, "pipeline": 16, "data": 128, "zero_stage": 0, "sequence_parallel": False}, 0, False),
        ({"tensor": 8, "pipeline": 16, "data": 128, "zero_stage": 3}, 3, True),
        ({"tensor": 1, "pipeline": 16, "data": 1024}, 1, False),
    ],
)
def test_a_given_stage_or_switch_is_kept(given: dict, zero: int, sequence_parallel: bool):
    par = estimate_training(_llama405b(given), CATALOG)["assumptions"]["parallelism"]
    assert (par["zero_stage"], par["sequence_parallel"]) == (zero, sequence_parallel)


def test_one_data_rank_has_nothing_to_shard():
    body = _llama405b({"tensor": 8, "pipeline": 16, "data": 1})
    body["hardware"]["count"] = 128
    body["training"]["global_batch_size"] = 16
    assert estimate_training(body, CATALOG)["assumptions"]["parallelism"]["zero_stage"] == 0


def test_public_layouts_without_the_unpublished_fields_fit_as_with_them():
    """Every public throughput row whose layout fits as the harness states it (zero_stage 1 where the row gives
    none, sequence parallelism with tensor parallelism) still fits when the request leaves both fields out, as a
    client sending only the published degrees does (66 of 179 rows did not with the old defaults)."""
    moved = []
    for row in throughput_rows():
        stated = throughput_request(row)
        bare = throughput_request(row)
        bare["hardware"]["parallelism"].pop("sequence_parallel")
        if not row.get("zero_stage"):
            bare["hardware"]["parallelism"].pop("zero_stage")
        if stated == bare:
            continue
        a, b = estimate_training(stated, CATALOG), estimate_training(bare, CATALOG)
        if a["memory"]["fits"] != b["memory"]["fits"]:
            moved.append(row["label"])
    assert moved == []


def test_a_planned_count_keeps_the_layout_defaults():
    """hardware.count "auto" with a given layout that omits both fields: the search and the answer use the same
    defaults as a given count (the search used to run ZeRO-0 and the answer sequence parallelism off)."""
    body = _llama405b({"tensor": 8, "pipeline": 16})
    body["hardware"]["count"] = "auto"
    body["training"].pop("micro_batch_size")
    body["training"]["global_batch_size"] = 1024
    body["constraints"] = {"deadline": "P60D"}
    out = estimate_training(body, CATALOG)
    par = out["assumptions"]["parallelism"]
    assert (par["zero_stage"], par["sequence_parallel"]) == (1, True)
    assert out["memory"]["fits"]


def test_a_planned_count_searches_with_sequence_parallelism_off_when_the_layout_says_so():
    """The search used to assume sequence parallelism on with tensor parallelism whatever the layout said: for
    Meta's 405B layout with the switch off it chose a count that fits only with it on, and answered "does not
    fit". Searched as asked, no count fits with selective recompute (a 422 naming hardware.count), and with full
    recompute the count it chooses fits with the switch off."""
    body = _llama405b({"tensor": 8, "pipeline": 16, "sequence_parallel": False})
    body["hardware"]["count"] = "auto"
    body["training"].pop("micro_batch_size")
    body["training"]["global_batch_size"] = 1024
    body["constraints"] = {"deadline": "P60D"}
    with pytest.raises(InvalidRequest) as refused:
        estimate_training(body, CATALOG)
    assert set(refused.value.errors) == {"hardware.count"}
    body["training"]["activation_recomputation"] = "full"
    out = estimate_training(body, CATALOG)
    assert out["assumptions"]["parallelism"]["sequence_parallel"] is False
    assert out["memory"]["fits"] and out["time"]["seconds"] <= 60 * 86400
