"""Speculative decoding's draft takes memory on the target's devices (issue 30 §4): a named draft from its own shape,
an unnamed one as a share of the target, DeepSeek-V3's MTP module once. Expected bytes are computed here from the
models' config.json numbers, not with the engine's helpers."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.model.memory import MemoryModel, max_batch_size
from scalecost.engine.inference.request import parse_request

from .reference_catalog import load_catalog

CATALOG = load_catalog()
QUIET = {"suggestions": False, "recommendations": False}
TP = 4
TARGET = {  # Llama 3.1 70B in bf16 on 4 × H100 under vLLM, 1000 in / 1000 out
    "model": {"preset": "llama-3.1-70b"},
    "weights": {"precision": "bf16"},
    "engine": "vllm",
    "prompt_tokens": 1000,
    "output_tokens": 1000,
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": TP},
    "output": QUIET,
}
DRAFT_1B = {"preset": "llama-3.2-1b"}


def _llama_3_2_1b_parameters() -> int:
    """meta-llama/Llama-3.2-1B config.json: 16 layers, hidden 2048, 32 heads of 64, 8 KV heads, intermediate 8192,
    vocab 128256, tied embeddings; RMSNorm weights only."""
    h, kv_dim, f, v, layers = 2048, 8 * 64, 8192, 128256, 16
    per_layer = 2 * h * h + 2 * h * kv_dim + 3 * h * f + 2 * h
    return v * h + layers * per_layer + h


def _llama_3_1_70b_parameters() -> int:
    """meta-llama/Llama-3.1-70B config.json: 80 layers, hidden 8192, 64 heads of 128, 8 KV heads, intermediate 28672,
    vocab 128256, untied."""
    h, kv_dim, f, v, layers = 8192, 8 * 128, 28672, 128256, 80
    per_layer = 2 * h * h + 2 * h * kv_dim + 3 * h * f + 2 * h
    return 2 * v * h + layers * per_layer + h


def plan(speculative: dict[str, Any] | None, **changes: Any):
    body = {**TARGET, **changes}
    if speculative is not None:
        body["serving"] = {"speculative": speculative}
    return parse_request(body, CATALOG)


def test_a_named_1b_draft_shrinks_the_largest_batch_by_its_weights_and_kv() -> None:
    plain = plan(None)
    drafted = plan({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": DRAFT_1B})
    acc = plain.accelerator
    draft_weights = _llama_3_2_1b_parameters() * 2 / TP  # bf16, sharded over the 4 tensor-parallel ranks
    draft_kv_token = 2 * 16 * math.ceil(8 / TP) * 64 * 2  # K and V, 16 layers, 2 of 8 KV heads per rank, bf16
    context = math.ceil(2000 / 16) * 16  # vLLM allocates whole 16-token blocks

    base, with_draft = MemoryModel(plain.workload, acc, TP), MemoryModel(drafted.workload, acc, TP)
    for batch in (1, 64):
        expected = draft_weights + draft_kv_token * batch * context
        layout = with_draft.layout(batch)
        assert layout.per_device_bytes - base.layout(batch).per_device_bytes == pytest.approx(
            expected, rel=1e-9
        )
        assert layout.draft_bytes == pytest.approx(expected, rel=1e-9)

    capacity = base.layout(1).capacity_bytes
    expected_batch = max(
        b for b in range(1, 1000)
        if base.layout(b).per_device_bytes + draft_weights + draft_kv_token * b * context <= capacity
    )  # fmt: skip
    assert max_batch_size(drafted.workload, acc, TP) == expected_batch
    assert expected_batch < max_batch_size(plain.workload, acc, TP)


def test_the_named_drafts_cost_ratio_is_its_weight_bytes_over_the_targets() -> None:
    drafted = plan({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": DRAFT_1B})
    spec = drafted.workload.schedule.speculative
    assert spec is not None
    expected = _llama_3_2_1b_parameters() / _llama_3_1_70b_parameters()  # both bf16
    assert spec.cost_ratio(80) == pytest.approx(expected, rel=1e-9)
    assert 0.015 < expected < 0.02  # far below the 5 % assumed for an unnamed draft
    given = plan(
        {"method": "draft_model", "acceptance_rate": 0.7, "draft_model": DRAFT_1B, "draft_cost_ratio": 0.1}
    )
    assert given.workload.schedule.speculative.cost_ratio(80) == 0.1  # a given ratio wins


def test_a_cheaper_named_draft_decodes_faster_than_the_flat_five_percent() -> None:
    common = {"method": "draft_model", "acceptance_rate": 0.7}
    named = estimate_inference(
        {**TARGET, "serving": {"speculative": {**common, "draft_model": DRAFT_1B}}}, CATALOG
    )
    flat = estimate_inference({**TARGET, "serving": {"speculative": common}}, CATALOG)
    assert named["latency"]["time_per_output_token_s"] < flat["latency"]["time_per_output_token_s"]
    assert named["assumptions"]["speculative_draft"]["basis"] == "named"
    assert flat["assumptions"]["speculative_draft"]["basis"] == "estimated"


def test_an_unnamed_draft_is_the_cost_ratio_share_of_the_target() -> None:
    plain = plan(None)
    for ratio in (None, 0.1):
        spec = {"method": "draft_model", "acceptance_rate": 0.7}
        if ratio is not None:
            spec["draft_cost_ratio"] = ratio
        share = 0.05 if ratio is None else ratio
        drafted = plan(spec)
        base = MemoryModel(plain.workload, plain.accelerator, TP).layout(8)
        layout = MemoryModel(drafted.workload, drafted.accelerator, TP).layout(8)
        assert layout.draft_weights_bytes == pytest.approx(
            share * _llama_3_1_70b_parameters() * 2 / TP, rel=1e-9
        )
        assert layout.draft_kv_cache_bytes == pytest.approx(share * base.kv_cache_bytes, rel=1e-9)


DEEPSEEK = {
    "model": {"preset": "deepseek-v3"},
    "weights": {"precision": "fp8"},
    "engine": "vllm",
    "prompt_tokens": 1000,
    "output_tokens": 1000,
    "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
    "output": QUIET,
}


def test_the_mtp_module_is_counted_once() -> None:
    """The preset counts DeepSeek-V3's 61 layers (671 B); the MTP module adds one MoE block, eh_proj and its own
    embedding and head: together the checkpoint's 685 B (DeepSeek-V3 README), and one MLA layer of KV."""
    plain = parse_request(DEEPSEEK, CATALOG)
    mtp = parse_request({**DEEPSEEK, "serving": {"speculative": {"method": "mtp"}}}, CATALOG)
    assert plain.workload.model.total_parameters == mtp.workload.model.total_parameters < 672e9

    h, v, experts, moe_f = 7168, 129280, 256, 2048
    attention = h * 1536 + 1536 + 1536 * 128 * 192 + h * (512 + 64) + 512 + 512 * 128 * 256 + 128 * 128 * h
    moe = experts * 3 * h * moe_f + 3 * h * moe_f + h * experts  # routed + one shared expert + router
    module = (
        attention + moe + 2 * h + 2 * h * h + 2 * h + 2 * v * h + h
    )  # norms, eh_proj, enorm/hnorm, embed+head
    assert plain.workload.model.total_parameters + module == pytest.approx(685e9, rel=0.002)
    answer = estimate_inference({**DEEPSEEK, "serving": {"speculative": {"method": "mtp"}}}, CATALOG)
    draft = answer["assumptions"]["speculative_draft"]
    assert draft["parameters"] == pytest.approx(module, rel=1e-9)
    assert draft["kv_cache_bytes_per_token"] == (512 + 64) * 2  # one layer of the fp16 MLA latent (vLLM auto)

    base = MemoryModel(plain.workload, plain.accelerator, 8).layout(4)
    layout = MemoryModel(mtp.workload, mtp.accelerator, 8).layout(4)
    assert layout.kv_cache_bytes == base.kv_cache_bytes  # the target's cache is unchanged ...
    assert layout.per_device_bytes - base.per_device_bytes == pytest.approx(
        layout.draft_bytes
    )  # ... the module adds
    assert layout.draft_kv_cache_bytes == pytest.approx(base.kv_cache_bytes / 61)


