"""The cheaper-accelerator rule: the catalog scan for another part that runs the same job (same count and layout)
for less, pruned by cost floors, and the note on what moving to another vendor asks of the software."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...hardware import Accelerator, Catalog, Price
from ...i18n import _, pct
from ...offers import NEUTRAL, Terms, terms_of
from ...parallelism import built_at
from ...units import human_duration, human_usd
from ..model.compute import compute_floor_s
from ..model.cost import billed_accelerator_hours, compute_usd, cost
from ..model.evaluate import Evaluation, basis, evaluate, local_seconds_floor, seconds_floor
from ..model.framework import default_recomputation
from ..model.plan import TrainingPlan
from ..model.step import StepModel
from ..numerics_request import default_precision
from .common import recommendation, try_change

CHEAPER_MIN_SAVING = 0.05  # only suggest another accelerator that saves ≥ 5 %
CHEAPER_MAX_SLOWDOWN = 2.0  # ... and is at most 2× slower


def _training_parts(catalog: Catalog) -> list[tuple[Accelerator, Price]]:
    """The catalog's training parts with a price (catalog order), derived once per catalog."""
    parts = catalog.derived.get("training.priced_parts")
    if parts is None:
        parts = catalog.derived["training.priced_parts"] = [
            (acc, price)
            for acc in catalog.accelerators.values()
            if trains(acc) and (price := catalog.default_price(acc.id)) is not None
        ]
    return parts  # type: ignore[return-value]


def _billed(devices: int, seconds: float, usd_per_hour: float, terms: Terms) -> float:
    """Compute USD of `devices` for `seconds` as the offer bills them (model/cost.py); a lower bound of it is the
    unbilled accelerator-hours × price, which the scan's floors use."""
    return compute_usd(billed_accelerator_hours(float(devices), seconds, terms), usd_per_hour)


def _terms(catalog: Catalog, acc: Accelerator) -> Terms:
    """The terms of the part's default price (the row a move to it is priced on)."""
    price = catalog.default_price(acc.id)
    return terms_of(price, acc.id) if price is not None else NEUTRAL


def trains(acc: Any) -> bool:
    """Hosts and inference-only parts are not training alternatives (AWS: Inferentia is for inference)."""
    return acc.kind not in ("cpu", "apple") and "inferentia" not in acc.id


def cheaper(request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation) -> dict | None:
    """Cheapest other catalog accelerator that runs the same job (same count and layout) for less."""
    if plan.price_source == "override" or ev.usd_per_hour is None:
        return None
    devices = plan.par.devices
    current = _billed(devices, ev.seconds, ev.usd_per_hour, plan.offer_terms)
    if plan.offload_source == "fit" or plan.recompute_source == "fit":
        # other parts are judged without the offload or recomputation chosen to fit this one (fit_defaults.py): the
        # basis's memories and work are those of the plan without them, as a client moving the request gets them
        plan = plan.with_fields()
        ev = replace(ev, basis=basis(plan))
    best = _cheapest(request, catalog, plan, ev, current)
    if best is None:
        return None
    acc, candidate = best
    change = _move_to(acc)
    found = _confirm(request, catalog, plan, change, acc, candidate)
    if found is None or not found.fits or found.usd_per_hour is None:
        return None
    confirmed = _billed(devices, found.seconds, found.usd_per_hour, _terms(catalog, acc))
    # the claim is the confirmed answer's: it must clear the same bars as the scan's
    if confirmed > current * (1.0 - CHEAPER_MIN_SAVING) or found.seconds > CHEAPER_MAX_SLOWDOWN * ev.seconds:
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
        seconds=human_duration(found.seconds),
    )
    stack = _stack_change(plan.accelerator, acc)
    if stack:
        message += " " + stack
    total_now = cost(plan, devices, ev.seconds).total_usd
    return recommendation("cheaper_accelerator", "info", message, change, "cost.total_usd", "<", total_now)


