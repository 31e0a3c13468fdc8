"""Saved budget scenarios: the head row, its tags, and an immutable revision per change."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, insert, select
from sqlalchemy import delete as sql_delete
from sqlalchemy import update as sql_update
from sqlalchemy.orm import Session, load_only

from .models import Scenario, ScenarioRevision, ScenarioTag, ScenarioTotal

SORTS = {
    "updated_at": (Scenario.updated_at.asc(), Scenario.id.asc()),
    "-updated_at": (Scenario.updated_at.desc(), Scenario.id.desc()),
    "name": (Scenario.name.asc(),),
    "-name": (Scenario.name.desc(),),
}
CONTENT_FIELDS = ("name", "description", "kind", "tags", "request", "estimate", "prices", "summary")


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def query(
    *,
    name: str | None = None,
    tag: str | None = None,
    kind: str | None = None,
    owner: str | None = None,
    sort: str = "-updated_at",
) -> Select[tuple[int]]:
    """The ids of one listing, filtered and in order: an index scan (see the EXPLAIN test), no wide rows."""
    stmt = select(Scenario.id)
    if name:
        stmt = stmt.where(Scenario.name.ilike(f"%{_escape_like(name)}%", escape="\\"))
    if tag:
        stmt = stmt.where(Scenario.id.in_(select(ScenarioTag.scenario_id).where(ScenarioTag.tag == tag)))
    if kind:
        stmt = stmt.where(Scenario.kind == kind)
    if owner:
        stmt = stmt.where(Scenario.owner == owner)
    return stmt.order_by(*SORTS[sort])


LIST_COLUMNS = (
    Scenario.id, Scenario.name, Scenario.description, Scenario.kind, Scenario.tags, Scenario.owner,
    Scenario.version, Scenario.summary, Scenario.created_at, Scenario.updated_at,
)  # fmt: skip


def total(
    session: Session, ids: Select[tuple[int]], kind_only: str | None = None, unfiltered: bool = False
) -> int:
    """The listing's total: from scenario_totals when the filter is none or kind alone, else counted."""
    if unfiltered or kind_only:
        stmt = select(func.coalesce(func.sum(ScenarioTotal.scenarios), 0))
        if kind_only:
            stmt = stmt.where(ScenarioTotal.kind == kind_only)
        return int(session.scalar(stmt) or 0)
    return session.scalar(ids.with_only_columns(func.count(), maintain_column_froms=True).order_by(None)) or 0


def _bump_total(session: Session, kind: str, delta: int) -> None:
    updated = session.execute(
        sql_update(ScenarioTotal)
        .where(ScenarioTotal.kind == kind)
        .values(scenarios=ScenarioTotal.scenarios + delta)
    )
    if updated.rowcount == 0:
        session.add(ScenarioTotal(kind=kind, scenarios=delta))
        session.flush()


def recount(session: Session) -> None:
    """Rebuild scenario_totals from the rows (after a bulk load that bypassed create/delete)."""
    session.execute(sql_delete(ScenarioTotal))
    for kind, count in session.execute(select(Scenario.kind, func.count()).group_by(Scenario.kind)):
        session.add(ScenarioTotal(kind=kind, scenarios=count))
    session.flush()


def page(
    session: Session, ids: Select[tuple[int]], offset: int, limit: int, *, total_count: int
) -> tuple[list[Scenario], int]:
    """One page and the total. The page's ids come first (a narrow index scan, however deep the offset),
    then only those rows, without the heavy JSON columns (request, estimate, prices)."""
    total = total_count
    page_ids = list(session.scalars(ids.offset(offset).limit(limit)))
    if not page_ids:
        return [], total
    rows = session.scalars(
        select(Scenario).options(load_only(*LIST_COLUMNS)).where(Scenario.id.in_(page_ids))
    ).all()
    by_id = {row.id: row for row in rows}
    return [by_id[i] for i in page_ids if i in by_id], total


def get(session: Session, scenario_id: int) -> Scenario | None:
    return session.get(Scenario, scenario_id)


def get_many(session: Session, ids: Sequence[int]) -> list[Scenario]:
    rows = {s.id: s for s in session.scalars(select(Scenario).where(Scenario.id.in_(ids)))}
    return [rows[i] for i in ids if i in rows]


def name_taken(session: Session, name: str, *, except_id: int | None = None) -> bool:
    stmt = select(Scenario.id).where(Scenario.name == name)
    if except_id is not None:
        stmt = stmt.where(Scenario.id != except_id)
    return session.scalar(stmt) is not None


