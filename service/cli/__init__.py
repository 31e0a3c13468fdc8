"""The `scalecost` command: database, catalog, API key and OpenAPI tasks (one module per command group)."""

from __future__ import annotations

import click

from .. import API_VERSION
from . import catalog, db, estimate, keys, openapi, plan, prices


@click.group()
@click.version_option(API_VERSION, prog_name="scalecost", message="%(prog)s %(version)s")
def main() -> None:
    """scalecost service administration."""


for _group in (db.db, catalog.catalog, prices.prices, keys.keys, openapi.openapi):
    main.add_command(_group)
main.commands.update(estimate=estimate.estimate, plan=plan.plan)  # the library's commands
