"""README's "From Python" example runs as written and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_python_example() -> str:
    """The python block of the README's "From Python" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return block


def test_the_readme_library_example_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_python_example(), "README.md", "exec"), {})  # noqa: S102 - our own README
    first, _, errors = out.getvalue().splitlines()
    assert re.fullmatch(r"\d+\.\d days, \$[\d,]+, fits: True", first), first
    assert errors == "['hardware', 'training.global_batch_size', 'training.tokens']"
