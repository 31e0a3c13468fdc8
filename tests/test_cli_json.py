"""Issue 32: `--json` on every command (scripts read one JSON document from stdout), exit codes documented."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner
from scalecost.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out += _leaves(command, (*prefix, name))
        else:
            out.append(((*prefix, name), command))
    return out


def test_every_command_takes_json():
    leaves = _leaves(main)
    assert len(leaves) >= 16
    lacking = [
        " ".join(path) for path, command in leaves if not any("--json" in p.opts for p in command.params)
    ]
    assert lacking == []


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, [*args, "--json"], env={"LANG": "C.UTF-8"})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_script_sets_up_a_database_with_json_answers(tmp_path):
    url = f"sqlite:///{tmp_path / 'script.db'}"
    assert _run("db", "upgrade", "--url", url) == {"revision": "head"}
    seeded = _run("catalog", "seed", "--url", url)
    assert (
        seeded["accelerators_added"] > 40
        and seeded["prices_added"] > 40
        and isinstance(seeded["skipped"], list)
    )
    assert _run("catalog", "seed", "--url", url)["prices_added"] == 0  # idempotent, and says so
    created = _run("keys", "create", "--name", "ops", "--role", "admin", "--url", url)
    assert created["name"] == "ops" and created["role"] == "admin" and created["key"].startswith("sc_")
    _run("keys", "create", "--name", "reader", "--role", "viewer", "--url", url)
    assert _run("keys", "revoke", "reader", "--url", url) == {"revoked": "reader"}
    listed = {k["name"]: k for k in _run("keys", "list", "--url", url)}
    assert listed["ops"]["revoked_at"] is None and listed["reader"]["revoked_at"] is not None
    assert created["key"].startswith(listed["ops"]["prefix"])
    stale = _run("prices", "stale", "--older-than-days", "0", "--url", url)
    assert stale["older_than_days"] == 0 and 0 < len(stale["prices"]) <= seeded["prices_added"]
    assert all(row["age_days"] > 0 and row["accelerator_id"] for row in stale["prices"])
    assert _run("db", "reconcile-costs", "--url", url) == {"scenarios_checked": 0, "rows_written": 0}
    backup = _run("db", "backup", str(tmp_path / "copy.db"), "--url", url)
    assert backup["bytes"] > 0 and backup["revision"]
    restored = _run("db", "restore", str(tmp_path / "copy.db"), "--url", url, "--yes")
    assert restored["revision"] == backup["revision"] and restored["upgrade_needed"] is False
    assert _run("db", "downgrade", "--url", url, "--yes") == {"revision": "base"}


def test_openapi_json(tmp_path):
    assert _run("openapi", "write", "--output", str(tmp_path / "spec.yaml")) == {
        "written": str(tmp_path / "spec.yaml")
    }
    assert _run("openapi", "print")["openapi"].startswith("3.")


def test_a_failure_is_one_line_on_stderr_and_exit_1_even_with_json(tmp_path):
    url = f"sqlite:///{tmp_path / 'script.db'}"
    _run("db", "upgrade", "--url", url)
    result = CliRunner().invoke(main, ["keys", "revoke", "nobody", "--url", url, "--json"])
    assert result.exit_code == 1 and result.output == "Error: no live key named 'nobody'\n"


def test_the_cli_reference_documents_the_exit_codes():
    text = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert "## Exit codes" in text and "`--json`" in text
    for code in ("`0`", "`1`", "`2`"):
        assert code in text
