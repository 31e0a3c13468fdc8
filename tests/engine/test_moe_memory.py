"""MoE model states under ZeRO-3 / FSDP with expert parallelism: a rank gathers only its own experts."""

from __future__ import annotations

import pytest
from scalecost.engine.architecture import largest_layer_parameters, layer_parameters, mlp_parameters
from scalecost.engine.models import PRESETS
from scalecost.engine.training.model.memory import ZERO3_LIVE_LAYER_FACTOR, model_states
from scalecost.engine.training.request import build_plan

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


QWEN3_235B = PRESETS["qwen3-235b-a22b"].shape


def _folded(catalog, **parallelism: int):
    """NeMo's Qwen3-235B-A22B H100 recipe: TP2 PP8 VP4 EP32 on 256 GPUs, expert_tensor_parallel_size 1."""
    layout = {"data": 16, "tensor": 2, "pipeline": 8, "virtual_pipeline": 4, "expert": 32, "zero_stage": 1}
    return build_plan(
        {
            "model": {"preset": "qwen3-235b-a22b"},
            "training": {
                "tokens": 1e12,
                "sequence_length": 4096,
                "global_batch_size": 2048,
                "micro_batch_size": 1,
            },
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 256,
                "parallelism": {**layout, "sequence_parallel": True, **parallelism},
            },
            "cost": {"usd_per_accelerator_hour": 1.0},
        },
        catalog,
    )


def test_expert_ranks_drawn_from_tensor_times_data_split_whole_experts(catalog) -> None:
    from scalecost.engine.training.model.memory import parameters_per_device

    plan = _folded(catalog, expert_tensor=1)
    assert plan.par.expert_tensor_ranks == 1 and plan.par.expert_shard_ranks == 1  # 2 × 16 / (32 × 1)
    _, expert = parameters_per_device(plan.model, plan.par)
    routed = QWEN3_235B.moe_layers * 128 * mlp_parameters(QWEN3_235B, QWEN3_235B.expert_ffn_hidden_size)
    assert expert == pytest.approx(
        routed / (8 * 32)
    )  # 4 whole experts per rank per stage, not split by tensor


def test_expert_tensor_equal_to_tensor_is_the_default_split(catalog) -> None:
    par = _folded(catalog, expert=8, expert_tensor=2).par
    default = _folded(catalog, expert=8).par
    assert (par.expert_tensor_ranks, par.expert_shard_ranks) == (
        default.expert_tensor_ranks,
        default.expert_shard_ranks,
    )
    assert model_states(_folded(catalog, expert=8, expert_tensor=2)) == model_states(
        _folded(catalog, expert=8)
    )


@pytest.mark.parametrize(
    ("parallelism", "field", "words"),
    [
        # without expert_tensor: EP must divide context × data, or tensor × context × data (expert_tensor 1 taken)
        ({"expert": 64}, "hardware.parallelism.expert", "context × data (16)"),
        ({"expert_tensor": 3}, "hardware.parallelism.expert_tensor", "allowed: [1, 2, 4, 8, 16, 32]"),
        ({"expert_tensor": 2}, "hardware.parallelism.expert", "allowed: [1, 2, 4, 8, 16]"),
    ],
)
def test_invalid_expert_layouts_name_the_field_and_the_allowed_values(
    catalog, parallelism, field, words
) -> None:
    from scalecost.engine import InvalidRequest

    with pytest.raises(InvalidRequest) as err:
        _folded(catalog, **parallelism)
    assert field in err.value.errors, err.value.errors
    assert words in " ".join(err.value.errors[field])


def test_count_auto_refuses_a_given_expert_tensor(catalog) -> None:
    from scalecost.engine import InvalidRequest
    from scalecost.engine.training.estimate import estimate_training

    request = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e12, "sequence_length": 4096, "global_batch_size": 64},
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": "auto",
            "parallelism": {"expert_tensor": 1},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
    }
    with pytest.raises(InvalidRequest) as err:
        estimate_training(request, catalog)
    assert set(err.value.errors) == {"hardware.parallelism.expert_tensor"}


def test_a_hybrid_shard_group_under_expert_tensor_holds_whole_expert_groups(catalog) -> None:
    from scalecost.engine import InvalidRequest

    # data 16 × tensor 2 with EP 32, ETP 1: a shard group of 16 holds 16 × 2 = 32 ranks = one expert group
    plan = _folded(catalog, expert_tensor=1, data_shard=16)
    assert plan.par.expert_shard_ranks == 1
    with pytest.raises(InvalidRequest) as err:  # 8 × 2 = 16 ranks cannot hold the 32 expert ranks
        _folded(catalog, expert_tensor=1, data_shard=8)
    assert "expert × expert_tensor (32)" in " ".join(err.value.errors["hardware.parallelism.data_shard"])
