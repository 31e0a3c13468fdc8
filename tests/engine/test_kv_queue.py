"""More requests in flight than the engine runs at once (issue 30): a continuous-batching engine runs as many as its
KV cache holds (or serving.max_num_seqs allows) and queues the rest; the answer says so instead of "does not fit".

NVIDIA's NIM 1.8.0 table (Llama-3.3-70B FP8, 2 × H100, 5000 in / 500 out) shows the regime: from 100 to 250 users
the output throughput stays at 917-921 tokens/s and the ITL at 93 ms, while the TTFT grows linearly, 8.0 s → 88.6 s
(public_serving_sweeps.csv): a full engine and a queue in front of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from scalecost.engine.inference.estimate import estimate_inference

from .reference_catalog import load_catalog
from .test_continuous_batching import NIM

CATALOG = load_catalog()
# (users, mean TTFT s, ITL s, output tokens/s) from the NIM table, the points past the KV cache's room
NIM_QUEUED = [
    (150, 34.79422, 0.09286, 920.9),
    (200, 61.68022, 0.09306, 920.54),
    (250, 88.60532, 0.0932, 920.12),
]


def estimate(**request: Any) -> dict[str, Any]:
    return estimate_inference({**NIM, **request}, CATALOG)


def test_past_the_kv_cache_the_engine_runs_what_fits_and_queues_the_rest() -> None:
    room = estimate(batch_size=1)["memory"]["max_batch_size"]
    full = estimate(batch_size=room)
    over = estimate(batch_size=room + 60)
    load = over["load"]
    assert over["memory"]["fits"]  # laid out for what is resident
    for key in ("per_device_bytes", "breakdown", "max_batch_size"):
        assert over["memory"][key] == full["memory"][key]
    # the longest context at which every request in flight would be resident
    assert over["memory"]["max_context_tokens"] < 5500 <= full["memory"]["max_context_tokens"]
    assert load["running_requests"] == room and load["queued_requests"] == 60
    assert load["running_limit"] == "kv_cache" and full["load"]["running_limit"] is None
    assert full["load"]["queued_requests"] == 0 and full["load"]["queue_wait_s"] == 0
    # the steps are those of a full engine: the same TPOT and throughput
    assert over["latency"]["time_per_output_token_s"] == full["latency"]["time_per_output_token_s"]
    x = full["throughput"]["requests_per_second"]
    assert over["throughput"] == full["throughput"]
    # every request waits (C − R)/X in front (Little's law: C/X is the time in the system)
    assert load["queue_wait_s"] == pytest.approx(60 / x)
    for q in ("p50", "p90", "p99"):
        shift = (
            over["latency"]["percentiles"]["time_to_first_token_s"][q]
            - full["latency"]["percentiles"]["time_to_first_token_s"][q]
        )
        assert shift == pytest.approx(60 / x)
    assert over["latency"]["end_to_end_s"] == pytest.approx((room + 60) / x)
    assert any(str(room + 60) in n and "queue" in n for n in over["notes"])


def test_the_nim_table_past_the_kv_cache() -> None:
    """Printed per point; the TTFT is the mean (AIPerf), end_to_end − (O − 1)·TPOT as in serving_calibration."""
    for users, ttft, itl, throughput in NIM_QUEUED:
        a = estimate(batch_size=users)
        lat = a["latency"]
        mean_ttft = lat["end_to_end_s"] - 499 * lat["time_per_output_token_s"]
        errors = (mean_ttft / ttft - 1, lat["time_per_output_token_s"] / itl - 1)
        got = a["throughput"]["output_tokens_per_second"] / throughput - 1
        print(f"c{users}: TTFT {errors[0]:+.0%} TPOT {errors[1]:+.0%} throughput {got:+.0%}")
        assert abs(errors[0]) <= 0.20 and abs(errors[1]) <= 0.20 and abs(got) <= 0.10


def test_max_num_seqs_below_the_kv_cache_sets_the_running_batch() -> None:
    capped = estimate(batch_size=32, serving={"max_num_seqs": 8})
    free = estimate(batch_size=8)
    assert capped["load"]["running_limit"] == "max_num_seqs" and capped["load"]["running_requests"] == 8
    assert capped["latency"]["time_per_output_token_s"] == free["latency"]["time_per_output_token_s"]
    assert capped["memory"]["breakdown"]["kv_cache"] == free["memory"]["breakdown"]["kv_cache"]
    # under a rate the smaller of the two caps sets the sustainable rate
    room = estimate(batch_size=1)["memory"]["max_batch_size"]
    beyond = estimate(workload={"requests_per_second": 100.0}, serving={"max_num_seqs": 4 * room})
    at_room = estimate(workload={"requests_per_second": 100.0})
    assert beyond["load"]["saturated"] and beyond["load"]["running_limit"] == "kv_cache"
    sustainable = beyond["load"]["sustainable_requests_per_second"]
    assert sustainable == at_room["load"]["sustainable_requests_per_second"]


def test_a_static_batch_past_the_kv_cache_does_not_fit() -> None:
    room = estimate(batch_size=1)["memory"]["max_batch_size"]
    static = estimate(batch_size=room + 1, serving={"scheduler": "static"})
    assert not static["memory"]["fits"]


def test_nothing_fits_is_not_a_queue() -> None:
    one = estimate(
        batch_size=4,
        weights={"precision": "bf16"},
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
    )
    assert not one["memory"]["fits"] and one["load"]["queued_requests"] == 0


def test_the_queue_note_is_translated() -> None:
    from scalecost import i18n
    from scalecost.engine.i18n import using

    room = estimate(batch_size=1)["memory"]["max_batch_size"]
    with using(i18n.language("es")):
        notes = estimate(batch_size=room + 5)["notes"]
    assert any("cola" in n and "caché KV" in n for n in notes)


def test_recommendations_make_room_for_every_request_in_flight() -> None:
    """The fit-seeking rules (more devices, shorter context, smaller batch) claim that none waits in the queue."""
    from scalecost.engine.patch import merge_patch

    room = estimate(batch_size=1)["memory"]["max_batch_size"]
    body = {**NIM, "batch_size": room + 40, "output": {"suggestions": False}}
    recs = estimate_inference(body, CATALOG)["recommendations"]
    room_claims = [r for r in recs if r["expected"]["field"] == "load.queued_requests"]
    assert {r["code"] for r in room_claims} >= {"more-devices", "reduce-batch"}
    for rec in room_claims:
        after = estimate_inference(merge_patch(body, rec["change"]), CATALOG)
        assert after["load"]["queued_requests"] == rec["expected"]["value"] == 0, rec


SHORT_8B = {  # short requests of a small model: the KV cache holds thousands, the engine's max_num_seqs decides
    "model": {"preset": "llama-3-8b"},
    "engine": "vllm",
    "prompt_tokens": 128,
    "output_tokens": 128,
    "output": {"suggestions": False, "recommendations": False},
}


# Llama-3-8B short requests on vLLM A100s, batches searched to 1,024: vLLM runs 256 at once there
A100_PLAN = {
    "model": {"preset": "llama-3-8b"},
    "workload": {"output_tokens_per_second": 200_000, "prompt_tokens": 128, "output_tokens": 128},
    "slo": {"time_to_first_token_s": 5.0, "time_per_output_token_s": 0.2},
    "search": {
        "accelerators": ["nvidia-a100-sxm-80gb"],
        "engines": ["vllm"],
        "devices_per_replica": [1],
        "formats": [{"precision": "bf16"}],
        "max_batch_size": 1024,
    },
}


@pytest.mark.parametrize(
    ("accelerator", "default"),
    [
        ("nvidia-a100-sxm-80gb", 256),
        ("nvidia-l40s", 256),
        ("nvidia-h100-sxm-80gb", 1024),
        ("amd-mi300x", 1024),
    ],
)
def test_vllm_runs_its_default_max_num_seqs_at_once(accelerator: str, default: int) -> None:
    """vLLM's OpenAI server: max_num_seqs 1024 on >= 70 GiB other than the A100, else 256 (get_batch_defaults)."""
    body = {**SHORT_8B, "hardware": {"accelerator": accelerator}}
    at = estimate_inference({**body, "batch_size": default}, CATALOG)
    past = estimate_inference({**body, "batch_size": default + 100}, CATALOG)
    assert at["load"]["max_num_seqs"] == default and at["load"]["queued_requests"] == 0
    assert past["memory"]["max_batch_size"] > default + 100  # the KV cache would hold them all
    assert past["load"]["running_limit"] == "max_num_seqs" and past["load"]["running_requests"] == default
    assert "get_batch_defaults" in past["load"]["max_num_seqs_source"]
    mine = estimate_inference(
        {**body, "batch_size": default + 100, "serving": {"max_num_seqs": 4096}}, CATALOG
    )
    assert mine["load"]["queued_requests"] == 0 and mine["load"]["max_num_seqs_source"] == "request"


