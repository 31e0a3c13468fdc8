"""Collective latency (parallelism.collective_latency_s: NCCL's tuning.cc cost model, Simple protocol)."""

from __future__ import annotations

import pytest
from scalecost.engine import estimate_training
from scalecost.engine.parallelism import collective_latency_s

from .conftest import load_catalog

CATALOG = load_catalog()
A100 = CATALOG.accelerators["nvidia-a100-sxm-80gb"]
US = 1e-6


def test_ring_all_gather_counts_nvlink_and_network_steps():
    # 2,048 ranks on 256 nodes of 8: 2,047 steps, 255 of them across the network
    assert collective_latency_s(A100, False, 2048, 1) == pytest.approx((8.4 + 1792 * 3.4 + 255 * 14.0) * US)
    assert collective_latency_s(A100, False, 8, 1) == pytest.approx((8.4 + 7 * 3.4) * US)
    assert collective_latency_s(A100, False, 1, 1) == 0.0


def test_all_reduce_takes_the_cheaper_of_ring_and_tree():
    ring = 2 * (1792 * 3.4 + 255 * 14.0)
    tree = 2 * (7 * 4.0 + 8 * 14.0)  # ⌊log2 256⌋ = 8 network levels
    assert collective_latency_s(A100, True, 2048, 1) == pytest.approx((8.4 + min(ring, tree)) * US)
    assert collective_latency_s(A100, True, 8, 1) == pytest.approx((8.4 + 2 * 7 * 3.4) * US)


def test_tpu_collectives_get_no_nccl_latency():
    tpu = next(a for a in CATALOG.accelerators.values() if a.kind == "tpu")
    assert collective_latency_s(tpu, True, 4096, 1) == 0.0


def _comm(zero_stage: int) -> float:
    body = {
        "model": {"preset": "llama-2-7b"},
        "training": {
            "tokens": 1e11,
            "sequence_length": 2048,
            "global_batch_size": 2048,
            "micro_batch_size": 1,
        },
        "hardware": {
            "accelerator": "nvidia-a100-sxm-80gb",
            "count": 2048,
            "parallelism": {"data": 2048, "zero_stage": zero_stage},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }
    return estimate_training(body, CATALOG)["time"]["breakdown"]["communication_s"]


def test_fully_sharding_over_thousands_of_ranks_becomes_latency_bound():
    # one 2K-token sequence per GPU: ZeRO-3's three collectives per layer and micro-batch over 2,048 ranks cost
    # more than its compute hides, the bucketed ZeRO-1 gradients do not (why hybrid sharding exists)
    assert _comm(3) > 5 * _comm(1)
