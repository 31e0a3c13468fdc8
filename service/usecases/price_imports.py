"""Import a cloud price list: parse → map → diff → apply (issue 14).

parse: price_formats reads the file (pure; a malformed file raises PriceFileError naming the line or JSON
path). map: the instance map turns each instance type into an accelerator id and a count, and a price per
instance-hour into a price per accelerator-hour (6 decimal places, as the catalog stores it). diff: each offer
against the catalog's current row for the same (accelerator, provider, instance type, region, pricing model):
added, changed (old → new, % change), unchanged, kept (see below); current rows of the file's providers and
regions that the file lacks are listed as candidates to close (never closed by an import); instance types the
map lacks and rows the reader or the mapping refused are listed with the reason. apply: in the caller's
transaction, one PriceImport row, then per change one closed row, one opened row carrying the import's id and
one audit event (store/price_imports.change_price), then the saved scenarios' costs (price_moves). A dry run
computes the same answer and writes nothing.

Kept, unless `force`: a current price an admin set by hand (no import id, not the seed's) after the file's date
for that offer, and a current price whose period starts after the file's date (an older file never replaces a
newer price). Re-importing a file changes nothing: every offer is then unchanged."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from ..engine import Price as EnginePrice
from ..store import price_imports as store
from ..store.models import AcceleratorPrice
from . import price_formats, price_moves
from .catalog import to_engine_price
from .price_formats import Offer, ParsedFile, PriceFileError, Refused
from .price_formats.mapping import InstanceMap
from .price_formats.mapping import key as map_key
from .price_formats.mapping import read as read_map

CENT_MILLIONTH = Decimal("0.000001")  # the catalog's precision (Numeric(14, 6))
MAX_USD_PER_HOUR = Decimal(100_000)  # the bound PUT /v1/accelerators/{id}/prices/{provider} applies


@dataclass(frozen=True)
class PriceFile:
    name: str
    data: bytes


def instance_map(extra: Iterable[str | Path] = ()) -> InstanceMap:
    """The shipped map (service/store/seed/instance_map.csv), then each extra CSV over it."""
    shipped = (
        resources.files("scalecost.store").joinpath("seed", "instance_map.csv").read_text(encoding="utf-8")
    )
    table = read_map(shipped, "seed/instance_map.csv")
    for path in extra:
        path = Path(path)
        table = read_map(path.read_text(encoding="utf-8"), path.name, into=table)
    return table


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


def read_files(source: str, files: Sequence[PriceFile]) -> list[ParsedFile]:
    """Every file parsed, or PriceFileError naming the file and the line or JSON path."""
    if source not in price_formats.SOURCES:
        raise ValueError(f"unknown source {source!r}; sources: {', '.join(price_formats.SOURCES)}")
    parsed = []
    for f in files:
        try:
            parsed.append(price_formats.parse(source, f.data, f.name))
        except PriceFileError as error:
            where = f"{f.name}: {error.where}" if len(files) > 1 else error.where
            raise PriceFileError(where, error.message) from None
    return parsed


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


def _percent(old: Decimal, new: Decimal) -> float | None:
    return float((new - old) / old * 100) if old else None


def _engine_price(c: Candidate, starts: dt.date) -> EnginePrice:
    return EnginePrice(
        provider=c.provider,
        usd_per_hour=float(c.usd_per_hour),
        instance_type=c.instance_type,
        region=c.region,
        pricing_model=c.pricing_model,
        as_of=c.as_of or starts.isoformat(),
        source=c.source,
        effective_from=starts,
    )


def _starts(c: Candidate, row: AcceleratorPrice | None, today: dt.date) -> dt.date:
    """The new row's first day: the offer's, when it is after the start of the row it replaces (or there is
    none); otherwise the day of the import, as the catalog used the old price until now. Never before the row
    it closes: no two periods of one offer overlap."""
    if row is None or c.effective_from > row.effective_from:
        return c.effective_from
    return max(row.effective_from, today)


def _prices_after(
    session: Session, d: Diff
) -> tuple[dict[str, list[EnginePrice]], dict[str, list[EnginePrice]]]:
    """Today's prices of the accelerators the diff touches, before and after it (engine form)."""
    touched = {c.accelerator_id for c in d.added} | {c.accelerator_id for c, _ in d.changed}
    rows = store.open_prices(session, accelerator_ids=touched)
    closed = {row.id for _, row in d.changed}
    before: dict[str, list[EnginePrice]] = {a: [] for a in touched}
    after: dict[str, list[EnginePrice]] = {a: [] for a in touched}
    for row in rows:
        before[row.accelerator_id].append(to_engine_price(row))
        if row.id not in closed:
            after[row.accelerator_id].append(to_engine_price(row))
    for c in d.added:
        after[c.accelerator_id].append(_engine_price(c, _starts(c, None, d.today)))
    for c, row in d.changed:
        after[c.accelerator_id].append(_engine_price(c, _starts(c, row, d.today)))
    return before, after


def digest_of(source: str, files: Sequence[PriceFile]) -> tuple[str, list[dict[str, Any]]]:
    described = [
        {"name": f.name, "sha256": hashlib.sha256(f.data).hexdigest(), "bytes": len(f.data)} for f in files
    ]
    whole = hashlib.sha256("\n".join([source, *(str(d["sha256"]) for d in described)]).encode()).hexdigest()
    return whole, described


