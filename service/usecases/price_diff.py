"""A price import's map and diff steps (pure: no session): each offer becomes a candidate price per
accelerator-hour through the instance map (or is refused, or unmapped), duplicates are resolved, and the
candidates are compared with the catalog's current rows (added, changed, unchanged, kept, not in the file).
The import itself (read, apply, answer): price_imports.py."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from ..store.models import AcceleratorPrice
from .price_bounds import EARLIEST, MAX_USD_PER_HOUR
from .price_formats import Offer, ParsedFile, Refused
from .price_formats.mapping import InstanceMap
from .price_formats.mapping import key as map_key

CENT_MILLIONTH = Decimal("0.000001")  # the catalog's precision (Numeric(14, 6))


@dataclass(frozen=True)
class Candidate:
    accelerator_id: str
    provider: str
    instance_type: str | None
    region: str | None
    pricing_model: str
    usd_per_hour: Decimal  # per accelerator-hour
    accelerators_per_instance: int
    effective_from: dt.date
    source: str
    where: str
    as_of: str | None
    published: dt.date | None = None  # the file's publication date, when it states one (AWS)
    covers: str = "instance"  # what the price pays for: the instance, or the accelerator alone

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (
            self.accelerator_id,
            self.provider,
            self.instance_type or "",
            self.region or "",
            self.pricing_model,
        )

    def row(self) -> dict[str, Any]:
        return {
            "accelerator_id": self.accelerator_id,
            "provider": self.provider,
            "instance_type": self.instance_type,
            "region": self.region,
            "pricing_model": self.pricing_model,
            "usd_per_hour": str(self.usd_per_hour),
            "accelerators_per_instance": self.accelerators_per_instance,
            "effective_from": self.effective_from.isoformat(),
            "where": self.where,
        }


def row_key(p: AcceleratorPrice) -> tuple[str, str, str, str, str]:
    return (p.accelerator_id, p.provider, p.instance_type or "", p.region or "", p.pricing_model)


def catalog_row(p: AcceleratorPrice) -> dict[str, Any]:
    return {
        "price_id": p.id,
        "accelerator_id": p.accelerator_id,
        "provider": p.provider,
        "instance_type": p.instance_type,
        "region": p.region,
        "pricing_model": p.pricing_model,
        "usd_per_hour": str(p.usd_per_hour),
        "effective_from": p.effective_from.isoformat(),
        "set_by": p.created_by,
        "import_id": p.import_id,
    }


@dataclass
class Mapped:
    candidates: list[Candidate]
    refused: list[Refused]
    unmapped: dict[str, list[str]]
    without_accelerators: int


def _to_candidate(
    offer: Offer, source: str, table: InstanceMap, known: set[str], published: dt.date | None = None
) -> Candidate | Refused | None:
    """The offer per accelerator-hour; Refused; or None when the map lacks its instance type."""
    if offer.accelerator_id is not None:
        accelerator, count, per_accelerator = offer.accelerator_id, offer.accelerators_per_instance or 1, True
    else:
        found = table.get((source, map_key(offer.instance_type)))
        if found is None:
            return None
        accelerator, count, per_accelerator = found.accelerator_id, found.accelerators_per_instance, False
    if accelerator not in known:
        return Refused(
            offer.where,
            f"accelerator {accelerator!r} is not in the catalog (add it first: POST /v1/accelerators)",
            offer.instance_type or None,
        )
    usd = offer.usd_per_hour if per_accelerator else offer.usd_per_hour / count
    usd = usd.quantize(CENT_MILLIONTH, rounding=ROUND_HALF_EVEN)
    if usd <= 0 or usd > MAX_USD_PER_HOUR:
        return Refused(
            offer.where, f"{usd} USD per accelerator-hour is outside (0, 100000]", offer.instance_type
        )
    return Candidate(
        accelerator_id=accelerator,
        provider=offer.provider,
        instance_type=offer.instance_type or None,
        region=offer.region,
        pricing_model=offer.pricing_model,
        usd_per_hour=usd,
        accelerators_per_instance=count,
        effective_from=offer.effective_from,
        source=offer.source,
        where=offer.where if len(offer.where) <= 200 else offer.where[:197] + "...",
        as_of=offer.as_of,
        published=published,
        covers=offer.covers,
    )


def map_offers(
    parsed: Sequence[ParsedFile], source: str, table: InstanceMap, known: set[str], today: dt.date
) -> Mapped:
    out = Mapped([], [r for p in parsed for r in p.refused], defaultdict(list), 0)
    for offer, published in ((o, p.published) for p in parsed for o in p.offers):
        found = _to_candidate(offer, source, table, known, published)
        if found is None:
            if offer.has_accelerators:
                out.unmapped[offer.instance_type].append(offer.where)
            else:
                out.without_accelerators += 1
        elif isinstance(found, Refused):
            out.refused.append(found)
        elif found.effective_from < EARLIEST:
            out.refused.append(
                Refused(
                    found.where,
                    f"takes effect on {found.effective_from.isoformat()}, before {EARLIEST.isoformat()}: "
                    "no such price (docs/formulas.md, Catalog conventions)",
                    found.instance_type,
                )
            )
        elif found.effective_from > today:
            out.refused.append(
                Refused(
                    found.where,
                    f"takes effect on {found.effective_from.isoformat()}, after today: import it on or after that day",
                    found.instance_type,
                )
            )
        else:
            out.candidates.append(found)
    return out


def dedupe(candidates: Sequence[Candidate], refused: list[Refused]) -> list[Candidate]:
    """One candidate per offer: the latest; two rows of one day that disagree are both suspect (the later is
    refused, naming the first)."""
    best: dict[tuple, Candidate] = {}
    for c in candidates:
        seen = best.get(c.key)
        if seen is None or c.effective_from > seen.effective_from:
            best[c.key] = c
        elif c.effective_from == seen.effective_from and c.usd_per_hour != seen.usd_per_hour:
            refused.append(
                Refused(
                    c.where,
                    f"prices the same offer as {seen.where} differently ({c.usd_per_hour} vs {seen.usd_per_hour})",
                    c.instance_type,
                )
            )
    return list(best.values())


@dataclass
class Diff:
    added: list[Candidate]
    changed: list[tuple[Candidate, AcceleratorPrice]]
    unchanged: list[tuple[Candidate, AcceleratorPrice]]
    kept: list[tuple[Candidate, AcceleratorPrice, str]]
    not_in_file: list[AcceleratorPrice]
    today: dt.date


def _keep_reason(c: Candidate, row: AcceleratorPrice) -> str | None:
    """Why a changed price stays as the catalog has it (without force), or None.

    A price an admin set by hand (no import id, not the seed's) on or after the offer's date is theirs to keep.
    A file that states its publication date (AWS) and was published before the catalog's price began is older
    than that price. Files without one (the Azure and Google APIs, CSV) list prices in force when read."""
    by_hand = row.import_id is None and row.created_by != "seed"
    set_on = row.created_at.date() if row.created_at else row.effective_from
    if by_hand and (set_on > c.effective_from or row.effective_from > c.effective_from):
        return (
            f"set by hand by {row.created_by!r} on {set_on.isoformat()} (in force from "
            f"{row.effective_from.isoformat()}), after this file's {c.effective_from.isoformat()}: "
            "force=true replaces it"
        )
    if c.published is not None and row.effective_from > c.published:
        return (
            f"the catalog's price is in force from {row.effective_from.isoformat()}, after this file was "
            f"published ({c.published.isoformat()}): an older file does not replace a newer price (force=true does)"
        )
    return None


def diff(
    candidates: Sequence[Candidate], current: Sequence[AcceleratorPrice], *, force: bool, today: dt.date
) -> Diff:
    rows: dict[tuple, AcceleratorPrice] = {}
    for row in current:  # several open rows for one offer: the latest stands for it
        seen = rows.get(row_key(row))
        if seen is None or (row.effective_from, row.id) > (seen.effective_from, seen.id):
            rows[row_key(row)] = row
    out = Diff([], [], [], [], [], today)
    for c in sorted(candidates, key=lambda c: c.key):
        current_row = rows.get(c.key)
        if current_row is None:
            out.added.append(c)
        elif current_row.usd_per_hour == c.usd_per_hour:
            out.unchanged.append((c, current_row))
        elif not force and (reason := _keep_reason(c, current_row)):
            out.kept.append((c, current_row, reason))
        else:
            out.changed.append((c, current_row))
    in_file = {c.key for c in candidates}
    scope = {(c.provider, c.region) for c in candidates}
    out.not_in_file = sorted(
        (
            r
            for r in rows.values()
            if r.provider and (r.provider, r.region) in scope and row_key(r) not in in_file
        ),
        key=row_key,
    )
    return out


def starts(c: Candidate, row: AcceleratorPrice | None, today: dt.date) -> dt.date:
    """The new row's first day: the offer's, when it is after the start of the row it replaces (or there is
    none); otherwise the day of the import, as the catalog used the old price until now. Never before the row
    it closes: no two periods of one offer overlap."""
    if row is None or c.effective_from > row.effective_from:
        return c.effective_from
    return max(row.effective_from, today)
