"""The `scalecost` command: database, catalog, API key and OpenAPI tasks."""

from __future__ import annotations

import json
import os
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


def _where_from(url: str | None) -> str:
    if url:
        return "from --url"
    if os.environ.get("DATABASE_URL"):
        return "from $DATABASE_URL"
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

    from .store import migrate
    from .store.session import make_engine, normalise_url

    resolved = _url(url)
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
def _transaction(url: str | None) -> Iterator[Session]:
    """One transaction on the database at `url` (or $DATABASE_URL), which must exist and be migrated; the
    engine is disposed after."""
    from .store.session import Database

    database = Database(_check_database(url))
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
    from .store.catalog import CatalogRepository
    from .store.seeding import seed_catalog
    from .usecases import price_moves

    with _transaction(url) as session:
        report = seed_catalog(session)
        if report.prices_added:  # saved scenarios' costs follow the catalog (issue 14)
            price_moves.refresh(session, [a.id for a in CatalogRepository(session).all()])
    click.echo(
        f"accelerators: {report.accelerators_added} added, {report.accelerators_kept} kept, "
        f"{report.accelerators_corrected} capacities corrected; "
        f"prices: {report.prices_added} added, {report.prices_kept} kept"
        + (f"; skipped (no capacity): {', '.join(report.skipped)}" if report.skipped else "")
    )


@main.group()
def prices() -> None:
    """Cloud price lists: import them (with a dry-run diff), list stale prices."""


def _money(value: str | None) -> str:
    return "-" if value is None else f"{float(value):,.6f}".rstrip("0").rstrip(".")


def _offer(row: dict) -> str:
    where = " ".join(str(row[k]) for k in ("instance_type", "region") if row.get(k))
    return f"{row['accelerator_id']} {row['provider']} {where} {row['pricing_model']}".replace("  ", " ")


def _print_import(answer: dict, verbose: bool) -> None:
    for f in answer["files"]:
        published = f" published {f['published']}" if f.get("published") else ""
        click.echo(
            f"{answer['source']}: {f['name']} ({f['bytes']:,} bytes, sha256 {f['sha256'][:12]}…{published})"
        )
    if answer.get("already_imported"):
        earlier = answer["already_imported"]
        click.echo(
            f"these files were imported before: import #{earlier['import_id']} at {earlier['at']} by {earlier['by']}"
        )
    s = answer["summary"]
    click.echo(
        f"added {s['added']}, changed {s['changed']}, unchanged {s['unchanged']}, kept {s['kept']}, not in the "
        f"file {s['not_in_file']}, unmapped {s['unmapped']}, refused {s['refused']}, ignored {s['ignored']}"
    )
    for row in answer["added"]:
        click.echo(
            f"  + {_offer(row)}: {_money(row['usd_per_hour'])} USD/accelerator-h from {row['effective_from']}"
        )
    for row in answer["changed"]:
        pct = f"{row['percent_change']:+.3g} %" if row["percent_change"] is not None else "n/a"
        click.echo(
            f"  ~ {_offer(row)}: {_money(row['old_usd_per_hour'])} → {_money(row['usd_per_hour'])} ({pct}) "
            f"from {row['effective_from']}"
        )
    for row in answer["unchanged"] if verbose else []:
        click.echo(f"  = {_offer(row)}: {_money(row['usd_per_hour'])}")
    for row in answer["kept"]:
        click.echo(f"  ! {_offer(row)}: {_money(row['usd_per_hour'])} not applied: {row['reason']}")
    for row in answer["not_in_file"]:
        click.echo(
            f"  ? not in the file (a candidate to close): {_offer(row)} {_money(row['usd_per_hour'])} "
            f"(price #{row['price_id']}, set by {row['set_by']})"
        )
    for row in answer["unmapped"]:
        click.echo(
            f"  unmapped instance type {row['instance_type']!r} ({row['offers']} offer(s), e.g. {row['where'][0]}): "
            "add it to the instance map (--map FILE)"
        )
    for row in answer["refused"]:
        click.echo(f"  refused {row['where']}: {row['reason']}")
    moved = answer["scenarios"]
    click.echo(f"saved scenarios moved: {moved['moved']}")
    for p in moved["by_price"]:
        pct = f"{p['percent']:+.3g} %" if p["percent"] is not None else "price gone"
        who = f"cost.provider={p['provider']}" if p["provider"] else "catalog default"
        click.echo(
            f"  {p['accelerator_id']} ({who}): {_money(p['usd_per_accelerator_hour_before'])} → "
            f"{_money(p['usd_per_accelerator_hour_after'])} USD/accelerator-h ({pct}), {p['scenarios']} scenario(s)"
        )
    for e in moved["largest"][:10]:
        pct = f"{e['percent']:+.3g} %" if e["percent"] is not None else "n/a"
        click.echo(
            f"    #{e['id']} {e['name']!r} {e['basis']}: {_money(e['usd_before'])} → {_money(e['usd_after'])} ({pct})"
        )
    if answer["applied"]:
        click.echo(
            f"applied as price import #{answer['import_id']} ({s['added'] + s['changed']} changes, one audit event each)"
        )
    elif answer["dry_run"]:
        click.echo("dry run: nothing was written")
    else:
        click.echo("nothing to change: nothing was written")


