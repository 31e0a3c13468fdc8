"""How an engine admits requests to its KV cache sets how many run at once when the cache is the limit (issue 30;
model/admission.py). vLLM allocates blocks as tokens are computed and preempts when they run out, so its running
requests hold their prompt and about half their output; TensorRT-LLM (GUARANTEED_NO_EVICT) reserves the whole
output when it admits one.

Checked on Dielabs' vLLM 0.20.1 sweeps of Qwen3-8B-AWQ on one RTX 4070 SUPER (data/dielabs_vllm_kv_plateau.csv,
whose README section quotes the Prometheus counts of running requests). `pytest -s` prints the comparison.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.model.memory import kv_running_max, max_batch_size
from scalecost.engine.inference.request import parse_request

from .reference_catalog import load_catalog

CATALOG = load_catalog()
CSV = Path(__file__).with_name("data") / "dielabs_vllm_kv_plateau.csv"
# run → (prompt, output, KV precision, running requests measured at the plateau: low, high; None = no cap seen
# up to the largest concurrency, which is then the floor)
RUNS = {
    "baseline": (2048, 256, "fp16", (9.5, 10.5)),
    "fp8-kv": (2048, 256, "fp8", (18.0, 19.0)),
    "chat": (512, 1024, "fp8", None),
}


def body(prompt: int, output: int, kv: str, batch: int = 1, engine: str = "vllm") -> dict[str, Any]:
    return {
        "model": {"preset": "qwen3-8b"},
        "weights": {"format": "awq"},
        "engine": engine,
        "prompt_tokens": prompt,
        "output_tokens": output,
        "kv_cache_precision": kv,
        "hardware": {"accelerator": "nvidia-rtx-4070-super", "count": 1},
        "batch_size": batch,
        "output": {"suggestions": False, "recommendations": False},
    }


def rows() -> list[dict[str, str]]:
    with CSV.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def limits(prompt: int, output: int, kv: str, engine: str = "vllm") -> tuple[int, int]:
    """(running limit under the engine's admission, largest batch at the whole context)."""
    p = parse_request(body(prompt, output, kv, engine=engine), CATALOG)
    return kv_running_max(p.workload, p.accelerator, 1), max_batch_size(p.workload, p.accelerator, 1)


def test_vllm_runs_as_many_as_its_kv_cache_holds_on_average() -> None:
    largest = {run: max(int(r["concurrency"]) for r in rows() if r["run"] == run) for run in RUNS}
    print(f"\n{'run':10} {'measured':>10} {'on demand':>10} {'whole context':>14}")
    for run, (prompt, output, kv, measured) in RUNS.items():
        on_demand, whole = limits(prompt, output, kv)
        shown = f"{measured[0]:g}-{measured[1]:g}" if measured else f">= {largest[run]}"
        print(f"{run:10} {shown:>10} {on_demand:>10} {whole:>14}")
        if measured is None:
            # every request ran: the whole-context rule would have queued some, the on-demand one does not
            assert whole < largest[run] <= on_demand
        else:
            # within 0-20 % above the plateau (the KV capacity is modelled 11-26 % high on NIM's plateaus too)
            assert measured[0] <= on_demand <= 1.2 * measured[1]


def test_the_estimate_runs_every_chat_request_and_lays_memory_out_for_what_they_hold() -> None:
    """At 32 users of the chat run all 32 run (as measured); memory holds their average tokens and fits; the note says
    why; a batch past the on-demand limit queues the rest."""
    answer = estimate_inference(body(512, 1024, "fp8", batch=32), CATALOG)
    load, memory = answer["load"], answer["memory"]
    assert load["running_requests"] == 32 and load["queued_requests"] == 0
    assert load["kv_admission"] == "on_demand" and load["kv_tokens_per_request"] == 512 + 512
    assert memory["fits"] and memory["max_batch_size"] < 32  # max_batch_size keeps the whole context
    assert memory["breakdown"]["kv_cache"] == pytest.approx(
        32 * 1024 * memory["kv_cache_bytes_per_token"], rel=1e-9
    )
    assert any("preempts" in n and "32" in n for n in answer["notes"])
    on_demand, _ = limits(512, 1024, "fp8")
    past = estimate_inference(body(512, 1024, "fp8", batch=on_demand + 10), CATALOG)["load"]
    assert past["running_requests"] == on_demand and past["queued_requests"] == 10
    assert past["running_limit"] == "kv_cache"


def test_tensorrt_llm_reserves_the_whole_output() -> None:
    """GUARANTEED_NO_EVICT: the running limit is the whole-context batch; SGLang's floor ratio holds a little more
    than vLLM's half."""
    on_demand, whole = limits(512, 1024, "fp8", engine="tensorrt-llm")
    assert on_demand == whole
    sglang, _ = limits(512, 1024, "fp8", engine="sglang")
    vllm, _ = limits(512, 1024, "fp8")
    assert whole < sglang <= vllm
    answer = estimate_inference(body(512, 1024, "fp8", batch=1, engine="tensorrt-llm"), CATALOG)
    assert answer["load"]["kv_admission"] == "reserved"
    assert answer["load"]["kv_tokens_per_request"] == 512 + 1024


def test_speed_columns_are_printed() -> None:
    """Printed, not bounded (data/README.md: the ITL p50 leaves out the prefill-carrying steps the TPOT counts)."""
    print(
        f"\n{'run':9} {'users':>5} {'out tok/s':>16} {'TTFT p50 s':>18} {'ITL p50 / TPOT ms':>20} {'running':>8}"
    )
    for r in rows():
        prompt, output, kv, _ = RUNS[r["run"]]
        a = estimate_inference(body(prompt, output, kv, batch=int(r["concurrency"])), CATALOG)
        x, t = a["throughput"]["output_tokens_per_second"], a["latency"]["time_to_first_token_s"]
        tpot = a["latency"]["time_per_output_token_s"] * 1e3
        print(
            f"{r['run']:9} {r['concurrency']:>5} {x:7.0f} vs {float(r['output_tokens_per_second']):5.0f} "
            f"{t:8.2f} vs {float(r['ttft_p50_ms']) / 1e3:6.2f} {tpot:8.1f} vs {float(r['itl_p50_ms']):6.1f} "
            f"{a['load']['running_requests']:8.1f}"
        )
        assert x > 0 and t > 0


def test_past_the_on_demand_limit_the_queue_note_says_what_the_cache_holds_on_average() -> None:
    """Requests queued under on-demand admission: one note, in the average's terms (no "all run"), and reduce-batch
    offers the batch the engine runs, not the smaller whole-context one."""
    on_demand, whole = limits(512, 1024, "fp8")
    request = {**body(512, 1024, "fp8", batch=80), "output": {"suggestions": False, "recommendations": True}}
    answer = estimate_inference(request, CATALOG)
    notes = [n for n in answer["notes"] if "vllm" in n]
    assert len(notes) == 1 and "about 1024 tokens each on average" in notes[0] and "all run" not in notes[0]
    reduce = next(r for r in answer["recommendations"] if r["change"].get("batch_size"))
    assert reduce["change"] == {"batch_size": on_demand} and on_demand > whole


def test_one_sequence_whose_whole_context_does_not_fit_does_not_fit() -> None:
    """vLLM refuses to start when one sequence's whole context does not fit its KV cache: no on-demand rescue."""
    answer = estimate_inference(body(1000, 30000, "fp16"), CATALOG)
    assert not answer["memory"]["fits"] and answer["memory"]["max_batch_size"] == 0
    assert limits(1000, 30000, "fp16") == (0, 0)
    assert not any("preempts" in n for n in answer["notes"])


def test_identical_requests_in_step_are_counted_at_their_whole_context() -> None:
    """workload.lengths "fixed": a closed loop's identical requests reach their whole context together."""
    request = {**body(512, 1024, "fp8", batch=32), "workload": {"lengths": "fixed"}}
    load = estimate_inference(request, CATALOG)["load"]
    _, whole = limits(512, 1024, "fp8")
    assert load["kv_tokens_per_request"] == 1536
    assert load["running_requests"] == whole and load["queued_requests"] == 32 - whole


def test_count_auto_picks_the_fewest_devices_that_run_every_request_where_none_holds_their_whole_context() -> (
    None
):
    request = body(512, 8000, "fp8", batch=182)
    request["hardware"]["count"] = "auto"
    answer = estimate_inference(request, CATALOG)
    count = answer["hardware"]["count"]
    assert answer["memory"]["fits"] and answer["load"]["running_requests"] == 182
    assert answer["load"]["queued_requests"] == 0 and answer["memory"]["max_batch_size"] < 182
    assert any("at their whole context" in n and "the fewest" in n for n in answer["notes"])
    assert not any("fits; showing" in n for n in answer["notes"])
    # one device fewer (of the counts the layout allows) queues some
    fewer = max(c for c in (1, 2, 4) if c < count)
    request["hardware"]["count"] = fewer
    assert estimate_inference(request, CATALOG)["load"]["queued_requests"] > 0
    # under an arrival rate there is no closed loop to hold: the most devices, no such note
    request["hardware"]["count"] = "auto"
    request["workload"] = {"requests_per_second": 0.5}
    rated = estimate_inference(request, CATALOG)
    assert not any("runs them all" in n for n in rated["notes"])


def test_headroom_says_when_every_request_runs_only_on_demand() -> None:
    """All run only because vLLM allocates on demand: a recommendation names the devices that hold them whole."""
    request = {
        **body(100, 857, "fp16", batch=31),
        "hardware": {"accelerator": "nvidia-l4", "count": 1},
        "output": {"suggestions": False, "recommendations": True},
    }
    del request["weights"]  # bf16
    answer = estimate_inference(request, CATALOG)
    assert answer["memory"]["max_batch_size"] < 31 and answer["load"]["queued_requests"] == 0
    headroom = [r for r in answer["recommendations"] if "run only because" in r["message"]]
    assert len(headroom) == 1 and headroom[0]["change"] == {"hardware": {"count": 2}}
