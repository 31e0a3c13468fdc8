"""The instance map: which accelerator, and how many, each provider's instance type holds.

service/store/seed/instance_map.csv ships it (columns source, instance_type, accelerator_id,
accelerators_per_instance, reference: the provider's page for that instance family). An admin extends or
corrects it with a CSV of the same columns (PRICE_INSTANCE_MAP, or `scalecost prices import --map FILE`): its
rows are read after the shipped ones and win on the same (source, instance_type).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from . import SOURCES, PriceFileError

COLUMNS = ("source", "instance_type", "accelerator_id", "accelerators_per_instance", "reference")


@dataclass(frozen=True)
class Mapped:
    accelerator_id: str
    accelerators_per_instance: int
    reference: str


InstanceMap = dict[tuple[str, str], Mapped]


def read(text: str, name: str = "instance map", into: InstanceMap | None = None) -> InstanceMap:
    """Rows of `text` added to (or replacing those of) `into`. Raises PriceFileError naming the line."""
    table: InstanceMap = dict(into or {})
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in COLUMNS[:4] if c not in (reader.fieldnames or [])]
    if missing:
        raise PriceFileError(f"{name} line 1", f"missing column(s) {', '.join(missing)}")
    for row in reader:
        where = f"{name} line {reader.line_num}"
        source = (row.get("source") or "").strip()
        if source not in SOURCES or source == "csv":
            raise PriceFileError(
                where, f"source {source!r} is not one of aws-price-list, azure-retail, gcp-billing"
            )
        count = (row.get("accelerators_per_instance") or "").strip()
        if not (count.isascii() and count.isdigit() and len(count) <= 4) or not 1 <= int(count) <= 1024:
            raise PriceFileError(where, f"accelerators_per_instance {count!r} is not an integer 1-1024")
        instance_type = (row.get("instance_type") or "").strip()
        accelerator = (row.get("accelerator_id") or "").strip()
        if not instance_type or not accelerator:
            raise PriceFileError(where, "instance_type and accelerator_id are required")
        table[(source, key(instance_type))] = Mapped(
            accelerator, int(count), (row.get("reference") or "").strip()
        )
    return table


def key(instance_type: str) -> str:
    """Instance types match whatever their case ('ND96isr_H100_v5', 'nd96isr_h100_v5')."""
    return instance_type.strip().lower()
