"""Secrets from files (service/config.py): DATABASE_URL and RATELIMIT_STORAGE_URI can come from the file that
DATABASE_URL_FILE / RATELIMIT_STORAGE_URI_FILE names (Docker and Kubernetes secrets), for the app and the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scalecost import config

SCALECOST = Path(sys.executable).parent / "scalecost"


def test_each_secret_is_read_from_its_file(tmp_path):
    (tmp_path / "db").write_text("postgresql+psycopg://app:s3cret@db:5432/scalecost\n")
    (tmp_path / "limits").write_text("  redis://:pw@redis:6379/0  ")
    settings = config.from_env(
        {"DATABASE_URL_FILE": str(tmp_path / "db"), "RATELIMIT_STORAGE_URI_FILE": str(tmp_path / "limits")}
    )
    assert settings["DATABASE_URL"] == "postgresql+psycopg://app:s3cret@db:5432/scalecost"
    assert settings["RATELIMIT_STORAGE_URI"] == "redis://:pw@redis:6379/0"


def test_without_either_the_defaults_hold():
    settings = config.from_env({})
    assert settings["DATABASE_URL"] == config.DEFAULT_DATABASE_URL
    assert settings["RATELIMIT_STORAGE_URI"] == "local://"


@pytest.mark.parametrize("name", config.SECRETS)
def test_both_or_an_unreadable_or_empty_file_is_an_error_naming_the_variable(tmp_path, name):
    path = tmp_path / "secret"
    path.write_text("x://y")
    with pytest.raises(config.ConfigError, match=f"both {name} and {name}_FILE"):
        config.from_env({name: "x://z", f"{name}_FILE": str(path)})
    with pytest.raises(config.ConfigError, match=f"{name}_FILE=.*cannot read"):
        config.from_env({f"{name}_FILE": str(tmp_path / "missing")})
    path.write_text("\n")
    with pytest.raises(config.ConfigError, match=f"{name}_FILE=.* is empty"):
        config.from_env({f"{name}_FILE": str(path)})


def test_the_cli_migrates_the_database_its_file_names(tmp_path):
    database = tmp_path / "from-file.db"
    (tmp_path / "url").write_text(f"sqlite:///{database}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_URL_FILE")}
    env["DATABASE_URL_FILE"] = str(tmp_path / "url")
    result = subprocess.run(
        [str(SCALECOST), "db", "upgrade"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert database.exists() and not (tmp_path / "scalecost.db").exists()
