"""Seed the default accelerator catalog from the CSV files shipped in service/store/seed/.

Idempotent: an accelerator that exists is left alone (an admin may have patched it), and a price row
is inserted only when no row with the same natural key exists, open or closed — so a price an admin
changed or removed is never overwritten or revived.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from itertools import groupby

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..engine import offers
from .models import Accelerator, AcceleratorPrice

GB = 10**9
GIB = 2**30
TERA = 1e12


@dataclass
class SeedReport:
    accelerators_added: int = 0
    accelerators_kept: int = 0
    prices_added: int = 0
    prices_kept: int = 0
    accelerators_corrected: int = 0  # decimal-GB capacities replaced by the driver-reported ones
    skipped: tuple[str, ...] = ()


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("scalecost.store").joinpath("seed", name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def kind_of(row: dict[str, str]) -> str:
    """gpu | tpu | asic | apple | cpu, from the vendor and id."""
    if row["id"].startswith("cpu-"):
        return "cpu"
    vendor = row["vendor"].lower()
    if vendor == "google":
        return "tpu"
    if vendor == "apple":
        return "apple"
    if vendor in {"aws", "intel"}:
        return "asic"
    return "gpu"


def _tera(value: str) -> float | None:
    return float(value) * TERA if value.strip() else None


MIB = 2**20


def reported_memory() -> dict[str, int]:
    """Capacity as the driver reports it (nvidia-smi "MiB" totals), by accelerator id, from
    seed/accelerator_memory.csv (each row with its source). Vendors market decimal GB that undercount it:
    an "80 GB" H100 reports 81,559 MiB = 85.5e9 bytes."""
    return {r["id"]: int(r["reported_mib"]) * MIB for r in _rows("accelerator_memory.csv")}


def fabric() -> dict[str, tuple[int | None, float | None]]:
    """(scale-up domain devices, scale-out bytes/s per device) by accelerator id, from
    seed/accelerator_fabric.csv (each row with its source): the system a part is built into."""
    out: dict[str, tuple[int | None, float | None]] = {}
    for r in _rows("accelerator_fabric.csv"):
        domain = int(r["scale_up_domain"]) if r["scale_up_domain"].strip() else None
        gbps = r["scale_out_gbps_per_device"].strip()
        out[r["id"]] = (domain, float(gbps) * 1e9 / 8 if gbps else None)
    return out


def fp4_peaks() -> dict[str, float]:
    """Dense FP4 tensor FLOP/s (NVFP4 on NVIDIA Blackwell, MXFP4 on AMD CDNA 4) by accelerator id, from
    seed/accelerator_fp4.csv (each row with its source); parts not listed have no FP4 rate (docs/formulas.md,
    "FP4 peaks")."""
    return {r["id"]: float(r["fp4_tflops_dense"]) * TERA for r in _rows("accelerator_fp4.csv")}


def memory_bytes_of(row: dict[str, str], reported: dict[str, int] | None = None) -> int | None:
    """The driver-reported capacity where known (reported_memory), else memory_gb as GB (1e9) unless the
    row's notes say the vendor quotes GiB (docs/formulas.md, "Catalog conventions")."""
    if not row["memory_gb"].strip():
        return None
    if reported and row["id"] in reported:
        return reported[row["id"]]
    gb = float(row["memory_gb"])
    in_gib = re.search(r"Memory is [\d.]+ GiB", row.get("notes", ""))
    return int(gb * (GIB if in_gib else GB))


