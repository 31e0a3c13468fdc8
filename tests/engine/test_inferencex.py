"""Batch inferencex-2026 (SemiAnalysis InferenceX's single-node DeepSeek-R1 runs): every row is a request the
estimator answers, and the grouped table prints (`pytest -s`). Printed, not bounded (data/README.md)."""

from __future__ import annotations

from .inferencex import BATCH, HARDWARE, grouped, mean_length
from .reference_catalog import load_catalog
from .serving_calibration import compare
from .serving_sweeps import load


def test_the_inferencex_rows_are_estimated_and_printed() -> None:
    catalog = load_catalog()
    points = [p for p in load() if p.batch == BATCH]
    assert len(points) == 84 and {p.accelerator for p in points} <= set(HARDWARE.values())
    assert {p.prompt_tokens for p in points} <= {mean_length(1024), mean_length(8192)}
    rows = [compare(p, catalog) for p in points]
    compared = [r for r in rows if not r.skipped]
    assert len(compared) >= 80
    assert all(r.predicted["ttft"] and r.predicted["tpot"] and r.predicted["throughput"] for r in compared)
    print("\n" + grouped(rows))
