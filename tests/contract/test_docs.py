"""The docs site builds offline (`make docs`: mkdocs --strict, so a broken link or a page left out of the
navigation fails), its API reference is rendered from openapi.yaml and names every operation, nothing in it loads
from another host, and the notebook page's Python runs and says what the engine answers."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if not MKDOCS.exists():
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (the dev extra includes it)")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_the_api_reference_names_every_operation_of_the_contract(site):
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    page = html.unescape(
        re.sub(r"<[^>]+>", "", (site / "reference" / "api.html").read_text(encoding="utf-8"))
    )
    for path, operations in contract["paths"].items():
        for method in operations:
            if method in {"get", "post", "put", "patch", "delete"}:
                assert f"{method.upper()} {path}" in page, (method, path)


def test_the_site_loads_nothing_from_another_host(site):
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        outside = re.findall(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]*\"", text)
        assert not outside, (page.relative_to(site), outside[:3])


def test_the_notebook_page_runs_and_quotes_what_the_engine_answers():
    page = (ROOT / "docs" / "start" / "notebook.md").read_text(encoding="utf-8")
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", page, re.DOTALL):
        exec(compile(block, "docs/start/notebook.md", "exec"), namespace)  # the page's own code
    answer, serving = namespace["answer"], namespace["serving"]
    quoted = (
        f"('{answer['time']['human']}', {round(answer['cost']['total_usd'])}, "
        f"{round(answer['cost']['accelerator_hours'])})"
    )
    assert quoted in page, f"docs/start/notebook.md should say {quoted}"
    assert f'serving["memory"]["max_batch_size"]  # {serving["memory"]["max_batch_size"]}' in page
    assert len(namespace["rows"]) == 4
