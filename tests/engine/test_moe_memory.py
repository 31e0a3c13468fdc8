"""MoE model states under ZeRO-3 / FSDP with expert parallelism: a rank gathers only its own experts."""

from __future__ import annotations

import pytest

from service.engine.architecture import largest_layer_parameters, layer_parameters, mlp_parameters
from service.engine.models import PRESETS
from service.engine.training.memory import ZERO3_LIVE_LAYER_FACTOR, model_states
from service.engine.training.request import build_plan

QWEN3 = PRESETS["qwen3-30b-a3b"].shape  # 128 experts of width 768, hidden 2048, vocab 151936
assert QWEN3 is not None


def test_expert_parallelism_divides_the_gathered_layers_routed_experts() -> None:
    _, moe_layer, _ = layer_parameters(QWEN3)
    routed = 128 * mlp_parameters(QWEN3, 768)
    embedding = QWEN3.vocab_size * QWEN3.hidden_size
    assert largest_layer_parameters(QWEN3) == moe_layer
    # EP 2: the layer's 64 local experts; EP 8: 16 experts, smaller than the embedding, which is then the largest
    assert largest_layer_parameters(QWEN3, 2) == pytest.approx(moe_layer - routed / 2)
    assert largest_layer_parameters(QWEN3, 8) == pytest.approx(max(moe_layer - routed * 7 / 8, embedding))


def _plan(catalog, expert: int):
    return build_plan(
        {
            "model": {"preset": "qwen3-30b-a3b"},
            "training": {
                "tokens": 1e12,
                "sequence_length": 4096,
                "global_batch_size": 64,
                "micro_batch_size": 1,
            },
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 64,
                "parallelism": {"data": 64, "expert": expert, "zero_stage": 3},
            },
            "cost": {"usd_per_accelerator_hour": 1.0},
        },
        catalog,
    )


def test_zero3_gathers_two_layers_of_the_local_experts(catalog) -> None:
    for expert in (1, 2):
        plan = _plan(catalog, expert)
        *_, gathered = model_states(plan)
        assert gathered == pytest.approx(
            ZERO3_LIVE_LAYER_FACTOR * largest_layer_parameters(QWEN3, expert) * 2.0
        )
    assert model_states(_plan(catalog, 2))[3] < model_states(_plan(catalog, 1))[3]