def effective_from_of(as_of: str) -> dt.date:
    """Start of the period a price was listed in: '2025-H2' → 2025-07-01, '2026-04' → 2026-04-01; a day
    ('2026-11-30', a catalog commit's date) is itself."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", as_of or ""):
        return dt.date.fromisoformat(as_of)
    m = re.match(r"(\d{4})(?:-(H[12]|\d{2})(?!\d))?", as_of or "")
    if not m:
        return dt.date(2024, 1, 1)
    year, part = int(m.group(1)), m.group(2)
    if part == "H2":
        return dt.date(year, 7, 1)
    if part and part.isdigit():
        return dt.date(year, int(part), 1)
    return dt.date(year, 1, 1)


def accelerator_from_row(
    row: dict[str, str], reported: dict[str, int] | None = None, fp4: dict[str, float] | None = None
) -> Accelerator | None:
    memory = memory_bytes_of(row, reported)
    if memory is None:
        return None  # no trustworthy capacity: an estimator cannot use it (docs/formulas.md, "Catalog conventions")
    return Accelerator(
        id=row["id"],
        name=row["name"],
        vendor=row["vendor"],
        kind=kind_of(row),
        memory_bytes=memory,
        memory_bandwidth_bytes_per_s=float(row["memory_bw_gbps"]) * GB,
        peak_fp32_flops_per_s=_tera(row["fp32_tflops"]),
        peak_tf32_flops_per_s=_tera(row["tf32_tflops"]),
        peak_bf16_flops_per_s=_tera(row["bf16_tflops"]),
        peak_fp16_flops_per_s=_tera(row["fp16_tflops"]),
        peak_fp8_flops_per_s=_tera(row["fp8_tflops"]),
        peak_int8_flops_per_s=_tera(row["int8_tops"]),
        peak_int4_flops_per_s=_tera(row["int4_tops"]),
        peak_fp4_flops_per_s=(fp4 if fp4 is not None else fp4_peaks()).get(row["id"]),
        interconnect_bandwidth_bytes_per_s=float(row["interconnect_gbps"]) * GB
        if row["interconnect_gbps"].strip()
        else None,
        tdp_watts=float(row["tdp_w"]) if row["tdp_w"].strip() else None,
        release_year=int(row["year"]) if row["year"].strip() else None,
        source_specs=row["source_specs"] or None,
        notes=row["notes"] or None,
    )


def _price_key(p) -> tuple:
    return (p.accelerator_id, p.provider, p.instance_type or "", p.region or "", p.pricing_model)


def _correct_memory(
    session: Session, row: dict[str, str], reported: dict[str, int], report: SeedReport
) -> None:
    """A row that still holds the decimal-GB capacity the seed once wrote gets the driver-reported capacity: a
    correction of the seed, audited as the seed's. Any other value is an admin's and is never touched."""
    acc = session.get(Accelerator, row["id"])
    if acc is None or row["id"] not in reported:
        return
    if acc.memory_bytes != memory_bytes_of(row) or acc.memory_bytes == reported[row["id"]]:
        return
    from . import audit

    with audit.change(
        session,
        actor="seed",
        action="accelerator.update",
        target=f"accelerator:{acc.id}",
        request_id=None,
        before={"memory_bytes": acc.memory_bytes},
    ) as change:
        acc.memory_bytes = reported[row["id"]]
        change.after = {"memory_bytes": acc.memory_bytes, "source": "seed/accelerator_memory.csv"}
    report.accelerators_corrected += 1


def _fill_fabric(
    session: Session, acc_id: str, systems: dict[str, tuple[int | None, float | None]], report: SeedReport
) -> None:
    """Rows seeded before the catalog knew the system (both fields empty) get the seed's figures, audited as
    the seed's; a value an admin set is never touched."""
    acc = session.get(Accelerator, acc_id)
    if acc is None or acc_id not in systems or acc.scale_up_domain is not None:
        return
    if acc.scale_out_bandwidth_bytes_per_s is not None:
        return
    from . import audit

    domain, network = systems[acc_id]
    with audit.change(
        session, actor="seed", action="accelerator.update", target=f"accelerator:{acc_id}", request_id=None,
        before={"scale_up_domain": None, "scale_out_bandwidth_bytes_per_s": None},
    ) as change:  # fmt: skip
        acc.scale_up_domain, acc.scale_out_bandwidth_bytes_per_s = domain, network
        change.after = {"scale_up_domain": domain, "scale_out_bandwidth_bytes_per_s": network}
    report.accelerators_corrected += 1


