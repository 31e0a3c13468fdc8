"""Estimates per second: the engine alone, and through the HTTP endpoint (in-process test client).

    .venv/bin/python bench/estimate_bench.py            # prints a table
Server time per request is measured in-process (no network), so it is what one worker spends.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bodies import as_loaded  # noqa: E402
from scalecost import create_app  # noqa: E402
from scalecost.engine import (
    estimate_inference,  # noqa: E402
    estimate_training,  # noqa: E402
)
from scalecost.store import migrate  # noqa: E402
from scalecost.store.seeding import seed_catalog  # noqa: E402
from scalecost.usecases.catalog import engine_catalog  # noqa: E402

TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
}
INFERENCE = {
    "model": {"preset": "llama-3-70b"},
    "weights": {"precision": "fp16"},
    "batch_size": 8,
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"},
}
INFERENCE_NO_SUGGESTIONS = {**INFERENCE, "output": {"suggestions": False}}


def timed(fn, seconds: float = 2.0) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def row(name: str, samples: list[float]) -> str:
    samples = sorted(samples)
    p50 = statistics.median(samples) * 1000
    p99 = samples[int(len(samples) * 0.99) - 1] * 1000
    rate = len(samples) / sum(samples)
    return f"| {name:<46} | {rate:>9.0f} | {p50:>7.2f} | {p99:>7.2f} |"


def main() -> None:
    tmp = tempfile.mkdtemp()
    url = f"sqlite:///{tmp}/bench.db"
    migrate.upgrade(url)
    app = create_app({"DATABASE_URL": url, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"})
    with app.extensions["scalecost.db"].transaction() as session:
        seed_catalog(session)
    client = app.test_client()
    with app.extensions["scalecost.db"].transaction() as session:
        catalog = engine_catalog(session)
    t_body = as_loaded(TRAINING)
    i_body = as_loaded(INFERENCE)
    i_plain = as_loaded(INFERENCE_NO_SUGGESTIONS)

    def post(path, body):
        def call():
            response = client.post(path, json=body)
            assert response.status_code == 200, response.get_json()

        return call

    print("| what | per second | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    print(row("engine: estimate_training", timed(lambda: estimate_training(t_body, catalog))))
    print(
        row(
            "engine: estimate_inference (no suggestions)", timed(lambda: estimate_inference(i_plain, catalog))
        )
    )
    print(
        row(
            "engine: estimate_inference + catalog ranking", timed(lambda: estimate_inference(i_body, catalog))
        )
    )
    print(row("HTTP: POST /v1/estimates/training", timed(post("/v1/estimates/training", TRAINING))))
    print(
        row(
            "HTTP: POST /v1/estimates/inference (+suggestions)",
            timed(post("/v1/estimates/inference", INFERENCE)),
        )
    )


if __name__ == "__main__":
    main()
