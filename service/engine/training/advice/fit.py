"""The does-not-fit rule: the smallest change that makes the run fit, tried from least to most disruptive (memory
levers, wider layouts, a larger accelerator at the same count, then more devices), each verified on the lean path."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...hardware import Catalog
from ...i18n import _
from ...parallelism import Parallelism, built_at
from ...patch import combine
from ...units import human_bytes, human_duration
from ..fit_defaults import remat_to_fit
from ..model.evaluate import Evaluation, evaluate
from ..model.plan import TrainingPlan
from ..model.recompute import DEFAULT_RECOMPUTE_MODULES
from .catalog import trains
from .common import Candidate, recommendation, try_change


def _par_patch(**values: Any) -> dict:
    return {"hardware": {"parallelism": values}}


# (label, merge-patch change, the plan fields it sets when applying it to the plan is exact; None: re-parse)
FitCandidate = tuple[str, dict, dict[str, Any] | None]


def fit_advice(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    """Smallest change that makes the run fit, tried from least to most disruptive: memory levers, wider layouts,
    a larger accelerator at the same count, then more devices."""
    if ev.fits:
        return None
    named = (request.get("training") or {}).get("recompute_modules") is not None
    recompute_full = _full_recompute(plan, named)[0] if plan.recompute != "full" else {}
    for label, change, fields in _memory_levers(plan, named) + _layouts(plan, recompute_full):
        found = _apply(request, catalog, plan, change, fields)
        if found and found[1].fits:
            return _fitrecommendation(label, change, plan, ev, found)
    return _fit_on_larger_part(request, catalog, plan, ev, recompute_full) or _fit_on_more_devices(
        request, catalog, plan, ev, recompute_full
    )


def _apply(
    request: Mapping[str, Any],
    catalog: Catalog,
    plan: TrainingPlan,
    change: dict,
    fields: dict[str, Any] | None,
) -> Candidate | None:
    """The candidate `change` makes: the plan with `fields` (when the patched request would validate to exactly
    that: recomputation, ZeRO stage and an automatic micro-batch never fail validation on a valid plan and
    default nothing else), else the patched request re-parsed."""
    if fields is None:
        return try_change(request, change, catalog)
    patched = plan.with_fields(**fields)
    return remat_to_fit(patched, evaluate(patched))  # as the changed request is answered (fit_defaults)


def _full_recompute(plan: TrainingPlan, named_modules: bool = False) -> tuple[dict, dict[str, Any]]:
    """The change and the plan fields of full recomputation: the request's recompute_modules (selective only; named
    in the request, even as the default list) and expert_overlap (Megatron-Core asserts it off under full
    recomputation) go with it, else the change would 422."""
    change: dict[str, Any] = {"training": {"activation_recomputation": "full"}}
    fields: dict[str, Any] = {"recompute": "full", "recompute_source": "given"}
    if named_modules or plan.recompute_modules != DEFAULT_RECOMPUTE_MODULES:
        change["training"]["recompute_modules"] = None
        fields["recompute_modules"] = DEFAULT_RECOMPUTE_MODULES
    if plan.par.expert_overlap:
        change["hardware"] = {"parallelism": {"expert_overlap": None}}
        fields["par"] = replace(plan.par, expert_overlap=False)
    return change, fields


def _memory_levers(plan: TrainingPlan, named_modules: bool = False) -> list[FitCandidate]:
    """Full recomputation, higher ZeRO stages, an automatic micro-batch, ZeRO-3 with full recomputation."""
    par = plan.par
    full, full_fields = _full_recompute(plan, named_modules)
    levers: list[FitCandidate] = []
    if plan.recompute != "full":
        levers.append((_("full activation recomputation"), full, full_fields))
    if par.data > 1:
        for z in range(par.zero_stage + 1, 4):
            levers.append(
                (
                    _("ZeRO stage {z}").format(z=z),
                    _par_patch(zero_stage=z),
                    {"par": replace(par, zero_stage=z)},
                )
            )
    if plan.micro_batch and plan.micro_batch > 1:
        levers.append(
            (_("automatic micro-batch size"), {"training": {"micro_batch_size": None}}, {"micro_batch": None})
        )
    if par.data > 1 and plan.recompute != "full":
        levers.append(
            (_("ZeRO-3 with full recomputation"), combine(_par_patch(zero_stage=3), full),
             {**full_fields, "par": replace(full_fields.get("par", par), zero_stage=3)})
        )  # fmt: skip
    return levers


def _layouts(plan: TrainingPlan, recompute_full: dict) -> list[FitCandidate]:
    """Wider tensor parallelism, then tensor × pipeline, then everything the device count allows (re-parsed: the
    layout is validated against the model and the batch, and may change the default global batch)."""
    par, count = plan.par, plan.par.devices
    shape = plan.model.shape
    heads = shape.attention_heads if shape else 0
    layers = shape.layers if shape else 0
    out: list[FitCandidate] = []
    for t in (2, 4, 8):
        if t > par.tensor and (not heads or heads % t == 0) and count % (t * par.pipeline) == 0:
            d = count // (t * par.pipeline)
            for z in sorted({par.zero_stage, 1}):
                out.append(
                    (_("tensor parallel {t} (sequence parallel), data {d}, ZeRO {z}").format(t=t, d=d, z=z),
                     _par_patch(tensor=t, data=d, sequence_parallel=True, zero_stage=z), None)
                )  # fmt: skip
    t_fixed = max(par.tensor, min(8, count))
    while t_fixed > 1 and (heads and heads % t_fixed or count % t_fixed):
        t_fixed //= 2
    p = 2
    while t_fixed * p <= count and (not layers or p <= layers):
        if count % (t_fixed * p) == 0:
            d = count // (t_fixed * p)
            out.append(
                (_("tensor {t_fixed} × pipeline {p}, data {d}, ZeRO 1").format(t_fixed=t_fixed, p=p, d=d),
                 _par_patch(tensor=t_fixed, pipeline=p, data=d, sequence_parallel=t_fixed > 1, zero_stage=1), None)
            )  # fmt: skip
        p *= 2
    if par.tensor * par.pipeline < count or recompute_full:  # everything the current device count allows
        out.append(_widest_layout(count, t_fixed, layers, recompute_full))
    return [(label, _keep_valid(par, patch), fields) for label, patch, fields in out]


def _keep_valid(par: Parallelism, patch: dict) -> dict:
    """A layout patch that also drops the request's data_shard when it no longer divides the new data × context
    ranks, its zero_bubble schedule when the new layout has no pipeline, and its expert overlap when the new layout
    has no expert parallelism (else the re-parse would refuse them); a patch to full recomputation already drops
    what that rules out (_full_recompute)."""
    new = patch.get("hardware", {}).get("parallelism", {})
    extra: dict[str, Any] = {}
    data, pipeline, zero = new.get("data", par.data), new.get("pipeline", par.pipeline), new.get("zero_stage")
    if par.data_shard and (
        (data * par.context) % par.data_shard or (zero if zero is not None else par.zero_stage) < 1
    ):
        extra["data_shard"] = None
    if par.pipeline_schedule != "1f1b" and pipeline == 1:
        extra["pipeline_schedule"] = None
    if par.expert_overlap and new.get("expert", par.expert) <= 1:
        extra["expert_overlap"] = None
    if not extra:
        return patch
    # set, not merged: a null in a merge patch removes the key from its target, and here the null must stay in the
    # change so that applying it removes the request's field
    out = {**patch, "hardware": {**patch.get("hardware", {}), "parallelism": {**new, **extra}}}
    return out


def _widest_layout(count: int, t_max: int, layers: int, recompute_full: dict) -> FitCandidate:
    p_max = 1
    while (
        t_max * p_max * 2 <= count
        and count % (t_max * p_max * 2) == 0
        and (not layers or p_max * 2 <= layers)
    ):
        p_max *= 2
    d = count // (t_max * p_max)
    return (
        _("tensor {t_max} × pipeline {p_max}, ZeRO {zero} and full recomputation").format(t_max=t_max, p_max=p_max, zero=3 if d > 1 else 1),
        combine(_par_patch(tensor=t_max, pipeline=p_max, data=d, sequence_parallel=t_max > 1,
                           zero_stage=3 if d > 1 else 1), recompute_full),
        None,
    )  # fmt: skip


def _fit_on_larger_part(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, recompute_full: dict
) -> dict | None:
    """A larger accelerator at the same count, cheapest first (as is, then with every memory lever)."""
    price = catalog.default_price
    bigger = sorted(
        (a for a in catalog.accelerators.values()
         if a.memory_bytes > plan.accelerator.memory_bytes and a.supports(plan.precision) and trains(a)
         and built_at(a, plan.par.devices)),
        key=lambda a: (price(a.id) is None, getattr(price(a.id), "usd_per_hour", 0.0)),
    )  # fmt: skip
    levers = combine(_par_patch(zero_stage=3) if plan.par.data > 1 else {}, recompute_full)
    extra: dict[str, Any]
    for extra in ({}, levers):
        for acc in bigger:
            change = combine({"hardware": {"accelerator": acc.id}, "cost": {"provider": None}}, extra)
            found = try_change(request, change, catalog)
            if found and found[1].fits:
                label = (
                    _("{name} ({memory}) with ZeRO-3/full recompute") if extra else "{name} ({memory})"
                ).format(name=acc.name, memory=human_bytes(acc.memory_bytes))
                return _fitrecommendation(label, change, plan, ev, found)
    return None


def _fit_on_more_devices(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, recompute_full: dict
) -> dict | None:
    """More devices: the data-parallel degree grows, with ZeRO-3 and full recomputation."""
    par, count, micro = plan.par, plan.par.devices, plan.micro_batch or 1
    for factor in (2, 4, 8, 16, 32, 64, 128):
        new_count = count * factor
        if not built_at(plan.accelerator, new_count):  # nobody builds that many of this part into one system
            break
        d = new_count // (par.tensor * par.pipeline)
        gbs = math.ceil(max(plan.global_batch, d * micro) / (d * micro)) * d * micro
        change = combine(
            {"hardware": {"count": new_count, "parallelism": {"data": d, "zero_stage": 3}}}, recompute_full
        )
        if gbs != plan.global_batch:
            change = combine(change, {"training": {"global_batch_size": gbs}})
        found = try_change(request, change, catalog)
        if found and found[1].fits:
            return _fitrecommendation(
                _("{new_count} devices with ZeRO-3 and full recomputation").format(new_count=new_count),
                change,
                plan,
                ev,
                found,
            )
    return None


def _fitrecommendation(
    label: str, change: dict, plan: TrainingPlan, ev: Evaluation, found: Candidate
) -> dict:
    new = found[1]
    message = _(
        "Needs {total} per device but {name} has {memory_bytes}. Smallest change that fits: "
        "{label} ({total2} per device, {seconds})."
    ).format(
        total=human_bytes(ev.memory.total),
        name=plan.accelerator.name,
        memory_bytes=human_bytes(plan.accelerator.memory_bytes),
        label=label,
        total2=human_bytes(new.memory.total),
        seconds=human_duration(new.seconds),
    )
    return recommendation("does_not_fit", "critical", message, change, "memory.fits", "==", True)
