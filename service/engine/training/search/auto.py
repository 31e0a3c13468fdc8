"""`hardware.parallelism: "auto"` and `hardware.count: "auto"` in a training estimate, resolved by the planner.

- parallelism "auto": the fastest layout of the search space for the accelerator and count (ties: least memory),
  with the request's micro-batch and recomputation when given (else searched as well).
- count "auto" (needs `constraints.deadline`): the fewest devices whose fastest layout meets the deadline (ties:
  faster, then less memory), with the request's parallel degrees when given (data then follows the count).
The request is rewritten with what was chosen, then estimated as any other; `assumptions.auto` says what was
chosen and from how many configurations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import InvalidRequest
from ...hardware import Catalog
from ...i18n import N_, _
from ...parallelism import DEVICES_PER_NODE, PIPELINE_SCHEDULES, builds_training_clusters
from ...units import human_duration
from ..model.plan import TrainingPlan
from ..request import build_plan
from .rank import Candidate, Constraints, Offer, prepare, search
from .request import duration_seconds
from .space import (
    DEFAULT_MAX_DEVICES,
    MAX_ODD_FACTOR_COUNT_AUTO,
    SearchSpace,
    default_space,
    pipeline_for_counts,
)

AUTO = "auto"


def wants_auto(request: Mapping[str, Any]) -> bool:
    hardware = request.get("hardware") or {}
    return hardware.get("parallelism") == AUTO or hardware.get("count") == AUTO


# given ones ride on the base plan's par
SEARCHED_SWITCHES = ("pipeline_schedule", "expert_overlap", "data_shard", "expert_tensor")


def _given_switches(base: TrainingPlan, hardware: Mapping[str, Any]) -> TrainingPlan:
    """The base plan with a given hardware.parallelism.expert_overlap, data_shard and expert_tensor, which the array
    model reads from it (build_plan of the one-device base would refuse expert_overlap without experts and a
    data_shard group or an expert_tensor larger than its one rank, so they are set here; enumerate_layouts keeps the
    layouts they are valid for and the estimate of the chosen layout validates them). A given pipeline_schedule is
    the search space's (_space)."""
    given = hardware.get("parallelism")
    if not isinstance(given, Mapping):
        return base
    changes: dict[str, Any] = {}
    if given.get("expert_overlap") is not None:
        changes["expert_overlap"] = bool(given["expert_overlap"])
    shard = given.get("data_shard")
    if isinstance(shard, int) and not isinstance(shard, bool) and shard > 0:
        changes["data_shard"] = shard  # enumerate_layouts keeps the layouts whose data × context it divides
    etp = given.get("expert_tensor")
    if isinstance(etp, int) and not isinstance(etp, bool) and etp > 0:
        changes["expert_tensor"] = etp  # the experts' own tensor degree in every layout (model/arrays.py)
    if not changes:
        return base
    return base.with_fields(par=replace(base.par, **changes))


def resolve_auto(request: Mapping[str, Any], catalog: Catalog) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the request with the chosen count, layout and micro-batch, what `assumptions.auto` reports)."""
    hardware = dict(request.get("hardware") or {})
    training = dict(request.get("training") or {})
    constraints = request.get("constraints") or {}
    count_auto, layout_auto = hardware.get("count") == AUTO, hardware.get("parallelism") == AUTO
    deadline = None
    if constraints.get("deadline") is not None:
        deadline = duration_seconds(constraints["deadline"], "constraints.deadline")
    if count_auto and deadline is None:
        raise InvalidRequest.single(
            "constraints.deadline", _('Required with hardware.count "auto": finish within.')
        )
    base_body = {
        **request,
        "hardware": {k: v for k, v in hardware.items() if k not in ("count", "parallelism")} | {"count": 1},
        "training": {k: v for k, v in training.items() if k != "micro_batch_size"},
        "cost": {"usd_per_accelerator_hour": 1.0},  # time does not depend on the price
    }
    base = _given_switches(build_plan(base_body, catalog), hardware)
    space = _space(base, hardware, training, count_auto, layout_auto, constraints)
    candidate = Candidate(base.with_fields(notes=()), (Offer("request", "on-demand", 1.0),))
    found = search(
        prepare([candidate], lambda _plan: space),
        Constraints(deadline_s=deadline if count_auto else None),
        "fewest_devices" if count_auto else "fastest",
        1,
        training.get("checkpoint_write_bandwidth_bytes_per_s"),
    )
    if not found.results:
        raise _nothing_qualifies(found, count_auto, deadline, space, base.accelerator.id)
    best = found.results[0]
    parallelism = _chosen_parallelism(
        best.parallelism(), hardware.get("parallelism") if not layout_auto else None
    )
    resolved = {
        **request,
        "hardware": {**hardware, "count": best.devices, "parallelism": parallelism},
        "training": {**training, "micro_batch_size": best.micro_batch},
    }
    resolved.pop("constraints", None)
    info = {
        "count": "auto" if count_auto else "given",
        "parallelism": "auto" if layout_auto else "given",
        "chosen_count": best.devices,
        "chosen_parallelism": parallelism,
        "chosen_micro_batch_size": best.micro_batch,
        # a fixed English phrase in the answer (N_: translated only in the note that quotes it, estimate.py)
        "objective": N_("fewest devices meeting the deadline") if count_auto else N_("fastest layout"),
        "deadline_s": deadline,
        "configurations_evaluated": found.stats["configurations_evaluated"],
    }
    return resolved, info


def _chosen_parallelism(parallelism: dict[str, Any], given: Any) -> dict[str, Any]:
    """The chosen layout as the resolved request gives it: a given layout keeps its own switches; omitted ones
    take parse_parallelism's defaults."""
    if not given:
        return parallelism
    if given.get("sequence_parallel") is not None:
        parallelism["sequence_parallel"] = bool(given["sequence_parallel"])
    else:
        parallelism.pop("sequence_parallel")
    if given.get("zero_stage") is None:
        parallelism.pop("zero_stage")
    for switch in SEARCHED_SWITCHES:
        if given.get(switch) is not None:
            parallelism[switch] = given[switch]
    return parallelism


