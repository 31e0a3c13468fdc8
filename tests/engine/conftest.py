"""Catalog fixture built from the reference CSVs (service/store/seed/ when present, else tests/engine/data/)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from service.engine.hardware import Accelerator, Catalog, Price

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "service" / "store" / "seed"
DATA = Path(__file__).resolve().parent / "data"
GB = 1e9
GIB = 1024**3


def _csv(name: str) -> Path:
    seeded = SEED / name
    return seeded if seeded.exists() else DATA / name


def _number(value: str | None) -> float | None:
    value = (value or "").strip()
    return float(value) if value else None  # blank = unsupported / unknown (reference README)


def _kind(row: dict[str, str]) -> str:
    if row["id"].startswith("cpu-"):
        return "cpu"
    return {"google": "tpu", "apple": "apple", "aws": "asic", "intel": "asic"}.get(
        row["vendor"].lower(), "gpu"
    )


def load_catalog() -> Catalog:
    accelerators: dict[str, Accelerator] = {}
    with _csv("accelerators.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            memory = _number(row["memory_gb"])
            if memory is None:  # no capacity: skipped, as service/store seeding does
                continue
            # memory_gb is GB (1e9) except where the notes say the vendor quotes GiB (reference README)
            unit = GIB if re.search(r"Memory is [\d.]+ GiB", row.get("notes") or "") else GB
            peaks = {
                key: (_number(row[f"{key}_tflops"]) or 0.0) * 1e12 or None
                for key in ("fp32", "tf32", "bf16", "fp16", "fp8")
            }
            peaks["int8"] = (_number(row["int8_tops"]) or 0.0) * 1e12 or None
            peaks["int4"] = (_number(row["int4_tops"]) or 0.0) * 1e12 or None
            interconnect = _number(row["interconnect_gbps"])
            accelerators[row["id"]] = Accelerator(
                id=row["id"],
                name=row["name"],
                vendor=row["vendor"],
                kind=_kind(row),
                memory_bytes=int(memory * unit),
                memory_bandwidth_bytes_per_s=(_number(row["memory_bw_gbps"]) or 0.0) * GB,
                peak_flops_per_s=peaks,
                interconnect_bandwidth_bytes_per_s=interconnect * GB if interconnect else None,
                tdp_watts=_number(row["tdp_w"]),
                release_year=int(row["year"]) if row["year"] else None,
            )
    prices: dict[str, list[Price]] = {}
    with _csv("accelerator_prices.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            prices.setdefault(row["accelerator_id"], []).append(
                Price(
                    provider=row["provider"],
                    usd_per_hour=float(row["usd_per_accelerator_hour"]),
                    instance_type=row["instance_type"] or None,
                    region=row["region"] or None,
                    pricing_model=row["pricing_model"] or "on-demand",
                    as_of=row["as_of"] or None,
                    source=row["source"] or None,
                )
            )
    return Catalog(accelerators=accelerators, prices={k: tuple(v) for k, v in prices.items()})


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()
