"""The shipped catalog (service/store/seed/*.csv) as an engine Catalog, read without SQLAlchemy.

Same rules as service/store/seeding.py: memory_gb is GB unless the notes say the vendor quotes GiB; rows
without a capacity are skipped; TFLOPS columns are dense peaks, blank = unsupported (reference README).
"""

from __future__ import annotations

import csv
import re
from functools import lru_cache
from pathlib import Path

from scalecost.engine.hardware import Accelerator, Catalog, Price

SEED = Path(__file__).resolve().parents[2] / "service" / "store" / "seed"
_PEAK_COLUMNS = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
    "int4": "int4_tops",
}


def _kind(row: dict[str, str]) -> str:
    if row["id"].startswith("cpu-"):
        return "cpu"
    vendor = row["vendor"].lower()
    return {"google": "tpu", "apple": "apple", "aws": "asic", "intel": "asic"}.get(vendor, "gpu")


@lru_cache(maxsize=1)
def _reported_memory() -> dict[str, int]:
    """Driver-reported capacities (seed/accelerator_memory.csv), as service/store/seeding.py reads them."""
    with (SEED / "accelerator_memory.csv").open(encoding="utf-8") as f:
        return {r["id"]: int(r["reported_mib"]) * 2**20 for r in csv.DictReader(f)}


@lru_cache(maxsize=1)
def _fabric() -> dict[str, tuple[int | None, float | None]]:
    """seed/accelerator_fabric.csv, as service/store/seeding.py reads it."""
    with (SEED / "accelerator_fabric.csv").open(encoding="utf-8") as f:
        return {
            r["id"]: (
                int(r["scale_up_domain"]) if r["scale_up_domain"].strip() else None,
                float(r["scale_out_gbps_per_device"]) * 1e9 / 8
                if r["scale_out_gbps_per_device"].strip()
                else None,
            )
            for r in csv.DictReader(f)
        }


@lru_cache(maxsize=1)
def _fp4() -> dict[str, float]:
    """seed/accelerator_fp4.csv (dense FP4 TFLOPS), as service/store/seeding.py reads it."""
    with (SEED / "accelerator_fp4.csv").open(encoding="utf-8") as f:
        return {r["id"]: float(r["fp4_tflops_dense"]) * 1e12 for r in csv.DictReader(f)}


def _accelerator(row: dict[str, str]) -> Accelerator | None:
    if not row["memory_gb"].strip():
        return None
    gib = re.search(r"Memory is [\d.]+ GiB", row.get("notes", ""))
    memory = _reported_memory().get(row["id"]) or int(float(row["memory_gb"]) * (2**30 if gib else 1e9))
    peaks = {p: float(row[c]) * 1e12 if row[c].strip() else None for p, c in _PEAK_COLUMNS.items()}
    peaks["fp4"] = _fp4().get(row["id"])
    fabric = row["interconnect_gbps"].strip()
    return Accelerator(
        id=row["id"],
        name=row["name"],
        vendor=row["vendor"],
        kind=_kind(row),
        memory_bytes=memory,
        memory_bandwidth_bytes_per_s=float(row["memory_bw_gbps"]) * 1e9,
        peak_flops_per_s=peaks,
        interconnect_bandwidth_bytes_per_s=float(fabric) * 1e9 if fabric else None,
        tdp_watts=float(row["tdp_w"]) if row["tdp_w"].strip() else None,
        release_year=int(row["year"]) if row["year"].strip() else None,
        scale_up_domain=_fabric().get(row["id"], (None, None))[0],
        scale_out_bandwidth_bytes_per_s=_fabric().get(row["id"], (None, None))[1],
    )


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    with (SEED / "accelerators.csv").open(encoding="utf-8") as f:
        accelerators = {a.id: a for a in map(_accelerator, csv.DictReader(f)) if a is not None}
    prices: dict[str, list[Price]] = {}
    with (SEED / "accelerator_prices.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["accelerator_id"] not in accelerators:
                continue
            prices.setdefault(row["accelerator_id"], []).append(
                Price(
                    provider=row["provider"],
                    usd_per_hour=float(row["usd_per_accelerator_hour"]),
                    instance_type=row["instance_type"] or None,
                    region=row["region"] or None,
                    pricing_model=row["pricing_model"] or "on-demand",
                    as_of=row["as_of"] or None,
                    source=row["source"] or None,
                    accelerators_per_instance=int(row["accelerators_per_instance"] or 1),
                )
            )
    return Catalog(accelerators, {k: tuple(v) for k, v in prices.items()})
