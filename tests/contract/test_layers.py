"""Layering: the engine imports no web or database library; the store imports no web library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules_loaded_by(package: str) -> set[str]:
    code = (
        "import importlib, pkgutil, sys\n"
        f"import {package} as p\n"
        "for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('\\n'.join(sorted({n.split('.')[0] for n in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_engine_imports_neither_flask_nor_sqlalchemy():
    loaded = _modules_loaded_by("service.engine")
    assert not loaded & {"flask", "sqlalchemy", "marshmallow", "flask_smorest", "werkzeug", "alembic"}


def test_store_does_not_import_flask():
    loaded = _modules_loaded_by("service.store")
    assert not loaded & {"flask", "flask_smorest", "werkzeug"}


def test_engine_source_has_no_io_or_environment_access():
    for path in (ROOT / "service" / "engine").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for forbidden in ("import os", "open(", "import logging", "os.environ"):
            assert forbidden not in source, f"{path.name} uses {forbidden!r}"
