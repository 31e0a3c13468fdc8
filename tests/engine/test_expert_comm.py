"""Expert-parallel all-to-all: each GPU's own NIC across scale-up domains with one copy per remote domain
(parallelism.expert_all_to_all_seconds), and the overlap with another micro-batch's compute (expert_comm.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scalecost.engine.parallelism import (
    expert_all_to_all_seconds,
    group_bandwidth,
    remote_domain_copies,
    scale_out_bytes_per_s,
    scale_up_bytes_per_s,
)
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.model.expert_comm import (
    EXPERT_OVERLAP_SM_SHARE,
    exposed_expert_s,
    unpaired_share,
)

from .reference_catalog import load_catalog

CATALOG = load_catalog()
H100 = CATALOG.accelerators["nvidia-h100-sxm-80gb"]


def test_all_to_all_inside_a_node_sends_the_other_ranks_copies_over_nvlink():
    # EP 8 on one 8-GPU node, top-8 of 128 experts: 7/8 of the 8 copies per token leave the GPU
    seconds = expert_all_to_all_seconds(H100, 1e9, 128, 8, 8, 1)
    assert seconds == pytest.approx(1e9 * 8 * 7 / 8 / scale_up_bytes_per_s(H100))


def test_cross_node_all_to_all_runs_at_each_gpus_own_nic_once_per_remote_node():
    # EP 16 over two H100 nodes, Qwen3-30B-A3B routing (top-8 of 128): a token reaches the other node unless all 8
    # of its experts are on its own: 1 − C(64, 8)/C(128, 8) copies cross, each at one NIC (40 GB/s)
    remote = 1.0 - math.comb(64, 8) / math.comb(128, 8)
    seconds = expert_all_to_all_seconds(H100, 1e9, 128, 8, 16, 1)
    assert seconds == pytest.approx(1e9 * remote / scale_out_bytes_per_s(H100))
    # slower than the ring model's 8 NICs' worth for the same (e − 1)/e of k copies
    assert seconds > 1e9 * 8 * 15 / 16 / group_bandwidth(H100, 16, 1)


def test_remote_domain_copies_run_from_one_in_n_to_every_other_domain():
    assert remote_domain_copies(256, 1, 8) == pytest.approx(
        7 / 8
    )  # one expert: on another domain 7 times in 8
    assert remote_domain_copies(256, 256, 8) == pytest.approx(7.0)  # every expert: every other domain
    assert remote_domain_copies(256, 8, 1) == 0.0


@given(
    st.floats(0.0, 100.0),
    st.floats(0.0, 100.0),
    st.integers(1, 16),
    st.integers(1, 8),
    st.integers(1, 512),
)
def test_overlap_never_exposes_more_than_the_whole_all_to_all(a2a, compute, pipeline, virtual, micro_batches):
    virtual = virtual if pipeline > 1 else 1
    u = unpaired_share(pipeline, virtual, micro_batches)
    assert 0.0 <= u <= 1.0
    exposed = exposed_expert_s(a2a, compute, u, True)
    assert exposed <= a2a * (1 + 1e-12)
    assert exposed_expert_s(a2a, compute, u, False) == a2a


def test_overlap_behind_ample_compute_exposes_the_unpaired_micro_batch_and_the_sm_share():
    # no pipeline, 8 micro-batches: the first forward and the last backward (1/8) run alone
    u = unpaired_share(1, 1, 8)
    assert u == pytest.approx(1 / 8)
    assert exposed_expert_s(1.0, 100.0, u, True) == pytest.approx(1 / 8 + EXPERT_OVERLAP_SM_SHARE * 7 / 8)
    # interleaved 1F1B, p 4, v 2, m 32: (p − 1)·2 + (v − 1)·p = 10 warm-up chunks of 64
    assert unpaired_share(4, 2, 32) == pytest.approx(10 / 64)


def _qwen3_30b(overlap: bool) -> dict:
    parallelism = {"data": 8, "expert": 8, "zero_stage": 1, "expert_overlap": overlap}
    return {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {
            "tokens": 1e11,
            "sequence_length": 4096,
            "global_batch_size": 512,
            "micro_batch_size": 4,
        },
        "hardware": {"accelerator": "nvidia-b200", "count": 8, "parallelism": parallelism},
        "output": {"recommendations": False},
    }


def test_expert_overlap_shortens_a_moe_step_and_is_echoed():
    plain = estimate_training(_qwen3_30b(False), CATALOG)
    overlapped = estimate_training(_qwen3_30b(True), CATALOG)
    assert overlapped["time"]["tokens_per_second"] > plain["time"]["tokens_per_second"]
    assert overlapped["assumptions"]["parallelism"]["expert_overlap"] is True
    assert plain["assumptions"]["parallelism"]["expert_overlap"] is False


def test_moe_permutation_traffic_is_counted_from_the_shape():
    """Qwen3-30B-A3B (48 layers, all MoE, h 2048, top-8) in bf16: (5·8 + 3)·2048 values of 2 bytes per token per
    layer; a dense model moves none."""
    from scalecost.engine.presets import PRESETS
    from scalecost.engine.training.model.compute import moe_permute_bytes_per_token

    qwen = PRESETS["qwen3-30b-a3b"]
    assert qwen.shape is not None and qwen.shape.moe_layers == qwen.shape.layers == 48
    assert moe_permute_bytes_per_token(qwen, 2.0) == (5 * 8 + 3) * 2048 * 2
    assert moe_permute_bytes_per_token(PRESETS["llama-2-7b"], 2.0) == 0.0


@pytest.mark.parametrize(
    ("change", "value"),
    [(("hardware", "parallelism", "expert"), 1), (("training", "activation_recomputation"), "full")],
)
def test_expert_overlap_needs_expert_parallelism_and_no_full_recompute(change, value):
    """Megatron-Core refuses overlap_moe_expert_parallel_comm without EP or with full recomputation."""
    from scalecost.engine import InvalidRequest

    body = _qwen3_30b(True)
    target = body
    for key in change[:-1]:
        target = target[key]
    target[change[-1]] = value
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, CATALOG)
    assert "hardware.parallelism.expert_overlap" in err.value.errors


def _moe_gemm_s(experts: int, top_k: int, expert_ffn: int, expert_degree: int) -> float:
    """GEMM seconds of one step of a fine-grained MoE (16 layers of h 2048) at expert degree e."""
    from scalecost.engine.training.model.evaluate import evaluate
    from scalecost.engine.training.request import build_plan

    from .reference_catalog import load_catalog

    request = {
        "model": {
            "architecture": "transformer", "layers": 16, "hidden_size": 2048, "attention_heads": 16,
            "kv_heads": 4, "ffn_hidden_size": 6144, "ffn_type": "swiglu", "vocab_size": 32000,
            "experts": experts, "experts_per_token": top_k, "moe_ffn_hidden_size": expert_ffn,
        },
        "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096, "micro_batch_size": 1},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8,
                     "parallelism": {"data": 8, "expert": expert_degree, "zero_stage": 1}},
        "output": {"recommendations": False},
    }  # fmt: skip
    return evaluate(build_plan(request, load_catalog())).step.gemm_s


def test_expert_gemm_shape_is_the_dense_knees_on_the_experts_own_shape():
    from scalecost.engine.architecture import TransformerShape
    from scalecost.engine.training.model.compute import GEMM_WIDTH_KNEE, expert_gemm_shape

    shape = TransformerShape(
        layers=48, hidden_size=2048, attention_heads=32, kv_heads=4, ffn_hidden_size=6144, vocab_size=151936,
        experts=128, experts_per_token=8, moe_ffn_hidden_size=768, ffn_type="swiglu", tied_embeddings=False,
    )  # fmt: skip
    base, rows = expert_gemm_shape(shape, expert_tensor=1, expert=8)
    assert base == pytest.approx(1 + GEMM_WIDTH_KNEE / 768)
    assert rows == pytest.approx(
        8 * 8 / 128
    )  # a micro-batch token lands k × EP / E rows on each local expert


def test_narrow_experts_and_few_tokens_per_expert_are_slower_gemms():
    # the same routed FLOPs per token (k × f = 12,288): narrower experts underfill the tensor cores
    wide, narrow = _moe_gemm_s(64, 8, 1536, 8), _moe_gemm_s(128, 16, 768, 8)
    assert narrow > wide * 1.02
    # 256 experts without expert parallelism: 4096 × 8 / 256 = 128 rows per expert GEMM, against 1,024 with EP 8
    spread, local = _moe_gemm_s(256, 8, 768, 8), _moe_gemm_s(256, 8, 768, 1)
    assert local > spread * 1.1
