"""`skypilot`: SkyPilot's public catalog, one cloud's `vms.csv` (github.com/skypilot-org/skypilot-catalog,
`catalogs/v<N>/<cloud>/vms.csv`).

Format: a CSV with a header naming at least InstanceType, AcceleratorName, AcceleratorCount, Price and Region;
SpotPrice, AvailabilityZone, GpuInfo, vCPUs and MemoryGiB are read or skipped where present (their order differs
per cloud: RunPod's file has Region, SpotPrice, Price, AvailabilityZone). A row prices one instance per hour in
USD, on demand (`Price`) and on spot (`SpotPrice`, when not empty); a row per availability zone repeats its
region's price. GCP's file lists its GPUs as rows without an InstanceType (the GPU alone, the VM billed apart):
those are read as `covers: accelerator` prices.

The file states neither its cloud nor its date; the file's name does: the cloud as the folder the file sits in or
the name's prefix (`catalogs/v8/aws/vms.csv`, `aws/vms.csv`, `aws-vms.csv`) and the day as an ISO date in the name
(the catalog commit's date: `aws-vms-2026-11-30.csv`, `aws/vms.csv@2026-11-30`). Accelerator names map to catalog
ids through NAMES (a PCIe part where the instance or its GpuInfo says PCIe); rows without an accelerator (CPU
instances) are ignored; accelerators NAMES lacks are skipped and counted under the import's `unmapped`, where an
instance map row (source `skypilot`) can name them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from decimal import Decimal

from . import Offer, ParsedFile, PriceFileError, Refused, decimal_of, short, text_of

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
# SkyPilot accelerator names (catalogs/v7/common/metadata.csv) → catalog ids: (SXM or only part, PCIe part)
NAMES: dict[str, tuple[str, str | None]] = {
    "V100": ("nvidia-v100-sxm-16gb", None),
    "V100-32GB": ("nvidia-v100-sxm-32gb", None),
    "T4": ("nvidia-t4", None),
    "A10G": ("nvidia-a10g", None),
    "L4": ("nvidia-l4", None),
    "L40S": ("nvidia-l40s", None),
    "A100": ("nvidia-a100-sxm-40gb", "nvidia-a100-pcie-40gb"),
    "A100-80GB": ("nvidia-a100-sxm-80gb", "nvidia-a100-pcie-80gb"),
    "A100-80GB-SXM": ("nvidia-a100-sxm-80gb", None),
    "H100": ("nvidia-h100-sxm-80gb", "nvidia-h100-pcie-80gb"),
    "H100-SXM": ("nvidia-h100-sxm-80gb", None),
    "H100-MEGA": ("nvidia-h100-sxm-80gb", None),
    "H100-NVL": ("nvidia-h100-nvl-94gb", None),
    "H200": ("nvidia-h200-sxm-141gb", None),
    "H200-SXM": ("nvidia-h200-sxm-141gb", None),
    "B200": ("nvidia-b200", None),
    "A6000": ("nvidia-rtx-a6000", None),
    "RTXA6000": ("nvidia-rtx-a6000", None),
    "RTX6000-Ada": ("nvidia-rtx-6000-ada", None),
    "RTX4090": ("nvidia-rtx-4090", None),
    "RTX3090": ("nvidia-rtx-3090", None),
    "MI300X": ("amd-mi300x", None),
}
# Instance types whose accelerator the name alone does not tell: Lambda's gpu_1x_a100 is its "1x A100 (40 GB PCIe)"
# (gpu_1x_a100_sxm4 is the SXM4 one: lambda.ai/pricing)
INSTANCES = {"gpu_1x_a100": "nvidia-a100-pcie-40gb"}
_CLOUD = re.compile(r"(?:^|[/\\])([a-z][a-z0-9]*)(?:[/\\]|[-_])vms\b", re.IGNORECASE)
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")


def parse(data: bytes, name: str) -> ParsedFile:
    provider, day = _provider_and_day(name)
    reader = csv.DictReader(io.StringIO(text_of(data), newline=""))
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise PriceFileError("line 1", f"missing column(s) {', '.join(missing)}; a SkyPilot vms.csv has them")
    parsed = ParsedFile(source="skypilot", name=name, published=day)
    kept: dict[tuple[str, str, str], Offer] = {}  # one offer per instance, region and pricing model
    try:
        for row in reader:
            where = f"line {reader.line_num}"
            for offer in _offers(row, where, provider, day, parsed):
                key = (offer.instance_type, offer.region or "", offer.pricing_model)
                if key in kept:
                    parsed.ignored += 1  # the region again (another availability zone): its lowest price
                    if kept[key].usd_per_hour <= offer.usd_per_hour:
                        continue
                kept[key] = offer
    except csv.Error as error:
        raise PriceFileError(f"line {reader.line_num}", f"not CSV ({error})") from None
    parsed.offers = list(kept.values())
    if not parsed.offers and not parsed.refused and not parsed.ignored:
        raise PriceFileError("line 2", "no price rows")
    return parsed


def _provider_and_day(name: str) -> tuple[str, dt.date]:
    cloud, day = _CLOUD.search(name), _DAY.search(name)
    if cloud is None or day is None:
        raise PriceFileError(
            "name",
            f"{short(name)} names no cloud and day: name the file as its catalog path and commit date, "
            "e.g. aws-vms-2026-11-30.csv or catalogs/v8/aws/vms.csv@2026-11-30",
        )
    try:
        return cloud.group(1).lower(), dt.date.fromisoformat(day.group(1))
    except ValueError:
        raise PriceFileError("name", f"{day.group(1)!r} is no date") from None


def _offers(row: dict, where: str, provider: str, day: dt.date, parsed: ParsedFile) -> list[Offer]:
    """The on-demand and spot offers of one row (none for a CPU instance)."""
    accelerator = (row.get("AcceleratorName") or "").strip()
    instance_type = (row.get("InstanceType") or "").strip()
    if not accelerator:
        parsed.ignored += 1
        return []
    count = _count(row.get("AcceleratorCount") or "", where)
    if count is None:
        parsed.refused.append(Refused(where, "AcceleratorCount is not a whole number 1-1024", instance_type))
        return []
    known = _catalog_id(accelerator, instance_type, row.get("GpuInfo") or "")
    region = (row.get("Region") or "").strip() or None
    # GCP lists its GPUs as rows of their own, without an instance: the GPU alone, the VM billed apart
    covers = "accelerator" if not instance_type else "instance"
    shape = instance_type or f"{accelerator} x{count}"
    out = []
    for column, model in (("Price", "on-demand"), ("SpotPrice", "spot")):
        text = (row.get(column) or "").strip()
        if not text:
            continue
        usd = decimal_of(text, f"{where}, {column}")
        if usd <= 0:
            parsed.refused.append(Refused(where, f"{column} is 0 or negative", shape))
            continue
        out.append(
            Offer(
                provider=provider,
                instance_type=shape,
                region=region,
                pricing_model=model,
                usd_per_hour=usd / count if known else usd,
                effective_from=day,
                where=f"{where}, {column}",
                source=f"skypilot-catalog {parsed.name} ({model} ${usd}/h for {count} × {accelerator})",
                accelerator_id=known,
                accelerators_per_instance=count if known else None,
                as_of=day.isoformat(),
                covers=covers,
            )
        )
    return out


def _count(text: str, where: str) -> int | None:
    """AcceleratorCount as SkyPilot writes it ('8.0'); None unless a whole number 1-1024."""
    try:
        value = Decimal(text.strip())
    except ArithmeticError:
        return None
    if not value.is_finite() or value != value.to_integral_value() or not 1 <= value <= 1024:
        return None
    return int(value)


def _catalog_id(accelerator: str, instance_type: str, gpu_info: str) -> str | None:
    """The catalog id of a SkyPilot accelerator name on this instance (NAMES, INSTANCES); None when unknown."""
    if instance_type.lower() in INSTANCES:
        return INSTANCES[instance_type.lower()]
    parts = NAMES.get(accelerator)
    if parts is None:
        return None
    sxm, pcie = parts
    says_pcie = "pcie" in instance_type.lower() or "pcie" in gpu_info.lower()
    return pcie if pcie and says_pcie else sxm
