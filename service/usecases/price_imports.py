"""Import a cloud price list: parse → map → diff → apply (issue 14); the map and diff steps are price_diff.py.

parse: price_formats reads the file (pure; a malformed file raises PriceFileError naming the line or JSON
path). map: the instance map turns each instance type into an accelerator id and a count, and a price per
instance-hour into a price per accelerator-hour (6 decimal places, as the catalog stores it). diff: each offer
against the catalog's current row for the same (accelerator, provider, instance type, region, pricing model):
added, changed (old → new, % change), unchanged, kept (see below); current rows of the file's providers and
regions that the file lacks are listed as candidates to close (never closed by an import); instance types the
map lacks and rows the reader or the mapping refused are listed with the reason. apply: in the caller's
transaction, one PriceImport row, then per change one closed row, one opened row carrying the import's id and
one audit event, written in bulk (store/price_imports.change_prices: a constant number of statements per batch,
so the time grows linearly with the rows), then the saved scenarios' costs, once per (accelerator, provider)
(price_moves). The CLI commits every `batch` changes instead (see _apply). A dry run computes the same answer
and writes nothing.

Kept, unless `force`: a current price an admin set by hand (no import id, not the seed's) after the file's date
for that offer, and a current price whose period starts after the file's date (an older file never replaces a
newer price). Re-importing a file changes nothing: every offer is then unchanged."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from ..engine import Price as EnginePrice
from ..store import price_imports as store
from ..store.models import AcceleratorPrice, PriceImport
from . import price_bounds, price_formats, price_moves
from .catalog import to_engine_price
from .offloading import Offload, here
from .price_diff import Candidate, Diff, Mapped, catalog_row, dedupe, diff, map_offers, starts
from .price_formats import ParsedFile, PriceFileError
from .price_formats.mapping import InstanceMap
from .price_formats.mapping import read as read_map


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


def read_files(source: str, files: Sequence[PriceFile]) -> list[ParsedFile]:
    """Every file parsed, or PriceFileError naming the file and the line or JSON path."""
    if source not in price_formats.SOURCES:
        raise ValueError(f"unknown source {source!r}; sources: {', '.join(price_formats.SOURCES)}")
    parsed = []
    for f in files:
        try:
            parsed.append(check_texts(price_formats.parse(source, f.data, f.name)))
        except PriceFileError as error:
            where = f"{f.name}: {error.where}" if len(files) > 1 else error.where
            raise PriceFileError(where, error.message) from None
    return parsed


def check_texts(parsed: ParsedFile) -> ParsedFile:
    """`parsed`, when every text an offer would store fits its column (price_bounds.row_text_problems: length,
    also lower-cased for providers, no NUL or control character, no reserved provider) and no refused row names
    an instance type with a control character; else PriceFileError naming the row and the column. The same check
    for a dry run and an apply: what a dry run announces, an apply stores, on either database."""
    for offer in parsed.offers:
        texts: dict[str, str | None] = {
            "provider": offer.provider,
            "instance_type": offer.instance_type or None,
            "region": offer.region,
            "as_of": offer.as_of,
            "source": offer.source,
        }
        for column, why in price_bounds.row_text_problems(texts):
            raise PriceFileError(f"{offer.where}, {column}", f"{column} {why}")
    for refused in parsed.refused:
        problem = price_bounds.text_problem(refused.instance_type or "", price_bounds.SOURCE_MAX)
        if problem:
            raise PriceFileError(f"{refused.where}, instance_type", f"instance_type {problem}")
    return parsed


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
        accelerators_per_instance=c.accelerators_per_instance,
        covers=c.covers,
    )


def _prices_after(
    session: Session,
    d: Diff,
    current: Sequence[AcceleratorPrice],
    providers: set[str],
    also: set[str],
    off: Callable[..., Any],
) -> tuple[dict[str, list[EnginePrice]], dict[str, list[EnginePrice]]]:
    """Today's prices of the accelerators the diff touches (and of `also`), before and after it (engine
    form). `current`: the open rows of `providers`, read already; the other providers' are read here. The
    conversion (no database) runs through `off`."""
    touched = {c.accelerator_id for c in d.added} | {c.accelerator_id for c, _ in d.changed} | also
    others = store.open_prices(session, accelerator_ids=touched, other_providers=providers)
    return off(_before_after, d, [r for r in current if r.accelerator_id in touched] + list(others), touched)


def _before_after(
    d: Diff, rows: list[AcceleratorPrice], touched: set[str]
) -> tuple[dict[str, list[EnginePrice]], dict[str, list[EnginePrice]]]:
    rows.sort(key=lambda r: r.id)
    closed = {row.id for _, row in d.changed}
    before: dict[str, list[EnginePrice]] = {a: [] for a in touched}
    after: dict[str, list[EnginePrice]] = {a: [] for a in touched}
    for row in rows:
        before[row.accelerator_id].append(to_engine_price(row))
        if row.id not in closed:
            after[row.accelerator_id].append(to_engine_price(row))
    for c in d.added:
        after[c.accelerator_id].append(_engine_price(c, starts(c, None, d.today)))
    for c, row in d.changed:
        after[c.accelerator_id].append(_engine_price(c, starts(c, row, d.today)))
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
    batch: int = 1000,
    commit: Callable[[], None] | None = None,
    max_changes: int | None = None,
    pause: Callable[[], None] | None = None,
    max_offers: int | None = None,
    listed_max: int | None = None,
    offload: Offload | None = None,
) -> dict[str, Any]:
    """The import's answer; when not a dry run, its writes are in `session` (the caller commits). Raises
    PriceFileError for a malformed file (nothing written) and ValueError for an unknown source.

    With `commit` (the CLI: session.commit), the changes are applied and committed `batch` at a time (see
    _apply); the caller commits the import's final answer after. Saved scenarios are then repriced for every
    accelerator the file prices, not only those it changes, so that running an import again after a
    PartialImport also brings the scenarios of the batches already committed to their prices.

    `max_changes`: more added and changed prices than this raise TooManyChanges before anything is written
    (the API: its request budget). `pause`: called between batches (the API: yield the event loop, so that a
    long apply does not stall the worker's other requests). `max_offers`: files with more price offers than this
    raise TooManyOffers before the diff (the API: parse and diff of a 32 MiB file took 12 s). `listed_max`: the
    answer lists at most this many rows per list (the summary counts them all; `listed_max`, `truncated` say
    so). `offload(call, *args)`: runs the steps that touch no database (parse, mapping, diff, the answer) off
    the event loop (the API: a 100,000-offer dry run held the loop for 8 s)."""
    today = today or dt.datetime.now(dt.UTC).date()
    off = offload or here
    parsed = off(read_files, source, files)
    offers = sum(len(p.offers) for p in parsed)
    if max_offers is not None and offers > max_offers:
        raise TooManyOffers(offers, max_offers)
    table = instance_map() if table is None else table
    mapped = off(map_offers, parsed, source, table, store.accelerator_ids(session), today)
    candidates = off(dedupe, mapped.candidates, mapped.refused)
    providers = {c.provider for c in candidates}
    current = store.open_prices(session, providers=providers)
    d = off(partial(diff, force=force, today=today), candidates, current)
    also = {c.accelerator_id for c in candidates} if commit is not None else set()
    before, after = _prices_after(session, d, current, providers, also, off)
    moves = price_moves.plan(session, before, after)
    digest, described = digest_of(source, files)
    for f, p in zip(described, parsed, strict=True):
        f["published"] = p.published.isoformat() if p.published else None
        f["ignored"] = p.ignored
    earlier = store.earlier_import(session, digest)
    answer = off(partial(_answer, dry_run=dry_run, force=force), source, described, d, mapped, moves)
    _shorten(answer, listed_max)
    answer["already_imported"] = (
        {"import_id": earlier.id, "at": earlier.created_at.isoformat(), "by": earlier.actor}
        if earlier
        else None
    )
    if dry_run or not (d.added or d.changed):
        return answer
    if max_changes is not None and len(d.added) + len(d.changed) > max_changes:
        raise TooManyChanges(len(d.added) + len(d.changed), max_changes)
    record = _apply(
        session,
        source,
        described,
        digest,
        d,
        moves,
        force=force,
        actor=actor,
        request_id=request_id,
        batch=batch,
        commit=commit,
        pause=pause,
        answer=answer,
    )
    answer.update(import_id=record.id, applied=True)
    record.result = answer
    return answer


class TooManyChanges(Exception):
    """An import would change more prices than the caller applies in one go (the API's
    PRICE_IMPORT_API_MAX_CHANGES); nothing was written."""

    def __init__(self, changes: int, limit: int):
        super().__init__(f"{changes} price changes, more than {limit}")
        self.changes, self.limit = changes, limit


class TooManyOffers(Exception):
    """The files hold more price offers than the caller reads in one go (the API's PRICE_IMPORT_API_MAX_OFFERS);
    nothing was read further or written."""

    def __init__(self, offers: int, limit: int):
        super().__init__(f"{offers} price offers, more than {limit}")
        self.offers, self.limit = offers, limit


LISTS = ("added", "changed", "unchanged", "kept", "not_in_file", "unmapped", "refused")


def _shorten(answer: dict[str, Any], listed_max: int | None) -> None:
    """At most `listed_max` rows in each of the answer's lists (None: all); `truncated` names the lists cut."""
    answer["listed_max"] = listed_max
    answer["truncated"] = []
    if listed_max is None:
        return
    for name in LISTS:
        if len(answer[name]) > listed_max:
            answer[name] = answer[name][:listed_max]
            answer["truncated"].append(name)


class PartialImport(Exception):
    """An import applied in several transactions (`run(…, commit=…)`) failed after some of them committed:
    `applied` of `total` price changes are in the catalog under `import_id`. Running the same import again
    applies the rest (the prices already applied are unchanged offers then, and no-ops)."""

    def __init__(self, import_id: int, applied: int, total: int, cause: BaseException):
        super().__init__(f"{applied} of {total} price changes applied (import {import_id}): {cause}")
        self.import_id, self.applied, self.total, self.cause = import_id, applied, total, cause


def _apply(
    session: Session,
    source: str,
    described: list[dict[str, Any]],
    digest: str,
    d: Diff,
    moves: Sequence[price_moves.PairMove],
    *,
    force: bool,
    actor: str,
    request_id: str | None,
    batch: int,
    commit: Callable[[], None] | None,
    pause: Callable[[], None] | None = None,
    answer: dict[str, Any] | None = None,
) -> PriceImport:
    """The writes of an import with changes: its PriceImport row, per change a closed and an opened row and an
    audit event, in a constant number of statements per `batch` changes (store/price_imports.change_prices),
    then the saved scenarios' costs, once per (accelerator, provider) pair.

    Without `commit`, all of it is in the caller's transaction. With it, `commit()` is called after every
    `batch` changes (the import's row commits with the first batch, the scenarios' costs with the last): a
    lock is held for one batch at a time, and a failure raises PartialImport saying what was applied."""
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
    if (
        commit is not None and answer is not None
    ):  # what a PartialImport's record shows: the diff, not applied
        record.result = {**answer, "import_id": record.id, "applied": False}
    changes = [
        *((c.accelerator_id, None, _new_row(c, None, d.today)) for c in d.added),
        *((c.accelerator_id, row, _new_row(c, row, d.today)) for c, row in d.changed),
    ]
    if commit is None:
        for first in range(0, len(changes), batch):
            if first and pause is not None:
                pause()
            part = changes[first : first + batch]
            store.change_prices(session, part, record=record, request_id=request_id)
        record.changes = len(changes)
        price_moves.apply(session, moves)
        return record
    applied = 0
    try:
        for first in range(0, len(changes), batch):
            part = changes[first : first + batch]
            store.change_prices(session, part, record=record, request_id=request_id)
            record.changes = applied + len(part)
            if first + batch >= len(changes):
                price_moves.apply(session, moves)
            commit()
            applied += len(part)
    except Exception as error:
        raise PartialImport(record.id, applied, len(changes), error) from error
    return record


OFFER_TERMS = (
    "max_accelerators",
    "billing_increment_seconds",
    "minimum_billed_seconds",
    "startup_seconds",
    "slice_sizes",
    "interruptions_per_hour",
    "scale_out",
)


def _new_row(c: Candidate, row: AcceleratorPrice | None, today: dt.date) -> dict[str, Any]:
    return {
        "provider": c.provider,
        "instance_type": c.instance_type,
        "accelerators_per_instance": c.accelerators_per_instance,
        "region": c.region,
        "pricing_model": c.pricing_model,
        "usd_per_hour": c.usd_per_hour,
        "as_of": c.as_of,
        "effective_from": starts(c, row, today),
        "source": c.source,
        "covers": c.covers,
        # what the files do not state carries over from the row replaced (an admin's limit, billing, start-up)
        **{field: getattr(row, field) for field in OFFER_TERMS if row is not None},
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
            "effective_from": starts(c, row, d.today).isoformat(),
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


__all__ = [
    "PartialImport",
    "TooManyChanges",
    "PriceFile",
    "PriceFileError",
    "instance_map",
    "replace",
    "run",
    "stale",
]
