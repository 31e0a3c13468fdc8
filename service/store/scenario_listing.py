"""Listing saved scenarios (GET /v1/scenarios): filters, sorts served by an index, offset and keyset (cursor)
pages, and totals counted up to a cap. Writes and reads by id: scenarios.py."""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, String, func, literal, select, tuple_
from sqlalchemy.orm import Session, load_only

from . import scenario_costs
from .models import Scenario, ScenarioTag, ScenarioTotal

# Each sort is a key that an index delivers in order: (updated_at, id) — ix_scenarios_updated_at_id and the
# (kind | owner, updated_at, id) indexes — or name, which is unique (uq_scenarios_name). The key is also what
# a cursor holds, so a keyset page starts where the index says, however deep.
SORT_KEYS: dict[str, tuple[tuple[Any, ...], bool]] = {
    "updated_at": ((Scenario.updated_at, Scenario.id), False),
    "-updated_at": ((Scenario.updated_at, Scenario.id), True),
    "name": ((Scenario.name,), False),
    "-name": ((Scenario.name,), True),
}
# Filtered totals are counted up to this many matches (or one page past the requested one, if further):
# past it the total is a lower bound (`total_is_lower_bound`), so no page counts every match of a broad
# filter. Unfiltered and kind-only totals are always exact (scenario_totals).
COUNT_CAP = 100
CURSOR_VERSION = 1


def _order(sort: str, *, reverse: bool = False) -> list[Any]:
    columns, descending = SORT_KEYS[sort]
    return [c.desc() if descending != reverse else c.asc() for c in columns]


SORTS = {sort: tuple(_order(sort)) for sort in SORT_KEYS}


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def name_matches(text: str) -> Any:
    """Case-insensitive substring match: lower(name) LIKE lower('%text%'), the same SQL on both databases
    (SQLAlchemy's ILIKE is this on SQLite), and what ix_scenarios_name_trgm (pg_trgm, migration 0005)
    answers on PostgreSQL. Patterns under 3 characters have no trigram to look up: they scan."""
    return func.lower(Scenario.name).like(func.lower(_value(f"%{_escape_like(text)}%")), escape="\\")


def _value(value: str) -> Any:
    """A filter value written into the statement rather than bound: how many rows a name pattern or a tag
    matches varies by orders of magnitude, and a prepared statement (psycopg prepares a query after 5
    executions) may switch to a generic plan that does not know the value — a trigram bitmap over 800,000
    rows for `name=training`, 270 ms instead of 1. With the value in the text, each filter has its own plan."""
    return literal(value, String(), literal_execute=True)


@dataclass(frozen=True)
class Cursor:
    """A keyset position: the sort and the sort key of the last row seen."""

    sort: str
    key: tuple[Any, ...]


