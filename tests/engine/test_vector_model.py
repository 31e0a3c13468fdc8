"""The planner's vectorised model (engine/training/model/arrays.py) is the single estimate's model, not a second one: on
1,000 random valid configurations (every model kind, the whole catalog, every parallel degree, ZeRO stage,
recomputation, micro-batch, activation offload, hybrid sharding, expert tensor degrees, checkpointing and
validation) both agree to 1e-9 relative on memory, step time, total seconds, accelerator-hours, utilization and
fits."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scalecost.engine import InvalidRequest
from scalecost.engine.training.model.arrays import Layouts, evaluate_layouts
from scalecost.engine.training.model.evaluate import evaluate
from scalecost.engine.training.request import build_plan

MODELS = [
    {"preset": "llama-2-7b"},
    {"preset": "llama-2-70b"},
    {"preset": "mixtral-8x7b"},
    {"preset": "gpt-3-175b"},
    {"preset": "deepseek-v3"},
    {"preset": "resnet-50"},
    {"preset": "vit-l-16"},
    {"architecture": "transformer", "parameters": 1.3e9},
    {"architecture": "lstm", "parameters": 5e7},
    {"architecture": "cnn", "parameters": 2.5e7, "flops_per_sample": 4e9},
    {
        "architecture": "transformer",
        "layers": 24,
        "hidden_size": 2048,
        "attention_heads": 16,
        "vocab_size": 32000,
        "ffn_type": "gelu",
    },
]
DEGREES = [1, 1, 1, 2, 4, 8]


def _random_request(rng: random.Random, accelerators: list[str], fp4_parts: list[str]) -> dict:
    t, p, c, e = (
        rng.choice(DEGREES),
        rng.choice(DEGREES),
        rng.choice([1, 1, 1, 2, 4]),
        rng.choice([1, 1, 2, 4, 8]),
    )
    d = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 512])
    micro = rng.choice([1, 1, 2, 4, 8])
    training: dict = {
        "tokens": rng.choice([1e8, 2e9, 3e11]),
        "global_batch_size": d * micro * rng.choice([1, 2, 4, 16]),
        "sequence_length": rng.choice([512, 2048, 4096, 8192]),
        "micro_batch_size": micro,
        "activation_recomputation": rng.choice(["none", "selective", "selective_op", "full", "dots"]),
        "flash_attention": rng.random() < 0.8,
        "optimizer": rng.choice(["adamw", "adamw", "sgd-momentum", "adam-8bit"]),
        "samples": 1_281_167,
        "framework": rng.choice(["megatron", "megatron", "torchtitan", "llm-foundry", "pytorch"]),
        "torch_compile": rng.random() < 0.3,
    }
    if rng.random() < 0.3:
        training["checkpoint_interval_steps"] = rng.choice([10, 100, 1000])
        if rng.random() < 0.5:
            training["checkpoint_write_bandwidth_bytes_per_s"] = 5e9
    if rng.random() < 0.3:
        training["validation"] = {"interval_steps": 50, "tokens": 1e6}
    if rng.random() < 0.2:
        training["include_pretraining"] = True
    if rng.random() < 0.15:  # activation offload (422 for a shape-less model or too few layers per stage)
        training["activation_offload_layers"] = rng.choice([1, 2, 3, 8])
    if rng.random() < 0.15:  # the run's goodput given, or its interruption model changed
        training["goodput"] = rng.choice([0.8, 0.95])
    elif rng.random() < 0.2:
        training["interruptions_per_device_hour"] = rng.choice([0.0, 1e-4])
        training["restart_seconds"] = rng.choice([60.0, 3600.0])
    parallelism = {
        "data": d,
        "tensor": t,
        "pipeline": p,
        "context": c,
        "expert": e,
        "zero_stage": rng.choice([0, 1, 2, 3]),
        "sequence_parallel": t > 1 and rng.random() < 0.7,
        "virtual_pipeline": rng.choice([1, 2, 4]) if p > 1 else 1,
        "expert_overlap": e > 1 and rng.random() < 0.5,
        "pipeline_schedule": "zero_bubble" if p > 1 and rng.random() < 0.3 else "1f1b",
    }
    # the experts' own tensor degree (422 where it does not divide the ranks)
    if e > 1 and rng.random() < 0.4:
        parallelism["expert_tensor"] = rng.choice([1, 1, 2, 4])
    if d > 1 and rng.random() < 0.25:  # hybrid sharding (422 where the group does not divide data × context)
        parallelism["data_shard"] = rng.choice([c, 2 * c, 4 * c, 8 * c])
    accelerator = rng.choice(accelerators)
    precision = rng.choice([None, None, None, "fp8", "fp4"])  # None: the device's default (bf16, fp16, ...)
    if precision is not None:
        training["precision"] = precision
    if precision == "fp4":  # few parts have an fp4 peak: draw one of them
        accelerator = rng.choice(fp4_parts)
    return {
        "model": rng.choice(MODELS),
        "training": training,
        "hardware": {
            "accelerator": accelerator,
            "count": d * t * p * c,
            "parallelism": parallelism,
        },
    }


def _valid_plans(catalog, n: int, seed: int):
    rng = random.Random(seed)
    accelerators = sorted(catalog.accelerators)
    fp4_parts = [a for a in accelerators if catalog.accelerators[a].supports("fp4")]
    plans = []
    while len(plans) < n:
        request = _random_request(rng, accelerators, fp4_parts)
        if (
            request["model"].get("preset") in ("resnet-50", "vit-l-16")
            or request["model"].get("architecture") == "cnn"
        ):
            request["training"].pop("tokens")
        else:
            request["training"].pop("samples")
        try:
            plan = build_plan(request, catalog)
        except InvalidRequest:
            continue
        plans.append((request, plan))
    return plans


def _layout(plan) -> Layouts:
    par = plan.par
    values = (
        par.data,
        par.tensor,
        par.pipeline,
        par.context,
        par.expert,
        par.zero_stage,
        par.sequence_parallel,
        par.virtual_pipeline,
        plan.micro_batch,
        par.pipeline_schedule == "zero_bubble",
    )
    return Layouts(*(np.array([v], dtype=bool if isinstance(v, bool) else np.int64) for v in values))


def test_vector_model_agrees_with_single_estimate_on_1000_random_configurations(catalog) -> None:
    plans = _valid_plans(catalog, 1000, seed=20261201)
    drawn = {str(request["model"]) for request, _ in plans}
    assert len(drawn) == len(MODELS)  # every model kind drawn
    precisions = [plan.precision for _, plan in plans]
    assert precisions.count("fp4") >= 100 and precisions.count("fp8") >= 100  # low-precision training drawn
    assert sum(plan.par.pipeline_schedule == "zero_bubble" for _, plan in plans) >= 50  # ZB-H1 drawn
    assert sum(plan.offload_layers > 0 for _, plan in plans) >= 50  # activation offload drawn
    assert sum(plan.par.replicas > 1 for _, plan in plans) >= 50  # hybrid sharding drawn
    # expert layers with their own tensor degree (given, or folded to 1 by layout_request), under ZeRO-3 too
    own = [
        plan for _, plan in plans if plan.par.expert > 1 and plan.par.expert_tensor_ranks != plan.par.tensor
    ]
    assert len(own) >= 30 and sum(plan.par.zero_stage >= 3 for plan in own) >= 5
    worst = 0.0
    for request, plan in plans:
        ev = evaluate(plan)
        given_bw = request["training"].get("checkpoint_write_bandwidth_bytes_per_s")
        got = evaluate_layouts(plan, _layout(plan), given_bw)
        expected = {
            "memory_bytes": ev.memory.total,
            "step_s": ev.step.total_s,
            "seconds": ev.seconds,
            "utilization": ev.utilization,
            "accelerator_hours": ev.accelerator_hours(plan.par.devices),
            "compute_s": ev.compute_s,
            "communication_s": ev.communication_s,
            "bubble_s": ev.bubble_s,
        }
        for name, want in expected.items():
            have = float(getattr(got, name)[0])
            error = abs(have - want) / max(abs(want), 1e-300)
            worst = max(worst, error)
            assert have == pytest.approx(want, rel=1e-9, abs=1e-300), (name, request)
        assert bool(got.fits[0]) == ev.fits, request
    print(f"\nvector vs single estimate: 1000 configurations, worst relative difference {worst:.2e}")


def test_vector_model_evaluates_many_layouts_in_one_call(catalog) -> None:
    """One plan under many layouts in one call equals each layout's single estimate (no cross-talk between rows)."""
    base = {
        "model": {"preset": "llama-2-13b"},
        "training": {"tokens": 1e10, "global_batch_size": 512, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 64},
    }
    plans = []
    for t in (1, 2, 4, 8):
        for p in (1, 2, 4):
            for z in (0, 1, 3):
                for micro in (1, 2, 4):
                    body = {**base, "training": {**base["training"], "micro_batch_size": micro}}
                    par = {"tensor": t, "pipeline": p, "zero_stage": z, "sequence_parallel": t > 1}
                    body["hardware"] = {**base["hardware"], "parallelism": par}
                    plans.append(build_plan(body, catalog))
    together = Layouts(*(np.concatenate(cols) for cols in zip(*(_layout(p) for p in plans), strict=True)))
    bulk = evaluate_layouts(plans[0], together)
    for i, plan in enumerate(plans):
        assert float(bulk.seconds[i]) == pytest.approx(evaluate(plan).seconds, rel=1e-9)
        assert float(bulk.memory_bytes[i]) == pytest.approx(evaluate(plan).memory.total, rel=1e-9)


