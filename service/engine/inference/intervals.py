"""The serving answer's prediction intervals: p10/p90 of the throughput, TTFT, TPOT and $ per million output tokens
a deployment will measure.

Each metric has its own class (accuracy/intervals.py): inference/<metric>/<family>, the family of the engine's build
(cuda, rocm, gaudi, neuron, …: stacks.py), falling back to inference/<metric> over every family. The cost per
million output tokens is the hourly price ÷ the throughput, so its p10 is the price at the throughput's p90 and its
p90 the price at the throughput's p10.
"""

from __future__ import annotations

from typing import Any

from ..accuracy.profile import interval_for
from ..hardware import Accelerator
from .model.stacks import accelerator_family

METRICS = ("output_tokens_per_second", "time_to_first_token_s", "time_per_output_token_s")


def interval_class(metric: str, acc: Accelerator) -> str:
    """e.g. inference/time_per_output_token_s/neuron."""
    return f"inference/{metric}/{accelerator_family(acc)}"


def intervals(
    result: dict[str, Any], acc: Accelerator
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The answer's `intervals` from its own figures (`result`: the answer without them) and the class behind each
    metric (assumptions.intervals); (None, None) when it does not fit, a rate saturates it, or no metric has a
    class. A metric the answer has no figure for, or no class for, is null."""
    if not result["memory"]["fits"] or result["load"].get("saturated"):
        return None, None
    thr = result["throughput"]["output_tokens_per_second"]
    predicted = {
        "output_tokens_per_second": thr,
        "time_to_first_token_s": result["latency"]["time_to_first_token_s"],
        "time_per_output_token_s": result["latency"]["time_per_output_token_s"],
    }
    bounds, basis = metric_bounds(predicted, acc)
    if not any(basis.values()):
        return None, None
    usd, tokens = result["cost"]["usd_per_million_output_tokens"], bounds["output_tokens_per_second"]
    per_million = None
    if usd is not None and tokens is not None:  # $ = price ÷ throughput: the bounds swap
        per_million = {"p10": usd * thr / tokens["p90"], "p90": usd * thr / tokens["p10"]}
    section = {
        "throughput": {"output_tokens_per_second": tokens},
        "latency": {m: bounds[m] for m in ("time_to_first_token_s", "time_per_output_token_s")},
        "cost": {"usd_per_million_output_tokens": per_million},
    }
    return section, basis


def metric_bounds(
    predicted: dict[str, float | None], acc: Accelerator
) -> tuple[dict[str, dict[str, float] | None], dict[str, dict[str, Any] | None]]:
    """p10/p90 of each of METRICS given its predicted value (None or 0: no figure, no interval) and the class behind
    each (a calibration profile's residuals on a part it scaled: accuracy/profile.py); the estimate and the serving
    planner's answered deployments both call it (a dict lookup per metric)."""
    bounds: dict[str, dict[str, float] | None] = dict.fromkeys(METRICS)
    basis: dict[str, dict[str, Any] | None] = dict.fromkeys(METRICS)
    for metric in METRICS:
        value = predicted.get(metric)
        found = interval_for(interval_class(metric, acc), metric, acc.residual_profile) if value else None
        if value and found is not None:
            low, high, basis[metric] = found
            bounds[metric] = {"p10": value * low, "p90": value * high}
    return bounds, basis
