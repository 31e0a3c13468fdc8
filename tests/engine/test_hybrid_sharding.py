"""hardware.parallelism.data_shard: hybrid sharding (FSDP2 HSDP, ZeRO++ hpZ, MaxText multislice)."""

from __future__ import annotations

import copy

import pytest
from scalecost.engine import InvalidRequest, estimate_training
from scalecost.engine.parallelism import Parallelism

from .conftest import load_catalog
from .public_points import throughput_request, throughput_rows

CATALOG = load_catalog()


def _body(data_shard: int | None = None, zero_stage: int = 3, count: int = 64) -> dict:
    parallelism: dict = {"data": count, "zero_stage": zero_stage}
    if data_shard is not None:
        parallelism["data_shard"] = data_shard
    return {
        "model": {"preset": "llama-3-8b"},
        "training": {
            "tokens": 1e10,
            "sequence_length": 8192,
            "global_batch_size": 128,
            "micro_batch_size": 2,
        },
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": count, "parallelism": parallelism},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_shard_ranks_and_replicas():
    assert Parallelism(data=64, zero_stage=3, data_shard=8).shard_ranks == 8
    assert Parallelism(data=64, zero_stage=3, data_shard=8).replicas == 8
    assert Parallelism(data=16, context=2, zero_stage=3, data_shard=8).replicas == 4  # data × context ranks
    assert Parallelism(data=64, zero_stage=3).shard_ranks == 64  # default: one group of all
    assert Parallelism(data=64, zero_stage=3, data_shard=64).replicas == 1


def test_states_shard_over_the_group_only():
    full = estimate_training(_body(), CATALOG)["memory"]["breakdown"]
    hybrid = estimate_training(_body(8), CATALOG)["memory"]["breakdown"]
    for state in ("weights", "gradients", "optimizer_states"):
        assert hybrid[state] == pytest.approx(full[state] * 8, rel=1e-9)  # 1/8 instead of 1/64


def test_a_group_of_all_is_full_sharding():
    assert estimate_training(_body(64), CATALOG)["time"] == estimate_training(_body(), CATALOG)["time"]


def test_hybrid_sharding_keeps_large_jobs_off_latency_bound_gathers():
    """2,048 GPUs, one 8K sequence each: full sharding gathers every layer three times per step over all 256 nodes
    (NCCL ring latency grows with the nodes), hybrid sharding inside each node keeps those on NVLink and sends one
    gradient shard (1/8) over the network per step, so it communicates far less."""
    bodies = [_body(shard, count=2048) for shard in (None, 8)]
    for body in bodies:
        body["training"].update(global_batch_size=2048, micro_batch_size=1)
    full, hybrid = (estimate_training(b, CATALOG)["time"] for b in bodies)
    share = [t["breakdown"]["communication_s"] / t["seconds"] for t in (full, hybrid)]
    print(f"communication share: full sharding {share[0]:.1%}, hybrid (8 per group) {share[1]:.1%}")
    assert share[1] < share[0] / 2
    assert hybrid["tokens_per_second"] > full["tokens_per_second"]


@pytest.mark.parametrize(("data_shard", "zero_stage", "message"), [(7, 3, "allowed"), (8, 0, "zero_stage")])
def test_bad_groups_are_422_naming_the_field(data_shard, zero_stage, message):
    with pytest.raises(InvalidRequest) as err:
        estimate_training(copy.deepcopy(_body(data_shard, zero_stage)), CATALOG)
    assert message in err.value.errors["hardware.parallelism.data_shard"][0]


def test_maxtext_multislice_is_expressible_and_fits():
    """MaxText's 64B on 32 v5e-256 slices: FSDP inside each slice (ICI), data parallel across slices (DCN)."""
    row = next(r for r in throughput_rows() if r["label"] == "MaxText 64B 32x v5e-256 (8192 chips)")
    request = throughput_request(row)
    assert request["hardware"]["parallelism"]["data_shard"] == 256
    answer = estimate_training(request, CATALOG)
    print(
        f"64B multislice: {answer['memory']['per_device_bytes'] / 2**30:.2f} GiB of "
        f"{answer['memory']['device_capacity_bytes'] / 2**30:.2f}"
    )
    assert answer["memory"]["fits"]


def test_zero_bubble_leaves_a_third_of_the_1f1b_bubble():
    """ZB-H1 (Qi et al. 2024 §3.1): (p − 1)(T_F + T_B − T_W) idle instead of (p − 1)(T_F + T_B + T_W)."""
    from scalecost.engine.parallelism import pipeline_bubble_fraction

    p, m = 8, 16
    one_f_one_b = pipeline_bubble_fraction(p, m)
    zb = pipeline_bubble_fraction(p, m, zero_bubble=True)
    idle = [f / (1.0 - f) for f in (one_f_one_b, zb)]  # bubble time over busy time
    assert idle[1] == pytest.approx(idle[0] / 3.0)
    body = _body(count=64)
    body["hardware"]["parallelism"] = {"data": 8, "pipeline": 8, "zero_stage": 1}
    plain = estimate_training(copy.deepcopy(body), CATALOG)
    body["hardware"]["parallelism"]["pipeline_schedule"] = "zero_bubble"
    filled = estimate_training(body, CATALOG)
    bubbles = [a["time"]["breakdown"]["pipeline_bubble_s"] for a in (plain, filled)]
    assert 0 < bubbles[1] < bubbles[0] / 2.5
    assert filled["memory"]["per_device_bytes"] == plain["memory"]["per_device_bytes"]  # 1F1B's peak memory
    assert filled["assumptions"]["parallelism"]["pipeline_schedule"] == "zero_bubble"


def test_zero_bubble_needs_a_pipeline():
    body = _body()
    body["hardware"]["parallelism"]["pipeline_schedule"] = "zero_bubble"
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, CATALOG)
    assert "pipeline" in err.value.errors["hardware.parallelism.pipeline_schedule"][0]


