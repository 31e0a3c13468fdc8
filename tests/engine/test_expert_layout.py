"""Where expert-parallel ranks come from when the request names no expert_tensor (layout_request): Megatron-Core
draws them from context × data (expert_tensor_parallel_size defaults to the tensor degree), and a layout whose
expert degree only fits tensor × context × data runs with the experts' own tensor degree 1 (MoE parallel folding),
as NVIDIA's recipes set it. Both layouts below ran (NeMo scripts/performance/recommended_model_configs/
model_configs_h100.csv @ae861a9) and were 422s when the expert degree had to divide the data degree alone."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest, estimate_training

from .conftest import load_catalog

CATALOG = load_catalog()


def _body(preset: str, count: int, parallelism: dict, seq: int, gbs: int) -> dict:
    return {
        "model": {"preset": preset},
        "training": {
            "tokens": 1e12,
            "sequence_length": seq,
            "global_batch_size": gbs,
            "micro_batch_size": 1,
            "precision": "fp8",
        },
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": count, "parallelism": parallelism},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_expert_ranks_come_from_context_and_data():
    # Mixtral 8x22B at 64K: TP4 PP4 CP8 EP8 on 256 H100, data 2: the 8 expert ranks span context 8 x data 2
    par = {"tensor": 4, "pipeline": 4, "context": 8, "expert": 8, "virtual_pipeline": 14}
    answer = estimate_training(_body("mixtral-8x22b", 256, par, 65536, 256), CATALOG)
    assert answer["assumptions"]["parallelism"]["expert_tensor"] == 4  # split like the dense layers
    assert answer["memory"]["fits"]
    assert not [n for n in answer["assumptions"]["notes"] if "expert_tensor" in n]


def test_an_expert_degree_beyond_context_and_data_folds_over_tensor_with_expert_tensor_1():
    # DeepSeek-V3: TP2 PP16 EP64 on 1024 H100, data 32: 64 expert ranks need the tensor ranks too
    par = {"tensor": 2, "pipeline": 16, "expert": 64}
    answer = estimate_training(_body("deepseek-v3", 1024, par, 4096, 8192), CATALOG)
    assert answer["assumptions"]["parallelism"]["expert_tensor"] == 1
    assert [n for n in answer["assumptions"]["notes"] if n.startswith("expert_tensor 1 assumed")]
    given = estimate_training(_body("deepseek-v3", 1024, {**par, "expert_tensor": 1}, 4096, 8192), CATALOG)
    assert answer["time"]["seconds"] == given["time"]["seconds"]
    assert answer["memory"]["per_device_bytes"] == given["memory"]["per_device_bytes"]


def test_an_expert_degree_that_fits_nowhere_names_the_field_and_what_is_allowed():
    par = {"tensor": 2, "pipeline": 16, "expert": 128}  # 128 > tensor x context x data = 64
    with pytest.raises(InvalidRequest) as refused:
        estimate_training(_body("deepseek-v3", 1024, par, 4096, 8192), CATALOG)
    message = " ".join(refused.value.errors["hardware.parallelism.expert"])
    assert "context × data (32)" in message and "allowed: [1, 2, 4, 8, 16, 32, 64]" in message
