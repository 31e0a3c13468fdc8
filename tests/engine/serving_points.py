"""Public serving measurements (tests/engine/data/public_serving_throughput.csv) against the serving model.

Each row is one published figure with its source URL; `evaluate` predicts it with the request the source describes
and `table` prints the error per point and the median per stack. `python -m tests.engine.serving_points` prints it.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from scalecost.engine.hardware import Catalog
from scalecost.engine.inference.model.formats import weight_format
from scalecost.engine.inference.model.memory import Workload, max_batch_size
from scalecost.engine.inference.model.speed import estimate_speed
from scalecost.engine.inference.model.stacks import serving_stack
from scalecost.engine.models import PRESETS

DATA = Path(__file__).resolve().parent / "data" / "public_serving_throughput.csv"
METRICS = ("output_tokens_per_second", "end_to_end_s", "time_per_output_token_s", "time_to_first_token_s")


@dataclass(frozen=True)
class Outcome:
    label: str
    stack: str  # the stack the row's source ran (the CSV's column)
    derived_stack: str  # the stack the engine derives from the request's engine and accelerator
    metric: str
    measured: float
    predicted: float
    batch: int

    @property
    def error(self) -> float:
        """Speed error: positive = predicted faster than measured (a time is inverted: measured ÷ predicted − 1)."""
        if _higher_is_better(self.metric):
            return self.predicted / self.measured - 1.0
        return self.measured / self.predicted - 1.0


@lru_cache(maxsize=1)
def serving_rows() -> tuple[dict[str, str], ...]:
    with DATA.open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def evaluate(catalog: Catalog) -> list[Outcome]:
    return [_evaluate_row(row, catalog) for row in serving_rows()]


def _evaluate_row(row: dict[str, str], catalog: Catalog) -> Outcome:
    acc = catalog.accelerators[row["accelerator"]]
    devices, batch = int(row["devices"]), int(row["batch"])
    prompt, output = int(row["prompt"]), int(row["output"])

    def workload(b: int) -> Workload:
        fmt = weight_format(row["weights"])
        return Workload(PRESETS[row["model"]], row["engine"], fmt, row["kv_cache"], b, prompt, output)

    if (
        row["batch_rule"] == "max-fit"
    ):  # the engine admits up to `batch` sequences, as many as its KV cache holds
        batch = max(1, min(batch, max_batch_size(workload(1), acc, devices, upper=batch)))
    speed = estimate_speed(workload(batch), acc, devices)
    predicted = {
        "output_tokens_per_second": speed.output_tokens_per_second,
        "end_to_end_s": speed.end_to_end_s,
        "time_per_output_token_s": speed.time_per_output_token_s,
        "time_to_first_token_s": speed.time_to_first_token_s,
    }[row["metric"]]
    return Outcome(
        row["label"],
        row["stack"],
        serving_stack(row["engine"], acc),
        row["metric"],
        float(row["measured"]),
        float(predicted or 0.0),
        batch,
    )


def _higher_is_better(metric: str) -> bool:
    return metric == "output_tokens_per_second"


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    errors = [abs(o.error) for o in outcomes]
    return {
        "points": len(errors),
        "median_abs_error": statistics.median(errors) if errors else 0.0,
        "within_15_percent": sum(e <= 0.15 for e in errors) / len(errors) if errors else 0.0,
    }


def by_stack(outcomes: list[Outcome]) -> dict[str, list[Outcome]]:
    stacks: dict[str, list[Outcome]] = {}
    for o in outcomes:
        stacks.setdefault(o.stack, []).append(o)
    return stacks


def table(outcomes: list[Outcome]) -> str:
    lines = [f"{'point':72s} {'metric':24s} {'batch':>5s} {'measured':>10s} {'predicted':>10s} {'error':>7s}"]
    for o in outcomes:
        lines.append(
            f"{o.label[:72]:72s} {o.metric:24s} {o.batch:5d} {o.measured:10.4g} {o.predicted:10.4g} {o.error:+7.1%}"
        )
    lines.append("")
    lines.append(
        f"{'stack':24s} {'points':>6s} {'median |error|':>15s} {'within ±15 %':>13s} (signed median)"
    )
    for stack, group in sorted(by_stack(outcomes).items()):
        s = summary(group)
        signed = statistics.median(o.error for o in group)
        lines.append(
            f"{stack:24s} {s['points']:6d} {s['median_abs_error']:15.1%} {s['within_15_percent']:13.0%} ({signed:+.1%})"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a report
    from .reference_catalog import load_catalog

    print(table(evaluate(load_catalog())))
