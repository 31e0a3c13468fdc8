"""The installed import name is `scalecost`, never `service` (another package of that name is on the index)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ..library.test_readme_library import readme_python_example

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")  # setuptools' build/ folder, outside the checkout
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        cwd=build,
        capture_output=True,
    )
    (found,) = out.glob("scalecost-*.whl")
    return found


def test_the_wheel_installs_scalecost_and_no_service_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("scalecost-")}
    assert tops == {"scalecost"}, tops
    for needed in (
        "scalecost/engine/training/model/plan.py",
        "scalecost/api/estimates/routes.py",
        "scalecost/store/seed/accelerators.csv",
        "scalecost/web/static/js/app.js",
    ):
        assert needed in names, needed


def test_import_scalecost_from_the_installed_wheel_outside_the_repository(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # what pip does with a pure-Python wheel
    code = (
        "import scalecost, sys\n"
        "from scalecost import create_app\n"
        "from scalecost.engine import estimate_training\n"
        "app = create_app({'DATABASE_URL': 'sqlite://'})\n"
        "print(scalecost.__file__)\n"
        "print('service' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    where, service_loaded = run.stdout.split()
    assert Path(where).is_relative_to(site), where
    assert service_loaded == "False"


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    zipfile.ZipFile(wheel).extractall(site)
    return site


def _outside(site: Path, cwd: Path, *args: str, database: Path | None = None, stdin: str | None = None):
    """`python *args` with only the unpacked wheel on the path, from a directory outside the checkout."""
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    if database is not None:
        env["DATABASE_URL"] = f"sqlite:///{database}"
    run = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, input=stdin, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_the_wheel_carries_the_migrations(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "scalecost/migrations/env.py" in names and "scalecost/migrations/script.py.mako" in names
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("scalecost/migrations/versions/")}
    assert shipped == {p.name for p in (ROOT / "migrations" / "versions").glob("*.py")}


def test_the_installed_wheel_migrates_seeds_and_estimates_outside_the_repository(unpacked, tmp_path):
    database = tmp_path / "scalecost.db"
    out = _outside(unpacked, tmp_path, "-m", "scalecost.cli", "db", "upgrade", database=database)
    assert database.exists(), out
    out = _outside(unpacked, tmp_path, "-m", "scalecost.cli", "catalog", "seed", database=database)
    assert "accelerators: " in out and " added" in out
    code = "from scalecost.store import migrate; print(migrate.script_location())"
    assert Path(_outside(unpacked, tmp_path, "-c", code).strip()).is_relative_to(unpacked)
    first = _outside(unpacked, tmp_path, "-c", readme_python_example()).splitlines()[0]
    assert first.endswith("fits: True"), first  # README's "From Python" example
    command = ["-m", "scalecost.cli", "estimate", "training", "--model", "llama-2-70b", "--tokens", "2T"]
    command += ["--accelerator", "nvidia-a100-sxm-80gb", "--count", "2048", "--json"]
    answer = json.loads(_outside(unpacked, tmp_path, *command))
    assert answer["memory"]["fits"] and answer["cost"]["total_usd"] > 0
    on_database = json.loads(
        _outside(unpacked, tmp_path, *command, "--database-url", f"sqlite:///{database}")
    )
    assert on_database == answer