def test_vllm_captures_cuda_graphs_up_to_twice_max_num_seqs() -> None:
    from scalecost.engine.inference.model.schedule import Schedule, cuda_graph_max_batch

    h100 = CATALOG.accelerators["nvidia-h100-sxm-80gb"]
    assert cuda_graph_max_batch(Schedule(scheduler="continuous"), "vllm", h100, 1) == 512
    assert cuda_graph_max_batch(Schedule(scheduler="continuous", max_concurrency=64), "vllm", h100, 1) == 128


def test_the_planner_batches_no_more_than_the_engine_runs() -> None:
    """Before, the planner put 955 requests on one vLLM A100 replica, which a default vLLM runs 256 at a time."""
    from scalecost.engine.inference.planner import plan_serving

    plan = plan_serving(A100_PLAN, CATALOG)["plan"]
    assert plan["batch_size"] <= 256
    again = estimate_inference(plan["estimate_request"], CATALOG)
    assert again["load"]["queued_requests"] == 0


def test_nvidia_nim_sweeps_queue_where_the_kv_cache_fills() -> None:
    """NVIDIA's DLI course data (787 GenAI-Perf runs of an older NIM, tests/engine/nim_dli.py): in every decode-bound
    sweep whose throughput stops rising from 150 to 250 users while TTFT grows, the model queues requests too, and
    runs 11-56 % more at once than the measured tokens/s × ITL (the 8B sweeps within 26 %, the 70B ones hold about a
    third less KV than modelled; docs/formulas.md). The whole table is printed, not bounded (an older stack)."""
    from .nim_dli import kv_table, load, report
    from .serving_calibration import compare

    points = load()
    assert len(points) == 787
    print(report([compare(p, CATALOG) for p in points]))
    rows = kv_table(CATALOG)
    for key, measured, modelled, queued in rows:
        print(f"{key}: {measured:.1f} running measured, {modelled:.0f} modelled, {queued:.0f} queued")
    assert len(rows) >= 10
    assert all(queued > 0 and 1.0 <= modelled / measured <= 1.6 for _, measured, modelled, queued in rows)


