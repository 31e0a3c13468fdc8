"""requirements.lock (`make lock`) pins every dependency pyproject.toml names, at a version its bounds allow, and
the installs use it: `make install`/`install-dev` and the Dockerfile pass it to pip as constraints."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in LOCK.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", line)
        assert match, f"not an exact pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in pins, f"{name} pinned twice"
        pins[name] = Version(match[2])
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        names += extra
    own = canonicalize_name(project["name"])  # "scalecost[docs]": the project's own extra, not a dependency
    return [r for r in map(Requirement, names) if canonicalize_name(r.name) != own]


def test_every_dependency_is_pinned_within_its_bounds():
    pins = _pins()
    missing = sorted({r.name for r in _requirements() if canonicalize_name(r.name) not in pins})
    assert not missing, f"not in requirements.lock (run `make lock`): {missing}"
    for requirement in _requirements():
        pinned = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(pinned, prereleases=True), (
            f"{requirement} but requirements.lock pins {pinned} (run `make lock`)"
        )
    assert "binary" in Requirement(next(str(r) for r in _requirements() if r.name == "psycopg")).extras
    assert "psycopg-binary" in pins, "psycopg[binary]'s wheel is pinned too"
    assert "scalecost" not in pins and "pip" not in pins


def test_installs_use_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    for target in (r"\$\(VENV\)/\.installed:", r"\$\(VENV\)/\.installed-dev:"):
        recipe = re.search(rf"^{target}(.*?)(?=^\S|\Z)", makefile, re.MULTILINE | re.DOTALL)
        assert recipe and "requirements.lock" in recipe[1].splitlines()[0], (
            f"{target} re-runs when the lock changes"
        )
        assert "pip install --quiet -c requirements.lock" in recipe[1], target
    assert re.search(r"^lock:", makefile, re.MULTILINE), "make lock regenerates it"
    dockerfile = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())  # continuation lines joined
    assert re.search(r"^COPY [^\n]*requirements\.lock", dockerfile, re.MULTILINE)
    installs = re.findall(r"pip install [^&\n]*", dockerfile)
    assert len(installs) >= 2 and all("-c requirements.lock" in command for command in installs), installs
