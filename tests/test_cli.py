"""The `scalecost` command run as a user runs it: a subprocess in a temporary directory (issue 9). Without the
server's DATABASE_URL it says which database it looked at and how to point it at the right one, creates no
stray scalecost.db, and prints no traceback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

SCALECOST = Path(sys.executable).parent / "scalecost"


def run(args: list[str], cwd: Path, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    return subprocess.run(
        [str(SCALECOST), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _explains(result: subprocess.CompletedProcess[str], looked_at: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "no such table" not in result.stderr, result.stderr
    assert looked_at in result.stderr, result.stderr
    assert "DATABASE_URL=" in result.stderr and "scalecost db upgrade" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["keys", "create", "--name", "ops", "--role", "admin"],
        ["keys", "list"],
        ["keys", "revoke", "ops"],
        ["catalog", "seed"],
    ],
)
def test_without_database_url_it_names_the_default_and_creates_no_file(tmp_path, args):
    result = run(args, tmp_path)
    _explains(result, "sqlite:///scalecost.db")
    assert "neither --url nor DATABASE_URL is set" in result.stderr
    assert f"{args[0]} {args[1]}" in result.stderr, "the advice repeats the command"
    assert not (tmp_path / "scalecost.db").exists() and list(tmp_path.iterdir()) == []


def test_an_unmigrated_database_is_named_not_a_traceback(tmp_path, empty_db_url):
    if empty_db_url.startswith("sqlite"):
        path = Path(empty_db_url.removeprefix("sqlite:///"))
        path.touch()  # exists, but has no schema
    result = run(["keys", "create", "--name", "ops", "--role", "admin"], tmp_path, empty_db_url)
    _explains(result, "has no scalecost schema")
    assert "from $DATABASE_URL" in result.stderr


def test_a_password_in_the_url_is_not_printed(tmp_path):
    url = "postgresql://admin:s3cret@127.0.0.1:1/nowhere?connect_timeout=1"
    result = run(["keys", "list", "--url", url], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "s3cret" not in result.stderr and "127.0.0.1:1/nowhere" in result.stderr, result.stderr


def test_with_the_servers_database_it_works(tmp_path, migrated_url, app):
    created = run(["keys", "create", "--name", "ops-admin", "--role", "admin"], tmp_path, migrated_url)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip().splitlines()[-1].startswith("sc_")
    assert "ops-admin\tadmin" in run(["keys", "list"], tmp_path, migrated_url).stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["cli", "anonymous", "seed", "Seed"])
def test_the_audit_trails_own_actor_names_are_refused(tmp_path, migrated_url, app, name):
    result = run(["keys", "create", "--name", name, "--role", "viewer"], tmp_path, migrated_url)
    assert result.returncode == 2 and "audit trail's own actors" in result.stderr, result.stderr


def test_the_last_admin_key_cannot_be_revoked_from_the_command_line(tmp_path, migrated_url, app):
    assert (
        run(["keys", "create", "--name", "only-admin", "--role", "admin"], tmp_path, migrated_url).returncode
        == 0
    )
    refused = run(["keys", "revoke", "only-admin"], tmp_path, migrated_url)
    assert refused.returncode == 1 and "last live admin key" in refused.stderr, refused.stderr
    assert (
        run(["keys", "create", "--name", "next-admin", "--role", "admin"], tmp_path, migrated_url).returncode
        == 0
    )
    assert run(["keys", "revoke", "only-admin"], tmp_path, migrated_url).returncode == 0


def test_version_prints_pyprojects_version(tmp_path):
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    result = run(["--version"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"scalecost {pyproject['project']['version']}\n"


def test_the_last_admin_key_is_revoked_with_yes(tmp_path, migrated_url, app):
    assert (
        run(["keys", "create", "--name", "last-admin", "--role", "admin"], tmp_path, migrated_url).returncode
        == 0
    )
    refused = run(["keys", "revoke", "last-admin"], tmp_path, migrated_url)
    assert refused.returncode == 1 and "--yes" in refused.stderr, refused.stderr
    assert run(["keys", "revoke", "last-admin", "--yes"], tmp_path, migrated_url).returncode == 0


def test_db_downgrade_asks_first(tmp_path):
    """Issue 32: `scalecost db downgrade` with no argument dropped every table without asking."""
    url = f"sqlite:///{tmp_path / 'downgrade.db'}"
    assert run(["db", "upgrade"], tmp_path, url).returncode == 0
    env = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, "DATABASE_URL": url}

    def downgrade(*extra: str, answer: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCALECOST), "db", "downgrade", *extra], cwd=tmp_path, env=env, input=answer,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    def tables() -> set[str]:
        with sqlite3.connect(tmp_path / "downgrade.db") as conn:
            return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    for answer in ("", "n\n"):
        refused = downgrade(answer=answer)
        assert refused.returncode == 1 and "Tables and columns" in refused.stdout, (
            refused.stdout,
            refused.stderr,
        )
        assert "scenarios" in tables()
    assert downgrade(answer="y\n").returncode == 0
    assert "scenarios" not in tables()
    assert run(["db", "upgrade"], tmp_path, url).returncode == 0
    assert downgrade("--yes", answer="").returncode == 0 and "scenarios" not in tables()