@prices.command("import")
@click.option(
    "--source", required=True, type=click.Choice(["aws-price-list", "azure-retail", "gcp-billing", "csv"])
)
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Show the diff; write nothing")
@click.option(
    "--force", is_flag=True, help="Replace prices set by hand after the file's date, and newer prices"
)
@click.option(
    "--map",
    "maps",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Extra instance map CSV (the columns of service/store/seed/instance_map.csv); also PRICE_INSTANCE_MAP",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON")
@click.option("--verbose", is_flag=True, help="Also list unchanged prices")
@click.option("--url")
def prices_import(
    source: str, files: tuple[str, ...], dry_run: bool, force: bool, maps: tuple[str, ...], as_json: bool,
    verbose: bool, url: str | None,
) -> None:  # fmt: skip
    """Import cloud price list FILES (one SOURCE format): the diff, then (without --dry-run) apply it in one
    transaction, one audit event per change. A malformed file is refused, naming the line or JSON path."""
    from .usecases import price_imports
    from .usecases.price_formats import PriceFileError

    extra = [
        *(
            [config_module.from_env()["PRICE_INSTANCE_MAP"]]
            if config_module.from_env()["PRICE_INSTANCE_MAP"]
            else []
        ),
        *maps,
    ]
    try:
        table = price_imports.instance_map(extra)
        loaded = [price_imports.PriceFile(Path(f).name, Path(f).read_bytes()) for f in files]
        with _transaction(url) as session:
            answer = price_imports.run(
                session, source, loaded, dry_run=dry_run, force=force, actor="cli", table=table
            )
    except PriceFileError as error:
        raise click.ClickException(f"cannot read the {source} file: {error}. Nothing was imported.") from None
    if as_json:
        click.echo(json.dumps(answer, indent=1, default=str))
    else:
        _print_import(answer, verbose)


@prices.command("stale")
@click.option("--older-than-days", type=int, help="Default: PRICE_STALE_AFTER_DAYS (90)")
@click.option("--url")
def prices_stale(older_than_days: int | None, url: str | None) -> None:
    """List current prices older than PRICE_STALE_AFTER_DAYS, oldest first."""
    import datetime as dt

    from .usecases import price_imports

    days = (
        older_than_days if older_than_days is not None else config_module.from_env()["PRICE_STALE_AFTER_DAYS"]
    )
    today = dt.datetime.now(dt.UTC).date()
    with _transaction(url) as session:
        rows = price_imports.stale(session, today=today, older_than_days=days)
    for row in rows:
        click.echo(
            f"{row['age_days']:>5} days  {_offer(row)}  {_money(row['usd_per_hour'])} USD/accelerator-h  "
            f"from {row['effective_from']}  ({row['source'] or 'no source'})"
        )
    click.echo(f"{len(rows)} current price(s) older than {days} days on {today.isoformat()}")


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

    reserved = key_store.reserved_name_message(name)
    if reserved:
        raise click.BadParameter(reserved, param_hint="'--name'")
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
    except key_store.LastAdminKey:
        raise click.ClickException(
            f"'{name}' is the last live admin key; revoking it would leave nobody able to manage keys or the "
            "catalog. Create another admin key first (scalecost keys create --role admin …)."
        ) from None
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