def test_count_auto_searches_a_given_zero_bubble_schedule():
    """A given zero_bubble schedule is searched, not refused: the search's best plan (seconds) is the single
    estimate of its layout with that schedule, and the estimate that count "auto" answers keeps the schedule."""
    from dataclasses import replace

    from service.engine.training.request import build_plan
    from service.engine.training.search.rank import Candidate, Constraints, Offer, prepare, search
    from service.engine.training.search.space import default_space

    body = _body(count=1)
    body["training"].pop("micro_batch_size")
    # the schedule is a column of the layouts (SearchSpace.pipeline_schedules), not the base plan's
    base = build_plan(body, CATALOG)
    space = replace(
        default_space(base, 64),
        device_counts=(64,),
        tensor=(2,),
        pipeline=(4, 8),
        pipeline_schedules=("zero_bubble",),
    )
    found = search(
        prepare([Candidate(base, (Offer("request", "on-demand", 1.0),))], lambda _plan: space),
        Constraints(),
        "fastest",
        1,
        None,
    )
    best = found.results[0]
    assert best.pipeline > 1
    single = _body(count=best.devices)
    single["training"]["micro_batch_size"] = best.micro_batch
    single["hardware"]["parallelism"] = {**best.parallelism(), "pipeline_schedule": "zero_bubble"}
    e = estimate_training(single, CATALOG)
    assert e["time"]["seconds"] == pytest.approx(best.seconds, rel=1e-9)
    assert e["memory"]["per_device_bytes"] == pytest.approx(best.memory_bytes, rel=1e-9)
    auto = _body()
    auto["hardware"] = {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": "auto",
        "parallelism": {"tensor": 2, "pipeline": 4, "zero_stage": 1, "pipeline_schedule": "zero_bubble"},
    }
    auto["constraints"] = {"deadline": "P30D"}
    chosen = estimate_training(copy.deepcopy(auto), CATALOG)
    assert chosen["assumptions"]["parallelism"]["pipeline_schedule"] == "zero_bubble"
    auto["hardware"]["parallelism"]["pipeline_schedule"] = "1f1b"
    plain = estimate_training(auto, CATALOG)
    assert chosen["assumptions"]["auto"]["chosen_count"] <= plain["assumptions"]["auto"]["chosen_count"]


def test_count_auto_searches_a_given_expert_overlap():
    """A given expert_overlap is searched, not refused: the search's best MoE plan with the all-to-all overlapped is
    the single estimate of its layout with expert_overlap, and count "auto" keeps the switch."""
    from dataclasses import replace

    from service.engine.training.request import build_plan
    from service.engine.training.search.rank import Candidate, Constraints, Offer, prepare, search
    from service.engine.training.search.space import default_space

    body = _body(count=1, zero_stage=1)
    body["model"] = {"preset": "mixtral-8x7b"}
    body["training"].pop("micro_batch_size")
    base = build_plan(body, CATALOG)
    base = base.with_fields(par=replace(base.par, expert_overlap=True))
    space = replace(default_space(base, 64), device_counts=(64,), tensor=(1, 2), pipeline=(1, 2), expert=(8,))
    found = search(
        prepare([Candidate(base, (Offer("request", "on-demand", 1.0),))], lambda _plan: space),
        Constraints(),
        "fastest",
        1,
        None,
    )
    best = found.results[0]
    single = _body(count=best.devices, zero_stage=1)
    single["model"] = body["model"]
    single["training"]["micro_batch_size"] = best.micro_batch
    single["hardware"]["parallelism"] = {**best.parallelism(), "expert_overlap": True}
    e = estimate_training(single, CATALOG)
    assert e["time"]["seconds"] == pytest.approx(best.seconds, rel=1e-9)
    assert e["assumptions"]["parallelism"]["expert_overlap"] is True
    auto = _body(zero_stage=1)
    auto["model"] = body["model"]
    auto["hardware"] = {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": "auto",
        "parallelism": {"tensor": 2, "pipeline": 2, "expert": 8, "zero_stage": 1, "expert_overlap": True},
    }
    auto["constraints"] = {"deadline": "P30D"}
    chosen = estimate_training(copy.deepcopy(auto), CATALOG)
    assert chosen["assumptions"]["parallelism"]["expert_overlap"] is True
    auto["hardware"]["parallelism"]["expert_overlap"] = False
    plain = estimate_training(auto, CATALOG)
    assert chosen["assumptions"]["auto"]["chosen_count"] <= plain["assumptions"]["auto"]["chosen_count"]


