"""The serving planner alone (no Flask, no HTTP): how fast the search is, and how it grows.

    .venv/bin/python bench/plan_inference_bench.py        # BENCH_REPEAT (3) runs per row, the median kept

1. The vectorised model (engine/inference/bulk.py) over 10k / 100k / 1M batch sizes of one deployment group,
   against the single estimate's estimate_speed called once per configuration.
2. Planner searches (plan_serving: parse, every group checked, every batch evaluated, frontier, answer)
   whose search spaces hold about 10k, 100k, 1M and 4M configurations: configurations considered and
   evaluated, server seconds, configurations per second.
3. The issue's worked example: Llama-3-70B at 50 requests/s, TTFT <= 1 s, TPOT <= 40 ms, cheapest across
   every accelerator of the catalog.
4. Disaggregated prefill/decode (search.disaggregation): the worked example and a long-prompt workload, with and
   without the pools searched: server seconds, the co-located plan and the pools.
5. The docs' request (docs/guide/planning.md, every default) through the API as `make run` serves it (the Flask app
   on a migrated, seeded SQLite database; no network): wall seconds per request, the issue's "< 1 s" target.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import build_catalog  # noqa: E402
from scalecost.engine.inference.model.arrays import batch_speeds
from scalecost.engine.inference.model.formats import resolve_weight_format
from scalecost.engine.inference.model.memory import Workload
from scalecost.engine.inference.model.speed import estimate_speed
from scalecost.engine.inference.planner import plan_serving
from scalecost.engine.models import resolve_model  # noqa: E402

REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
BASE = {
    "model": {"preset": "llama-3-70b"},
    "workload": {"requests_per_second": 50, "prompt_tokens": 512, "output_tokens": 256},
    "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.04},
}
SEARCHES = {
    "defaults (the docs' request)": {},
    "~10k": {"accelerators": ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb"], "engines": ["vllm"],
             "formats": [{"precision": "fp8"}, {"precision": "bf16"}], "max_batch_size": 256},
    "~100k": {"engines": ["vllm"], "formats": [{"precision": "fp8"}, {"precision": "int4"}], "max_batch_size": 256},
    "~1M": {"engines": ["vllm", "tensorrt-llm"], "kv_cache_precisions": ["fp16", "fp8"], "max_batch_size": 512},
    "~4M (defaults, batch to 1024)": {"max_batch_size": 1024},
    "~4M + search.disaggregation": {"max_batch_size": 1024, "disaggregation": True},
}  # fmt: skip
LONG = {  # issue 30 §3: long prompts under a tight TPOT, where separate prefill and decode pools win
    "model": {"preset": "llama-3-70b"},
    "workload": {"requests_per_second": 20, "prompt_tokens": 6000, "output_tokens": 300},
    "slo": {"time_to_first_token_s": 1.5, "time_per_output_token_s": 0.025},
}


def median_seconds(fn) -> float:
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def vectorised_model(catalog) -> None:
    print("1. The model alone: one group (llama-3-70b fp8, vLLM, 8 x H100), batch sizes as configurations")
    model = resolve_model({"preset": "llama-3-70b"})
    fmt, _ = resolve_weight_format("vllm", "fp8", None)
    assert fmt is not None
    w = Workload(model, "vllm", fmt, "fp16", 1, 512, 256)
    acc = catalog.accelerators["nvidia-h100-sxm-80gb"]
    for n in (10_000, 100_000, 1_000_000):
        batches = np.arange(1, n + 1, dtype=float)
        seconds = median_seconds(lambda batches=batches: batch_speeds(w, acc, 8, batches))
        print(f"   vectorised  {n:>9,} configurations  {seconds * 1e3:8.1f} ms  {n / seconds:>13,.0f} /s")
    n = 2_000
    seconds = median_seconds(lambda: [estimate_speed(replace(w, batch=b), acc, 8) for b in range(1, n + 1)])
    print(f"   single path {n:>9,} configurations  {seconds * 1e3:8.1f} ms  {n / seconds:>13,.0f} /s")


def searches(catalog) -> None:
    print("\n2. Planner searches (llama-3-70b, 50 req/s, TTFT <= 1 s, TPOT <= 40 ms)")
    print(
        f"   {'space':<30} {'considered':>11} {'evaluated':>10} {'groups':>7} {'server s':>9} {'configs/s':>12}  best"
    )
    for label, search in SEARCHES.items():
        body = {**BASE, "search": search}
        answer = plan_serving(body, catalog)
        seconds = median_seconds(lambda body=body: plan_serving(body, catalog))
        s, plan = answer["search"], answer["plan"]
        best = (
            f"{plan['replicas']} x {plan['devices_per_replica']} {plan['accelerator']} {plan['engine']} "
            f"{plan['weights']['format']} b={plan['batch_size']} ${plan['cost']['usd_per_hour']:,.2f}/h"
            if plan else "none"
        ) + (" (pools cheaper)" if answer["disaggregated"] else "")  # fmt: skip
        print(
            f"   {label:<30} {s['configurations_considered']:>11,} {s['configurations_evaluated']:>10,} "
            f"{s['deployment_groups']:>7,} {seconds:>9.3f} {s['configurations_considered'] / seconds:>12,.0f}  {best}"
        )


def worked_example(catalog) -> None:
    print("\n3. Llama-3-70B, 50 req/s (512 in / 256 out), TTFT <= 1 s, TPOT <= 40 ms, every accelerator")
    answer = plan_serving({**BASE, "search": {"max_batch_size": 1024}}, catalog)
    p = answer["plan"]
    c = p["cost"]
    print(
        f"   {p['replicas']} replicas x {p['devices_per_replica']} {p['accelerator']} ({p['provider']}), "
        f"{p['engine']} {p['weights']['format']}, KV {p['kv_cache_precision']}, batch {p['batch_size']}: "
        f"TTFT {p['latency']['time_to_first_token_s']:.3f} s, TPOT {p['latency']['time_per_output_token_s'] * 1e3:.1f} ms"
    )
    print(
        f"   ${c['usd_per_hour']:,.2f}/h, ${c['usd_per_million_input_tokens']:.3f} per M input, "
        f"${c['usd_per_million_output_tokens']:.3f} per M output tokens; frontier of {len(answer['frontier'])} points"
    )


def disaggregated(catalog) -> None:
    print("\n4. search.disaggregation: separate prefill and decode pools, every accelerator (batch to 1024)")
    for label, base in (
        ("512/256, 50 req/s, 1 s / 40 ms", BASE),
        ("6000/300, 20 req/s, 1.5 s / 25 ms", LONG),
    ):
        for searched in (False, True):
            body = {**base, "search": {"max_batch_size": 1024, "disaggregation": searched}}
            answer = plan_serving(body, catalog)
            seconds = median_seconds(lambda body=body: plan_serving(body, catalog))
            p, pools = answer["plan"], answer["disaggregated_serving"]["plan"]
            colocated = f"{p['replicas']} x {p['devices_per_replica']} {p['accelerator']} ${p['cost']['usd_per_hour']:,.2f}/h"
            split = (
                f"prefill {pools['prefill']['replicas']} x {pools['prefill']['tensor_parallel']} + decode "
                f"{pools['decode']['replicas']} x {pools['decode']['tensor_parallel']} {pools['accelerator']} "
                f"${pools['cost']['usd_per_hour']:,.2f}/h" if pools else "-"
            )  # fmt: skip
            print(f"   {label:<34} pools searched {searched!s:<5} {seconds:7.3f} s  {colocated}  |  {split}")


def through_the_api() -> None:
    print("\n5. The docs' request through the API (Flask app, migrated and seeded SQLite, every default)")
    import tempfile

    from scalecost import create_app
    from scalecost.store import migrate
    from scalecost.store.seeding import seed_catalog
    from scalecost.store.session import Database

    with tempfile.TemporaryDirectory(prefix="scalecost-plan-bench-") as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        migrate.upgrade(url)
        database = Database(url)
        with database.transaction() as session:
            seed_catalog(session)
        database.dispose()
        os.environ["DATABASE_URL"] = url
        client = create_app().test_client()
        answer = client.post("/v1/plans/inference", json=BASE).get_json()  # warms the catalog cache
        seconds = median_seconds(lambda: client.post("/v1/plans/inference", json=BASE))
        p = answer["plan"]
        print(
            f"   {seconds:.3f} s per request (median of {REPEAT}; server_seconds {answer['search']['server_seconds']:.3f}): "
            f"{p['replicas']} x {p['devices_per_replica']} {p['accelerator']} ${p['cost']['usd_per_hour']:,.2f}/h"
        )


def main() -> None:
    catalog = build_catalog()
    vectorised_model(catalog)
    searches(catalog)
    worked_example(catalog)
    disaggregated(catalog)
    through_the_api()


if __name__ == "__main__":
    main()
