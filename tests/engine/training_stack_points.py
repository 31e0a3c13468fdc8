"""Public training throughput off the Megatron-on-NVIDIA path (tests/engine/data/public_training_stacks.csv): JAX/XLA
on NVIDIA GPUs (Paxml, MaxText), Intel Gaudi 2 (Megatron-DeepSpeed) and AWS Trainium (NeuronX Distributed), each row
sent as the request its source describes (public_points.throughput_request) with the training.framework the row names.

`python -m tests.engine.training_stack_points` prints the error per point and the median per stack.
"""

from __future__ import annotations

import csv
import statistics
from functools import lru_cache
from typing import Any

from scalecost.engine import InvalidRequest, estimate_training
from scalecost.engine.hardware import Catalog

from .public_points import DATA, Outcome, throughput_request


@lru_cache(maxsize=1)
def stack_rows() -> tuple[dict[str, str], ...]:
    with (DATA / "public_training_stacks.csv").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def stack_request(row: dict[str, str], framework: bool = True) -> dict[str, Any]:
    """The row's request; `framework` False leaves training.framework out (the engine infers one)."""
    request = throughput_request(row)
    training = request["training"]
    training.pop("framework", None)
    training.pop("torch_compile", None)
    if framework:
        training["framework"] = row["training_framework"]
    if row["flash_attention"] == "false":
        training["flash_attention"] = False
    return request


def evaluate(catalog: Catalog, framework: bool = True) -> list[tuple[str, Outcome]]:
    """(stack, outcome) per row."""
    out = []
    for row in stack_rows():
        published = float(row["published_tokens_per_s_per_device"])
        try:
            answer = estimate_training(stack_request(row, framework), catalog)
        except InvalidRequest as err:
            outcome = Outcome(row["label"], published, None, None, "422: " + "; ".join(sorted(err.errors)))
        else:
            predicted = answer["time"]["tokens_per_second"] / int(row["devices"])
            outcome = Outcome(row["label"], published, predicted, answer["memory"]["fits"])
        out.append((row["stack"], outcome))
    return out


def by_stack(evaluated: list[tuple[str, Outcome]]) -> dict[str, list[Outcome]]:
    stacks: dict[str, list[Outcome]] = {}
    for stack, outcome in evaluated:
        stacks.setdefault(stack, []).append(outcome)
    return stacks


def median_error(outcomes: list[Outcome]) -> float:
    errors = [abs(o.error) for o in outcomes if o.error is not None]
    return statistics.median(errors) if errors else float("nan")


def table(evaluated: list[tuple[str, Outcome]]) -> str:
    lines = [f"{'point':<52} {'stack':<28} {'published':>10} {'predicted':>10} {'error':>8} fits"]
    for stack, o in evaluated:
        if o.skipped or o.error is None:
            lines.append(f"{o.label[:52]:<52} {stack:<28} skipped: {(o.skipped or '')[:100]}")
            continue
        lines.append(
            f"{o.label[:52]:<52} {stack:<28} {o.published:10.1f} {o.predicted:10.1f} {o.error:+8.1%} "
            f"{'yes' if o.fits else 'NO'}"
        )
    lines.append("")
    for stack, group in sorted(by_stack(evaluated).items()):
        signed = [o.error for o in group if o.error is not None]
        lines.append(
            f"{stack:<28} {len(signed):3d} points: median |error| {median_error(group):.1%} "
            f"(signed median {statistics.median(signed):+.1%})"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a report
    from .reference_catalog import load_catalog

    print(table(evaluate(load_catalog(), framework=False)))