def _move_to(acc: Accelerator) -> dict:
    """The change that moves a request to `acc` at its catalog price."""
    return {"hardware": {"accelerator": acc.id}, "cost": {"provider": None}}


def _recompute_follows(request: Mapping[str, Any], plan: TrainingPlan, acc: Accelerator) -> bool:
    """The request leaves the recomputation out and `acc`'s stack defaults to another one than the plan's
    (framework.default_recomputation: full for a transformer on a TPU): on `acc` the request runs another plan,
    with its own memory and FLOPs, so the scan evaluates the request itself there."""
    training = request.get("training") or {}
    if training.get("activation_recomputation") is not None or training.get("recompute_modules") is not None:
        return False
    transformer = plan.model.shape is not None
    if acc.kind == "tpu" and transformer:
        return True  # a TPU stack takes the least recomputation that fits there (fit_defaults.remat_to_fit)
    return default_recomputation(acc, transformer) != plan.recompute


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
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, current: float
) -> tuple[Accelerator, Evaluation] | None:
    """The accelerator whose evaluation fits, costs at least CHEAPER_MIN_SAVING less than `current` and is at most
    CHEAPER_MAX_SLOWDOWN slower, cheapest first (ties: lowest cost floor, then catalog order).

    Candidates are evaluated on the lean path (the validated plan on another accelerator, with the basis the plan
    was evaluated with: memory does not depend on the device) in order of a lower bound of their cost; the scan
    stops once the bound exceeds the cheapest found (nothing later can beat or tie it), and a device whose step
    terms alone (seconds_floor) cost more than the cheapest found is passed over before its full evaluation."""
    devices = plan.par.devices
    best: tuple[float, int, Accelerator, Evaluation] | None = None
    for bound, order, acc, price in _cost_bounds(request, catalog, plan, ev, current):
        if best is not None and bound > best[0]:
            break
        limit = _terms(catalog, acc).single_job_limit
        if limit is not None and devices > limit:
            continue  # its price's offer sells no scale-out network for a job this size (offers.SCALE_OUT)
        if _recompute_follows(request, plan, acc):
            found = try_change(request, _move_to(acc), catalog)
            candidate = found[1] if found is not None else None
        else:
            candidate = _on_part(plan, ev, acc, price, best[0] if best is not None else None)
        if candidate is None or candidate.usd_per_hour is None:
            continue
        cost = _billed(devices, candidate.seconds, candidate.usd_per_hour, _terms(catalog, acc))
        if (
            candidate.fits
            and cost < current * (1.0 - CHEAPER_MIN_SAVING)
            and candidate.seconds <= CHEAPER_MAX_SLOWDOWN * ev.seconds
            and (best is None or (cost, order) < (best[0], best[1]))
        ):
            best = (cost, order, acc, candidate)
    return (best[2], best[3]) if best is not None else None


def _on_part(
    plan: TrainingPlan, ev: Evaluation, acc: Accelerator, price: Price, cheapest: float | None
) -> Evaluation | None:
    """The plan evaluated on `acc` at `price` on the lean path (ev's basis), or None when it cannot run there or
    (no utilization given) a floor of its time already costs more than `cheapest`."""
    devices, basis = plan.par.devices, ev.basis
    on_acc = plan.on(acc, price.usd_per_hour)
    model = StepModel(on_acc, basis.flops, basis.params, basis.work)
    try:
        if plan.utilization is None and cheapest is not None:
            # two floors of its time, the cheaper first: compute and bubble, then every step term
            usd = price.usd_per_hour
            if ev.accelerator_hours(devices, local_seconds_floor(on_acc, basis, model)) * usd > cheapest:
                return None
            if ev.accelerator_hours(devices, seconds_floor(on_acc, basis, model)) * usd > cheapest:
                return None
        return evaluate(on_acc, basis, model)
    except (ZeroDivisionError, ValueError):
        return None


