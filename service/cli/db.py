"""`scalecost db`: the database schema (alembic migrations), and backup / restore of a SQLite database."""

from __future__ import annotations

from pathlib import Path

import click

from .connection import database_url


@click.group()
def db() -> None:
    """Database schema (alembic migrations), backup and restore (SQLite)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(url: str | None, revision: str) -> None:
    """Apply migrations up to REVISION (idempotent)."""
    from ..store import migrate

    migrate.upgrade(database_url(url), revision)
    click.echo(f"database at {revision}")


@db.command("downgrade")
@click.option("--url")
@click.option("--revision", default="base", show_default=True)
@click.option("--yes", is_flag=True, help="Do not ask: a downgrade drops tables and columns, and their data")
def db_downgrade(url: str | None, revision: str, yes: bool) -> None:
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
    click.echo(f"database at {revision}")


@db.command("reconcile-costs")
@click.option("--url")
def db_reconcile_costs(url: str | None) -> None:
    """Track the saved scenarios' costs at today's prices for scenarios saved by replicas of an older version
    (run once the last replica of a rolling upgrade runs this version; idempotent)."""
    from ..usecases import price_moves
    from .connection import transaction

    with transaction(url) as session:
        checked, written = price_moves.reconcile(session)
    click.echo(f"scenarios without a current cost row: {checked}; rows written: {written}")


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
def db_backup(path: Path, url: str | None) -> None:
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
    click.echo(f"backed up {database} to {path} ({snapshot.bytes} bytes, revision {snapshot.revision})")


@db.command("restore")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@click.option("--yes", is_flag=True, help="Replace an existing database without asking")
def db_restore(path: Path, url: str | None, yes: bool) -> None:
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
    click.echo(f"restored {path} (revision {snapshot.revision}) into {database}")
    if snapshot.revision != migrate.head_revision():
        click.echo("the backup predates this scalecost's schema: run `scalecost db upgrade` next", err=True)