def test_vector_model_follows_the_inferred_stack_from_a_zero3_plan(catalog) -> None:
    """A request naming no stack takes fsdp under ZeRO-3 and megatron otherwise (framework.inferred_framework);
    the array model evaluated from a ZeRO-3 plan gives each layout its own stack, as the single estimate does."""
    from scalecost.engine.training.model.framework import elementwise_factor, loss_bytes_per_logit

    # the array model swaps only the attention kernel between the inferred stacks: the rest must agree
    assert elementwise_factor("fsdp", False) == elementwise_factor("megatron", False)
    assert loss_bytes_per_logit("fsdp", 2.0) == loss_bytes_per_logit("megatron", 2.0)
    base = {
        "model": {"preset": "llama-2-13b"},
        "training": {
            "tokens": 1e10,
            "global_batch_size": 512,
            "sequence_length": 4096,
            "micro_batch_size": 1,
        },
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 64},
    }
    plans = []
    for z in (3, 0, 1, 2):
        body = {**base, "hardware": {**base["hardware"], "parallelism": {"tensor": 2, "zero_stage": z}}}
        plans.append(build_plan(body, catalog))
    assert [p.framework for p in plans] == ["fsdp", "megatron", "megatron", "megatron"]
    together = Layouts(*(np.concatenate(cols) for cols in zip(*(_layout(p) for p in plans), strict=True)))
    bulk = evaluate_layouts(plans[0], together)
    for i, plan in enumerate(plans):
        assert float(bulk.seconds[i]) == pytest.approx(evaluate(plan).seconds, rel=1e-9)


