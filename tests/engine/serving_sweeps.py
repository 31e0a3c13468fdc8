"""Published serving measurements at a fixed concurrency or arrival rate (data/public_serving_sweeps.csv).

Each row is one measured point (TTFT, TPOT, throughput) as its source printed it; data/README.md describes
the columns and the sources. `batch` names the addition a row came with, so errors can be compared with and
without newer rows. `load()` parses the file: numbers become floats, empty cells None.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, fields
from pathlib import Path

CSV = Path(__file__).with_name("data") / "public_serving_sweeps.csv"
ENGINES = ("vllm", "sglang", "tensorrt-llm")


@dataclass(frozen=True)
class ServingPoint:
    """One published point. Times in seconds, throughput in tokens/s for the whole deployment."""

    label: str
    source_url: str
    engine: str
    engine_version: str
    model: str
    weights_precision: str
    kv_cache_precision: str
    accelerator: str
    devices: float | None
    tensor_parallel: float | None
    concurrency: float | None
    request_rate: float | None
    prompt_tokens: float | None
    output_tokens: float | None
    ttft_s_mean: float | None
    ttft_s_median: float | None
    ttft_s_p90: float | None
    ttft_s_p99: float | None
    tpot_s_mean: float | None
    tpot_s_median: float | None
    tpot_s_p90: float | None
    output_tokens_per_second: float | None
    total_tokens_per_second: float | None
    notes: str
    batch: str  # the data set the row came in with ("issue-30": the first 56 rows; later additions their own)


# the annotations are strings here (`from __future__ import annotations`): "str" marks the text columns
TEXT_COLUMNS = frozenset(f.name for f in fields(ServingPoint) if f.type == "str")
NUMBER_COLUMNS = tuple(f.name for f in fields(ServingPoint) if f.name not in TEXT_COLUMNS)


def load(path: Path = CSV) -> list[ServingPoint]:
    """Every row of the file as a ServingPoint (a missing or extra column raises)."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        expected = [f.name for f in fields(ServingPoint)]
        if reader.fieldnames != expected:
            raise ValueError(f"{path.name}: columns {reader.fieldnames} != {expected}")
        return [_point(row) for row in reader]


def _point(row: dict[str, str]) -> ServingPoint:
    values: dict[str, str | float | None] = {k: row[k].strip() for k in TEXT_COLUMNS}
    for key in NUMBER_COLUMNS:
        cell = row[key].strip()
        values[key] = float(cell) if cell else None
    return ServingPoint(**values)  # type: ignore[arg-type]