def encode_cursor(sort: str, row: Scenario) -> str:
    columns, _ = SORT_KEYS[sort]
    key = [getattr(row, c.key) for c in columns]
    key = [v.astimezone(dt.UTC).isoformat() if isinstance(v, dt.datetime) else v for v in key]
    raw = json.dumps({"v": CURSOR_VERSION, "s": sort, "k": key}, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(token: str) -> Cursor:
    """The position a cursor names; ValueError for anything this listing did not hand out."""
    invalid = ValueError("Not a cursor of this listing: pass next_cursor from X-Pagination unchanged.")
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8"))
    except (ValueError, RecursionError):
        raise invalid from None
    if not isinstance(data, dict) or data.get("v") != CURSOR_VERSION or data.get("s") not in SORT_KEYS:
        raise invalid
    sort, key = data["s"], data.get("k")
    columns, _ = SORT_KEYS[sort]
    if not isinstance(key, list) or len(key) != len(columns):
        raise invalid
    values: list[Any] = []
    for column, value in zip(columns, key, strict=True):
        if column.key == "id":
            ok = type(value) is int and 1 <= value <= 2**31 - 1
        elif column.key == "updated_at":
            try:
                parsed = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
                ok = parsed is not None and parsed.tzinfo is not None
                # 9999-12-31T23:59:59-14:00 overflows here (OverflowError): no cursor of this listing
                value = parsed.astimezone(dt.UTC) if parsed is not None and ok else parsed
            except (ValueError, OverflowError):
                value, ok = None, False
        else:  # name: text PostgreSQL can hold
            ok = isinstance(value, str) and 0 < len(value) <= 200 and "\x00" not in value
            try:
                ok = ok and bool(value.encode("utf-8"))
            except UnicodeEncodeError:
                ok = False
        if not ok:
            raise invalid
        values.append(value)
    return Cursor(sort, tuple(values))


def _after(cursor: Cursor) -> Any:
    """Rows strictly after the cursor in its sort: one range condition on the sort's index."""
    columns, descending = SORT_KEYS[cursor.sort]
    values = [literal(v, c.type) for c, v in zip(columns, cursor.key, strict=True)]
    left, right = (tuple_(*columns), tuple_(*values)) if len(columns) > 1 else (columns[0], values[0])
    return left < right if descending else left > right


def _filtered(
    *,
    name: str | None = None,
    tag: str | None = None,
    kind: str | None = None,
    owner: str | None = None,
    cost_changed_by_more_than: float | None = None,
) -> Select[Any]:
    stmt = select(Scenario.id)
    if name:
        stmt = stmt.where(name_matches(name))
    if tag:
        tagged = select(ScenarioTag.scenario_id).where(ScenarioTag.tag == _value(tag))
        stmt = stmt.where(Scenario.id.in_(tagged))
    if kind:
        stmt = stmt.where(Scenario.kind == _value(kind))
    if owner:
        stmt = stmt.where(Scenario.owner == _value(owner))
    if cost_changed_by_more_than is not None:  # cost at today's prices vs saved (store/scenario_costs.py)
        stmt = stmt.where(Scenario.id.in_(scenario_costs.moved_ids(cost_changed_by_more_than)))
    return stmt


def query(
    *,
    name: str | None = None,
    tag: str | None = None,
    kind: str | None = None,
    owner: str | None = None,
    cost_changed_by_more_than: float | None = None,
    sort: str = "-updated_at",
    after: Cursor | None = None,
) -> Select[Any]:
    """The ids of one listing, filtered and in order: an index scan (see the EXPLAIN test), no wide rows."""
    stmt = _filtered(
        name=name, tag=tag, kind=kind, owner=owner, cost_changed_by_more_than=cost_changed_by_more_than
    )
    if after is not None:
        stmt = stmt.where(_after(after))
    return stmt.order_by(*_order(sort))


LIST_COLUMNS = (
    Scenario.id, Scenario.name, Scenario.description, Scenario.kind, Scenario.tags, Scenario.owner,
    Scenario.version, Scenario.summary, Scenario.created_at, Scenario.updated_at,
)  # fmt: skip


def count(
    session: Session,
    *,
    name: str | None = None,
    tag: str | None = None,
    kind: str | None = None,
    owner: str | None = None,
    cost_changed_by_more_than: float | None = None,
    at_least: int = 0,
) -> tuple[int, bool]:
    """(total, is_lower_bound). No filter or kind alone: exact, from scenario_totals. Otherwise the matches
    are counted up to max(COUNT_CAP, at_least) — a bounded walk of the filter's index, never every match
    of a broad filter — and a total that reaches the bound is a lower bound."""
    if not (name or tag or owner or cost_changed_by_more_than is not None):
        stmt = select(func.coalesce(func.sum(ScenarioTotal.scenarios), 0))
        if kind:
            stmt = stmt.where(ScenarioTotal.kind == kind)
        return int(session.scalar(stmt) or 0), False
    bound = max(COUNT_CAP, at_least)
    filters = {"name": name, "tag": tag, "kind": kind, "owner": owner}
    counted = int(
        session.scalar(
            count_query(**filters, cost_changed_by_more_than=cost_changed_by_more_than, bound=bound)
        )
        or 0
    )
    return counted, counted >= bound


def count_query(*, bound: int, **filters: Any) -> Select[Any]:
    """count(*) of at most `bound` matches: the filter's index stops after `bound` rows."""
    return select(func.count()).select_from(_filtered(**filters).limit(bound).subquery())


def page_query(
    sort: str,
    offset: int,
    limit: int,
    *,
    after: Cursor | None = None,
    from_end: bool = False,
    **filters: Any,
) -> Select[Any]:
    """The rows of one page in order: their ids from the sort's index (a subquery with the OFFSET/LIMIT),
    then those rows alone, without the heavy JSON columns. from_end: the offset counts from the last row
    (the index read backwards); the page is still in the sort's order."""
    if from_end:
        ids = _filtered(**filters).order_by(*_order(sort, reverse=True)).offset(offset).limit(limit)
    else:
        ids = query(**filters, sort=sort, after=after).offset(offset).limit(limit)
    page_ids = ids.subquery()
    return (
        select(Scenario)
        .options(load_only(*LIST_COLUMNS))
        .join(page_ids, page_ids.c.id == Scenario.id)
        .order_by(*_order(sort))
    )


@dataclass
class Listing:
    items: list[Scenario]
    total: int
    total_is_lower_bound: bool
    next_cursor: str | None


def listing(
    session: Session,
    *,
    name: str | None = None,
    tag: str | None = None,
    kind: str | None = None,
    owner: str | None = None,
    cost_changed_by_more_than: float | None = None,
    sort: str = "-updated_at",
    offset: int = 0,
    limit: int = 20,
    after: Cursor | None = None,
) -> Listing:
    """One page of GET /v1/scenarios: by offset (page numbers) or after a cursor (keyset), with the total
    and the cursor of the next page (None on the last).

    The page is one statement: the ids in order from the sort's index (LIMIT page + 1, to know whether a
    next page exists), then only those rows, without the heavy JSON columns (request, estimate, prices).
    An offset page in the second half of an exactly counted listing is read from the other end of the
    index (the last page costs what the first does); a keyset page costs the same at any depth."""
    filters: dict[str, Any] = {"name": name, "tag": tag, "kind": kind, "owner": owner}
    filters["cost_changed_by_more_than"] = cost_changed_by_more_than
    if after is not None:
        offset = 0
    total, lower_bound = count(session, **filters, at_least=offset + limit + 1)
    reverse = after is None and not lower_bound and offset > total // 2
    if reverse:  # the same rows, counted from the end: total - offset - limit rows follow them
        skip = total - offset - limit
        query_ = page_query(sort, max(skip, 0), max(limit + min(skip, 0), 0), from_end=True, **filters)
    else:
        query_ = page_query(sort, offset, limit + 1, after=after, **filters)
    rows = list(session.scalars(query_))
    more = offset + limit < total if reverse else len(rows) > limit
    items = rows[:limit]
    next_cursor = encode_cursor(sort, items[-1]) if more and items else None
    return Listing(items, total, lower_bound, next_cursor)
