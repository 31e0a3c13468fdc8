"""Typed answers: each wraps the API's JSON answer, with properties for its headline figures; `to_dict()` is
exactly what the API answers for the same body (a fresh copy each call)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..engine import InvalidRequest
from ..engine.units import SECONDS_PER_DAY


class Answer:
    """An answer of the engine: `to_dict()` for the JSON, `[key]` for a section, properties for the figures."""

    def __init__(self, data: dict[str, Any]):
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON answer for the same request body."""
        return copy.deepcopy(self._data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def _get(self, *path: str) -> Any:
        value: Any = self._data
        for key in path:
            if not isinstance(value, dict):
                return None
            value = value.get(key)
        return value

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()!r}>"

    def summary(self) -> str:
        return ""


class Estimate(Answer):
    """What both estimates answer: the peak memory per device and whether it fits."""

    @property
    def per_device_bytes(self) -> float:
        """Peak memory per device."""
        return self._data["memory"]["per_device_bytes"]

    @property
    def fits(self) -> bool:
        """The peak memory fits in one device."""
        return bool(self._data["memory"]["fits"])

    @property
    def intervals(self) -> dict[str, Any] | None:
        """p10/p90 of what will be measured given this estimate (the answer's `intervals`); None when it has none."""
        return self._get("intervals")

    @property
    def interval_basis(self) -> dict[str, Any] | None:
        """The class of public measurements behind `intervals` and their number (`assumptions.intervals`); with a
        calibration profile (service API only) also the profile, its revision and its points."""
        return self._get("assumptions", "intervals")


class TrainingEstimate(Estimate):
    """POST /v1/estimates/training's answer."""

    @property
    def seconds(self) -> float:
        """Wall-clock seconds of the run (interruptions, checkpoints and stragglers included)."""
        return self._data["time"]["seconds"]

    @property
    def days(self) -> float:
        return self.seconds / SECONDS_PER_DAY

    @property
    def total_usd(self) -> float | None:
        """Compute plus infrastructure overhead; None when the accelerator has no price."""
        return self._get("cost", "total_usd")

    @property
    def accelerator_hours(self) -> float:
        return self._data["cost"]["accelerator_hours"]

    @property
    def human(self) -> dict[str, str]:
        """The answer's human strings (in the language it was asked in): time, cost, accelerator_hours, memory."""
        return {
            "time": self._data["time"]["human"],
            "cost": self._data["cost"]["human"]["total"],
            "accelerator_hours": self._data["cost"]["human"]["accelerator_hours"],
            "memory_per_device": self._data["memory"]["human"]["per_device"],
            "device_capacity": self._data["memory"]["human"]["device_capacity"],
        }

    def summary(self) -> str:
        human = self.human
        return ", ".join((human["time"], human["cost"], human["memory_per_device"]))


class InferenceEstimate(Estimate):
    """POST /v1/estimates/inference's answer."""

    @property
    def time_to_first_token_s(self) -> float | None:
        return self._get("latency", "time_to_first_token_s")

    @property
    def time_per_output_token_s(self) -> float | None:
        return self._get("latency", "time_per_output_token_s")

    @property
    def end_to_end_s(self) -> float:
        return self._data["latency"]["end_to_end_s"]

    @property
    def output_tokens_per_second(self) -> float | None:
        return self._get("throughput", "output_tokens_per_second")

    @property
    def usd_per_hour(self) -> float | None:
        return self._get("cost", "usd_per_hour")

    @property
    def usd_per_million_output_tokens(self) -> float | None:
        return self._get("cost", "usd_per_million_output_tokens")

    @property
    def human(self) -> dict[str, str]:
        """The latency's and the memory's human strings."""
        latency = self._data["latency"]["human"]
        memory = self._data["memory"].get("human") or {}
        return {
            **{f"latency_{k}": v for k, v in latency.items()},
            **{f"memory_{k}": v for k, v in memory.items()},
        }

    def summary(self) -> str:
        return self.human.get("latency_end_to_end", "")


class TrainingPlans(Answer):
    """POST /v1/plans/training's answer: the best plans for the objective, the frontier, the exclusions."""

    @property
    def best(self) -> dict[str, Any] | None:
        """The best plan (with its full estimate), None when nothing qualifies."""
        return self._data.get("best")

    @property
    def results(self) -> list[dict[str, Any]]:
        return self._data.get("results") or []

    @property
    def frontier(self) -> list[dict[str, Any]]:
        return self._data.get("frontier") or []

    def summary(self) -> str:
        best = self.best
        return (
            "" if best is None else f"{best['accelerator']} × {best['count']}: {best['time']}, {best['cost']}"
        )


class ServingPlan(Answer):
    """POST /v1/plans/inference's answer: the cheapest deployment meeting the objectives, or the nearest misses."""

    @property
    def feasible(self) -> bool:
        return bool(self._data.get("feasible"))

    @property
    def plan(self) -> dict[str, Any] | None:
        return self._data.get("plan")

    @property
    def frontier(self) -> list[dict[str, Any]]:
        return self._data.get("frontier") or []

    def summary(self) -> str:
        plan = self.plan
        return "" if plan is None else f"{plan['accelerator']} × {plan['total_devices']}"


@dataclass(frozen=True)
class BatchItem:
    """One item of a batch: its estimate, or the error the single call would have raised."""

    index: int
    estimate: Answer | None
    error: InvalidRequest | None
    problem: dict[str, Any] | None  # the API's problem object for the item (None on success)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": 200 if self.ok else 422,
            "estimate": self.estimate.to_dict() if self.estimate is not None else None,
            "problem": copy.deepcopy(self.problem),
        }


class Batch:
    """A batch's answer, in order: each item an estimate or an error; `to_dict()` is the batch endpoint's JSON."""

    def __init__(self, items: list[BatchItem]):
        self.items = items

    def __iter__(self) -> Iterator[BatchItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> BatchItem:
        return self.items[index]

    def to_dict(self) -> dict[str, Any]:
        succeeded = sum(1 for item in self.items if item.ok)
        return {
            "results": [item.to_dict() for item in self.items],
            "succeeded": succeeded,
            "failed": len(self.items) - succeeded,
            "not_reached": 0,
            "complete": True,
        }