def _fill_fp4(session: Session, acc_id: str, fp4: dict[str, float], report: SeedReport) -> None:
    """Rows seeded before the catalog had an fp4 column (null) get the seed's figure, audited as the seed's; a value
    an admin set is never touched. (An admin who clears it again gets it back on the next seed, as with the fabric.)"""
    acc = session.get(Accelerator, acc_id)
    if acc is None or acc_id not in fp4 or acc.peak_fp4_flops_per_s is not None:
        return
    from . import audit

    with audit.change(
        session, actor="seed", action="accelerator.update", target=f"accelerator:{acc_id}", request_id=None,
        before={"peak_fp4_flops_per_s": None},
    ) as change:  # fmt: skip
        acc.peak_fp4_flops_per_s = fp4[acc_id]
        change.after = {"peak_fp4_flops_per_s": fp4[acc_id], "source": "seed/accelerator_fp4.csv"}
    report.accelerators_corrected += 1


def offer_terms(accelerator_id: str, provider: str, pricing_model: str = "on-demand") -> dict:
    """Billing, start-up and slice sizes of a seeded row: the provider's published terms or its kind's default, and
    the slice sizes the vendor documents (engine/offers.py, with sources in docs/formulas.md "Offers"); a spot row
    its provider's evictions per instance-hour ("Spot interruptions")."""
    increment, minimum, startup = offers.provider_terms(provider)
    slices = offers.SLICE_SIZES.get(accelerator_id)
    spot = pricing_model in offers.SPOT_MODELS
    return {
        "interruptions_per_hour": offers.spot_interruptions(provider) if spot else None,
        "billing_increment_seconds": increment,
        "minimum_billed_seconds": minimum,
        "startup_seconds": startup,
        "slice_sizes": list(slices) if slices else None,
        "covers": "instance",
    }


def seed_catalog(session: Session) -> SeedReport:
    """Insert missing accelerators and price rows; never touch existing ones. Caller commits."""
    report = SeedReport()
    skipped: list[str] = []
    existing_ids = set(session.scalars(select(Accelerator.id)))
    reported = reported_memory()
    systems = fabric()
    fp4 = fp4_peaks()
    for row in _rows("accelerators.csv"):
        if row["id"] in existing_ids:
            report.accelerators_kept += 1
            _correct_memory(session, row, reported, report)
            _fill_fabric(session, row["id"], systems, report)
            _fill_fp4(session, row["id"], fp4, report)
            continue
        acc = accelerator_from_row(row, reported, fp4)
        if acc is not None and acc.id in systems:
            acc.scale_up_domain, acc.scale_out_bandwidth_bytes_per_s = systems[acc.id]
        if acc is None:
            skipped.append(row["id"])
            continue
        session.add(acc)
        existing_ids.add(acc.id)
        report.accelerators_added += 1
    session.flush()

    existing = {(*_price_key(p), p.effective_from) for p in session.scalars(select(AcceleratorPrice))}
    rows = [r for r in _rows("accelerator_prices.csv") if r["accelerator_id"] in existing_ids]
    candidates = [
        AcceleratorPrice(
            accelerator_id=r["accelerator_id"],
            provider=r["provider"],
            instance_type=r["instance_type"] or None,
            accelerators_per_instance=int(r["accelerators_per_instance"] or 1),
            region=r["region"] or None,
            pricing_model=r["pricing_model"] or "on-demand",
            usd_per_hour=Decimal(r["usd_per_accelerator_hour"]),
            as_of=r["as_of"] or None,
            effective_from=effective_from_of(r["as_of"]),
            source=r["source"] or None,
            created_by="seed",
            **offer_terms(r["accelerator_id"], r["provider"], r["pricing_model"] or "on-demand"),
        )
        for r in rows
    ]
    # Rows for the same offer form a history: each closes when the next period's row opens.
    candidates.sort(key=lambda p: (_price_key(p), p.effective_from))
    for _key, group in groupby(candidates, key=_price_key):
        history = list(group)
        for older, newer in zip(history, history[1:], strict=False):
            older.effective_to = newer.effective_from
        for price in history:
            if (*_price_key(price), price.effective_from) in existing:
                report.prices_kept += 1
                continue
            session.add(price)
            report.prices_added += 1
    report.skipped = tuple(skipped)
    return report
