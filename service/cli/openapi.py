"""`scalecost openapi`: the OpenAPI contract generated from the code (write, print)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml

from .output import json_option, report


@click.group()
def openapi() -> None:
    """The OpenAPI contract."""


def generate_spec() -> dict:
    from .. import create_app

    app = create_app({"DATABASE_URL": "sqlite://"})
    with app.app_context():
        return app.extensions["scalecost.api"].spec.to_dict()


def spec_yaml(spec: dict) -> str:
    return yaml.safe_dump(json.loads(json.dumps(spec)), sort_keys=True, allow_unicode=True, width=100)


@openapi.command("write")
@click.option("--output", default="openapi.yaml", show_default=True, type=click.Path(dir_okay=False))
@json_option
def openapi_write(output: str, as_json: bool) -> None:
    """Regenerate openapi.yaml from the code."""
    Path(output).write_text(spec_yaml(generate_spec()), encoding="utf-8")
    report(as_json, {"written": output}, f"wrote {output}")


@openapi.command("print")
@json_option
def openapi_print(as_json: bool) -> None:
    """Print the spec as YAML (as JSON with --json)."""
    spec = generate_spec()
    sys.stdout.write(json.dumps(spec, indent=1) + "\n" if as_json else spec_yaml(spec))