def test_count_auto_searches_a_given_data_shard():
    """A given data_shard is searched, not refused: the search's best layout with groups of 8 is the single estimate
    of that layout with the groups (seconds and memory, 1e-9), layouts the group does not divide (or without ZeRO)
    are left out, and count "auto" keeps the group."""
    from dataclasses import replace

    from service.engine.training.request import build_plan
    from service.engine.training.search.rank import Candidate, Constraints, Offer, prepare, search
    from service.engine.training.search.space import default_space, enumerate_layouts

    body = _body(count=1)
    body["training"].pop("micro_batch_size")
    base = build_plan(body, CATALOG)
    base = base.with_fields(par=replace(base.par, data_shard=8))
    space = replace(default_space(base, 256), device_counts=(64, 256), tensor=(1, 2), pipeline=(1, 2, 16))
    layouts = enumerate_layouts(base, space)
    ranks = layouts.data * layouts.context
    assert (ranks % 8 == 0).all() and (layouts.zero_stage >= 1).all() and (ranks > 8).any()
    found = search(
        prepare([Candidate(base, (Offer("request", "on-demand", 1.0),))], lambda _plan: space),
        Constraints(),
        "fastest",
        1,
        None,
    )
    best = found.results[0]
    single = _body(count=best.devices)
    single["training"]["micro_batch_size"] = best.micro_batch
    single["hardware"]["parallelism"] = {**best.parallelism(), "data_shard": 8}
    e = estimate_training(single, CATALOG)
    assert e["time"]["seconds"] == pytest.approx(best.seconds, rel=1e-9)
    assert e["memory"]["per_device_bytes"] == pytest.approx(best.memory_bytes, rel=1e-9)
    auto = _body()
    auto["hardware"] = {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": "auto",
        "parallelism": {"tensor": 2, "zero_stage": 3, "data_shard": 8},
    }
    auto["constraints"] = {"deadline": "P30D"}
    chosen = estimate_training(copy.deepcopy(auto), CATALOG)
    assert chosen["assumptions"]["parallelism"]["data_shard"] == 8
    assert chosen["assumptions"]["auto"]["chosen_count"] >= 8


def test_the_group_is_checked_only_against_a_layout_that_adds_up():
    """A data × context far from the count is refused for the product, at once, not after listing its divisors."""
    body = _body(7, zero_stage=1, count=8)
    body["hardware"]["parallelism"].update(data=1_000_000, context=1024)
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, CATALOG)
    assert "hardware.parallelism" in err.value.errors
    assert "hardware.parallelism.data_shard" not in err.value.errors


def test_the_group_spans_whole_context_groups():
    body = _body(2, count=8)
    body["hardware"]["parallelism"].update(data=2, context=4)
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, CATALOG)
    assert "multiple of context" in err.value.errors["hardware.parallelism.data_shard"][0]


def test_fit_advice_keeps_its_layout_levers_with_a_hybrid_group():
    """A run that does not fit gets the same wider-layout advice with data_shard = data as without it."""

    def body(shard):
        b = _body(shard)
        b["model"] = {"preset": "llama-2-70b"}
        b["training"].update(
            sequence_length=65536, micro_batch_size=1, activation_recomputation="full", global_batch_size=64
        )
        b["output"] = {"recommendations": True}
        b["cost"] = {"usd_per_accelerator_hour": 1.0}
        return b

    def fit_advice(b):
        recs = estimate_training(b, CATALOG)["recommendations"]
        return [r["change"] for r in recs if r["code"] == "does_not_fit"]

    plain, hybrid = fit_advice(body(None)), fit_advice(body(64))
    assert plain and hybrid
    assert "accelerator" not in json_keys(plain[0]) and "accelerator" not in json_keys(hybrid[0])
    layout = hybrid[0]["hardware"]["parallelism"]
    assert "data_shard" in layout and layout["data_shard"] is None  # the group no longer divides the new data


def json_keys(change: dict) -> set[str]:
    out: set[str] = set()
    for key, value in change.items():
        out.add(key)
        if isinstance(value, dict):
            out |= json_keys(value)
    return out
