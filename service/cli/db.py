"""`scalecost db`: the database schema (alembic migrations)."""

from __future__ import annotations

import click

from .connection import database_url


@click.group()
def db() -> None:
    """Database schema (alembic migrations)."""


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
def db_downgrade(url: str | None, revision: str) -> None:
    """Revert migrations down to REVISION."""
    from ..store import migrate

    migrate.downgrade(database_url(url), revision)
    click.echo(f"database at {revision}")
