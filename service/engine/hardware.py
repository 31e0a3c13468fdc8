"""Accelerator specifications as the engine sees them (built by the API layer from catalog rows)."""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from .i18n import _

if TYPE_CHECKING:
    from .accuracy.profile import ProfileResiduals

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
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
    # The system the part is built into (catalog, with sources; a request may override both):
    scale_up_domain: int | None = None  # devices sharing one NVLink / Infinity Fabric / ICI domain
    scale_out_bandwidth_bytes_per_s: float | None = None  # per-device network (NIC) rate, one direction
    # A calibration profile's residuals on this part (calibration/apply.py): its answers' intervals come from them
    residual_profile: ProfileResiduals | None = field(default=None, compare=False)

    def peak(self, precision: str) -> float | None:
        """Dense peak FLOP/s for `precision`, or None when the device lacks it."""
        value = self.peak_flops_per_s.get(precision)
        return float(value) if value else None

    def supports(self, precision: str) -> bool:
        return self.peak(precision) is not None


# Physical bounds of a catalog entry: the smallest value any real device has, with margin, and at most about ten
# times the largest real part in the seed catalog (docs/formulas.md, "Catalog bounds"). The admin schemas refuse
# values outside them; a catalog row that escapes them anyway (an old row, a direct SQL edit) is set aside by
# Catalog instead of reaching a division.
SPEC_BOUNDS: dict[str, tuple[float, float]] = {
    "memory_bytes": (2.0**20, 8e12),  # 1 MiB .. 8 TB (largest part: 768 GB)
    "memory_bandwidth_bytes_per_s": (1e8, 8e13),  # 0.1 GB/s .. 80 TB/s (largest: 8 TB/s)
    "peak_flops_per_s": (1e9, 5e16),  # 1 GFLOP/s .. 50 PFLOP/s (largest: 15 PFLOP/s fp4, GB300)
    "interconnect_bandwidth_bytes_per_s": (1e8, 1.8e13),  # 0.1 GB/s .. 18 TB/s (largest: 1.8 TB/s)
    "tdp_watts": (1.0, 12_000.0),  # 1 W .. 12 kW (largest: 1.2 kW)
    "scale_up_domain": (1.0, 100_000.0),  # one device .. a TPU v5p pod (8,960 chips) with margin
    "scale_out_bandwidth_bytes_per_s": (1e8, 1e12),  # 0.8 Gb/s .. 8 Tb/s per device (largest: 800 Gb/s)
}


def _outside(value: float | None, bounds: tuple[float, float]) -> bool:
    return value is not None and not (math.isfinite(value) and bounds[0] <= value <= bounds[1])


def spec_problems(acc: Accelerator) -> list[str]:
    """Why the engine cannot estimate on `acc` (a value outside SPEC_BOUNDS), or [] when it can. Not translated:
    the catalog (cached across requests and languages) keeps them, and they quote field names and values."""
    problems = [
        f"{name} = {getattr(acc, name)!r} outside [{low:g}, {high:g}]"
        for name, (low, high) in SPEC_BOUNDS.items()
        if name != "peak_flops_per_s" and _outside(getattr(acc, name), (low, high))
    ]
    low, high = SPEC_BOUNDS["peak_flops_per_s"]
    for precision, value in acc.peak_flops_per_s.items():
        if value and _outside(float(value), (low, high)):
            problems.append(f"peak {precision} FLOP/s = {value!r} outside [{low:g}, {high:g}]")
    if acc.memory_bandwidth_bytes_per_s is None:
        problems.append("memory_bandwidth_bytes_per_s is missing")
    return problems


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
    effective_from: dt.date | None = None  # first day of the price: its age counts from it
    # What the row sells (engine/offers.py; None: the provider's documented default)
    accelerators_per_instance: int = 1
    max_accelerators: int | None = None  # what one order can get there; None: not stated
    billing_increment_seconds: int | None = None
    minimum_billed_seconds: int | None = None
    startup_seconds: int | None = None
    slice_sizes: tuple[int, ...] = ()  # valid counts of a sliced part (TPU slices); () = not stated
    covers: str = "instance"  # "instance": the whole VM; "accelerator": the GPU alone (the VM billed apart)
    # spot evictions per instance-hour, and whether a scale-out network joins instances into one job (None: the
    # provider's documented default, engine/offers.py)
    interruptions_per_hour: float | None = None
    scale_out: bool | None = None


def price_rows(
    rows: tuple[Price, ...] | list[Price],
    *,
    pricing_model: str | None = None,
    region: str | None = None,
    covers: str = "instance",
) -> list[Price]:
    """The rows a price may be picked from, by the one rule (docs/formulas.md, "Which price"): rows of one pricing
    model (the one asked, else on-demand), of what the caller prices (whole instances unless `covers` asks for the
    accelerator-only rows: a GPU-only SKU never stands beside an instance price), in `region` when one is asked, and
    of each (provider, instance type, region, pricing model) only the newest effective row; without a region asked,
    the newest row of each (provider, instance type, pricing model) over its regions (an old regional row does not
    undercut a newer one). Same first day: the cheaper row."""
    model = pricing_model or "on-demand"
    kept = [r for r in rows if r.pricing_model == model and r.covers == covers]
    if region is not None:
        kept = [r for r in kept if (r.region or "").lower() == region.lower()]
    newest: dict[tuple, Price] = {}
    for row in kept:
        key = (
            row.provider.lower(),
            row.instance_type,
            row.region if region is not None else None,
            row.pricing_model,
        )
        held = newest.get(key)
        if held is None or _newer(row, held):
            newest[key] = row
    return list(newest.values())


