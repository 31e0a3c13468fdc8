"""listing indexes: a pg_trgm GIN index for the scenario name filter on PostgreSQL; (tag, scenario_id) for tags

scenario_tags gets (tag, scenario_id) in place of (tag): a tag's scenarios in id order from the index alone,
which the listing's count joins to scenarios by merge (its filtered count walked pk_scenario_tags, whose
first column is the scenario). Both databases.

GET /v1/scenarios?name=… is a case-insensitive substring match, `lower(name) LIKE '%…%'`, which no B-tree
can answer: at 1,000,000 scenarios it read the whole table (0.5 s per page). pg_trgm's GIN operator class
indexes every three-character piece of lower(name), so the match reads only the rows that hold all the
pattern's trigrams (https://www.postgresql.org/docs/current/pgtrgm.html#PGTRGM-INDEX).

PostgreSQL only. The extension is used where it is installed already (any schema); otherwise this migration
installs it — in `public` when that schema exists and this role may create objects there (an extension is
one per database: kept in the shared schema, dropping an application schema does not take it away from the
others), else in the current schema. pg_trgm ships with PostgreSQL's contrib package and is a trusted
extension (PostgreSQL 13+: a database owner may create it without superuser), available on the major
managed services. Where it cannot be created (not installed on the server, or no permission), the
migration logs a warning and skips the index: the name filter still works and returns the same rows, by
scanning. To add the index later, as a role that may:

    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_scenarios_name_trgm ON scenarios USING gin (lower(name) gin_trgm_ops);

Building it takes a SHARE lock on scenarios (writes wait; about 30 s per million rows on a small machine). A
large installation can build it beforehand with the CONCURRENTLY statement above: the migration keeps an
index of that name (IF NOT EXISTS).

SQLite: no trigram index (the embedded database is for small installations), only the tag index.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")

INDEX = "ix_scenarios_name_trgm"
TRGM_SCHEMA = sa.text(
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
    "WHERE e.extname = 'pg_trgm'"
)


def _install_target(bind) -> str:
    shared = bind.execute(
        sa.text(
            "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'public') "
            "AND has_schema_privilege('public', 'CREATE')"
        )
    ).scalar()
    return "public" if shared else bind.execute(sa.text("SELECT current_schema()")).scalar()


def trgm_schema(bind) -> str | None:
    """The schema of pg_trgm's operator classes, installing the extension if needed; None if it cannot be."""
    schema = bind.execute(TRGM_SCHEMA).scalar()
    if schema is not None:
        return schema
    target = _install_target(bind)
    quote = bind.dialect.identifier_preparer.quote_schema
    try:
        with bind.begin_nested():  # a savepoint: a refusal leaves the migration's transaction usable
            bind.execute(sa.text(f"CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA {quote(target)}"))
    except sa.exc.DBAPIError as error:
        schema = bind.execute(TRGM_SCHEMA).scalar()  # created meanwhile by a concurrent migration?
        if schema is None:
            reason = str(getattr(error, "orig", error)).strip().splitlines()[0]
            log.warning(
                "pg_trgm is not available (%s): %s skipped, so GET /v1/scenarios?name=… scans the table. "
                "See migrations/versions/0005_listing_indexes.py to add it later.",
                reason,
                INDEX,
            )
        return schema
    return bind.execute(TRGM_SCHEMA).scalar()


def upgrade() -> None:
    op.create_index("ix_scenario_tags_tag_scenario_id", "scenario_tags", ["tag", "scenario_id"])
    op.drop_index("ix_scenario_tags_tag", table_name="scenario_tags")  # its prefix: redundant now
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    schema = trgm_schema(bind)
    if schema is None:
        return
    ops = f"{bind.dialect.identifier_preparer.quote_schema(schema)}.gin_trgm_ops"
    op.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON scenarios USING gin (lower(name) {ops})")
    op.execute("ANALYZE scenarios")  # statistics on lower(name), which the planner's estimates use


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")  # pg_trgm stays: other objects of the database may use it
    op.create_index("ix_scenario_tags_tag", "scenario_tags", ["tag"])
    op.drop_index("ix_scenario_tags_tag_scenario_id", table_name="scenario_tags")