def _revision(scenario: Scenario, action: str, author: str, request_id: str | None) -> ScenarioRevision:
    return ScenarioRevision(
        scenario_id=scenario.id,
        revision=scenario.version,
        action=action,
        author=author,
        request_id=request_id,
        **{f: getattr(scenario, f) for f in CONTENT_FIELDS if f != "summary"},
    )


def _set_tags(scenario: Scenario, tags: list[str]) -> None:
    scenario.tags = list(dict.fromkeys(tags))
    scenario.tag_rows = [ScenarioTag(tag=t) for t in scenario.tags]


def create(session: Session, data: dict[str, Any], *, owner: str, request_id: str | None) -> Scenario:
    scenario = Scenario(**{f: data[f] for f in CONTENT_FIELDS if f in data and f != "tags"}, owner=owner)
    _set_tags(scenario, data.get("tags") or [])
    session.add(scenario)
    session.flush()
    _bump_total(session, scenario.kind, +1)
    session.add(_revision(scenario, "create", owner, request_id))
    return scenario


def bulk_insert(
    session: Session, rows: Sequence[dict[str, Any]], *, request_id: str | None = None
) -> list[int]:
    """Save many scenarios in a few statements (seeding, imports, benchmarks): each row is what `create`
    takes plus `owner` and optionally `created_at` / `updated_at`. Writes what `create` writes — the head,
    one scenario_tags row per distinct tag, the 'create' revision and the per-kind totals — with one
    multi-row INSERT per table instead of a flush per scenario. Returns the new ids in the rows' order."""
    if not rows:
        return []
    heads = []
    for row in rows:
        head = {f: row[f] for f in CONTENT_FIELDS if f in row}
        head["tags"] = list(dict.fromkeys(row.get("tags") or []))
        head.setdefault("description", None)
        head.setdefault("prices", {})
        head.setdefault("summary", {})
        now = dt.datetime.now(dt.UTC)
        head.update(owner=row["owner"], version=1, created_at=row.get("created_at") or now)
        head["updated_at"] = row.get("updated_at") or head["created_at"]
        heads.append(head)
    # Core inserts on the tables (not the ORM's bulk path, which splices RETURNING rows per batch):
    # one multi-row INSERT … RETURNING per 1,000 heads ("insertmanyvalues"), ids in the rows' order.
    heads_table, tags_table = Scenario.__table__, ScenarioTag.__table__
    ids = list(
        session.scalars(insert(heads_table).returning(heads_table.c.id, sort_by_parameter_order=True), heads)
    )
    tag_rows = [{"scenario_id": i, "tag": t} for i, h in zip(ids, heads, strict=True) for t in h["tags"]]
    if tag_rows:
        session.execute(insert(tags_table), tag_rows)
    session.execute(
        insert(ScenarioRevision.__table__),
        [
            {
                "scenario_id": i,
                "revision": 1,
                "action": "create",
                "author": h["owner"],
                "request_id": request_id,
                "created_at": h["created_at"],
                **{f: h[f] for f in CONTENT_FIELDS if f != "summary"},
            }
            for i, h in zip(ids, heads, strict=True)
        ],
    )
    for kind, count in Counter(h["kind"] for h in heads).items():
        _bump_total(session, kind, count)
    return ids


def update(
    session: Session, scenario: Scenario, data: dict[str, Any], *, author: str, request_id: str | None
) -> Scenario:
    """Replace the content; the version column guards against lost updates (StaleDataError)."""
    old_kind = scenario.kind
    with session.no_autoflush:  # loading the old tag rows must not flush half the change (two versions)
        for field in CONTENT_FIELDS:
            if field == "tags":
                _set_tags(scenario, data.get("tags") or [])
            elif field in data:
                setattr(scenario, field, data[field])
        if "description" not in data:
            scenario.description = None
        scenario.updated_at = dt.datetime.now(dt.UTC)
    session.flush()
    if scenario.kind != old_kind:
        _bump_total(session, old_kind, -1)
        _bump_total(session, scenario.kind, +1)
    session.add(_revision(scenario, "update", author, request_id))
    return scenario


def delete(session: Session, scenario: Scenario, *, author: str, request_id: str | None) -> None:
    """Remove the scenario; its revisions stay, closed by a 'delete' revision."""
    scenario.updated_at = dt.datetime.now(dt.UTC)
    session.flush()  # version bump: a concurrent writer fails with StaleDataError
    session.add(_revision(scenario, "delete", author, request_id))
    _bump_total(session, scenario.kind, -1)
    session.delete(scenario)
    session.flush()


def revisions(session: Session, scenario_id: int) -> list[ScenarioRevision]:
    return list(
        session.scalars(
            select(ScenarioRevision)
            .where(ScenarioRevision.scenario_id == scenario_id)
            .order_by(ScenarioRevision.revision)
        )
    )