def errors_of(speculative: Any, **changes: Any) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as exc:
        parse_request({**TARGET, **changes, "serving": {"speculative": speculative}}, CATALOG)
    return exc.value.errors


@pytest.mark.parametrize(
    ("speculative", "field"),
    [
        ({"method": "mtp", "draft_model": DRAFT_1B}, "serving.speculative.draft_model"),
        ({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": {"preset": "nope"}},
         "serving.speculative.draft_model.preset"),
        ({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": {"hf_config": {"model_type": "llama"}}},
         "serving.speculative.draft_model.hf_config.num_hidden_layers"),
        ({"method": "draft_model", "acceptance_rate": 0.7,
          "draft_model": {"architecture": "cnn", "parameters": "25M", "flops_per_sample": 4e9}},
         "serving.speculative.draft_model"),
        ({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": {"preset": "llama-3.1-405b"}},
         "serving.speculative.draft_model"),
        ({"method": "draft_model", "acceptance_rate": 0.7, "draft_model": "llama-3.2-1b"},
         "serving.speculative.draft_model"),
    ],
)  # fmt: skip
def test_a_bad_draft_model_is_refused_by_name(speculative: dict[str, Any], field: str) -> None:
    assert field in errors_of(speculative)


def test_the_draft_must_shard_over_the_targets_tensor_degree() -> None:
    """Llama 3.2 3B's 24 heads do not split over 16 ranks, Llama 3.1 70B's 64 do."""
    spec = {"method": "draft_model", "acceptance_rate": 0.7, "draft_model": {"preset": "llama-3.2-3b"}}
    hardware = {"accelerator": "nvidia-h100-sxm-80gb", "count": 16}
    assert "serving.speculative.draft_model" in errors_of(spec, hardware=hardware)
