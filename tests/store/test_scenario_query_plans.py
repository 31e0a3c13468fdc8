"""Every filter and sort of GET /v1/scenarios uses an index on PostgreSQL (EXPLAIN on 20,000 rows): the
page's ids (by offset, from the end, after a cursor), the page's rows and the capped count of a filter."""

from __future__ import annotations

import datetime as dt

import pytest
from scalecost.store import migrate, scenario_listing
from scalecost.store import scenarios as store
from scalecost.store.session import Database
from sqlalchemy import text

from tests.conftest import fresh_database_url

ROWS = 20_000


@pytest.fixture(scope="module")
def many_scenarios(db_backend, tmp_path_factory):
    """One migrated database with ROWS scenarios for the whole module (the plans only read it)."""
    if db_backend != "postgresql":
        pytest.skip("query plans are checked on PostgreSQL")
    url, drop = fresh_database_url(db_backend, tmp_path_factory)
    migrate.upgrade(url)
    database = Database(url)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rows = [
        {
            "name": f"scenario-{i:06d}",
            "kind": "training" if i % 2 else "inference",
            "tags": [f"team-{i % 2000}"] + (["common"] if i % 4 == 0 else []),  # 10 rows a team, 5,000 common
            "request": {},
            "estimate": {},
            "owner": f"owner-{i % 500}",
            "created_at": start,
            "updated_at": start + dt.timedelta(seconds=i),
        }
        for i in range(ROWS)
    ]
    with database.transaction() as session:
        store.bulk_insert(session, rows)
    with database.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE scenarios, scenario_tags"))
    yield database
    database.dispose()
    drop()


def _plan(database, stmt, limit: int | None = 20) -> str:
    stmt = stmt.limit(limit) if limit else stmt
    compiled = stmt.compile(database.engine, compile_kwargs={"literal_binds": True})
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
        ({"tag": "team-3"}, "ix_scenario_tags_tag_scenario_id"),  # 10 rows: from the tag index, then sorted
        (
            {"tag": "common"},
            "ix_scenarios_updated_at_id",
        ),  # a quarter: the sort's index, each row's tag probed
    ],
)
def test_listing_queries_use_an_index(many_scenarios, query, index):
    plan = _plan(many_scenarios, scenario_listing.query(**query))
    assert "Index" in plan and index in plan, plan
    assert "Seq Scan on scenarios" not in plan, plan
    if query.get("tag") != "team-3":
        assert "Sort" not in plan, plan  # the index delivers the rows in order: no sort of the table


NAME_FILTERS = [
    # 10 matches: the trigram index finds them, for the page and for the count
    ({"name": "ARIO-01234"}, "ix_scenarios_name_trgm", "ix_scenarios_name_trgm"),
    ({"name": "ario-01234", "sort": "name"}, "ix_scenarios_name_trgm", "ix_scenarios_name_trgm"),
    # every row matches: the sort's index, filtered, stops after a page; the count stops at the cap
    ({"name": "scenario-0"}, "ix_scenarios_updated_at_id", "Limit"),
]


@pytest.fixture
def trgm(many_scenarios):
    with many_scenarios.engine.connect() as conn:
        if conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first() is None:
            pytest.skip(
                "pg_trgm is not installed on this server: migration 0005 skips the index (its fallback)"
            )
        indexes = set(
            conn.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = 'scenarios'")).scalars()
        )
    assert "ix_scenarios_name_trgm" in indexes, "pg_trgm is available but migration 0005 made no index"
    return many_scenarios


@pytest.mark.postgresql
@pytest.mark.parametrize(("query", "index", "count_plan"), NAME_FILTERS)
def test_name_filter_uses_the_trigram_index_or_the_sort_index(trgm, query, index, count_plan):
    plan = _plan(trgm, scenario_listing.query(**query))
    assert index in plan and "Seq Scan on scenarios" not in plan, plan
    count = _plan(
        trgm, scenario_listing.count_query(name=query["name"], bound=scenario_listing.COUNT_CAP), limit=None
    )
    assert count_plan in count, count


CURSORS = {
    "-updated_at": (dt.datetime(2026, 1, 1, 3, tzinfo=dt.UTC), 10_000),
    "updated_at": (dt.datetime(2026, 1, 1, 3, tzinfo=dt.UTC), 10_000),
    "name": ("scenario-010000",),
    "-name": ("scenario-010000",),
}


@pytest.mark.postgresql
@pytest.mark.parametrize(
    ("query", "index"),
    [
        ({"sort": "-updated_at"}, "ix_scenarios_updated_at_id"),
        ({"sort": "updated_at"}, "ix_scenarios_updated_at_id"),
        ({"sort": "name"}, "uq_scenarios_name"),
        ({"sort": "-name"}, "uq_scenarios_name"),
        ({"owner": "owner-7"}, "ix_scenarios_owner_updated_at_id"),
        ({"kind": "training"}, "ix_scenarios_"),  # half the rows: either (…, updated_at, id) index
        ({"tag": "team-3"}, "ix_scenario_tags_tag"),
        ({"tag": "common"}, "ix_scenarios_updated_at_id"),
    ],
)
def test_a_cursor_page_starts_at_its_key_in_the_index(many_scenarios, query, index):
    sort = query.get("sort", "-updated_at")
    after = scenario_listing.Cursor(sort, CURSORS[sort])
    plan = _plan(many_scenarios, scenario_listing.query(**query, after=after))
    assert index in plan and "Seq Scan on scenarios" not in plan, plan
    if query.get("tag") != "team-3":
        assert "Sort" not in plan, plan
        assert "Index Cond" in plan, plan  # the cursor bounds the index scan: no rows before it are read


@pytest.mark.postgresql
@pytest.mark.parametrize(
    ("filters", "index"),
    [
        ({"owner": "owner-7"}, "ix_scenarios_owner_updated_at_id"),
        ({"tag": "team-3"}, "ix_scenario_tags_tag_scenario_id"),
        ({"tag": "common"}, "ix_scenario_tags_tag_scenario_id"),
        ({"owner": "owner-7", "kind": "training"}, "ix_scenarios_"),
    ],
)
def test_filtered_counts_walk_an_index(many_scenarios, filters, index):
    plan = _plan(
        many_scenarios, scenario_listing.count_query(**filters, bound=scenario_listing.COUNT_CAP), limit=None
    )
    assert index in plan and "Seq Scan on scenarios" not in plan, plan


@pytest.mark.postgresql
@pytest.mark.parametrize("from_end", [False, True])
def test_a_page_reads_its_rows_by_primary_key(many_scenarios, from_end):
    plan = _plan(
        many_scenarios, scenario_listing.page_query("-updated_at", 40, 21, from_end=from_end), limit=None
    )
    assert "ix_scenarios_updated_at_id" in plan and "pk_scenarios" in plan, plan
    assert "Seq Scan on scenarios" not in plan, plan
