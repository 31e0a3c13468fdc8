"""`scalecost db`: the database schema (alembic migrations), and backup / restore of a SQLite database."""

from __future__ import annotations

from pathlib import Path

import click

from .connection import database_url
from .output import json_option, report


@click.group()
def db() -> None:
    """Database schema (alembic migrations), backup and restore (SQLite)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@click.option("--revision", default="head", show_default=True)
@json_option
def db_upgrade(url: str | None, revision: str, as_json: bool) -> None:
    """Apply migrations up to REVISION (idempotent)."""
    from ..store import migrate

    migrate.upgrade(database_url(url), revision)
    report(as_json, {"revision": revision}, f"database at {revision}")


@db.command("downgrade")
@click.option("--url")
@click.option("--revision", default="base", show_default=True)
@click.option("--yes", is_flag=True, help="Do not ask: a downgrade drops tables and columns, and their data")
@json_option
def db_downgrade(url: str | None, revision: str, yes: bool, as_json: bool) -> None:
    """Revert migrations down to REVISION (base: drop every table). Asks first, unless --yes; without a
    terminal to answer on, it refuses (exit 1)."""
    from ..store import migrate

    if not yes:
        click.confirm(
            f"Downgrade the database to {revision}? Tables and columns of later revisions are dropped with their "
            "data (scalecost db backup first)",
            abort=True,
        )
    migrate.downgrade(database_url(url), revision)
    report(as_json, {"revision": revision}, f"database at {revision}")


@db.command("reconcile-costs")
@click.option("--url")
@json_option
def db_reconcile_costs(url: str | None, as_json: bool) -> None:
    """Track the saved scenarios' costs at today's prices for scenarios saved by replicas of an older version
    (run once the last replica of a rolling upgrade runs this version; idempotent)."""
    from ..usecases import price_moves
    from .connection import transaction

    with transaction(url) as session:
        checked, written = price_moves.reconcile(session)
    report(
        as_json,
        {"scenarios_checked": checked, "rows_written": written},
        f"scenarios without a current cost row: {checked}; rows written: {written}",
    )


def _sqlite_file(url: str | None, what: str) -> Path:
    """The file of a SQLite database URL; for PostgreSQL, where pg_dump / pg_restore are explained."""
    from sqlalchemy.engine import make_url

    from ..store.session import normalise_url

    parsed = make_url(normalise_url(database_url(url)))
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite":
        raise click.ClickException(
            f"`scalecost db {what}` copies SQLite files; the database is "
            f"{parsed.render_as_string(hide_password=True)}. For PostgreSQL use pg_dump / pg_restore "
            "(docs/operations.md)."
        )
    if database in ("", ":memory:") or database.startswith("file:"):
        raise click.ClickException(f"the SQLite database {database or ':memory:'} is not a file")
    return Path(database)


@db.command("backup")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@json_option
def db_backup(path: Path, url: str | None, as_json: bool) -> None:
    """Copy the SQLite database to PATH (a new file) while the service runs, with sqlite3's online backup API,
    then check the copy. PostgreSQL: pg_dump (docs/operations.md)."""
    from ..store import backup

    database = _sqlite_file(url, "backup")
    if not database.is_file():
        raise click.ClickException(f"no SQLite database at {database.resolve()}")
    try:
        snapshot = backup.backup(database, path)
    except backup.BackupError as error:
        raise click.ClickException(str(error)) from None
    report(
        as_json,
        {
            "database": str(database),
            "backup": str(path),
            "bytes": snapshot.bytes,
            "revision": snapshot.revision,
        },
        f"backed up {database} to {path} ({snapshot.bytes} bytes, revision {snapshot.revision})",
    )


@db.command("restore")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@click.option("--yes", is_flag=True, help="Replace an existing database without asking")
@json_option
def db_restore(path: Path, url: str | None, yes: bool, as_json: bool) -> None:
    """Replace the SQLite database's content with the backup PATH (checked first), online. PostgreSQL:
    pg_restore (docs/operations.md)."""
    from ..store import backup, migrate

    database = _sqlite_file(url, "restore")
    try:
        snapshot = backup.describe(path)
    except backup.BackupError as error:
        raise click.ClickException(f"{error}; nothing was restored") from None
    if snapshot.revision is None or not migrate.known_revision(snapshot.revision):
        raise click.ClickException(
            f"{path} is at revision {snapshot.revision}, which this scalecost does not know (a newer version's "
            "backup?); nothing was restored"
        )
    if database.exists() and not yes:
        click.confirm(f"Replace every row of {database} with {path}?", abort=True)
    backup.restore(path, database)
    behind = snapshot.revision != migrate.head_revision()
    restored = {"backup": str(path), "database": str(database), "revision": snapshot.revision}
    report(
        as_json,
        {**restored, "upgrade_needed": behind},
        f"restored {path} (revision {snapshot.revision}) into {database}",
    )
    if behind:
        click.echo("the backup predates this scalecost's schema: run `scalecost db upgrade` next", err=True)