def cheapest_first(row: Price) -> tuple[float, int]:
    """How rows the price rule keeps are ranked: the lower price per accelerator-hour, then the smaller instance (the
    same price buys fewer idle accelerators)."""
    return (row.usd_per_hour, row.accelerators_per_instance)


def _newer(row: Price, held: Price) -> bool:
    day, held_day = row.effective_from or dt.date.min, held.effective_from or dt.date.min
    return day > held_day or (day == held_day and row.usd_per_hour < held.usd_per_hour)


@dataclass(frozen=True)
class Catalog:
    """What the estimators may know of the catalog: specs by id and current prices by id."""

    accelerators: Mapping[str, Accelerator]
    prices: Mapping[str, tuple[Price, ...]] = field(default_factory=dict)
    # id -> why it cannot be estimated; filled from `accelerators` on construction, which then holds only
    # devices every estimator and catalog scan can use
    unusable: Mapping[str, str] = field(default_factory=dict)
    # Freshness: the day prices are aged against (the caller's today: the engine reads no clock) and the age in
    # days past which a price is stale (pricing.freshness); None: prices carry no age.
    today: dt.date | None = None
    stale_after_days: int | None = None

    def __post_init__(self) -> None:
        unusable = dict(self.unusable)
        usable = {}
        for acc_id, acc in self.accelerators.items():
            problems = spec_problems(acc)
            if problems:
                unusable[acc_id] = "; ".join(problems)
            else:
                usable[acc_id] = acc
        if unusable:
            object.__setattr__(self, "accelerators", usable)
            object.__setattr__(self, "unusable", unusable)

    def missing_message(self, given: object) -> str:
        """Why `given` names no usable accelerator: set aside (out of bounds), or unknown (closest ids first)."""
        if str(given) in self.unusable:
            return self.unusable_message(str(given))
        return unknown_accelerator_message(given, self.accelerators)

    def unusable_message(self, acc_id: str) -> str:
        return _(
            "The catalog entry of {acc_id} cannot be estimated ({value}); an admin can correct it with "
            "PATCH /v1/accelerators/{acc_id}."
        ).format(acc_id=acc_id, value=self.unusable[acc_id])

    def unusable_note(self) -> str | None:
        """The note a catalog scan adds when it had to skip devices."""
        if not self.unusable:
            return None
        names = ", ".join(f"{i} ({why})" for i, why in sorted(self.unusable.items()))
        return _("Skipped accelerators whose catalog specs cannot be estimated: {names}.").format(names=names)

    def default_price(self, accelerator_id: str) -> Price | None:
        """Cheapest on-demand price for the accelerator among the rows the price rule keeps (price_rows), or None
        (memoised: catalog scans ask for every device on every estimate, and a catalog does not change once built)."""
        known = self._default_prices
        if accelerator_id not in known:
            rows = price_rows(self.prices.get(accelerator_id, ()))
            known[accelerator_id] = min(rows, key=cheapest_first) if rows else None
        return known[accelerator_id]

    @cached_property
    def _default_prices(self) -> dict[str, Price | None]:
        return {}

    @cached_property
    def derived(self) -> dict[str, object]:
        """What scans derive from this catalog alone, kept by key for the catalog's life (it never changes once
        built): e.g. the advice's list of training parts with their default price."""
        return {}


def closest_accelerators(given: object, accelerators: Mapping[str, Accelerator], limit: int = 5) -> list[str]:
    """Catalog ids that `given` most likely meant, best first ("A100" -> the four A100 ids, SXM before PCIe,
    larger memory first). Tokens of the given text ("h100", "sxm", "80gb") are matched against the tokens of
    each id, exactly or as a substring ("mi300" in "mi300x", "6000" in "rtx6000"); difflib breaks ties and finds near-misses
    ("nvidia-h100-sxm" / "nvidia-h10-sxm-80gb")."""
    text = str(given or "").strip().lower()
    wanted = [t for t in re.split(r"[^a-z0-9]+", text) if t]
    scored: list[tuple[float, float, int, str]] = []
    for acc_id, acc in accelerators.items():
        tokens = acc_id.lower().split("-")
        exact = sum(1 for t in wanted if t in tokens)
        partial = sum(
            1
            for t in wanted
            if t not in tokens and any((len(t) >= 2 and t in u) or (len(u) >= 3 and u in t) for u in tokens)
        )
        strength = (exact + 0.5 * partial) / len(wanted) if wanted else 0.0
        ratio = max(
            difflib.SequenceMatcher(None, text, acc_id).ratio(),
            difflib.SequenceMatcher(None, text, acc_id.split("-", 1)[-1]).ratio(),  # without the vendor
        )
        if strength > 0 or ratio >= 0.75:
            scored.append((strength, ratio, int(acc.memory_bytes or 0), acc_id))
    scored.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    return [acc_id for *_, acc_id in scored[:limit]]


def unknown_accelerator_message(given: object, accelerators: Mapping[str, Accelerator]) -> str:
    """The 422 text for an id not in the catalog: the closest matches first, then every id."""
    closest = closest_accelerators(given, accelerators)
    every = ", ".join(sorted(accelerators))
    if closest:
        return _("Unknown accelerator {given}; did you mean {closest}? All ids: {every}.").format(
            given=repr(given), closest=", ".join(closest), every=every
        )
    return _("Unknown accelerator {given}; valid: {every}.").format(given=repr(given), every=every)
