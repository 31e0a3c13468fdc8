"""What a team measures, per kind, and the same figure read from an estimate's answer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..i18n import _

MEASURED: dict[str, tuple[str, ...]] = {
    "training": ("tokens_per_second", "step_seconds", "peak_memory_bytes"),
    "inference": ("output_tokens_per_second", "time_to_first_token_s", "time_per_output_token_s"),
}
# at least one of these per point: the figures the factors move (peak memory alone informs none of them)
SPEED_METRICS: dict[str, tuple[str, ...]] = {
    "training": ("tokens_per_second", "step_seconds"),
    "inference": MEASURED["inference"],
}


def measured_problems(kind: str, measured: Mapping[str, Any]) -> list[str]:
    """Why a point's `measured` cannot be fitted (not translated here: the caller wraps them), or []."""
    problems = []
    for name, value in measured.items():
        if name not in MEASURED[kind]:
            problems.append(
                _("Unknown measured figure {name}; valid: {valid}.").format(
                    name=repr(name), valid=", ".join(MEASURED[kind])
                )
            )
        elif (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            problems.append(
                _("measured.{name} must be a finite number above 0, not {value}.").format(
                    name=name, value=repr(value)
                )
            )
    if not any(name in measured for name in SPEED_METRICS[kind]):
        problems.append(
            _("A point needs at least one of {names} measured.").format(names=", ".join(SPEED_METRICS[kind]))
        )
    return problems


def predicted(kind: str, request: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, float]:
    """The answer's figure for each measured name (NaN where the answer has none, e.g. a saturated rate)."""
    if kind == "training":
        time = answer.get("time") or {}
        tokens = _number(time.get("tokens_per_second"))
        training = request.get("training") or {}
        step_tokens = float(training.get("global_batch_size") or 0) * float(
            training.get("sequence_length") or 0
        )
        samples = _number(time.get("samples_per_second"))
        if step_tokens and tokens > 0:
            step = step_tokens / tokens
        elif samples > 0:
            step = float(training.get("global_batch_size") or 0) / samples
        else:
            step = math.nan
        memory = _number((answer.get("memory") or {}).get("per_device_bytes"))
        return {"tokens_per_second": tokens, "step_seconds": step, "peak_memory_bytes": memory}
    latency = answer.get("latency") or {}
    return {
        "output_tokens_per_second": _number((answer.get("throughput") or {}).get("output_tokens_per_second")),
        "time_to_first_token_s": _number(latency.get("time_to_first_token_s")),
        "time_per_output_token_s": _number(latency.get("time_per_output_token_s")),
    }


def default_shares(kind: str, answer: Mapping[str, Any]) -> dict[str, float]:
    """The default model's share of the datasheet an answer reports: the physical bounds' inputs (factors.bounds)."""
    assumptions = answer.get("assumptions") or {}
    if kind == "training":
        share = _number((assumptions.get("efficiency") or {}).get("best_gemm_efficiency"))
        return {"compute": share} if share > 0 else {}
    out = {}
    compute = _number((assumptions.get("compute_efficiency") or {}).get("max"))
    shares = (
        _number((assumptions.get("memory_bandwidth_efficiency") or {}).get("value")),
        _number(assumptions.get("kv_bandwidth_efficiency")),
    )
    memory = max((s for s in shares if s > 0), default=math.nan)
    if compute > 0:
        out["compute"] = compute
    if memory > 0:
        out["memory_bandwidth"] = memory
    return out


def stack_of(kind: str, answer: Mapping[str, Any]) -> str | None:
    """The software stack the answer ran on (e.g. rocm/vllm, cuda/megatron)."""
    if kind == "training":
        stack = (answer.get("assumptions") or {}).get("training_stack")
    else:
        stack = (answer.get("hardware") or {}).get("serving_stack")
    return str(stack) if stack else None


def _number(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return math.nan
