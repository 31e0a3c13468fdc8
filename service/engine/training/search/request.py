"""POST /v1/plans/training request → the planner's candidates, search space and constraints.

The model and training fields are those of a training estimate and are validated by build_plan itself (one base
plan per accelerator and recomputation mode), so a planner request is refused exactly where an estimate would be.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...budget import Checkpoint, unlimited
from ...errors import InvalidRequest
from ...hardware import Catalog, price_rows
from ...i18n import _
from ...offers import NEUTRAL, terms_of
from ...parallelism import DEVICES_PER_NODE, builds_training_clusters
from ...pricing import MAX_PRICE_OVERRIDE, PRICING_MODELS, source_of, valid_override
from ..model.plan import SEARCHED_RECOMPUTATION, TrainingPlan
from ..request import build_plan
from .rank import OBJECTIVES, Candidate, Constraints, Offer, Prepared
from .sanity import batch_notes, check_steps, startup_share
from .space import (
    DEFAULT_MAX_DEVICES,
    MAX_GRID_PER_CANDIDATE,
    MAX_GRID_TOTAL,
    MAX_SEARCH_CONFIGURATIONS,
    SearchSpace,
    bounded_grid_size,
    default_space,
    enumerate_layouts,
    pipeline_for_counts,
)

DEFAULT_PRICING_MODELS = (
    "on-demand",
)  # spot can be reclaimed mid-run and reserved needs a commitment: opt in
DEFAULT_RESULTS = 5
# ISO 8601 durations: years of 365 days and months of 30 days (the standard leaves them to the calendar). The API
# contract states this same pattern (service/api/extensions/fields.py Deadline).
DURATION_PATTERN = (
    r"^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?"
    r"(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$"
)
_DURATION = re.compile(
    r"^P(?:(?P<years>\d+(?:\.\d+)?)Y)?(?:(?P<months>\d+(?:\.\d+)?)M)?(?:(?P<weeks>\d+(?:\.\d+)?)W)?"
    r"(?:(?P<days>\d+(?:\.\d+)?)D)?(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)
MAX_DURATION_S = 100 * 365 * 86400.0  # a plan's horizon: a century is no deadline
_UNIT_SECONDS = {
    "years": 365 * 86400.0,
    "months": 30 * 86400.0,
    "weeks": 7 * 86400.0,
    "days": 86400.0,
    "hours": 3600.0,
    "minutes": 60.0,
    "seconds": 1.0,
}
SPACE_FIELDS = {  # search field → SearchSpace field
    "tensor": "tensor",
    "pipeline": "pipeline",
    "virtual_pipeline": "virtual_pipeline",
    "context": "context",
    "expert": "expert",
    "zero_stages": "zero_stages",
    "micro_batch_sizes": "micro_batches",
}


@dataclass(frozen=True)
class PlanRequest:
    prepared: list[Prepared]  # the candidates with their enumerated layouts
    constraints: Constraints
    objective: str
    limit: int
    checkpoint_bytes_per_s: float | None
    excluded_accelerators: list[dict[str, str]]
    notes: list[str]
    complete: bool = True  # False: the time budget ended the enumeration before every candidate


def duration_seconds(value: Any, path: str) -> float:
    """Seconds from a number of seconds or an ISO 8601 duration ("P45D", "PT36H", "P1W2D"), more than 0 and at
    most MAX_DURATION_S."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value)
        match = _DURATION.match(text) if re.match(DURATION_PATTERN, text) else None
        if match is None:
            raise InvalidRequest.single(
                path,
                _("{value} is neither seconds nor an ISO 8601 duration such as P45D, PT36H or P1W2D.").format(
                    value=repr(value)
                ),
            )
        seconds = sum(float(v) * _UNIT_SECONDS[k] for k, v in match.groupdict().items() if v)
    if not 0 < seconds <= MAX_DURATION_S:
        raise InvalidRequest.single(
            path,
            _("Must be more than 0 and at most 100 years ({MAX_DURATION_S:g} s).").format(
                MAX_DURATION_S=MAX_DURATION_S
            ),
        )
    return seconds


