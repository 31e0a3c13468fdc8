"""The `scalecost` command: database, catalog and OpenAPI tasks (later: keys)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
import yaml

from . import config as config_module

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _url(url: str | None) -> str:
    return url or config_module.from_env()["DATABASE_URL"]


@click.group()
def main() -> None:
    """scalecost service administration."""


@contextmanager
def _transaction(url: str | None) -> Iterator[Session]:
    """One transaction on the database at `url` (or $DATABASE_URL); the engine is disposed after."""
    from .store.session import Database

    database = Database(_url(url))
    try:
        with database.transaction() as session:
            yield session
    finally:
        database.dispose()


@main.group()
def db() -> None:
    """Database schema (alembic migrations)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///scalecost.db)")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(url: str | None, revision: str) -> None:
    """Apply migrations up to REVISION (idempotent)."""
    from .store import migrate

    migrate.upgrade(_url(url), revision)
    click.echo(f"database at {revision}")


@db.command("downgrade")
@click.option("--url")
@click.option("--revision", default="base", show_default=True)
def db_downgrade(url: str | None, revision: str) -> None:
    """Revert migrations down to REVISION."""
    from .store import migrate

    migrate.downgrade(_url(url), revision)
    click.echo(f"database at {revision}")


@main.group()
def catalog() -> None:
    """Accelerator catalog."""


@catalog.command("seed")
@click.option("--url")
def catalog_seed(url: str | None) -> None:
    """Insert the default catalog; never overwrites what an admin changed."""
    from .store.seeding import seed_catalog

    with _transaction(url) as session:
        report = seed_catalog(session)
    click.echo(
        f"accelerators: {report.accelerators_added} added, {report.accelerators_kept} kept; "
        f"prices: {report.prices_added} added, {report.prices_kept} kept"
        + (f"; skipped (no capacity): {', '.join(report.skipped)}" if report.skipped else "")
    )


@main.group()
def keys() -> None:
    """API keys (roles: viewer, editor, admin)."""


@keys.command("create")
@click.option("--name", required=True)
@click.option("--role", required=True, type=click.Choice(["viewer", "editor", "admin"]))
@click.option("--url")
def keys_create(name: str, role: str, url: str | None) -> None:
    """Create a key; the key itself is printed alone on the last line (shown once)."""
    from sqlalchemy.exc import IntegrityError

    from .store import keys as key_store

    try:
        with _transaction(url) as session:
            key, secret = key_store.create(session, name, role, actor="cli")
            click.echo(f"created key '{key.name}' with role {key.role} (shown once, store it now):")
    except IntegrityError:
        raise click.ClickException(f"a key named '{name}' exists") from None
    click.echo(secret)


@keys.command("list")
@click.option("--url")
def keys_list(url: str | None) -> None:
    """List keys: name, role, prefix, created, revoked."""
    from .store import keys as key_store

    with _transaction(url) as session:
        for key in key_store.list_keys(session):
            revoked = key.revoked_at.isoformat() if key.revoked_at else "-"
            click.echo(
                f"{key.name}\t{key.role}\t{key.prefix}…\t{key.created_at.isoformat()}\trevoked:{revoked}"
            )


@keys.command("revoke")
@click.argument("name")
@click.option("--url")
def keys_revoke(name: str, url: str | None) -> None:
    """Revoke the key NAME (it stops working at once)."""
    from .store import keys as key_store

    try:
        with _transaction(url) as session:
            key_store.revoke(session, name, actor="cli")
    except key_store.KeyError_:
        raise click.ClickException(f"no live key named '{name}'") from None
    click.echo(f"revoked '{name}'")


@main.group()
def openapi() -> None:
    """The OpenAPI contract."""


def generate_spec() -> dict:
    from . import create_app

    app = create_app({"DATABASE_URL": "sqlite://"})
    with app.app_context():
        return app.extensions["scalecost.api"].spec.to_dict()


def spec_yaml(spec: dict) -> str:
    return yaml.safe_dump(json.loads(json.dumps(spec)), sort_keys=True, allow_unicode=True, width=100)


@openapi.command("write")
@click.option("--output", default="openapi.yaml", show_default=True, type=click.Path(dir_okay=False))
def openapi_write(output: str) -> None:
    """Regenerate openapi.yaml from the code."""
    Path(output).write_text(spec_yaml(generate_spec()), encoding="utf-8")
    click.echo(f"wrote {output}")


@openapi.command("print")
def openapi_print() -> None:
    """Print the spec as YAML."""
    sys.stdout.write(spec_yaml(generate_spec()))


if __name__ == "__main__":  # pragma: no cover
    main()
