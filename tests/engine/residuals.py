"""Every public calibration point's residual, log(measured / predicted), grouped by class; the class table the
engine's prediction intervals read (service/engine/accuracy/residual_table.py); and their coverage out of sample.

Sources (each module computes its own prediction; this one only reads predicted against measured):
- training, benchmark: public_points.evaluate_throughput (tests/engine/data/public_training_throughput.csv) and
  training_stack_points.evaluate (public_training_stacks.csv): steady-state tokens/s per device;
- training, complete run: public_points.evaluate_runs (public_training_runs.csv): accelerator-hours of whole runs;
- inference: serving_points.evaluate (public_serving_throughput.csv: ROCm, Gaudi, Neuron) and
  serving_calibration.table (public_serving_sweeps.csv: CUDA vLLM, SGLang, TensorRT-LLM; its calibrated batches only,
  serving_calibration.CALIBRATED_BATCHES).

A residual is in its metric's direction: a time's is log(measured s / predicted s), so a training benchmark's is
log(predicted tokens/s ÷ measured tokens/s) (time ∝ 1/throughput) and a complete run's log(published hours ÷ predicted
hours); a throughput's is log(measured ÷ predicted tokens/s). The class is the engine's own (the same functions the
estimates call): training/time/<benchmark|complete_run>/<family>, inference/<metric>/<family>; each residual also
counts in every parent class (training/time/complete_run, training/time, …).

`python -m tests.engine.residuals` prints the classes and the coverage and rewrites the table;
`python -m tests.engine.residuals --check` only prints.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scalecost.engine.accuracy.intervals import MIN_POINTS, ClassStats, lookup, stats
from scalecost.engine.hardware import Catalog
from scalecost.engine.inference.intervals import interval_class as inference_class
from scalecost.engine.training.intervals import interval_class as training_class
from scalecost.engine.training.request import build_plan

from . import public_points, serving_calibration, serving_points, training_stack_points

TABLE_PATH = Path(__file__).resolve().parents[2] / "service" / "engine" / "accuracy" / "residual_table.py"
SWEEP_METRICS = {
    "ttft": "time_to_first_token_s",
    "tpot": "time_per_output_token_s",
    "throughput": "output_tokens_per_second",
}


@dataclass(frozen=True)
class Residual:
    label: str
    source: str  # the page or file it was published in: the unit left out together
    leaf: str  # its class, most specific level
    value: float  # log(measured / predicted), the metric's direction
    devices: int = 0


def residuals(catalog: Catalog) -> list[Residual]:
    return [*training_residuals(catalog), *inference_residuals(catalog)]


def training_residuals(catalog: Catalog) -> list[Residual]:
    out = []
    for row, outcome in _benchmarks(catalog):
        if outcome.predicted and outcome.published and outcome.fits:
            plan = build_plan(_benchmark_request(row), catalog)
            leaf = training_class(plan.framework, plan.accelerator, "benchmark")
            value = math.log(outcome.predicted / outcome.published)  # time ∝ 1 / throughput
            out.append(Residual(outcome.label, row["source_url"], leaf, value, int(row["devices"])))
    rows = {r["label"]: r for r in public_points.run_rows()}
    for run in public_points.evaluate_runs(catalog):
        if run.predicted_hours and run.fits:
            row, layout = rows[run.label], public_points.RUN_LAYOUTS[run.label]
            plan = build_plan(public_points.run_request(row, layout), catalog)
            leaf = training_class(plan.framework, plan.accelerator, "complete_run")
            value = math.log(run.published_hours / run.predicted_hours)
            out.append(Residual(run.label, row["source_url"], leaf, value, plan.par.devices))
    return out


def _benchmarks(catalog: Catalog) -> Iterable[tuple[dict[str, str], public_points.Outcome]]:
    rows = public_points.throughput_rows()
    yield from zip(rows, public_points.evaluate_throughput(catalog), strict=True)
    stack_rows = training_stack_points.stack_rows()
    yield from zip(stack_rows, (o for _s, o in training_stack_points.evaluate(catalog)), strict=True)


def _benchmark_request(row: dict[str, str]) -> dict:
    if "training_framework" in row:  # a public_training_stacks.csv row, sent as its module sends it
        return training_stack_points.stack_request(row)
    return public_points.throughput_request(row)


def inference_residuals(catalog: Catalog) -> list[Residual]:
    out = []
    urls = {r["label"]: r["source_url"] for r in serving_points.serving_rows()}
    for o in serving_points.evaluate(catalog):
        if o.predicted > 0:
            leaf = inference_class(o.metric, catalog.accelerators[_row_accelerator(o.label)])
            out.append(Residual(o.label, urls[o.label], leaf, math.log(o.measured / o.predicted), o.batch))
    for compared in serving_calibration.table(catalog, batches=set(serving_calibration.CALIBRATED_BATCHES)):
        if compared.skipped:
            continue
        point = compared.point
        for short, metric in SWEEP_METRICS.items():
            m, p = compared.measured[short], compared.predicted[short]
            if m and p:
                leaf = inference_class(metric, catalog.accelerators[point.accelerator])
                out.append(Residual(f"{point.label} [{short}]", point.source_url, leaf, math.log(m / p)))
    return out


def _row_accelerator(label: str) -> str:
    return next(r["accelerator"] for r in serving_points.serving_rows() if r["label"] == label)


# ------------------------------------------------------------------------------------------------- the table


def levels(leaf: str) -> list[str]:
    """The leaf and its parents, most specific first: a/b/c/d → a/b/c/d, a/b/c, a/b (the kind alone is no class)."""
    parts = leaf.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 1, -1)]


def class_table(points: Sequence[Residual]) -> dict[str, ClassStats]:
    """Every class with at least two residuals (lookup answers only from MIN_POINTS on), sorted by name."""
    grouped: dict[str, list[float]] = {}
    for r in points:
        for name in levels(r.leaf):
            grouped.setdefault(name, []).append(r.value)
    return {name: stats(values) for name, values in sorted(grouped.items()) if len(values) >= 2}


def render(table: dict[str, ClassStats]) -> str:
    """The generated module's text (rounded so that the last bits of a platform's floats do not show)."""
    lines = [
        '"""Generated by `python -m tests.engine.residuals` from the public calibration points (tests/engine/data/):',
        "do not edit; tests/engine/test_residuals.py fails when it drifts from what the engine now predicts.",
        "",
        "Per class: (residuals, mean and sd of log(measured / predicted), p10 and p90 multipliers on a prediction:",
        "the empirical 10th/90th percentiles widened for the sample's size, accuracy/intervals.interval_factors).",
        'Classes under MIN_POINTS residuals are listed but answer with their parent\'s."""',
        "",
        "ROWS: dict[str, tuple[int, float, float, float, float]] = {",
    ]
    for name, s in table.items():
        lines.append(
            f'    "{name}": ({s.points}, {s.mean:.4f}, {s.sd:.4f}, {s.p10_factor:.4f}, {s.p90_factor:.4f}),'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- the coverage


@dataclass(frozen=True)
class Covered:
    residual: Residual
    answered_by: str | None  # the class whose interval it was checked against (None: no interval)
    inside: bool


def leave_one_source_out(points: Sequence[Residual]) -> list[Covered]:
    """Each source's residuals against the table fitted without that source (the unseen measurement)."""
    out = []
    for source in sorted({r.source for r in points}):
        table = class_table([r for r in points if r.source != source])
        for r in (r for r in points if r.source == source):
            found = lookup(r.leaf, table)
            if found is None:
                out.append(Covered(r, None, False))
                continue
            name, row = found
            inside = math.log(row.p10_factor) <= r.value <= math.log(row.p90_factor)
            out.append(Covered(r, name, inside))
    return out


def coverage(covered: Sequence[Covered]) -> dict[str, tuple[float, int]]:
    """Share inside [p10, p90] per leaf class and overall ("all"), with the residuals counted (those with an
    interval)."""
    groups: dict[str, list[bool]] = {}
    for c in covered:
        if c.answered_by is None:
            continue
        for key in (c.residual.leaf, c.residual.leaf.split("/")[0], "all"):
            groups.setdefault(key, []).append(c.inside)
    return {k: (sum(v) / len(v), len(v)) for k, v in sorted(groups.items())}


def report(points: Sequence[Residual], table: dict[str, ClassStats]) -> str:
    lines = [f"{'class':52} {'n':>4} {'mean':>7} {'sd':>6} {'p10×':>6} {'p90×':>6}"]
    for name, s in table.items():
        mark = "" if s.points >= MIN_POINTS else f"  (< {MIN_POINTS}: answers with its parent's)"
        lines.append(
            f"{name:52} {s.points:4d} {s.mean:+7.3f} {s.sd:6.3f} {s.p10_factor:6.3f} {s.p90_factor:6.3f}{mark}"
        )
    lines += ["", "coverage of [p10, p90], leave-one-source-out (goal 70-90 %):"]
    covered = leave_one_source_out(points)
    for key, (share, n) in coverage(covered).items():
        lines.append(f"  {key:52} {share:6.1%} of {n}")
    sources = len({r.source for r in points})
    lines.append(f"{len(points)} residuals from {sources} sources")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> None:  # pragma: no cover - a report
    from .reference_catalog import load_catalog

    points = residuals(load_catalog())
    table = class_table(points)
    print(report(points, table))
    if "--check" not in argv:
        TABLE_PATH.write_text(render(table), encoding="utf-8")
        print(f"wrote {TABLE_PATH}")


if __name__ == "__main__":  # pragma: no cover - a report
    main(sys.argv[1:])
