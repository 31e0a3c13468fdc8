"""What every admin command shares for its result: `--json` for scripts, a line for people.

Exit codes of every command: 0 done; 1 the command could not do it (the database unreachable or without the
schema, a refusal such as the last admin key, a declined confirmation), one line on stderr; 2 invalid
arguments or input (click's usage errors, a refused or impossible request field)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print the result as one JSON document (for scripts)"
)


def report(as_json: bool, data: Any, text: str | Iterable[str]) -> None:
    """`data` as JSON with --json (dates and decimals as strings), else the human `text` (a line or lines)."""
    if as_json:
        click.echo(json.dumps(data, indent=1, default=str, ensure_ascii=False))
        return
    for line in [text] if isinstance(text, str) else text:
        click.echo(line)
