"""One model, not two: the planner's vectorised speeds (bulk.py) equal the single estimate's estimate_speed on
1,000 random configurations (every engine, format, KV precision, device count and batch; dense, GQA, MoE, MLA
and LSTM models), within 1e-9 relative."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
from scalecost.engine.inference.model.arrays import batch_speeds
from scalecost.engine.inference.model.formats import (
    ENGINE_KV_PRECISIONS,
    ENGINES,
    default_kv_precision,
    resolve_weight_format,
)
from scalecost.engine.inference.model.memory import Workload
from scalecost.engine.inference.model.speed import estimate_speed
from scalecost.engine.models import resolve_model

PRESETS = (
    "llama-3-8b",
    "llama-2-70b",
    "mixtral-8x7b",
    "deepseek-v3",
    "gpt-2-1.5b",
    "lstm-2x1500",
    "mistral-7b",
)
PRECISIONS = ("fp16", "bf16", "fp8", "int8", "int4", "fp32")


def _random_case(rng: random.Random, catalog):
    model = resolve_model({"preset": rng.choice(PRESETS)})
    while True:
        engine = rng.choice(ENGINES)
        fmt, errors = resolve_weight_format(engine, rng.choice(PRECISIONS), None)
        if fmt is not None and not errors:
            break
    kv = rng.choice(sorted(ENGINE_KV_PRECISIONS[engine]) + [default_kv_precision(engine, fmt)])
    w = Workload(model, engine, fmt, kv, 1, rng.randint(1, 3000), rng.randint(1, 1500))
    acc = rng.choice(sorted(catalog.accelerators.values(), key=lambda a: a.id))
    count = rng.choice(w.counts[:8])
    return w, acc, count


def test_vectorised_speeds_equal_the_single_estimate_on_1000_random_configurations(catalog):
    rng = random.Random(2026)
    worst, checked = 0.0, 0
    while checked < 1000:
        w, acc, count = _random_case(rng, catalog)
        batches = np.array(sorted(rng.sample(range(1, 2049), 5)), dtype=float)
        bulk = batch_speeds(w, acc, count, batches)
        for i, b in enumerate(batches):
            single = estimate_speed(replace(w, batch=int(b)), acc, count)
            pairs = (
                (single.time_to_first_token_s, bulk.time_to_first_token_s[i]),
                (single.time_per_output_token_s, bulk.time_per_output_token_s[i]),
                (single.end_to_end_s, bulk.end_to_end_s[i]),
                (single.requests_per_second, bulk.requests_per_second[i]),
            )
            for a, v in pairs:
                assert a is not None
                worst = max(worst, abs(a - v) / abs(a))
            checked += 1
    assert worst <= 1e-9, worst
