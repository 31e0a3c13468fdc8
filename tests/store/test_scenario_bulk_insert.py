"""bulk_insert writes what create writes (head, tags, 'create' revision, per-kind totals), in the rows' order."""

from __future__ import annotations

import datetime as dt

from scalecost.store import scenarios as store
from scalecost.store.models import ScenarioRevision, ScenarioTag, ScenarioTotal
from sqlalchemy import func, select


def test_bulk_insert_matches_create(app):
    database = app.extensions["scalecost.db"]
    when = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    rows = [
        {
            "name": f"bulk-{i}",
            "kind": "inference" if i % 3 == 0 else "training",
            "tags": ["a", "b", "a"] if i % 2 == 0 else [],
            "request": {"i": i},
            "estimate": {},
            "summary": {"total_usd": i},
            "owner": "seed-bench",
            "updated_at": when + dt.timedelta(seconds=i),
        }
        for i in range(7)
    ]
    with database.transaction() as session:
        store.create(session, {**rows[0], "name": "single", "tags": ["a"]}, owner="x", request_id=None)
        ids = store.bulk_insert(session, rows, request_id="req-1")
    assert len(ids) == 7 and ids == sorted(ids)
    with database.transaction() as session:
        assert [s.name for s in store.get_many(session, ids)] == [r["name"] for r in rows]
        first = store.get(session, ids[0])
        assert first.tags == ["a", "b"] and first.version == 1 and first.updated_at == when
        assert first.summary == {"total_usd": 0} and first.prices == {} and first.description is None
        totals = dict(session.execute(select(ScenarioTotal.kind, ScenarioTotal.scenarios)).all())
        assert totals == {"inference": 1 + 3, "training": 4}
        tags = session.scalar(
            select(func.count()).select_from(ScenarioTag).where(ScenarioTag.scenario_id.in_(ids))
        )
        assert tags == 4 * 2
        revisions = store.revisions(session, ids[3])
        assert [(r.revision, r.action, r.author, r.request_id) for r in revisions] == [
            (1, "create", "seed-bench", "req-1")
        ]
        assert session.scalar(select(func.count()).select_from(ScenarioRevision)) == 8
    assert store.bulk_insert(database.session(), []) == []
