"""FP4 training (issue 11): the NVFP4 recipe (NVIDIA, arXiv 2509.25149) runs the linear layers' GEMMs at the FP4
peak and keeps about 16 % of them, the LM head, attention and everything else in BF16; weights, gradients and
optimizer states are those of FP8 training; the linear inputs kept for backward are NVFP4 (4.5 bits)."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest
from scalecost.engine.models import resolve_model
from scalecost.engine.parallelism import Parallelism
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.model.activations import (
    NVFP4_BYTES_PER_VALUE,
    layer_activation_bytes,
    saved_input_bytes,
)
from scalecost.engine.training.model.compute import FP4_BF16_LAYER_SHARE, step_work
from scalecost.engine.training.model.flops import flops_per_unit
from scalecost.engine.training.model.memory import bytes_per_parameter
from scalecost.engine.training.request import build_plan

from .conftest import load_catalog


def _request(precision: str, accelerator: str = "nvidia-b200") -> dict:
    return {
        "model": {"preset": "llama-3-70b"},
        "training": {
            "tokens": 1e11,
            "global_batch_size": 512,
            "sequence_length": 8192,
            "precision": precision,
        },
        "hardware": {
            "accelerator": accelerator,
            "count": 64,
            "parallelism": {"data": 8, "tensor": 8, "sequence_parallel": True},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_fp4_is_faster_than_fp8_on_b200_for_a_large_dense_model_but_not_twice() -> None:
    catalog = load_catalog()
    fp8 = estimate_training(_request("fp8"), catalog)["time"]["tokens_per_second"]
    fp4 = estimate_training(_request("fp4"), catalog)["time"]["tokens_per_second"]
    # the GEMMs at 2x the FP8 peak, but attention, element-wise work, communication, the LM head and 16 % of the
    # linear layers do not speed up
    assert 1.05 < fp4 / fp8 < 1.6


def test_fp4_utilization_is_against_the_fp4_peak() -> None:
    out = estimate_training({**_request("fp4"), "output": {"details": True}}, load_catalog())
    assert out["assumptions"]["precision"] == "fp4"
    peak = next(r for r in out["details"] if r["name"] == "peak")
    assert peak["value"] == 9e15


def test_fp4_on_h100_is_a_422_naming_the_precision_and_the_parts_that_have_it() -> None:
    with pytest.raises(InvalidRequest) as err:
        estimate_training(_request("fp4", "nvidia-h100-sxm-80gb"), load_catalog())
    (message,) = err.value.errors["training.precision"]
    assert "no fp4 support" in message and "fp8" in message  # what the H100 supports
    for part in ("nvidia-b200", "nvidia-gb200", "nvidia-gb300", "amd-mi355x"):
        assert part in message
    assert "nvidia-a100-sxm-80gb" not in message.split("catalog:")[1]


def test_fp4_model_states_are_those_of_fp8_training() -> None:
    assert bytes_per_parameter("fp4", "adamw") == bytes_per_parameter("fp8", "adamw") == (2.0, 2.0, 12.0)


def test_fp4_keeps_linear_inputs_in_nvfp4_except_the_bf16_layers() -> None:
    assert NVFP4_BYTES_PER_VALUE == 0.5625  # 4-bit E2M1 + one E4M3 scale per 16 values
    q = saved_input_bytes("fp4")
    assert q == pytest.approx(0.84 * 0.5625 + 0.16 * 2.0)
    shape = resolve_model({"preset": "llama-3-8b"}).shape
    assert shape is not None
    args = (shape, Parallelism(), "selective", True, 8192, 1)
    bf16, _ = layer_activation_bytes(*args)
    fp8, _ = layer_activation_bytes(*args, fp8_inputs=True)
    fp4, _ = layer_activation_bytes(*args, input_bytes=q)
    assert fp4 < fp8 < bf16
    # four GEMM inputs per layer: QKV and gate/up inputs (h each), attention output (h), down input (f)
    sbh = 8192 * shape.hidden_size
    assert fp8 - fp4 == pytest.approx(sbh * (1.0 - q) * (3.0 + shape.ffn_hidden_size / shape.hidden_size))


def test_fp4_keeps_the_lm_head_and_the_bf16_layers_at_the_16_bit_rate() -> None:
    catalog = load_catalog()
    fp8, fp4 = (build_plan(_request(p), catalog) for p in ("fp8", "fp4"))
    head = step_work(fp8, flops_per_unit(fp8)).bf16_gemm_share
    share = step_work(fp4, flops_per_unit(fp4)).bf16_gemm_share
    assert 0.0 < head < 0.05  # Llama 3 70B: 6·h·V of the GEMM FLOPs
    assert share == pytest.approx(head + FP4_BF16_LAYER_SHARE * (1.0 - head))
