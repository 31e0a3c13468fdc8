"""Saved budget scenarios: the head row, its tags, and an immutable revision per change (writes, reads by id,
the per-kind totals). Listing and paging: scenario_listing.py."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, func, insert, select
from sqlalchemy import delete as sql_delete
from sqlalchemy import update as sql_update
from sqlalchemy.orm import Session

from . import scenario_costs
from .models import Scenario, ScenarioRevision, ScenarioTag, ScenarioTotal

CONTENT_FIELDS = ("name", "description", "kind", "tags", "request", "estimate", "prices", "summary")


def _bump_total(session: Session, kind: str, delta: int) -> None:
    updated = session.execute(
        sql_update(ScenarioTotal)
        .where(ScenarioTotal.kind == kind)
        .values(scenarios=ScenarioTotal.scenarios + delta)
    )
    if updated.rowcount == 0:  # type: ignore[attr-defined]  # an UPDATE returns a CursorResult
        session.add(ScenarioTotal(kind=kind, scenarios=delta))
        session.flush()


def recount(session: Session) -> None:
    """Rebuild scenario_totals from the rows (after a bulk load that bypassed create/delete)."""
    session.execute(sql_delete(ScenarioTotal))
    for kind, count in session.execute(select(Scenario.kind, func.count()).group_by(Scenario.kind)):
        session.add(ScenarioTotal(kind=kind, scenarios=count))
    session.flush()


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
    scenario_costs.save(session, scenario)
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
    heads_table, tags_table = cast(Table, Scenario.__table__), cast(Table, ScenarioTag.__table__)
    ids = list(
        session.scalars(insert(heads_table).returning(heads_table.c.id, sort_by_parameter_order=True), heads)
    )
    tag_rows = [{"scenario_id": i, "tag": t} for i, h in zip(ids, heads, strict=True) for t in h["tags"]]
    if tag_rows:
        session.execute(insert(tags_table), tag_rows)
    session.execute(
        insert(cast(Table, ScenarioRevision.__table__)),
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
    scenario_costs.save_many(session, ids, heads)
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
    scenario_costs.save(session, scenario)
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
