"""The database a command works on: --url or $DATABASE_URL, checked to exist and be migrated, and one
transaction on it (a clear error, exit 1, instead of a traceback or a stray scalecost.db)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import config as config_module

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def database_url(url: str | None) -> str:
    try:
        return url or config_module.database_url()
    except config_module.ConfigError as error:
        raise click.ClickException(str(error)) from None


def _where_from(url: str | None) -> str:
    if url:
        return "from --url"
    if os.environ.get("DATABASE_URL"):
        return "from $DATABASE_URL"
    if os.environ.get("DATABASE_URL_FILE"):
        return f"from the file $DATABASE_URL_FILE ({os.environ['DATABASE_URL_FILE']})"
    return "the default: neither --url nor DATABASE_URL is set"


def _how_to_point() -> str:
    """What to run instead: this same command with the server's DATABASE_URL (or --url)."""
    context = click.get_current_context(silent=True)
    words = context.command_path.split()[1:] if context is not None else []
    command = " ".join(["scalecost", *words, "…"])
    return (
        "Point it at the server's database, the DATABASE_URL the server runs with:\n"
        f"  DATABASE_URL=postgresql://user@host:5432/scalecost {command}   (or --url URL)\n"
        "A new database needs its schema first: DATABASE_URL=… scalecost db upgrade"
    )


def _check_database(url: str | None) -> str:
    """The URL to use, once it names a database that exists and is migrated; else a clear error (exit 1).

    A SQLite file that does not exist is not created (connecting would create an empty scalecost.db in the
    current directory), and an unmigrated database is named, instead of a "no such table" traceback."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from ..store import migrate
    from ..store.session import make_engine, normalise_url

    resolved = database_url(url)
    try:
        parsed = make_url(normalise_url(resolved))
    except Exception as error:  # noqa: BLE001 - any parse failure is a bad URL
        raise click.ClickException(f"not a database URL ({_where_from(url)}): {error}") from None
    shown = parsed.render_as_string(hide_password=True)
    where = f"{shown} ({_where_from(url)})"
    database = parsed.database or ""
    if (
        parsed.get_backend_name() == "sqlite"
        and database not in ("", ":memory:")
        and not database.startswith("file:")
    ):
        path = Path(database)
        if not path.exists():
            raise click.ClickException(
                f"no scalecost database at {where}: the file {path.resolve()} does not exist "
                "(nothing was created).\n" + _how_to_point()
            )
    engine = make_engine(resolved, single_use=True)
    try:
        with engine.connect() as connection:
            revision = migrate.current_revision(connection)
    except DBAPIError as error:
        raise click.ClickException(
            f"cannot open the database at {where}: {error.orig}\n" + _how_to_point()
        ) from None
    finally:
        engine.dispose()
    if revision is None:
        raise click.ClickException(
            f"the database at {where} has no scalecost schema (no migration applied): it is not the "
            "server's database, or it was never migrated.\n" + _how_to_point()
        )
    head = migrate.head_revision()
    if revision != head:
        click.echo(
            f"warning: the database at {shown} is at revision {revision}, this scalecost expects {head} "
            "(scalecost db upgrade)",
            err=True,
        )
    return resolved


@contextmanager
def transaction(url: str | None) -> Iterator[Session]:
    """One transaction on the database at `url` (or $DATABASE_URL), which must exist and be migrated; the
    engine is disposed after."""
    from ..store.session import Database

    database = Database(_check_database(url))
    try:
        with database.transaction() as session:
            yield session
    finally:
        database.dispose()


@contextmanager
def session(url: str | None) -> Iterator[Session]:
    """A session on the database at `url` (checked as `transaction` does) whose caller commits, as often as
    it needs (the price import: one commit per batch); what is left uncommitted is rolled back on an error
    and committed otherwise."""
    from ..store.session import Database

    database = Database(_check_database(url))
    try:
        with database.session() as opened:
            try:
                yield opened
            except BaseException:
                opened.rollback()
                raise
            opened.commit()
    finally:
        database.dispose()
