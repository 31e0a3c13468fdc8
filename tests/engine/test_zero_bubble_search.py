"""The planners try the zero-bubble schedule next to 1F1B where the request's stack ships one (framework.py
ZERO_BUBBLE_CHUNKS: torchtitan with 2+ chunks per stage and without torch.compile, DeepSpeed with one chunk), and
never where it does not (Megatron-Core stacks, llm-foundry, plain PyTorch)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scalecost.engine import estimate_training, plan_training
from scalecost.engine.training.model.framework import zero_bubble_chunks
from scalecost.engine.training.request import build_plan
from scalecost.engine.training.search.space import default_space, enumerate_layouts

from .conftest import load_catalog

CATALOG = load_catalog()


def _request(framework: str | None, torch_compile: bool = False) -> dict:
    training: dict = {
        "tokens": 2e11,
        "global_batch_size": 512,
        "sequence_length": 4096,
        "torch_compile": torch_compile,
    }
    if framework is not None:
        training["framework"] = framework
    return {
        "model": {"preset": "llama-2-70b"},
        "training": training,
        "search": {
            "accelerators": ["nvidia-h100-sxm-80gb"],
            "device_counts": [256],
            "pipeline": [4, 8],
            "recomputation": ["selective"],
        },
        "objective": "fastest",
    }


def test_the_stacks_that_ship_a_zero_bubble_schedule() -> None:
    assert (
        zero_bubble_chunks("torchtitan", False)[0] == 2
    )  # InterleavedZeroBubble / ZBVZeroBubble: 2+ stages per rank
    assert zero_bubble_chunks("torchtitan", True) is None  # pytorch/pytorch#161904
    assert zero_bubble_chunks("deepspeed", False) == (1, 1)  # Megatron-DeepSpeed --enable-zbh1-pipeline
    for framework in ("megatron", "nemo", "megatron-bridge", "llm-foundry", "pytorch", "fsdp"):
        assert zero_bubble_chunks(framework, False) is None, framework


def _layouts(request: dict):
    body = {**request, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1}}
    body.pop("search"), body.pop("objective")
    plan = build_plan(body, CATALOG)
    return enumerate_layouts(plan, default_space(plan, 512))


def test_the_default_space_has_zero_bubble_rows_only_where_the_stack_runs_them() -> None:
    titan = _layouts(_request("torchtitan"))
    zb = titan.zero_bubble
    assert zb.any() and (titan.pipeline[zb] > 1).all() and (titan.virtual_pipeline[zb] >= 2).all()
    deepspeed = _layouts(_request("deepspeed"))
    assert deepspeed.zero_bubble.any() and (deepspeed.virtual_pipeline[deepspeed.zero_bubble] == 1).all()
    for framework in ("megatron", None):  # named, or inferred from the layout (megatron / fsdp)
        assert not _layouts(_request(framework)).zero_bubble.any()
    assert not _layouts(_request("torchtitan", torch_compile=True)).zero_bubble.any()
    # the 1F1B rows are the same with or without the zero-bubble ones (the answers of other stacks do not move)
    one = ~titan.zero_bubble
    megatron = _layouts(_request("megatron"))
    for name in ("data", "tensor", "pipeline", "virtual_pipeline", "micro_batch", "zero_stage"):
        assert np.array_equal(getattr(titan, name)[one], getattr(megatron, name)), name


def test_a_torchtitan_search_picks_zero_bubble_and_a_megatron_one_cannot() -> None:
    """torchtitan: the fastest pipelined layout runs ZB-H1 (its bubble a third of interleaved 1F1B's at the same
    memory), and the plan's estimate_request reproduces it through the single estimate (1e-9). Megatron: no plan names
    a schedule."""
    titan = plan_training(_request("torchtitan"), CATALOG)
    best = titan["best"]
    assert best["parallelism"]["pipeline_schedule"] == "zero_bubble"
    assert best["parallelism"]["virtual_pipeline"] >= 2
    assert best["estimate_request"]["hardware"]["parallelism"]["pipeline_schedule"] == "zero_bubble"
    single = estimate_training(copy.deepcopy(best["estimate_request"]), CATALOG)
    assert single["assumptions"]["parallelism"]["pipeline_schedule"] == "zero_bubble"
    assert single["time"]["seconds"] == pytest.approx(best["seconds"], rel=1e-9)
    assert single["memory"]["per_device_bytes"] == pytest.approx(best["memory_per_device_bytes"], rel=1e-9)
    megatron = plan_training(_request("megatron"), CATALOG)
    plans = megatron["results"] + megatron["frontier"]
    assert plans and all("pipeline_schedule" not in p["parallelism"] for p in plans)
    # the same 1F1B layouts, and torchtitan's zero-bubble ones beside them
    assert titan["search"]["layouts_evaluated"] > megatron["search"]["layouts_evaluated"]


def test_parallelism_auto_on_torchtitan_may_choose_zero_bubble() -> None:
    """hardware.parallelism "auto" searches the default space, zero bubble included for torchtitan: Llama 2 70B on 64
    A100s runs TP8 × PP2 × VP8 under ZB-H1 (megatron: the same layout under interleaved 1F1B), estimated with it."""
    body = {
        "model": {"preset": "llama-2-70b"},
        "training": {
            "tokens": 2e11,
            "global_batch_size": 512,
            "sequence_length": 4096,
            "framework": "torchtitan",
            "activation_recomputation": "selective",
        },
        "hardware": {"accelerator": "nvidia-a100-sxm-40gb", "count": 64, "parallelism": "auto"},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }
    answer = estimate_training(body, CATALOG)
    chosen = answer["assumptions"]["auto"]["chosen_parallelism"]
    used = answer["assumptions"]["parallelism"]
    assert chosen["pipeline_schedule"] == used["pipeline_schedule"] == "zero_bubble"
    megatron = copy.deepcopy(body)
    megatron["training"]["framework"] = "megatron"
    assert estimate_training(megatron, CATALOG)["assumptions"]["parallelism"]["pipeline_schedule"] == "1f1b"
