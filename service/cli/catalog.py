"""`scalecost catalog`: the accelerator catalog."""

from __future__ import annotations

import click

from .connection import transaction
from .output import json_option
from .output import report as show


@click.group()
def catalog() -> None:
    """Accelerator catalog."""


@catalog.command("seed")
@click.option("--url")
@json_option
def catalog_seed(url: str | None, as_json: bool) -> None:
    """Insert the default catalog; never overwrites what an admin changed."""
    from ..store.catalog import CatalogRepository
    from ..store.seeding import seed_catalog
    from ..usecases import price_moves

    with transaction(url) as session:
        report = seed_catalog(session)
        if report.prices_added:  # saved scenarios' costs follow the catalog (issue 14)
            price_moves.refresh(session, [a.id for a in CatalogRepository(session).all()])
    counts = {
        "accelerators_added": report.accelerators_added,
        "accelerators_kept": report.accelerators_kept,
        "accelerators_corrected": report.accelerators_corrected,
        "prices_added": report.prices_added,
        "prices_kept": report.prices_kept,
        "skipped": list(report.skipped),
    }
    show(
        as_json,
        counts,
        f"accelerators: {report.accelerators_added} added, {report.accelerators_kept} kept, "
        f"{report.accelerators_corrected} capacities corrected; "
        f"prices: {report.prices_added} added, {report.prices_kept} kept"
        + (f"; skipped (no capacity): {', '.join(report.skipped)}" if report.skipped else ""),
    )