def _cost_bounds(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, current: float
) -> list[tuple[float, int, Accelerator, Price]]:
    """(lower bound of the cost, rank of the cost floor, accelerator, price) of every accelerator that may run the
    job for less, lowest bound first.

    The cost floor is the job's FLOPs at the device's dense peak (or at the given utilization). Without a given
    utilization the bound is tighter: the step's compute terms at the largest micro-batch the plan may use
    (compute_floor_s), which communication, the bubble, checkpoints and validation only add to."""
    threshold = current * (1.0 - CHEAPER_MIN_SAVING)
    floors = _cost_floors(request, catalog, plan, ev, threshold)
    if plan.utilization is not None:  # the floor is the given utilization's time already
        return [(floor_usd, order, acc, price) for order, (floor_usd, acc, price) in enumerate(floors)]
    devices, work, precision = plan.par.devices, ev.basis.work, plan.precision
    largest_micro, memory = ev.basis.candidates[0]
    bounds: list[tuple[float, int, Accelerator, Price]] = []
    for order, (floor_usd, acc, price) in enumerate(floors):
        if _recompute_follows(request, plan, acc):
            # another recomputation runs there: this plan's work is no floor of it, the FLOPs at peak are
            bounds.append((floor_usd, order, acc, price))
            continue
        seconds = ev.step_equivalents * compute_floor_s(work, acc, precision, largest_micro, memory)
        bound = compute_usd(ev.accelerator_hours(devices, seconds), price.usd_per_hour)
        if bound < threshold and seconds <= CHEAPER_MAX_SLOWDOWN * ev.seconds:
            bounds.append((bound, order, acc, price))
    bounds.sort(key=lambda c: (c[0], c[1]))
    return bounds


def _cost_floors(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation, threshold: float
) -> list[tuple[float, Accelerator, Price]]:
    """(cost floor, accelerator, price) of the other training parts whose floor is under `threshold`, lowest first
    (stable: catalog order among equal floors)."""
    devices = plan.par.devices
    # Memory per device does not depend on the accelerator (same layout and precision): a device smaller than the
    # model states, or than every micro-batch's total, cannot run the job, whatever its speed.
    states = ev.memory.weights + ev.memory.gradients + ev.memory.optimizer_states
    smallest = min(ev.basis.candidates, key=lambda c: c[1].total)[1]
    own, precision, utilization = plan.accelerator.id, plan.precision, plan.utilization
    total_flops = ev.total_flops
    floors = []
    for acc, price in _training_parts(catalog):
        peak = acc.peak(precision)  # None: the part lacks the precision
        # the runtime reserve and fragmentation are the memory terms that depend on the kind of part
        needed = smallest.on(acc).total
        if peak is None or acc.id == own:
            continue
        # (a part whose stack recomputes otherwise runs another plan: its memory is that plan's, judged in _cheapest)
        if acc.memory_bytes <= states:
            continue
        if acc.memory_bytes < needed and not _recompute_follows(request, plan, acc):
            continue
        if not built_at(acc, devices):
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
) -> Evaluation | None:
    """The request with `change` (this accelerator, its catalog price) estimated as a client would get it.

    The scan's evaluation is already that when the scan evaluated the request itself there (_recompute_follows), or
    when the patched request validates to the scanned plan on `acc`: the precision stays (given, or defaulting to
    the same on `acc`) and no hardware.interconnect has to be re-applied to the new part. Otherwise the request is
    re-parsed (defaults re-derived) and evaluated again."""
    if _recompute_follows(request, plan, acc):
        return candidate
    given_precision = (request.get("training") or {}).get("precision") is not None
    interconnect = (request.get("hardware") or {}).get("interconnect")
    if not interconnect and (given_precision or default_precision(acc, []) == plan.precision):
        return candidate
    found = try_change(request, change, catalog)
    return found[1] if found is not None else None