def run(
    session: Session,
    source: str,
    files: Sequence[PriceFile],
    *,
    dry_run: bool,
    force: bool = False,
    actor: str,
    request_id: str | None = None,
    today: dt.date | None = None,
    table: InstanceMap | None = None,
) -> dict[str, Any]:
    """The import's answer; when not a dry run, its writes are in `session` (the caller commits). Raises
    PriceFileError for a malformed file (nothing written) and ValueError for an unknown source."""
    today = today or dt.datetime.now(dt.UTC).date()
    parsed = read_files(source, files)
    table = instance_map() if table is None else table
    mapped = map_offers(parsed, source, table, store.accelerator_ids(session), today)
    candidates = dedupe(mapped.candidates, mapped.refused)
    current = store.open_prices(session, providers={c.provider for c in candidates})
    d = diff(candidates, current, force=force, today=today)
    before, after = _prices_after(session, d)
    moves = price_moves.plan(session, before, after)
    digest, described = digest_of(source, files)
    for f, p in zip(described, parsed, strict=True):
        f["published"] = p.published.isoformat() if p.published else None
        f["ignored"] = p.ignored
    earlier = store.earlier_import(session, digest)
    answer = _answer(source, described, d, mapped, moves, dry_run=dry_run, force=force)
    answer["already_imported"] = (
        {"import_id": earlier.id, "at": earlier.created_at.isoformat(), "by": earlier.actor}
        if earlier
        else None
    )
    if dry_run or not (d.added or d.changed):
        return answer
    record = store.start(
        session,
        source=source,
        files=described,
        digest=digest,
        effective_from=max(c.effective_from for c in [*d.added, *(c for c, _ in d.changed)]),
        forced=force,
        actor=actor,
        request_id=request_id,
    )
    accelerators = store.accelerators(
        session, {c.accelerator_id for c in d.added} | {c.accelerator_id for c, _ in d.changed}
    )
    for c in d.added:
        store.change_price(
            session,
            accelerators[c.accelerator_id],
            None,
            _new_row(c, None, today),
            record=record,
            request_id=request_id,
        )
    for c, row in d.changed:
        store.change_price(
            session,
            accelerators[c.accelerator_id],
            row,
            _new_row(c, row, today),
            record=record,
            request_id=request_id,
        )
    price_moves.apply(session, moves)
    answer.update(import_id=record.id, applied=True)
    record.changes = len(d.added) + len(d.changed)
    record.result = answer
    return answer


def _new_row(c: Candidate, row: AcceleratorPrice | None, today: dt.date) -> dict[str, Any]:
    return {
        "provider": c.provider,
        "instance_type": c.instance_type,
        "accelerators_per_instance": c.accelerators_per_instance,
        "region": c.region,
        "pricing_model": c.pricing_model,
        "usd_per_hour": c.usd_per_hour,
        "as_of": c.as_of,
        "effective_from": _starts(c, row, today),
        "source": c.source,
    }


def _answer(
    source: str,
    files: list[dict[str, Any]],
    d: Diff,
    mapped: Mapped,
    moves: Sequence[price_moves.PairMove],
    *,
    dry_run: bool,
    force: bool,
) -> dict[str, Any]:
    changed = [
        {
            **c.row(),
            "effective_from": _starts(c, row, d.today).isoformat(),
            "old_usd_per_hour": str(row.usd_per_hour),
            "percent_change": _percent(row.usd_per_hour, c.usd_per_hour),
            "replaces_price_id": row.id,
        }
        for c, row in d.changed
    ]
    changed.sort(key=lambda r: (-abs(r["percent_change"] or 0.0), r["accelerator_id"], r["provider"]))
    unmapped = [
        {"instance_type": name, "offers": len(wheres), "where": wheres[:3]}
        for name, wheres in sorted(mapped.unmapped.items())
    ]
    refused = [
        {"where": r.where, "reason": r.reason, "instance_type": r.instance_type} for r in mapped.refused
    ]
    return {
        "import_id": None,
        "source": source,
        "dry_run": dry_run,
        "applied": False,
        "force": force,
        "files": files,
        "summary": {
            "added": len(d.added),
            "changed": len(d.changed),
            "unchanged": len(d.unchanged),
            "kept": len(d.kept),
            "not_in_file": len(d.not_in_file),
            "unmapped": len(unmapped),
            "refused": len(refused),
            "ignored": sum(f.get("ignored", 0) for f in files) + mapped.without_accelerators,
        },
        "added": [c.row() for c in d.added],
        "changed": changed,
        "unchanged": [{**c.row(), "price_id": row.id} for c, row in d.unchanged],
        "kept": [{**c.row(), "catalog": catalog_row(row), "reason": why} for c, row, why in d.kept],
        "not_in_file": [catalog_row(r) for r in d.not_in_file],
        "unmapped": unmapped,
        "refused": refused,
        "scenarios": price_moves.report(moves),
    }


def stale(session: Session, *, today: dt.date, older_than_days: int) -> list[dict[str, Any]]:
    """Current prices older than `older_than_days` on `today`, oldest first."""
    rows = store.stale_prices(session, today - dt.timedelta(days=older_than_days))
    return [
        {**catalog_row(p), "as_of": p.as_of, "source": p.source, "age_days": (today - p.effective_from).days}
        for p in rows
    ]


__all__ = ["PriceFile", "PriceFileError", "instance_map", "replace", "run", "stale"]