def test_uneven_pipeline_stages_agree_between_the_models(catalog) -> None:
    """126 layers on 16 stages: the first stage takes 7 layers (it holds the embedding), so the busiest stage is the
    second, 8 layers × 15 micro-batches in flight, in the single estimate and in the array model alike."""
    from scalecost.engine.training.model import activations as mem

    plans = []
    for p, v in ((16, 1), (16, 8), (7, 1), (9, 2)):
        body = {
            "model": {"preset": "llama-3.1-405b"},
            "training": {
                "tokens": 1e10,
                "global_batch_size": 2048,
                "sequence_length": 8192,
                "micro_batch_size": 1,
            },
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 8 * p * 16,
                "parallelism": {"tensor": 8, "pipeline": p, "data": 16, "virtual_pipeline": v},
            },
        }
        plans.append(build_plan(body, catalog))
    together = Layouts(*(np.concatenate(cols) for cols in zip(*(_layout(p) for p in plans), strict=True)))
    bulk = evaluate_layouts(plans[0], together)
    for i, plan in enumerate(plans):
        assert float(bulk.memory_bytes[i]) == pytest.approx(evaluate(plan).memory.total, rel=1e-9)
    plan = plans[0]
    stored, working = mem.layer_activation_bytes(
        plan.model.shape, plan.par, plan.recompute, plan.flash_attention, 8192, 1,
        input_bytes=mem.saved_input_bytes(plan.precision), modules=plan.recompute_modules,
    )  # fmt: skip
    cuda = mem.activation_bytes_by_runtime(plan, 1, 128)[1]
    assert cuda == pytest.approx(max(15 * 8, 16 * 7) * stored + working)
