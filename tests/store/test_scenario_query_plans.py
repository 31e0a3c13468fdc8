"""Every filter and sort of GET /v1/scenarios uses an index on PostgreSQL (EXPLAIN on 20,000 rows)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import insert, text

from service.store import scenarios as store
from service.store.models import Scenario, ScenarioTag

ROWS = 20_000


@pytest.fixture
def many_scenarios(app, db_backend):
    if db_backend != "postgresql":
        pytest.skip("query plans are checked on PostgreSQL")
    database = app.extensions["scalecost.db"]
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rows = [
        {
            "id": i + 1,
            "name": f"scenario-{i:06d}",
            "kind": "training" if i % 2 else "inference",
            "tags": [f"team-{i % 200}"],
            "request": {},
            "estimate": {},
            "prices": {},
            "summary": {},
            "owner": f"owner-{i % 500}",
            "version": 1,
            "created_at": start,
            "updated_at": start + dt.timedelta(seconds=i),
        }
        for i in range(ROWS)
    ]
    with database.transaction() as session:
        session.execute(insert(Scenario), rows)
        session.execute(insert(ScenarioTag), [{"scenario_id": r["id"], "tag": r["tags"][0]} for r in rows])
    with database.engine.connect() as conn:
        conn.execute(text("ANALYZE scenarios"))
        conn.execute(text("ANALYZE scenario_tags"))
        conn.commit()
    return database


def _plan(database, stmt) -> str:
    compiled = stmt.limit(20).compile(database.engine, compile_kwargs={"literal_binds": True})
    with database.engine.connect() as conn:
        return "\n".join(r[0] for r in conn.execute(text(f"EXPLAIN {compiled}")))


@pytest.mark.postgresql
@pytest.mark.parametrize(
    ("query", "index"),
    [
        ({"sort": "-updated_at"}, "ix_scenarios_updated_at_id"),
        ({"sort": "updated_at"}, "ix_scenarios_updated_at_id"),
        ({"sort": "name"}, "uq_scenarios_name"),
        ({"owner": "owner-7"}, "ix_scenarios_owner_updated_at_id"),
        ({"kind": "training", "sort": "-updated_at"}, "ix_scenarios_"),
        ({"tag": "team-3"}, "ix_scenario_tags_tag"),
    ],
)
def test_listing_queries_use_an_index(many_scenarios, query, index):
    plan = _plan(many_scenarios, store.query(**query))
    assert "Index" in plan and index in plan, plan
    assert "Seq Scan on scenarios" not in plan, plan
    if "tag" not in query:
        assert "Sort" not in plan, plan  # the index delivers the rows in order: no sort of the table
