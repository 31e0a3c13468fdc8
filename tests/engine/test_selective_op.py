"""training.activation_recomputation "selective_op": torchtitan's op-level selective activation checkpointing.

Kept per layer (torchtitan parallelize_llama.py `_save_list` @9dec370): the block input, the outputs of the 1st, 3rd,
5th and 7th matmuls (Q, V, gate, down under SwiGLU), the SDPA output and its log-sum-exp; the 2nd, 4th and 6th
matmuls (K, O, up) run their forward again in backward."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest
from scalecost.engine.hardware import Catalog
from scalecost.engine.models import PRESETS
from scalecost.engine.parallelism import Parallelism
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.model.activations import layer_activation_bytes, op_sac_recomputed_share
from scalecost.engine.training.model.evaluate import evaluate
from scalecost.engine.training.model.flops import recompute_collectives, recompute_gemm_factor
from scalecost.engine.training.model.plan import RECOMPUTATION
from scalecost.engine.training.request import build_plan

LLAMA3_8B = PRESETS["llama-3-8b"].shape
assert LLAMA3_8B is not None
H, A, G, D, F = 4096, 32, 8, 128, 14336  # Llama 3 8B (config.json of meta-llama/Meta-Llama-3-8B)


def _request(recompute: str, **parallelism: object) -> dict:
    """torchtitan's Table 1 'FSDP' run: Llama 3.1 8B, 8 GPUs, local batch 2 x 8192 (llama3_h100_202412)."""
    return {
        "model": {"preset": "llama-3-8b"},
        "training": {
            "tokens": 1e12,
            "sequence_length": 8192,
            "global_batch_size": 16,
            "micro_batch_size": 2,
            "precision": "bf16",
            "activation_recomputation": recompute,
        },
        "hardware": {
            "accelerator": "nvidia-h100-96gb-hbm2e",
            "count": 8,
            "parallelism": {"data": 8, "zero_stage": 3, **parallelism},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
    }


def test_kept_bytes_per_token_by_hand() -> None:
    # 2h input + 2·a·d Q + 2·g·d V + 2·a·d attention out + 4·a log-sum-exp + 2f gate + 2h down = 63,616 B per token
    stored, working = layer_activation_bytes(LLAMA3_8B, Parallelism(), "selective_op", True, 8192, 2)
    per_token = 2 * H + 2 * A * D + 2 * G * D + 2 * A * D + 4 * A + 2 * F + 2 * H
    assert stored == pytest.approx(per_token * 8192 * 2)
    selective, _ = layer_activation_bytes(LLAMA3_8B, Parallelism(), "selective", True, 8192, 2)
    assert working == pytest.approx(selective)  # one layer rebuilt at a time during backward
    assert stored / selective == pytest.approx(63616 / (34 * H), rel=1e-3)  # 15.5 vs 34 bytes per s·b·h


def test_tensor_and_sequence_parallel_split() -> None:
    # t = 8 with sequence parallelism: the down projection's partial sums stay whole (2h), the block input and the
    # two reduce-scatter outputs split by t, the rest split by t
    t = 8
    stored, _ = layer_activation_bytes(
        LLAMA3_8B, Parallelism(tensor=t, sequence_parallel=True), "selective_op", True, 8192, 1
    )
    expected = 2 * H + (2 * H + 4 * H) / t + (2 * A * D + 2 * G * D + 2 * A * D + 4 * A + 2 * F) / t
    assert stored == pytest.approx(expected * 8192)
    no_sp, _ = layer_activation_bytes(LLAMA3_8B, Parallelism(tensor=t), "selective_op", True, 8192, 1)
    assert no_sp == pytest.approx(
        (2 * H + 2 * H + (2 * A * D + 2 * G * D + 2 * A * D + 4 * A + 2 * F) / t) * 8192
    )


def test_recomputed_forward_flops_share() -> None:
    # K (h·g·d), O (a·d·h) and up (h·f) per layer over all matmul weights per token (layers + LM head h·V)
    layer = H * G * D + A * D * H + H * F
    every = 32 * (H * A * D * 2 + 2 * H * G * D + 3 * H * F) + H * 128256
    assert op_sac_recomputed_share(LLAMA3_8B) == pytest.approx(32 * layer / every, rel=1e-3)
    assert 0.3 < op_sac_recomputed_share(LLAMA3_8B) < 0.4


def test_between_selective_and_full_in_memory_and_time(catalog: Catalog) -> None:
    answers = {r: estimate_training(_request(r), catalog) for r in ("selective", "selective_op", "full")}
    memory = {r: a["memory"]["per_device_bytes"] for r, a in answers.items()}
    step = {r: a["time"]["seconds"] for r, a in answers.items()}
    assert memory["full"] < memory["selective_op"] < memory["selective"]
    assert step["selective"] < step["selective_op"] < step["full"]
    plans = {r: build_plan(_request(r), catalog) for r in ("selective", "selective_op", "full")}
    assert recompute_gemm_factor(plans["selective"]) == 1.0
    assert recompute_gemm_factor(plans["full"]) == pytest.approx(4 / 3)
    assert recompute_gemm_factor(plans["selective_op"]) == pytest.approx(
        1 + op_sac_recomputed_share(LLAMA3_8B) / 3
    )
    hardware = {r: evaluate(p).hardware_flops for r, p in plans.items()}  # counted in hardware FLOPs too
    assert hardware["selective_op"] / hardware["selective"] == pytest.approx(
        1 + (recompute_gemm_factor(plans["selective_op"]) - 1) * _gemm_share(plans["selective"]), rel=1e-6
    )
    assert hardware["selective"] < hardware["selective_op"] < hardware["full"]


def _gemm_share(plan) -> float:
    from scalecost.engine.training.model.flops import flops_per_unit

    flops = flops_per_unit(plan)
    return flops.gemm / (flops.gemm + flops.attention * 4 / 3)


def test_torchtitan_8b_on_8_h100_fits(catalog: Catalog) -> None:
    # torchtitan published 82.4 GiB peak reserved for this run (benchmarks/llama3_h100_202412_torchtitan.md Table 1);
    # Megatron-style selective keeps 34 B per s·b·h and does not fit the 96 GB part; op-level SAC keeps 15.5
    op = estimate_training(_request("selective_op"), catalog)["memory"]
    assert op["fits"]
    assert not estimate_training(_request("selective"), catalog)["memory"]["fits"]


def test_tensor_parallel_collectives() -> None:
    assert recompute_collectives("selective_op", True) == 1  # the all-gathers again; reduce-scatters kept
    assert recompute_collectives("selective_op", False) == 2
    assert recompute_collectives("full", True) == 2
    assert recompute_collectives("selective", True) == recompute_collectives("none", False) == 0


def test_accepted_and_validated(catalog: Catalog) -> None:
    assert "selective_op" in RECOMPUTATION
    assert build_plan(_request("selective_op"), catalog).recompute == "selective_op"
    with pytest.raises(InvalidRequest) as err:
        build_plan(_request("op"), catalog)
    assert "selective_op" in err.value.errors["training.activation_recomputation"][0]
