"""What every serving recommendation rule shares: the request, plan and evaluation it reads (Advice), how a change
is verified (the patched request evaluated again, every claim on an answer field checked) and the
recommendation it becomes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidRequest
from ...hardware import Catalog
from ...patch import merge_patch, recommendation
from ..model.evaluate import InferenceEvaluation, evaluate
from ..model.plan import InferencePlan
from ..request import parse_request

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    ">=": lambda a, b: a is not None and a >= b,
    "<=": lambda a, b: a is not None and a <= b,
}
# A claim names a field of the answer (what a client checks after applying the change); the advice reads the
# same value from the evaluation, exactly as response.py renders it.
_FIELDS: dict[str, Callable[[InferenceEvaluation], Any]] = {
    "memory.fits": lambda ev: ev.memory.fits,
    "load.queued_requests": lambda ev: ev.queued_requests,
    "memory.max_batch_size": lambda ev: ev.max_batch_size,
    "memory.kv_cache_bytes_per_token": lambda ev: round(ev.memory.kv_bytes_per_token),
    "devices_needed.targets_met": lambda ev: ev.targets_met,
    "throughput.output_tokens_per_second": lambda ev: ev.speed.output_tokens_per_second,
}


Claim = tuple[str, str, Any]  # (answer field, operator, value)
FITS: Claim = ("memory.fits", "==", True)
MET: Claim = ("devices_needed.targets_met", "==", True)
NONE_QUEUED: Claim = ("load.queued_requests", "==", 0)


@dataclass
class Advice:
    """What every rule reads (the request, its plan and evaluation, the catalog) and how a rule verifies its change:
    the patched request is parsed and evaluated again (lean: nothing is rendered) and every claim must hold."""

    request: Mapping[str, Any]
    p: InferencePlan
    ev: InferenceEvaluation
    catalog: Catalog

    @property
    def room(self) -> Claim:
        """What a change that makes room claims: every request resident, stated as `load.queued_requests == 0` where
        the answer has the field (continuous batching, co-located), else `memory.fits` (makes_room checks both)."""
        return NONE_QUEUED if "queued_requests" in (self.ev.speed.load or {}) else FITS

    def makes_room(self, change: dict[str, Any], *claims: Claim) -> InferenceEvaluation | None:
        """The change evaluated again when it holds every request at once: it fits and none waits in the engine's
        queue (a fit with a queue in front is not room), and `claims` hold too."""
        return self.verified(change, FITS, NONE_QUEUED, *claims)

    def verified(self, change: dict[str, Any], *claims: Claim) -> InferenceEvaluation | None:
        try:
            after = evaluate(parse_request(merge_patch(dict(self.request), change), self.catalog))
        except InvalidRequest:
            return None
        ok = all(_OPS[op](_FIELDS[path](after), value) for path, op, value in claims)
        return after if ok else None


def recommend(code: str, severity: str, message: str, change: dict[str, Any], claim: Claim) -> dict[str, Any]:
    field, op, value = claim
    return recommendation(code, severity, message, change, field, op, value)