def parse_plan_request(
    request: Mapping[str, Any], catalog: Catalog, checkpoint: Checkpoint = unlimited
) -> PlanRequest:
    """The validated search: constraints, objective and every candidate's layouts, enumerated until `checkpoint`
    says the time budget is spent (then `complete` is False and the remaining candidates are not searched)."""
    search: Mapping[str, Any] = request.get("search") or {}
    given: Mapping[str, Any] = request.get("constraints") or {}
    errors: dict[str, list[str]] = {}
    constraints = Constraints(
        deadline_s=duration_seconds(given["deadline"], "constraints.deadline")
        if given.get("deadline")
        else None,
        budget_usd=float(given["budget_usd"]) if given.get("budget_usd") is not None else None,
        quotas=quotas(given, errors),
        max_price_age_days=given.get("max_price_age_days"),
        max_startup_share=startup_share(given.get("max_startup_share"), errors),
    )
    max_devices = int(given.get("max_devices") or search.get("max_devices") or DEFAULT_MAX_DEVICES)
    min_devices = int(search.get("min_devices") or 1)
    if min_devices > max_devices:
        errors["search.min_devices"] = [
            _("Must not exceed the maximum device count ({max_devices}).").format(max_devices=max_devices)
        ]
    objective = str(request.get("objective") or "pareto")
    if objective not in OBJECTIVES:
        errors["objective"] = [_("Must be one of {OBJECTIVES}.").format(OBJECTIVES=", ".join(OBJECTIVES))]
    ids = _accelerator_ids(search, catalog, errors)
    given_prices = price_overrides(request, catalog, errors)
    offers = plan_offers(search, catalog, ids, errors, given_prices, constraints.max_price_age_days)
    if search.get("accelerators") and not errors:
        _unpriced(ids, offers, objective, constraints, errors)
    counts = [int(c) for c in search.get("device_counts") or ()]
    if counts and not any(min_devices <= c <= max_devices for c in counts):
        errors["search.device_counts"] = [
            _("None is between {min_devices} and {max_devices} devices.").format(
                min_devices=min_devices, max_devices=max_devices
            )
        ]
    recomputes = _recomputations(request, search)
    if errors:
        raise InvalidRequest(errors)
    notes: list[str] = []
    candidates, excluded = _candidates(request, catalog, ids, offers, recomputes, notes)
    if not candidates:
        reasons = "; ".join(f"{e['accelerator']}: {e['reason']}" for e in excluded[:8])
        raise InvalidRequest.single(
            "search", _("No accelerator can take part in this search ({reasons}).").format(reasons=reasons)
        )
    check_steps(candidates[0].plan, given.get("min_optimizer_steps"), errors)
    if errors:
        raise InvalidRequest(errors)
    notes.extend(batch_notes(candidates[0].plan))
    space_for = _space_builder(request, search, max_devices, min_devices)
    prepared = _bounded(candidates, space_for, checkpoint)
    return PlanRequest(
        prepared=prepared,
        complete=len(prepared) == len(candidates),
        constraints=constraints,
        objective=objective,
        limit=int(request.get("results") or DEFAULT_RESULTS),
        checkpoint_bytes_per_s=(request.get("training") or {}).get("checkpoint_write_bandwidth_bytes_per_s"),
        excluded_accelerators=excluded,
        notes=notes,
    )


def _bounded(
    candidates: list[Candidate], space_for: Callable[[TrainingPlan], SearchSpace], checkpoint: Checkpoint
) -> list[Prepared]:
    """The candidates enumerated, once. Refused before any array is built: a candidate's product of degrees past
    MAX_GRID_PER_CANDIDATE or all of them past MAX_GRID_TOTAL; after enumeration, no valid layout at all or valid
    layouts × offers past MAX_SEARCH_CONFIGURATIONS (memory and seconds stay bounded)."""
    spaces = [(c, space_for(c.plan)) for c in candidates]
    sizes = [bounded_grid_size(c.plan, space) for c, space in spaces]
    largest, total = max(sizes, default=0), sum(sizes)
    if largest > MAX_GRID_PER_CANDIDATE or total > MAX_GRID_TOTAL:
        raise InvalidRequest.single(
            "search",
            _(
                "The search spans {total:,} layouts ({largest:,} for one accelerator and recomputation "
                "mode); at most {MAX_GRID_TOTAL:,} ({MAX_GRID_PER_CANDIDATE:,} each): name fewer "
                "accelerators, device counts or degrees."
            ).format(
                total=total,
                largest=largest,
                MAX_GRID_TOTAL=MAX_GRID_TOTAL,
                MAX_GRID_PER_CANDIDATE=MAX_GRID_PER_CANDIDATE,
            ),
        )
    prepared = []
    for c, space in spaces:
        prepared.append(Prepared(c, space.grid_size, enumerate_layouts(c.plan, space)))
        if not checkpoint():
            break
    valid = sum(len(p.layouts.data) * len(p.candidate.offers) for p in prepared)
    if valid == 0:
        batch = candidates[0].plan.global_batch
        raise InvalidRequest.single(
            "search",
            _(
                "No layout in the search space is one the estimate accepts: data × tensor × pipeline × "
                "context must equal a device count, and micro-batch × data must divide "
                "training.global_batch_size ({batch})."
            ).format(batch=batch),
        )
    if valid > MAX_SEARCH_CONFIGURATIONS:
        raise InvalidRequest.single(
            "search",
            _(
                "The search has {valid:,} valid configurations; at most {MAX_SEARCH_CONFIGURATIONS:,}: "
                "name fewer accelerators, device counts or degrees."
            ).format(valid=valid, MAX_SEARCH_CONFIGURATIONS=MAX_SEARCH_CONFIGURATIONS),
        )
    return prepared


