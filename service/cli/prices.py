"""`scalecost prices`: import cloud price lists (with a dry-run diff), list stale prices."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import config as config_module
from .connection import session as open_session
from .connection import transaction
from .output import json_option, report
from .price_report import money, offer, print_import

BATCH = 1000  # price changes per transaction of `scalecost prices import`


@click.group()
def prices() -> None:
    """Cloud price lists: import them (with a dry-run diff), list stale prices."""


@prices.command("import")
@click.option(
    "--source",
    required=True,
    type=click.Choice(["aws-price-list", "azure-retail", "gcp-billing", "skypilot", "csv"]),
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
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=BATCH,
    show_default=True,
    help="Price changes per transaction (the database is locked for writes one batch at a time)",
)
@click.option("--url")
def prices_import(
    source: str, files: tuple[str, ...], dry_run: bool, force: bool, maps: tuple[str, ...], as_json: bool,
    verbose: bool, batch: int, url: str | None,
) -> None:  # fmt: skip
    """Import cloud price list FILES (one SOURCE format): the diff, then (without --dry-run) apply it, one audit
    event per change, committed --batch changes at a time so that the server stays writable meanwhile (the
    saved scenarios' costs commit with the last batch). If it stops midway, it says how many changes were
    applied; running the same command again applies the rest (prices already applied are unchanged, and
    skipped). A malformed file is refused, naming the line or JSON path."""
    from ..usecases import price_imports
    from ..usecases.price_formats import PriceFileError

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
        loaded = [price_imports.PriceFile(_file_name(source, f), Path(f).read_bytes()) for f in files]
        with open_session(url) as session:
            answer = price_imports.run(
                session, source, loaded, dry_run=dry_run, force=force, actor="cli", table=table,
                batch=batch, commit=session.commit,
            )  # fmt: skip
    except PriceFileError as error:
        raise click.ClickException(f"cannot read the {source} file: {error}. Nothing was imported.") from None
    except price_imports.PartialImport as stopped:
        cause = getattr(stopped.cause, "orig", None) or stopped.cause
        raise click.ClickException(
            f"the import stopped after {stopped.applied} of {stopped.total} price changes (import "
            f"{stopped.import_id}; those are committed, each with its audit event): {cause}. Run the same "
            "command again to apply the rest: the prices already applied are unchanged offers then, and skipped."
        ) from None
    if as_json:
        click.echo(json.dumps(answer, indent=1, default=str))
    else:
        print_import(answer, verbose)


@prices.command("stale")
@click.option("--older-than-days", type=int, help="Default: PRICE_STALE_AFTER_DAYS (90)")
@click.option("--url")
@json_option
def prices_stale(older_than_days: int | None, url: str | None, as_json: bool) -> None:
    """List current prices older than PRICE_STALE_AFTER_DAYS, oldest first."""
    import datetime as dt

    from ..usecases import price_imports

    days = (
        older_than_days if older_than_days is not None else config_module.from_env()["PRICE_STALE_AFTER_DAYS"]
    )
    today = dt.datetime.now(dt.UTC).date()
    with transaction(url) as session:
        rows = price_imports.stale(session, today=today, older_than_days=days)
    lines = [
        f"{row['age_days']:>5} days  {offer(row)}  {money(row['usd_per_hour'])} USD/accelerator-h  "
        f"from {row['effective_from']}  ({row['source'] or 'no source'})"
        for row in rows
    ]
    lines.append(f"{len(rows)} current price(s) older than {days} days on {today.isoformat()}")
    report(as_json, {"older_than_days": days, "today": today.isoformat(), "prices": rows}, lines)


def _file_name(source: str, path: str) -> str:
    """How the import names a file: its name; for a SkyPilot vms.csv also its folder, which names the cloud
    (catalogs/v8/aws/vms.csv → aws/vms.csv; the date goes in the name: aws/vms-2026-11-30.csv)."""
    parts = Path(path).parts
    return str(Path(*parts[-2:])) if source == "skypilot" and len(parts) > 1 else Path(path).name