def _applied(body: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    from scalecost.engine.patch import merge_patch

    return estimate_inference(merge_patch(body, rec["change"]), CATALOG)


def test_no_recommendation_calls_a_queue_a_fit() -> None:
    """70B in bf16 on one H100 holds no sequence of 5,500 tokens; 8-bit weights hold one, so 199 of 200 would queue:
    the fit-seeking rules ask that every request be resident, not only that memory fits."""
    body = {
        "model": {"preset": "llama-3.3-70b"},
        "weights": {"precision": "bf16"},
        "engine": "vllm",
        "prompt_tokens": 5000,
        "output_tokens": 500,
        "batch_size": 200,
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
        "output": {"suggestions": False},
    }
    before = estimate_inference(body, CATALOG)
    assert not before["memory"]["fits"]
    codes = {r["code"] for r in before["recommendations"]}
    assert "more-devices" in codes and "quantize-weights-to-fit" not in codes  # 8-bit: 1 running, 199 queued
    for rec in before["recommendations"]:
        if rec["code"] in {
            "quantize-weights-to-fit",
            "fp8-kv-cache",
            "more-devices",
            "reduce-batch",
            "reduce-context",
        }:
            after = _applied(body, rec)
            assert after["memory"]["fits"] and after["load"]["queued_requests"] == 0, rec


def test_raise_batch_stays_within_what_the_engine_runs() -> None:
    body = {**SHORT_8B, "batch_size": 64, "hardware": {"accelerator": "nvidia-a100-sxm-80gb"}}
    body["output"] = {"suggestions": False}
    recs = {r["code"]: r for r in estimate_inference(body, CATALOG)["recommendations"]}
    raise_batch = recs["raise-batch"]
    assert raise_batch["change"]["batch_size"] <= 256  # vLLM's default max_num_seqs on the A100
    assert _applied(body, raise_batch)["load"]["queued_requests"] == 0
    capped = estimate_inference({**body, "batch_size": 300}, CATALOG)["recommendations"]
    reduce = next(r for r in capped if r["code"] == "reduce-batch")
    assert reduce["change"] == {"batch_size": 256} and "max_num_seqs" in reduce["message"]


def test_the_notes_say_which_limit_queues() -> None:
    default = estimate_inference(
        {**SHORT_8B, "batch_size": 300, "hardware": {"accelerator": "nvidia-a100-sxm-80gb"}}, CATALOG
    )
    assert any("default max_num_seqs is 256" in n for n in default["notes"])
    given = estimate(batch_size=40, serving={"max_num_seqs": 16})
    assert any("serving.max_num_seqs is 16" in n for n in given["notes"])
    auto = estimate(batch_size=4000, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"})
    assert auto["memory"]["fits"] and auto["load"]["queued_requests"] > 0
    assert any("holds all 4000 requests at once" in n for n in auto["notes"])


def test_a_decode_pool_runs_its_own_parts_max_num_seqs() -> None:
    body = {
        **SHORT_8B,
        "prompt_tokens": 1000,
        "output_tokens": 500,
        "batch_size": 600,
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
        "serving": {
            "disaggregation": {
                "prefill": {"tensor_parallel": 1, "replicas": 1},
                "decode": {"tensor_parallel": 1, "replicas": 1, "accelerator": "nvidia-a100-sxm-80gb"},
            }
        },
    }
    a = estimate_inference(body, CATALOG)
    assert a["load"]["max_num_seqs"] == 256
    assert a["load"]["disaggregation"]["decode"]["batch_per_replica"] <= 256


def test_the_planner_counts_batches_above_max_num_seqs_apart() -> None:
    from scalecost.engine.inference.planner import plan_serving

    excluded = plan_serving(A100_PLAN, CATALOG)["exclusions"]
    assert excluded["does_not_fit"] == 0 and excluded["above_max_num_seqs"] > 0
