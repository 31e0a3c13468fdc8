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


def _qwen3_body(count, parallelism=None) -> dict:
    return {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e12, "sequence_length": 4096, "global_batch_size": 64},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": count, "parallelism": parallelism or {}},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_the_search_with_a_given_expert_tensor_is_the_single_estimate(catalog) -> None:
    """With expert_tensor carried on the base plan (search/auto.py), the search enumerates the layouts it is valid for
    (expert ranks drawn from tensor × context × data, beyond context × data) and its best layout, and the fastest
    with experts split differently from the dense layers, are the single estimate of that layout (1e-9)."""
    from dataclasses import replace

    import numpy as np
    from scalecost.engine.training.estimate import estimate_training
    from scalecost.engine.training.model.arrays import evaluate_layouts
    from scalecost.engine.training.search.rank import Candidate, Constraints, Offer, prepare, search
    from scalecost.engine.training.search.space import default_space, enumerate_layouts

    base = build_plan(_qwen3_body(1), catalog)
    base = base.with_fields(par=replace(base.par, expert_tensor=1))
    space = replace(
        default_space(base, 64), device_counts=(32, 64), tensor=(1, 2, 4), pipeline=(1, 2), expert=(1, 8, 32)
    )
    lay = enumerate_layouts(base, space)
    assert ((lay.data * lay.context) % lay.expert != 0).any()  # expert ranks beyond context × data: searched
    numbers = evaluate_layouts(base, lay)
    split = np.flatnonzero((lay.tensor > 1) & (lay.expert > 1) & numbers.fits)
    assert len(split)
    other = split[np.argmin(numbers.seconds[split])]
    found = search(
        prepare([Candidate(base, (Offer("request", "on-demand", 1.0),))], lambda _plan: space),
        Constraints(),
        "fastest",
        1,
        None,
    )
    best = found.results[0]
    rows = [(best.parallelism(), best.micro_batch, best.seconds, best.memory_bytes)]
    names = (
        "data",
        "tensor",
        "pipeline",
        "context",
        "expert",
        "zero_stage",
        "sequence_parallel",
        "virtual_pipeline",
    )
    layout = {name: getattr(lay, name)[other].item() for name in names}
    rows.append((layout, int(lay.micro_batch[other]), numbers.seconds[other], numbers.memory_bytes[other]))
    for parallelism, micro, seconds, memory in rows:
        body = _qwen3_body(
            parallelism["data"] * parallelism["tensor"] * parallelism["pipeline"] * parallelism["context"],
            {**parallelism, "expert_tensor": 1},
        )
        body["training"]["micro_batch_size"] = micro
        single = estimate_training(body, catalog)
        assert single["assumptions"]["parallelism"]["expert_tensor"] == 1
        assert single["time"]["seconds"] == pytest.approx(float(seconds), rel=1e-9)
        assert single["memory"]["per_device_bytes"] == pytest.approx(float(memory), rel=1e-9)


def test_count_auto_searches_a_given_expert_tensor(catalog) -> None:
    """hardware.count "auto" with a given expert_tensor (a 422 until the array model honoured it): the chosen layout
    keeps it, and its expert degree may exceed context × data (ranks drawn from tensor × context × data)."""
    from scalecost.engine.training.estimate import estimate_training

    request = _qwen3_body("auto", {"tensor": 4, "expert": 16, "expert_tensor": 1, "zero_stage": 1})
    request["constraints"] = {"deadline": "P90D"}
    answer = estimate_training(request, catalog)
    used = answer["assumptions"]["parallelism"]
    assert (used["expert_tensor"], used["expert"], used["tensor"]) == (1, 16, 4)
    assert answer["assumptions"]["auto"]["chosen_parallelism"]["expert_tensor"] == 1
    assert answer["assumptions"]["auto"]["chosen_count"] >= 16  # 4 × data holds the 16 expert ranks


def test_a_hybrid_shard_group_under_expert_tensor_holds_whole_expert_groups(catalog) -> None:
    from scalecost.engine import InvalidRequest

    # data 16 × tensor 2 with EP 32, ETP 1: a shard group of 16 holds 16 × 2 = 32 ranks = one expert group
    plan = _folded(catalog, expert_tensor=1, data_shard=16)
    assert plan.par.expert_shard_ranks == 1
    with pytest.raises(InvalidRequest) as err:  # 8 × 2 = 16 ranks cannot hold the 32 expert ranks
        _folded(catalog, expert_tensor=1, data_shard=8)
    assert "expert × expert_tensor (32)" in " ".join(err.value.errors["hardware.parallelism.data_shard"])
