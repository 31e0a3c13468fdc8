"""never reuse ids: SQLite AUTOINCREMENT on every table whose ids are referenced after deletion

SQLite without AUTOINCREMENT hands out max(rowid) + 1, so deleting the newest scenario frees its id; the next
scenario takes it and collides with the revisions the deleted one kept (issue 9, defect 1). AUTOINCREMENT keeps
the largest id ever used in `sqlite_sequence` (https://www.sqlite.org/autoinc.html). SQLite cannot add it to an
existing table: batch mode rebuilds each table (copying the rows), then the sequence is raised past every id the
kept references still name (revisions of deleted scenarios), because the rebuilt table only knows the ids of the
rows that are still there.

PostgreSQL sequences never hand out a number twice, so nothing changes there.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# table -> SQL giving the largest id any row (kept or referencing) has used for it
TABLES = {
    "scenarios": "SELECT max(m) FROM (SELECT max(id) AS m FROM scenarios "
    "UNION ALL SELECT max(scenario_id) FROM scenario_revisions)",
    "scenario_revisions": "SELECT max(id) FROM scenario_revisions",
    "api_keys": "SELECT max(id) FROM api_keys",
    "accelerator_prices": "SELECT max(id) FROM accelerator_prices",
    "audit_events": "SELECT max(id) FROM audit_events",
}


def _rebuild(autoincrement: bool) -> None:
    for table in TABLES:
        with op.batch_alter_table(
            table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
        ):
            pass


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    _rebuild(True)
    for table, largest_sql in TABLES.items():
        largest = bind.execute(sa.text(largest_sql)).scalar()
        if largest is None:
            continue
        bind.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = :t"), {"t": table})
        bind.execute(
            sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES (:t, :s)"), {"t": table, "s": largest}
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _rebuild(False)
