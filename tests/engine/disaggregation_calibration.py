"""Published disaggregated prefill/decode measurements (data/public_disaggregated_points.csv) against the estimate.

Each row becomes an inference estimate with `serving.disaggregation` (the published pools, engine, model, lengths and
concurrency or rate); predicted TTFT and KV-transfer time are compared with the measurement. Nothing is tuned to
them. Run `python -m tests.engine.disaggregation_calibration` for the table.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Any

from scalecost.engine import estimate_inference
from scalecost.engine.hardware import Catalog

CSV = Path(__file__).with_name("data") / "public_disaggregated_points.csv"
METRICS = (("ttft", "ttft_s"), ("kv_transfer", "kv_transfer_s"))


def load(path: Path = CSV) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def request(row: dict[str, str]) -> dict[str, Any]:
    prompt = int(row["prompt_tokens"])
    chunked = row["chunked_prefill"] == "true"
    body: dict[str, Any] = {
        "model": {"preset": row["model"]},
        "engine": row["engine"],
        "weights": {"precision": row["weights_precision"]},
        "prompt_tokens": prompt,
        "output_tokens": int(row["output_tokens"]),
        "hardware": {"accelerator": row["accelerator"], "count": int(row["decode_tensor_parallel"])},
        "serving": {
            "chunked_prefill": chunked,
            "disaggregation": {
                "prefill": {
                    "tensor_parallel": int(row["prefill_tensor_parallel"]),
                    "replicas": int(row["prefill_replicas"]),
                },
                "decode": {
                    "tensor_parallel": int(row["decode_tensor_parallel"]),
                    "replicas": int(row["decode_replicas"]),
                },
            },
        },
        "output": {"suggestions": False, "recommendations": False},
    }
    if not chunked:  # without chunking the whole prompt is one step: the budget holds it (SGLang --chunked-prefill-size -1)
        body["serving"]["max_num_batched_tokens"] = max(prompt, 16384)
    if row["concurrency"]:
        body["batch_size"] = int(row["concurrency"])
    else:
        body["workload"] = {"requests_per_second": float(row["request_rate"])}
    return body


def table(catalog: Catalog) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    """(label, measured, predicted) per row, seconds."""
    out = []
    for row in load():
        answer = estimate_inference(request(row), catalog)
        predicted = {
            "ttft": answer["latency"]["time_to_first_token_s"],
            "kv_transfer": answer["load"]["disaggregation"]["kv_transfer"]["seconds"],
        }
        measured = {name: float(row[column]) for name, column in METRICS if row[column]}
        out.append((row["label"], measured, predicted))
    return out


def medians(rows: list[tuple[str, dict[str, float], dict[str, float]]]) -> dict[str, tuple[float, int]]:
    """Median |error| and the number of points, per metric."""
    found = {}
    for name, _ in METRICS:
        errors = [abs(p[name] / m[name] - 1.0) for _, m, p in rows if name in m]
        found[name] = (statistics.median(errors), len(errors))
    return found


def report(rows: list[tuple[str, dict[str, float], dict[str, float]]]) -> str:
    lines = [
        f"{'point':<66} {'TTFT s meas/pred':>22} {'err':>6}   {'KV transfer s meas/pred':>24} {'err':>6}"
    ]
    for label, m, p in rows:
        cells = []
        for name, _ in METRICS:
            if name in m:
                cells.append(f"{m[name]:>10.4f} {p[name]:>10.4f} {p[name] / m[name] - 1.0:>+6.0%}")
            else:
                cells.append(f"{'-':>28}")
        lines.append(f"{label:<66} {cells[0]}   {cells[1]}")
    for name, (median, n) in medians(rows).items():
        lines.append(f"median |error| {name}: {median:.1%} over {n} points")
    return "\n".join(lines)


if __name__ == "__main__":
    from .reference_catalog import load_catalog

    print(report(table(load_catalog())))