NO_PRICE = Offer("none", "none", float("nan"))  # an accelerator named without a price, for `fastest` alone


def _unpriced(
    ids: list[str],
    offers: dict[str, tuple[Offer, ...]],
    objective: str,
    constraints: Constraints,
    errors: dict[str, list[str]],
) -> None:
    """Named accelerators without a price in the search: a 422 for a cost objective or a budget; searched
    without a cost (total_usd null) for `fastest`."""
    missing = [a for a in ids if not offers[a]]
    if not missing:
        return
    if objective != "fastest" or constraints.budget_usd is not None:
        errors["search.accelerators"] = [
            _(
                "{missing}: no catalog price among the providers and pricing models searched, which a cost "
                "objective or a budget needs; remove them, widen search.providers/pricing_models, or use "
                "objective fastest without a budget."
            ).format(missing=", ".join(missing))
        ]
        return
    for acc_id in missing:
        offers[acc_id] = (NO_PRICE,)


def _accelerator_ids(search: Mapping[str, Any], catalog: Catalog, errors: dict[str, list[str]]) -> list[str]:
    named = search.get("accelerators")
    if not named:
        return sorted(a for a in catalog.accelerators if a not in catalog.unusable)
    missing = [str(a) for a in named if str(a) not in catalog.accelerators or str(a) in catalog.unusable]
    if missing:
        errors["search.accelerators"] = [catalog.missing_message(m) for m in missing]
    return list(dict.fromkeys(str(a) for a in named))


def plan_offers(
    search: Mapping[str, Any],
    catalog: Catalog,
    ids: list[str],
    errors: dict[str, list[str]],
    given_prices: Mapping[str, float] | None = None,
    max_age_days: int | None = None,
) -> dict[str, tuple[Offer, ...]]:
    """Per accelerator: a price the request gives (`prices`), else one offer per (provider, pricing model, instance
    type) among the rows the price rule keeps (pricing.price_rows) for the providers and pricing models searched,
    none older than `max_age_days`."""
    providers = {str(p).lower() for p in search.get("providers") or ()}
    models = tuple(search.get("pricing_models") or DEFAULT_PRICING_MODELS)
    bad_models = [m for m in models if m not in PRICING_MODELS]
    if bad_models:
        errors["search.pricing_models"] = [
            _("Unknown {bad_models}; allowed: {PRICING_MODELS}.").format(
                bad_models=bad_models, PRICING_MODELS=", ".join(PRICING_MODELS)
            )
        ]
    if providers:
        known = {r.provider.lower() for rows in catalog.prices.values() for r in rows}
        unknown = sorted(providers - known)
        if unknown:
            errors["search.providers"] = [
                _("No prices from {unknown}; providers listed: {known}.").format(
                    unknown=unknown, known=", ".join(sorted(known))
                )
            ]
    given_prices = given_prices or {}
    out: dict[str, tuple[Offer, ...]] = {}
    for acc_id in ids:
        if acc_id in given_prices:
            usd = given_prices[acc_id]
            out[acc_id] = (Offer("override", "on-demand", usd, None, NEUTRAL, "override"),)
            continue
        found: list[Offer] = []
        for model in models:
            if model not in PRICING_MODELS:
                continue
            for row in price_rows(catalog.prices.get(acc_id, ()), pricing_model=model):
                if providers and row.provider.lower() not in providers:
                    continue
                terms = terms_of(row, acc_id)
                source = source_of(row, terms, catalog)
                if max_age_days is not None and (source.get("age_days") or 0) > max_age_days:
                    continue
                found.append(Offer(row.provider, row.pricing_model, row.usd_per_hour, row, terms, source))
        found.sort(
            key=lambda o: (o.provider, o.pricing_model, o.usd_per_hour, o.terms.accelerators_per_instance)
        )
        out[acc_id] = tuple(found)
    return out


