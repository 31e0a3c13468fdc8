"""The estimators alone (no Flask, no HTTP, no database): single estimates and a parallelism sweep.

    .venv/bin/python bench/engine_bench.py          # `make bench` runs it after the load table

1. estimate_training / estimate_inference on the request bodies of bench/estimate_bench.py, each timed
   back to back for BENCH_ENGINE_SECONDS (2).
2. A sweep of BENCH_SWEEP (10000) training configurations — llama-2-70b and llama-3-8b on 64–1024 H100s,
   every data × tensor × pipeline layout whose product is the device count, ZeRO 0–3, micro-batch 1–8,
   recomputation none/selective/full — through estimate_training with output.details false, as a capacity
   planner would call it. Configurations the engine rejects (InvalidRequest) are timed and counted too.
   The grid runs twice: as the endpoint does by default (recommendations verified), and with
   output.recommendations false, the lean path a planner uses. bench/compare_llm_analysis.py times both
   side by side with llm-analysis.
"""

from __future__ import annotations

import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bodies import as_loaded  # noqa: E402
from estimate_bench import INFERENCE, INFERENCE_NO_SUGGESTIONS, TRAINING, row, timed  # noqa: E402
from scalecost.engine import (
    InvalidRequest,  # noqa: E402
    estimate_inference,  # noqa: E402
    estimate_training,  # noqa: E402
)
from scalecost.store import migrate  # noqa: E402
from scalecost.store.seeding import seed_catalog  # noqa: E402
from scalecost.store.session import Database  # noqa: E402
from scalecost.usecases.catalog import engine_catalog  # noqa: E402

SECONDS = float(os.environ.get("BENCH_ENGINE_SECONDS", "2"))
SWEEP = int(os.environ.get("BENCH_SWEEP", "10000"))

MODELS = ("llama-2-70b", "llama-3-8b")
COUNTS = (64, 128, 256, 512, 1024)
TENSOR = (1, 2, 4, 8)
PIPELINE = (1, 2, 4, 8, 16, 32)
ZERO = (0, 1, 2, 3)
MICRO = (1, 2, 4, 8)
RECOMPUTE = ("none", "selective", "full")


def build_catalog():
    """The seeded catalog as the engine sees it, built the way the service builds it (bench/estimate_bench.py)."""
    with tempfile.TemporaryDirectory(prefix="scalecost-engine-bench-") as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        migrate.upgrade(url)
        database = Database(url)  # no Flask app: the catalog use case takes a session
        with database.transaction() as session:
            seed_catalog(session)
            session.flush()
            catalog = engine_catalog(session)  # pure dataclasses: outlive the database
        database.dispose()
    return catalog


def sweep_bodies() -> list[dict]:
    """The sweep's request bodies as a client sends them, shuffled."""
    grid = []
    for model, count, t, p, z, micro, recompute in itertools.product(
        MODELS, COUNTS, TENSOR, PIPELINE, ZERO, MICRO, RECOMPUTE
    ):
        if count % (t * p):
            continue
        grid.append(
            {
                "model": {"preset": model},
                "training": {
                    "tokens": "1T",
                    "global_batch_size": 2048,
                    "sequence_length": 4096,
                    "micro_batch_size": micro,
                    "activation_recomputation": recompute,
                },
                "hardware": {
                    "accelerator": "nvidia-h100-sxm-80gb",
                    "count": count,
                    "parallelism": {
                        "data": count // (t * p),
                        "tensor": t,
                        "pipeline": p,
                        "zero_stage": z,
                        "sequence_parallel": t > 1,
                    },
                },
                "output": {"details": False},
            }
        )
    random.Random(0).shuffle(grid)
    return grid


def sweep_grid(n: int) -> tuple[list[dict], int]:
    """`n` loaded training requests (cycling the shuffled grid when n exceeds it)."""
    grid = sweep_bodies()
    loaded = [as_loaded(body) for body in grid]  # exactly what the endpoint hands the engine
    return [loaded[i % len(loaded)] for i in range(n)], len(grid)


def lean(request, catalog):
    """The planner's path: the same request with output.recommendations false (an API option)."""
    return estimate_training(
        {**request, "output": {**request.get("output", {}), "recommendations": False}}, catalog
    )


def run_sweep(requests: list[dict], catalog, estimator) -> dict:
    valid = rejected = fits = 0
    times: list[float] = []
    started = time.perf_counter()
    for request in requests:
        t0 = time.perf_counter()
        try:
            response = estimator(request, catalog)
        except InvalidRequest:
            rejected += 1
        else:
            valid += 1
            fits += bool(response["memory"]["fits"])
        times.append(time.perf_counter() - t0)
    wall = time.perf_counter() - started
    return {"valid": valid, "rejected": rejected, "fits": fits, "wall": wall, "times": sorted(times)}


def main() -> None:
    catalog = build_catalog()
    t_body = as_loaded(TRAINING)
    i_body = as_loaded(INFERENCE)
    i_plain = as_loaded(INFERENCE_NO_SUGGESTIONS)

    print("\n## Engine alone (no HTTP, no database)\n")
    print("| what | per second | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    print(
        row(
            "estimate_training (llama-2-7b, 8× A100)",
            timed(lambda: estimate_training(t_body, catalog), SECONDS),
        )
    )
    print(
        row(
            "estimate_inference (no suggestions)",
            timed(lambda: estimate_inference(i_plain, catalog), SECONDS),
        )
    )
    print(
        row(
            "estimate_inference + catalog ranking",
            timed(lambda: estimate_inference(i_body, catalog), SECONDS),
        )
    )

    requests, grid_size = sweep_grid(SWEEP)
    full = run_sweep(requests, catalog, estimate_training)
    bare = run_sweep(requests, catalog, lean)
    print(
        f"\n### Sweep: {len(requests):,} training configurations ({grid_size:,}-point grid: "
        f"{' / '.join(MODELS)} on {COUNTS[0]}–{COUNTS[-1]} H100s, d×t×p = count, ZeRO 0–3, micro-batch "
        "1–8, recomputation none/selective/full; output.details false)\n"
    )
    print("| path | configurations/s | seconds | p50 ms | p99 ms | valid (fit) | rejected |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, r in (
        ("estimate_training (with recommendations)", full),
        ("estimate_training, output.recommendations false (planner path)", bare),
    ):
        n = r["valid"] + r["rejected"]
        p50 = statistics.median(r["times"]) * 1000
        p99 = r["times"][max(0, int(n * 0.99) - 1)] * 1000
        print(
            f"| {label} | {n / r['wall']:,.0f} | {r['wall']:.1f} | {p50:.2f} | {p99:.2f} | "
            f"{r['valid']:,} ({r['fits']:,}) | {r['rejected']:,} |"
        )
    print(
        "\nEvery recommendation is verified by re-estimating the request with its change applied, which is"
        " what the first row pays for; a sweep sets output.recommendations to false."
    )


if __name__ == "__main__":
    main()
