"""The installed import name is `scalecost`, never `service` (another package of that name is on the index)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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
