"""Recommendations, each with an RFC 7386 merge patch (`change`) that is verified before it is offered.

Every candidate change is re-evaluated on the lean path (build_plan + evaluate, never recommend), and a
recommendation is emitted only if its `expected` claim holds for the changed request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import InvalidRequest
from ..hardware import Accelerator, Catalog, Price
from ..i18n import _, num, pct
from ..parallelism import Parallelism, builds_training_clusters, domain_size
from ..patch import merge_patch
from ..units import human_bytes, human_count, human_duration, human_usd
from .evaluate import Evaluation, evaluate, local_seconds_floor, seconds_floor
from .memory import runtime_reserve_bytes
from .plan import TrainingPlan
from .request import build_plan, default_precision
from .scaling import TOKENS_PER_PARAMETER, chinchilla_loss, loss_optimal_parameters
from .step_model import StepModel
from .step_time import compute_floor_s

# a given checkpoint interval this far (either way) from the Young/Daly optimum is worth changing (Daly 2006:
# the loss is flat near the optimum, within a few % of it between half and twice the interval)
CHECKPOINT_INTERVAL_FACTOR = 2.0
OVERHEAD_WARNING_SHARE = 0.03  # checkpointing / validation above 3 % of wall time is worth tuning
OVERHEAD_TARGET_SHARE = 0.01
UTILIZATION_IMPLAUSIBLE = 1.3  # given utilization 30 % above our prediction exceeds comparable public runs
UNDERTRAINED_TOKENS_PER_PARAMETER = 5.0  # well below Chinchilla's ~20 (Hoffmann et al. 2022)
OVERTRAINED_TOKENS_PER_PARAMETER = 200.0  # 10× past Chinchilla-optimal
MIN_LOSS_GAIN = 0.01  # nats/token; smaller gains sit inside the fit error (Besiroglu et al. 2024)
CHEAPER_MIN_SAVING = 0.05  # only suggest another accelerator that saves ≥ 5 %
CHEAPER_MAX_SLOWDOWN = 2.0  # ... and is at most 2× slower

Candidate = tuple[TrainingPlan, Evaluation]


def recommend(request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation) -> list[dict]:
    recs: list[dict[str, Any]] = []
    for rule in (_fit, _utilization, _compute_optimal, _checkpointing, _validation, _cheaper):
        rec = rule(request, catalog, plan, ev)
        if rec is not None:
            recs.append(rec)
    return recs


def _try(request: Mapping[str, Any], change: dict, catalog: Catalog) -> Candidate | None:
    try:
        plan = build_plan(merge_patch(dict(request), change), catalog)
    except InvalidRequest:
        return None
    return plan, evaluate(plan)


def _rec(
    code: str, severity: str, message: str, change: dict, field: str, op: str, value: Any
) -> dict[str, Any]:
    return {
        "code": code,
        "severity": severity,
        "message": message,
        "change": change,
        "expected": {"field": field, "op": op, "value": value},
    }


def _par_patch(**values: Any) -> dict:
    return {"hardware": {"parallelism": values}}


# (label, merge-patch change, the plan fields it sets when applying it to the plan is exact; None: re-parse)
FitCandidate = tuple[str, dict, dict[str, Any] | None]


def _fit(request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation) -> dict | None:
    """Smallest change that makes the run fit, tried from least to most disruptive: memory levers, wider layouts,
    a larger accelerator at the same count, then more devices."""
    if ev.fits:
        return None
    recompute_full = {"training": {"activation_recomputation": "full"}} if plan.recompute != "full" else {}
    for label, change, fields in _memory_levers(plan) + _layouts(plan, recompute_full):
        found = _apply(request, catalog, plan, change, fields)
        if found and found[1].fits:
            return _fit_rec(label, change, plan, ev, found)
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
        return _try(request, change, catalog)
    patched = plan.with_fields(**fields)
    return patched, evaluate(patched)


def _memory_levers(plan: TrainingPlan) -> list[FitCandidate]:
    """Full recomputation, higher ZeRO stages, an automatic micro-batch, ZeRO-3 with full recomputation."""
    par = plan.par
    full = {"training": {"activation_recomputation": "full"}}
    levers: list[FitCandidate] = []
    if plan.recompute != "full":
        levers.append((_("full activation recomputation"), full, {"recompute": "full"}))
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
            (_("ZeRO-3 with full recomputation"), merge_patch(_par_patch(zero_stage=3), full),
             {"par": replace(par, zero_stage=3), "recompute": "full"})
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
    ranks, and its zero_bubble schedule when the new layout has no pipeline (else the re-parse would refuse it)."""
    new = patch.get("hardware", {}).get("parallelism", {})
    extra: dict[str, Any] = {}
    data, pipeline, zero = new.get("data", par.data), new.get("pipeline", par.pipeline), new.get("zero_stage")
    if par.data_shard and (
        (data * par.context) % par.data_shard or (zero if zero is not None else par.zero_stage) < 1
    ):
        extra["data_shard"] = None
    if par.pipeline_schedule != "1f1b" and pipeline == 1:
        extra["pipeline_schedule"] = None
    if not extra:
        return patch
    # set, not merged: a null in a merge patch removes the key from its target, and here the null must stay in the
    # change so that applying it removes the request's field
    out = {**patch, "hardware": {**patch["hardware"], "parallelism": {**new, **extra}}}
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
        merge_patch(_par_patch(tensor=t_max, pipeline=p_max, data=d, sequence_parallel=t_max > 1,
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
         if a.memory_bytes > plan.accelerator.memory_bytes and a.supports(plan.precision) and _trains(a)),
        key=lambda a: (price(a.id) is None, getattr(price(a.id), "usd_per_hour", 0.0)),
    )  # fmt: skip
    levers = merge_patch(_par_patch(zero_stage=3) if plan.par.data > 1 else {}, recompute_full)
    extra: dict[str, Any]
    for extra in ({}, levers):
        for acc in bigger:
            change = merge_patch({"hardware": {"accelerator": acc.id}, "cost": {"provider": None}}, extra)
            found = _try(request, change, catalog)
            if found and found[1].fits:
                label = (
                    _("{name} ({memory}) with ZeRO-3/full recompute") if extra else "{name} ({memory})"
                ).format(name=acc.name, memory=human_bytes(acc.memory_bytes))
                return _fit_rec(label, change, plan, ev, found)
    return None


