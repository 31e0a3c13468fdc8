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
    loaded = _modules_loaded_by("scalecost.engine")
    assert not loaded & {"flask", "sqlalchemy", "marshmallow", "flask_smorest", "werkzeug", "alembic"}
    assert "babel" not in loaded  # the engine's i18n shim is handed its catalogs and locale (service/i18n.py)


def test_store_does_not_import_flask():
    loaded = _modules_loaded_by("scalecost.store")
    assert not loaded & {"flask", "flask_smorest", "werkzeug"}


def test_engine_source_has_no_io_or_environment_access():
    for path in (ROOT / "service" / "engine").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for forbidden in ("import os", "open(", "import logging", "os.environ"):
            assert forbidden not in source, f"{path.name} uses {forbidden!r}"


def test_usecases_do_not_import_flask():
    loaded = _modules_loaded_by("scalecost.usecases")
    assert not loaded & {"flask", "flask_smorest", "werkzeug"}


def _imports(path: Path) -> set[str]:
    """Absolute names of the service modules `path` imports, at module level or inside functions."""
    import ast

    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(ROOT).parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("service")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_training_and_inference_wings_never_import_each_other():
    engine = ROOT / "service" / "engine"
    for wing, other in (("training", "inference"), ("inference", "training")):
        for path in (engine / wing).rglob("*.py"):
            crossing = {n for n in _imports(path) if n.startswith(f"service.engine.{other}")}
            assert not crossing, f"{path.relative_to(ROOT)} imports {sorted(crossing)}"


def test_engine_modules_form_no_cycle():
    engine = ROOT / "service" / "engine"
    modules = {_module_name(p): p for p in engine.rglob("*.py") if p.name != "__init__.py"}
    graph = {m: {n for n in _imports(p) if n in modules and n != m} for m, p in modules.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " → ".join(trail[trail.index(nxt) :] + [nxt]))
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_api_does_not_import_sqlalchemy():
    for path in (ROOT / "service" / "api").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "import sqlalchemy" not in source and "from sqlalchemy" not in source, path.name


WINGS = ("training", "inference")


def _wing_imports(wing: str, room: str) -> dict[Path, set[str]]:
    folder = ROOT / "service" / "engine" / wing / room
    return {path: _imports(path) for path in folder.rglob("*.py")}


def test_each_wing_has_one_room_per_role():
    for wing in WINGS:
        folder = ROOT / "service" / "engine" / wing
        rooms = {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
        assert rooms == {"model", "advice", "search"}, (wing, rooms)
        for door in ("estimate.py", "planner.py", "request.py", "response.py"):
            assert (folder / door).is_file(), f"{wing}/{door}"
        assert (folder / "model" / "plan.py").is_file(), f"{wing}/model/plan.py"


def test_the_model_imports_no_advice_search_request_or_response():
    for wing in WINGS:
        base = f"service.engine.{wing}"
        banned = tuple(
            f"{base}.{room}" for room in ("advice", "search", "request", "response", "estimate", "planner")
        )
        for path, names in _wing_imports(wing, "model").items():
            crossing = {n for n in names if n.startswith(banned)}
            assert not crossing, f"{path.relative_to(ROOT)} imports {sorted(crossing)}"


def test_the_search_does_not_import_the_advice():
    for wing in WINGS:
        for path, names in _wing_imports(wing, "search").items():
            crossing = {n for n in names if n.startswith(f"service.engine.{wing}.advice")}
            assert not crossing, f"{path.relative_to(ROOT)} imports {sorted(crossing)}"


def test_the_api_imports_only_the_engines_public_surface():
    allowed = {"service.engine", "service.engine.i18n"}
    for path in (ROOT / "service" / "api").rglob("*.py"):
        reaching = {
            n
            for n in _imports(path)
            if n.startswith("service.engine.") and n.rsplit(".", 1)[0] not in allowed
        }
        reaching -= {n for n in reaching if n in allowed}
        assert not reaching, f"{path.relative_to(ROOT)} imports engine internals {sorted(reaching)}"


def test_the_general_api_layer_imports_no_resource():
    resources = {
        p.name for p in (ROOT / "service" / "api").iterdir() if p.is_dir() and p.name != "extensions"
    }
    resources |= {p.stem for p in (ROOT / "service" / "api").glob("*.py") if p.name != "__init__.py"}
    for path in (ROOT / "service" / "api" / "extensions").rglob("*.py"):
        crossing = {n for n in _imports(path) if n.split(".")[2:3] and n.split(".")[2] in resources}
        crossing = {n for n in crossing if n.startswith("service.api.")}
        assert not crossing, f"{path.relative_to(ROOT)} imports resources {sorted(crossing)}"


def test_bench_does_not_import_the_api():
    for path in (ROOT / "bench").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "scalecost.api" not in source and "service.api" not in source, (
            f"bench/{path.name} imports the api"
        )