def _space(
    base: Any,
    hardware: Mapping[str, Any],
    training: Mapping[str, Any],
    count_auto: bool,
    layout_auto: bool,
    constraints: Mapping[str, Any],
) -> SearchSpace:
    """The default search space of the planner, narrowed to what the request fixes."""
    max_devices = int(constraints.get("max_devices") or DEFAULT_MAX_DEVICES)
    if not builds_training_clusters(base.accelerator):  # a one-server part: searched within one server
        max_devices = min(max_devices, DEVICES_PER_NODE)
    space = default_space(base, max_devices)
    changes: dict[str, Any] = {}
    if not count_auto:
        changes["device_counts"] = (int(hardware.get("count") or 1),)
        changes["pipeline"] = pipeline_for_counts(changes["device_counts"], space.pipeline)
    else:  # the counts with a small odd factor get a pipeline that takes it (24, 40, 56, 224 … devices)
        changes["pipeline"] = pipeline_for_counts(
            space.device_counts, space.pipeline, MAX_ODD_FACTOR_COUNT_AUTO
        )
    if not layout_auto:  # the given degrees (data follows the count)
        given = hardware.get("parallelism") or {}
        for name in ("tensor", "pipeline", "context", "expert", "virtual_pipeline"):
            changes[name] = (int(given.get(name) or 1),)
        # an omitted stage is layout_request's default: ZeRO-1 (the same as 0 where one data rank is left)
        changes["zero_stages"] = (1 if given.get("zero_stage") is None else int(given["zero_stage"]),)
        # an omitted switch is on with tensor parallelism (layout_request's default), as the search assumes
        changes["sequence_parallel"] = given.get("sequence_parallel") is not False
        # the given schedule, or layout_request's default 1F1B (a given layout is searched as given)
        schedule = given.get("pipeline_schedule")
        changes["pipeline_schedules"] = (schedule if schedule in PIPELINE_SCHEDULES else "1f1b",)
        changes["zero_bubble_chunks"] = SearchSpace.zero_bubble_chunks  # any: the given chunks
    if training.get("micro_batch_size"):
        changes["micro_batches"] = (int(training["micro_batch_size"]),)
    return replace(space, **changes)


def _nothing_qualifies(
    found: Any, count_auto: bool, deadline: float | None, space: SearchSpace, accelerator: str
) -> InvalidRequest:
    fits = found.excluded["does_not_fit"] < found.stats["configurations_evaluated"]
    if count_auto and fits and deadline is not None:
        fastest = next((m["plan"] for m in found.nearest_misses if m.get("plan") is not None), None)
        detail = (
            _("; the fastest takes {seconds} on {devices}").format(
                seconds=human_duration(fastest.seconds), devices=fastest.devices
            )
            if fastest
            else ""
        )
        return InvalidRequest.single(
            "hardware.count",
            _(
                "No device count up to {device_counts} meets the deadline of {deadline}{detail}. Allow "
                "more devices (constraints.max_devices) or more time."
            ).format(
                device_counts=max(space.device_counts), deadline=human_duration(deadline), detail=detail
            ),
        )
    where = "hardware.count" if count_auto else "hardware.parallelism"
    if found.stats["configurations_evaluated"] == 0:  # no split of the count(s) at all, fitting or not
        return InvalidRequest.single(
            where,
            _(
                "No layout splits {devices} devices: data × tensor × pipeline × context must equal the count, "
                "data (× micro-batch) divide the global batch, tensor divide the attention heads and pipeline "
                "stages not exceed the layers. Give a device count with more factors of 2 (or of 3, 5, 7) or "
                "another global_batch_size."
            ).format(devices=" / ".join(str(c) for c in space.device_counts[:8])),
        )
    return InvalidRequest.single(
        where,
        _(
            "No layout of the search fits in memory on {accelerator} ({value} configurations tried): "
            "use more devices, full recomputation or a larger accelerator."
        ).format(accelerator=accelerator, value=found.stats["configurations_evaluated"]),
    )