def price_overrides(
    request: Mapping[str, Any], catalog: Catalog, errors: dict[str, list[str]]
) -> dict[str, float]:
    """`prices`: USD per accelerator-hour by catalog id, for parts the catalog does not price (or at the caller's
    own rate); each id must be a catalog accelerator and each price above 0 and at most MAX_PRICE_OVERRIDE."""
    given = request.get("prices") or {}
    out: dict[str, float] = {}
    for acc_id, usd in given.items():
        if str(acc_id) not in catalog.accelerators:
            errors[f"prices.{acc_id}"] = [catalog.missing_message(acc_id)]
        elif not valid_override(usd):
            errors[f"prices.{acc_id}"] = [
                _("Must be a number of USD per accelerator-hour, more than 0 and at most {most:g}.").format(
                    most=MAX_PRICE_OVERRIDE
                )
            ]
        else:
            out[str(acc_id)] = float(usd)
    return out


def quotas(given: Mapping[str, Any], errors: dict[str, list[str]]) -> dict[str, int]:
    """`constraints.max_accelerators_per_provider`: the most accelerators the caller may get at each provider named
    (a quota); 0 means none there, a provider not named is not limited by the caller."""
    out: dict[str, int] = {}
    for provider, most in (given.get("max_accelerators_per_provider") or {}).items():
        if isinstance(most, bool) or not isinstance(most, int) or most < 0:
            errors[f"constraints.max_accelerators_per_provider.{provider}"] = [
                _("Must be a whole number of accelerators, 0 or more.")
            ]
            continue
        out[str(provider).lower()] = most
    return out


def _placeholder(usd: float) -> float:
    return usd if usd == usd else 1.0  # NaN: searched without a price (objective fastest)


def _recomputations(request: Mapping[str, Any], search: Mapping[str, Any]) -> tuple[str, ...]:
    fixed = (request.get("training") or {}).get("activation_recomputation")
    if search.get("recomputation"):
        return tuple(dict.fromkeys(search["recomputation"]))
    return (fixed,) if fixed else SEARCHED_RECOMPUTATION


def _candidates(
    request: Mapping[str, Any],
    catalog: Catalog,
    ids: list[str],
    offers: dict[str, tuple[Offer, ...]],
    recomputes: tuple[str, ...],
    notes: list[str],
) -> tuple[list[Candidate], list[dict[str, str]]]:
    """A base plan per accelerator and recomputation mode; accelerators that cannot take part, with the reason."""
    training = {k: v for k, v in (request.get("training") or {}).items() if k != "micro_batch_size"}
    cost = dict(request.get("cost") or {})  # every cost input the planner takes reaches the base plans whole
    candidates: list[Candidate] = []
    excluded: list[dict[str, str]] = []
    for acc_id in ids:
        if not offers[acc_id]:
            excluded.append(
                {"accelerator": acc_id, "reason": "no_price", "detail": _("No catalog price in the search.")}
            )
            continue
        for recompute in recomputes:
            run = {**training, "activation_recomputation": recompute}
            if recompute != "selective":  # the named modules are what "selective" recomputes
                run.pop("recompute_modules", None)
            body = {
                "model": request.get("model") or {},
                "training": run,
                "hardware": {"accelerator": acc_id, "count": 1},
                # the base plan's price is a placeholder: the search prices every layout on every offer
                "cost": {**cost, "usd_per_accelerator_hour": _placeholder(offers[acc_id][0].usd_per_hour)},
            }
            try:
                plan = build_plan(body, catalog)
            except InvalidRequest as err:
                if set(err.errors) <= {"training.precision"}:
                    detail = " ".join(err.errors["training.precision"])
                    excluded.append(
                        {"accelerator": acc_id, "reason": "precision_unsupported", "detail": detail}
                    )
                    break
                raise
            candidates.append(Candidate(plan.with_fields(notes=()), offers[acc_id]))
    return candidates, excluded


def _space_builder(
    request: Mapping[str, Any], search: Mapping[str, Any], max_devices: int, min_devices: int
) -> Callable[[TrainingPlan], SearchSpace]:
    counts = tuple(int(c) for c in search.get("device_counts") or ())
    micro = (request.get("training") or {}).get("micro_batch_size")

    def space_for(plan: TrainingPlan) -> SearchSpace:
        top = max_devices
        if not builds_training_clusters(plan.accelerator):  # nobody builds multi-node clusters of these
            top = min(top, DEVICES_PER_NODE)
        space = default_space(plan, top, min_devices)
        changes: dict[str, Any] = {
            target: tuple(int(v) for v in search[name])
            for name, target in SPACE_FIELDS.items()
            if search.get(name)
        }
        if counts:
            changes["device_counts"] = tuple(c for c in counts if min_devices <= c <= top)
            if not search.get("pipeline"):
                changes["pipeline"] = pipeline_for_counts(changes["device_counts"], space.pipeline)
        if micro:
            changes["micro_batches"] = (int(micro),)
        return replace(space, **changes) if changes else space

    return space_for
