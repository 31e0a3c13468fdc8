"""The training planner's speed: the vectorised model alone, and whole searches of growing size.

    .venv/bin/python bench/planner_bench.py        # `make bench-planner`

1. Engine alone: evaluate_layouts (engine/training/model/arrays.py) on 1,000,000 random layouts of Llama-2-70B on H100
   (data 1–64, tensor 1–8, pipeline 1–8, ZeRO 0–3, micro-batch 1–4), best of BENCH_REPEATS (3) runs;
   configurations per second.
2. Whole searches through plan_training (the POST /v1/plans/training door without HTTP: request parsing, base
   plans, enumeration, evaluation, pricing on every offer, frontier, nearest misses, the best plan's full
   estimate) at about 10k, 100k and 1M evaluated configurations (layouts × offers), Llama-2-70B on 2T tokens
   within 45 days, growing the search's accelerators and device counts; server seconds as the answer reports
   them and wall seconds around the call, and configurations per second.
The issue's targets: ≥ 1,000,000 configurations per second in bulk; a ≥ 100,000-configuration search under 1 s.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import build_catalog  # noqa: E402
from scalecost.engine import plan_training  # noqa: E402
from scalecost.engine.training.model.arrays import Layouts, evaluate_layouts
from scalecost.engine.training.request import build_plan  # noqa: E402

REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
REQUEST = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": 2e12, "global_batch_size": 1024, "sequence_length": 4096},
    "constraints": {"deadline": "P45D"},
}
SEARCHES = {  # label → search; each evaluates about the labelled number of configurations
    "10k": {"accelerators": ["nvidia-h100-sxm-80gb"], "device_counts": [256, 512], "zero_stages": [1, 3]},
    "100k": {"accelerators": ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb", "nvidia-h200-sxm-141gb"]},
    "1M": {
        "max_devices": 16384,
        "virtual_pipeline": [1, 2, 4],
        "micro_batch_sizes": [1, 2, 4],
        "context": [1, 2],
    },
}


def engine_alone(catalog) -> None:
    plan = build_plan({**REQUEST, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1}}, catalog)
    n = 1_000_000
    rng = np.random.default_rng(0)
    ones = np.ones(n, dtype=np.int64)
    layouts = Layouts(
        rng.choice([1, 2, 4, 8, 16, 32, 64], n),
        rng.choice([1, 2, 4, 8], n),
        rng.choice([1, 2, 4, 8], n),
        ones,
        ones,
        rng.choice([0, 1, 2, 3], n),
        rng.random(n) < 0.5,
        ones,
        rng.choice([1, 2, 4], n),
        np.zeros(n, dtype=bool),
    )
    best = min(_timed(lambda: evaluate_layouts(plan, layouts)) for _ in range(REPEATS))
    print(
        f"engine alone: {n:,} layouts in {best * 1e3:.0f} ms = {n / best:,.0f} configurations/s (best of {REPEATS})"
    )


def searches(catalog) -> None:
    print(
        f"{'search':>6} {'considered':>12} {'evaluated':>11} {'server s':>9} {'wall s':>7} {'configs/s':>12}"
    )
    previous = None
    for label, search in SEARCHES.items():
        runs = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            answer = plan_training({**REQUEST, "search": search}, catalog)
            runs.append((time.perf_counter() - started, answer))
        wall, answer = min(runs, key=lambda r: r[0])
        stats = answer["search"]
        evaluated = stats["configurations_evaluated"]
        print(
            f"{label:>6} {stats['configurations_considered']:>12,} {evaluated:>11,} {stats['server_seconds']:>9.3f} "
            f"{wall:>7.3f} {evaluated / wall:>12,.0f}"
            + (
                f"   ×{evaluated / previous[0]:.1f} configurations, ×{wall / previous[1]:.1f} time"
                if previous
                else ""
            )
        )
        previous = (evaluated, wall)


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    catalog = build_catalog()
    engine_alone(catalog)
    searches(catalog)