def _fit_on_more_devices(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, recompute_full: dict
) -> dict | None:
    """More devices: the data-parallel degree grows, with ZeRO-3 and full recomputation."""
    par, count, micro = plan.par, plan.par.devices, plan.micro_batch or 1
    for factor in (2, 4, 8, 16, 32, 64, 128):
        new_count = count * factor
        d = new_count // (par.tensor * par.pipeline)
        gbs = math.ceil(max(plan.global_batch, d * micro) / (d * micro)) * d * micro
        change = merge_patch(
            {"hardware": {"count": new_count, "parallelism": {"data": d, "zero_stage": 3}}}, recompute_full
        )
        if gbs != plan.global_batch:
            change = merge_patch(change, {"training": {"global_batch_size": gbs}})
        found = _try(request, change, catalog)
        if found and found[1].fits:
            return _fit_rec(
                _("{new_count} devices with ZeRO-3 and full recomputation").format(new_count=new_count),
                change,
                plan,
                ev,
                found,
            )
    return None


def _fit_rec(label: str, change: dict, plan: TrainingPlan, ev: Evaluation, found: Candidate) -> dict:
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
    return _rec("does_not_fit", "critical", message, change, "memory.fits", "==", True)


def _utilization(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    if plan.utilization is None or plan.utilization <= UTILIZATION_IMPLAUSIBLE * ev.predicted_utilization:
        return None
    predicted = round(ev.predicted_utilization, 3)
    change = {"hardware": {"utilization": predicted}}
    found = _try(request, change, catalog)
    if not found or found[1].seconds <= ev.seconds:
        return None
    message = _(
        "Utilization {utilization} is well above what comparable public runs reach; the engine "
        "predicts {predicted} for this setup, i.e. {seconds} instead of {seconds2}."
    ).format(
        utilization=pct(plan.utilization, 0),
        predicted=pct(predicted, 0),
        seconds=human_duration(found[1].seconds),
        seconds2=human_duration(ev.seconds),
    )
    return _rec("utilization_above_typical", "warning", message, change, "time.seconds", ">", ev.seconds)


def _current_loss(plan: TrainingPlan) -> float:
    return chinchilla_loss(plan.model.active_parameters, plan.units + plan.pretraining_units)


def _compute_optimal(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    shape = plan.model.shape
    if plan.unit != "token" or plan.model.architecture != "transformer" or (shape and shape.is_moe):
        return None
    n, d = plan.model.active_parameters, plan.units + plan.pretraining_units
    ratio = d / n
    loss = _current_loss(plan)
    if 1.0 <= ratio < UNDERTRAINED_TOKENS_PER_PARAMETER and not plan.pretraining_units:
        tokens = float(round(TOKENS_PER_PARAMETER * n))
        change = {"training": {"tokens": tokens, "epochs": None, "samples": None}}
        message = _(
            "{ratio} tokens per parameter is far below the compute-optimal ~20 (Hoffmann et al. 2022); "
            "training on {tokens} tokens lowers the predicted loss from {loss} to {new_loss}."
        ).format(
            ratio=num(ratio, 1),
            tokens=human_count(tokens),
            loss=num(loss, 3),
            new_loss=num(chinchilla_loss(n, tokens), 3),
        )
        code = "undertrained"
    elif ratio > OVERTRAINED_TOKENS_PER_PARAMETER and not plan.pretraining_units:
        # the minimiser of the fitted L(N, D) at this compute, rounded to 3 significant figures
        n_opt = float(f"{loss_optimal_parameters(6.0 * n * d):.3g}")
        tokens = float(round(6.0 * n * d / (6.0 * n_opt)))
        if chinchilla_loss(n_opt, tokens) > loss - MIN_LOSS_GAIN:
            return None
        model_patch: dict[str, Any] = {key: None for key in request.get("model", {}) if key != "architecture"}
        model_patch.update({"architecture": "transformer", "parameters": n_opt})
        change = {"model": model_patch, "training": {"tokens": tokens, "epochs": None, "samples": None}}
        message = _(
            "{ratio} tokens per parameter is far past compute-optimal (Hoffmann et al. 2022): a "
            "{n_opt}-parameter model on {tokens} tokens would reach lower loss for the same compute "
            "({new_loss} vs {loss}). Over-training is reasonable when inference cost matters more."
        ).format(
            ratio=num(ratio, 0),
            n_opt=human_count(n_opt),
            tokens=human_count(tokens),
            new_loss=num(chinchilla_loss(n_opt, tokens), 3),
            loss=num(loss, 3),
        )
        code = "far_from_compute_optimal"
    else:
        return None
    found = _try(request, change, catalog)
    if not found or _current_loss(found[0]) >= loss:
        return None
    return _rec(code, "info", message, change, "scaling.predicted_loss", "<", loss)


def _overhead(
    request: Mapping[str, Any], catalog: Catalog, ev: Evaluation, part: float, interval: int | None,
    code: str, what: str, patch: Callable[[int], dict],
) -> dict | None:  # fmt: skip
    if not interval or ev.seconds <= 0 or part / ev.seconds <= OVERHEAD_WARNING_SHARE:
        return None
    new_interval = math.ceil(interval * (part / ev.seconds) / OVERHEAD_TARGET_SHARE)
    change = patch(new_interval)
    found = _try(request, change, catalog)
    if not found or found[1].seconds >= ev.seconds:
        return None
    message = _(
        "{what} takes {value} of the run ({part}); every {new_interval} steps instead of "
        "{interval} brings it near {target} and the run to {seconds}."
    ).format(
        what=what,
        value=pct(part / ev.seconds, 1),
        part=human_duration(part),
        new_interval=new_interval,
        interval=interval,
        target=pct(OVERHEAD_TARGET_SHARE, 0),
        seconds=human_duration(found[1].seconds),
    )
    return _rec(code, "warning", message, change, "time.seconds", "<", ev.seconds)


def _checkpointing(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    return _checkpoint_interval(request, catalog, plan, ev) or _overhead(
        request, catalog, ev, ev.checkpoint_s, plan.checkpoint_interval, "checkpointing_overhead",
        _("Checkpointing"), lambda k: {"training": {"checkpoint_interval_steps": k}},
    )  # fmt: skip


def _checkpoint_interval(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    """A given checkpoint interval more than CHECKPOINT_INTERVAL_FACTOR from the Young/Daly optimum, when the
    optimum saves at least OVERHEAD_WARNING_SHARE / 3 of the run (verified by re-evaluating it)."""
    run, interval = ev.run, plan.checkpoint_interval
    if run is None or run.given or not interval or not run.optimal_interval:
        return None
    optimal = run.optimal_interval
    if 1 / CHECKPOINT_INTERVAL_FACTOR <= interval / optimal <= CHECKPOINT_INTERVAL_FACTOR:
        return None
    change = {"training": {"checkpoint_interval_steps": optimal}}
    found = _try(request, change, catalog)
    if not found or found[1].seconds > ev.seconds * (1 - OVERHEAD_WARNING_SHARE / 3):
        return None
    message = _(
        "A checkpoint every {interval} steps is far from the Young/Daly optimum for {interruptions} expected "
        "interruptions (every {optimal} steps: √(2 · write time · mean time between interruptions)); checkpoint "
        "writes and lost work take {extra} more than at the optimum, which brings the run to {seconds}."
    ).format(
        interval=interval,
        interruptions=num(run.interruptions, 1, grouping=True),
        optimal=optimal,
        extra=human_duration(ev.seconds - found[1].seconds),
        seconds=human_duration(found[1].seconds),
    )
    return _rec("checkpoint_interval", "warning", message, change, "time.seconds", "<", ev.seconds)


def _validation(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    return _overhead(
        request, catalog, ev, ev.validation_s, plan.validation_interval, "validation_overhead",
        _("Validation"), lambda k: {"training": {"validation": {"interval_steps": k}}},
    )  # fmt: skip


def _training_parts(catalog: Catalog) -> list[tuple[Accelerator, Price]]:
    """The catalog's training parts with a price (catalog order), derived once per catalog."""
    parts = catalog.derived.get("training.priced_parts")
    if parts is None:
        parts = catalog.derived["training.priced_parts"] = [
            (acc, price)
            for acc in catalog.accelerators.values()
            if _trains(acc) and (price := catalog.default_price(acc.id)) is not None
        ]
    return parts  # type: ignore[return-value]


def _trains(acc: Any) -> bool:
    """Hosts and inference-only parts are not training alternatives (AWS: Inferentia is for inference)."""
    return acc.kind not in ("cpu", "apple") and "inferentia" not in acc.id


def _cheaper(request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation) -> dict | None:
    """Cheapest other catalog accelerator that runs the same job (same count and layout) for less."""
    if plan.price_source == "override" or ev.usd_per_hour is None:
        return None
    devices = plan.par.devices
    current = ev.accelerator_hours(devices) * ev.usd_per_hour
    best = _cheapest(catalog, plan, ev, current)
    if best is None:
        return None
    acc, candidate = best
    change = {"hardware": {"accelerator": acc.id}, "cost": {"provider": None}}
    found = _confirm(request, catalog, plan, change, acc, candidate)
    if not found or not found[1].fits or found[1].usd_per_hour is None:
        return None
    confirmed = found[1].accelerator_hours(devices) * found[1].usd_per_hour
    if confirmed >= current:
        return None
    saving = 1.0 - confirmed / current
    template = (
        _(
            "{name} runs the same job ({devices} devices, same layout) for {confirmed} instead of "
            "{current} ({saving} less) in {seconds} at the same given utilization."
        )
        if plan.utilization is not None
        else _(
            "{name} runs the same job ({devices} devices, same layout) for {confirmed} instead of "
            "{current} ({saving} less) in {seconds}."
        )
    )
    message = template.format(
        name=acc.name,
        devices=devices,
        confirmed=human_usd(confirmed),
        current=human_usd(current),
        saving=pct(saving, 0),
        seconds=human_duration(found[1].seconds),
    )
    stack = _stack_change(plan.accelerator, acc)
    if stack:
        message += " " + stack
    total_now = current * (1.0 + plan.infrastructure_overhead)
    return _rec("cheaper_accelerator", "info", message, change, "cost.total_usd", "<", total_now)


def _stack_change(current: Accelerator, other: Accelerator) -> str | None:
    """What moving the job to another vendor's part asks of its software, said beside the saving."""
    if other.vendor == current.vendor:
        return None
    if other.kind == "tpu":
        return _(
            "TPUs train through XLA (JAX, or PyTorch/XLA), not CUDA: the training code has to run there."
        )
    if other.vendor == "AMD":
        return _("AMD GPUs run ROCm builds of PyTorch: CUDA-only kernels need their ROCm ports.")
    if other.kind == "asic":
        return _(
            "{vendor} accelerators need their own SDK (e.g. AWS Neuron, Intel Gaudi): the training code has to run there."
        ).format(vendor=other.vendor)
    return None


def _cheapest(
    catalog: Catalog, plan: TrainingPlan, ev: Evaluation, current: float
) -> tuple[Accelerator, Evaluation] | None:
    """The accelerator whose evaluation fits, costs at least CHEAPER_MIN_SAVING less than `current` and is at most
    CHEAPER_MAX_SLOWDOWN slower, cheapest first (ties: lowest cost floor, then catalog order).

    Candidates are evaluated on the lean path (the validated plan on another accelerator, with the basis the plan
    was evaluated with: memory does not depend on the device) in order of a lower bound of their cost; the scan
    stops once the bound exceeds the cheapest found (nothing later can beat or tie it), and a device whose step
    terms alone (seconds_floor) cost more than the cheapest found is passed over before its full evaluation."""
    devices = plan.par.devices
    best: tuple[float, int, Accelerator, Evaluation] | None = None
    basis = ev.basis
    for bound, order, acc, price in _cost_bounds(catalog, plan, ev, current):
        if best is not None and bound > best[0]:
            break
        on_acc = plan.on(acc, price.usd_per_hour)
        model = StepModel(on_acc, basis.flops, basis.params, basis.work)
        try:
            if plan.utilization is None and best is not None:
                # two floors of its time, the cheaper first: compute and bubble, then every step term
                usd = price.usd_per_hour
                if ev.accelerator_hours(devices, local_seconds_floor(on_acc, basis, model)) * usd > best[0]:
                    continue
                if ev.accelerator_hours(devices, seconds_floor(on_acc, basis, model)) * usd > best[0]:
                    continue
            candidate = evaluate(on_acc, ev.basis, model)
        except (ZeroDivisionError, ValueError):
            continue
        cost = candidate.accelerator_hours(devices) * price.usd_per_hour
        if (
            candidate.fits
            and cost < current * (1.0 - CHEAPER_MIN_SAVING)
            and candidate.seconds <= CHEAPER_MAX_SLOWDOWN * ev.seconds
            and (best is None or (cost, order) < (best[0], best[1]))
        ):
            best = (cost, order, acc, candidate)
    return (best[2], best[3]) if best is not None else None


def _cost_bounds(
    catalog: Catalog, plan: TrainingPlan, ev: Evaluation, current: float
) -> list[tuple[float, int, Accelerator, Price]]:
    """(lower bound of the cost, rank of the cost floor, accelerator, price) of every accelerator that may run the
    job for less, lowest bound first.

    The cost floor is the job's FLOPs at the device's dense peak (or at the given utilization). Without a given
    utilization the bound is tighter: the step's compute terms at the largest micro-batch the plan may use
    (compute_floor_s), which communication, the bubble, checkpoints and validation only add to."""
    threshold = current * (1.0 - CHEAPER_MIN_SAVING)
    floors = _cost_floors(catalog, plan, ev, threshold)
    if plan.utilization is not None:  # the floor is the given utilization's time already
        return [(floor_usd, order, acc, price) for order, (floor_usd, acc, price) in enumerate(floors)]
    devices, work, precision = plan.par.devices, ev.basis.work, plan.precision
    largest_micro, memory = ev.basis.candidates[0]
    bounds: list[tuple[float, int, Accelerator, Price]] = []
    for order, (_floor, acc, price) in enumerate(floors):
        seconds = ev.step_equivalents * compute_floor_s(work, acc, precision, largest_micro, memory)
        bound = ev.accelerator_hours(devices, seconds) * price.usd_per_hour
        if bound < threshold and seconds <= CHEAPER_MAX_SLOWDOWN * ev.seconds:
            bounds.append((bound, order, acc, price))
    bounds.sort(key=lambda c: (c[0], c[1]))
    return bounds


def _cost_floors(
    catalog: Catalog, plan: TrainingPlan, ev: Evaluation, threshold: float
) -> list[tuple[float, Accelerator, Price]]:
    """(cost floor, accelerator, price) of the other training parts whose floor is under `threshold`, lowest first
    (stable: catalog order among equal floors)."""
    devices = plan.par.devices
    # Memory per device does not depend on the accelerator (same layout and precision): a device smaller than the
    # model states, or than every micro-batch's total, cannot run the job, whatever its speed.
    states = ev.memory.weights + ev.memory.gradients + ev.memory.optimizer_states
    smallest = min(memory.total for _, memory in ev.basis.candidates)
    own, precision, utilization = plan.accelerator.id, plan.precision, plan.utilization
    total_flops = ev.total_flops
    floors = []
    for acc, price in _training_parts(catalog):
        peak = acc.peak(precision)  # None: the part lacks the precision
        # the runtime reserve is the one memory term that depends on the kind of part (evaluate.for_part)
        needed = smallest - ev.basis.reserve + runtime_reserve_bytes(acc)
        if peak is None or acc.memory_bytes <= states or acc.memory_bytes < needed or acc.id == own:
            continue
        if devices > domain_size(acc) and not builds_training_clusters(acc):
            continue  # nobody builds multi-node training clusters of a part without a fabric: never suggest one
        # Cost floor: even at its dense peak (or at the given utilization) the job cannot cost less.
        floor_usd = total_flops * price.usd_per_hour / (peak * (utilization or 1.0) * 3600.0)
        if floor_usd < threshold:
            floors.append((floor_usd, acc, price))
    floors.sort(key=lambda c: c[0])
    return floors


def _confirm(
    request: Mapping[str, Any],
    catalog: Catalog,
    plan: TrainingPlan,
    change: dict,
    acc: Accelerator,
    candidate: Evaluation,
) -> Candidate | None:
    """The request with `change` (this accelerator, its catalog price) estimated as a client would get it.

    The patched request validates to the scanned plan on `acc` when the precision stays (given, or defaulting to the
    same on `acc`) and no hardware.interconnect has to be re-applied to the new part: its evaluation is then the
    scan's. Otherwise the request is re-parsed (defaults re-derived) and evaluated again."""
    given_precision = (request.get("training") or {}).get("precision") is not None
    interconnect = (request.get("hardware") or {}).get("interconnect")
    if not interconnect and (given_precision or default_precision(acc, []) == plan.precision):
        return plan.on(acc, candidate.usd_per_hour), candidate
    return _try(request, change, catalog)
