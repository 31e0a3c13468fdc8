"""Accelerator specifications as the engine sees them (built by the API layer from catalog rows)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
KINDS = ("gpu", "tpu", "asic", "apple", "cpu")


@dataclass(frozen=True)
class Accelerator:
    """One accelerator (or CPU host). Peaks are dense (no 2:4 sparsity); None = unsupported/unknown."""

    id: str
    name: str
    vendor: str
    kind: str  # one of KINDS
    memory_bytes: int
    memory_bandwidth_bytes_per_s: float
    peak_flops_per_s: Mapping[str, float | None] = field(default_factory=dict)  # keys: PRECISIONS
    interconnect_bandwidth_bytes_per_s: float | None = None  # aggregate bidirectional scale-up
    tdp_watts: float | None = None
    release_year: int | None = None

    def peak(self, precision: str) -> float | None:
        """Dense peak FLOP/s for `precision`, or None when the device lacks it."""
        value = self.peak_flops_per_s.get(precision)
        return float(value) if value else None

    def supports(self, precision: str) -> bool:
        return self.peak(precision) is not None


@dataclass(frozen=True)
class Price:
    """One catalog price row, per accelerator-hour (float here; Decimal lives in storage)."""

    provider: str
    usd_per_hour: float
    instance_type: str | None = None
    region: str | None = None
    pricing_model: str = "on-demand"
    as_of: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Catalog:
    """What the estimators may know of the catalog: specs by id and current prices by id."""

    accelerators: Mapping[str, Accelerator]
    prices: Mapping[str, tuple[Price, ...]] = field(default_factory=dict)

    def default_price(self, accelerator_id: str) -> Price | None:
        """Cheapest on-demand price for the accelerator, or None."""
        rows = [p for p in self.prices.get(accelerator_id, ()) if p.pricing_model == "on-demand"]
        return min(rows, key=lambda p: p.usd_per_hour) if rows else None
