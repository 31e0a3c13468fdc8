"""Which price an estimate uses, shared by the training and inference estimators."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .hardware import Accelerator, Catalog, Price, cheapest_first, price_rows
from .i18n import _, day
from .offers import NEUTRAL, Terms, terms_of

# How a price is paid: the catalog rows, price imports and the planner's offers share these (one source).
PRICING_MODELS = ("on-demand", "spot", "reserved-1y", "reserved-3y")


# The largest price a request may give, USD per accelerator-hour: above any listed part (about $100/h) by two
# orders of magnitude; a larger figure ($1e9/h) is a typo, not a price (the API's CostSchema states the same bound).
MAX_PRICE_OVERRIDE = 10_000.0


def resolve_price(
    cost: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, bad: Callable[[str, str], None]
) -> tuple[float | None, Any]:
    """USD per accelerator-hour and its source (resolve_offer without the terms)."""
    usd, source, _terms = resolve_offer(cost, acc, catalog, bad)
    return usd, source


def resolve_offer(
    cost: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, bad: Callable[[str, str], None]
) -> tuple[float | None, Any, Terms]:
    """USD per accelerator-hour, its source and what the offer sells (engine/offers.py): request override > the
    cheapest row the price rule keeps (hardware.price_rows: one pricing model, `cost.region`, instance prices unless
    `cost.covers` is "accelerator", the newest row of each offer), of `cost.provider` and `cost.instance_type` when
    named > none (cost fields null, with a note). A named provider with no row of the default pricing model is
    priced on its rows of the first pricing model it lists."""
    override = cost.get("usd_per_accelerator_hour")
    if override is not None:
        if not valid_override(override):
            bad(
                "cost.usd_per_accelerator_hour",
                _("Must be a number of USD per accelerator-hour, more than 0 and at most {most:g}.").format(
                    most=MAX_PRICE_OVERRIDE
                ),
            )
            return None, None, NEUTRAL
        return float(override), "override", NEUTRAL
    if acc is None:
        return None, None, NEUTRAL
    row = _pick(cost, acc, catalog, bad)
    if row is None:
        return None, None, NEUTRAL
    terms = terms_of(row, acc.id)
    return row.usd_per_hour, source_of(row, terms, catalog), terms


def priced_cost(
    request: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, bad: Callable[[str, str], None]
) -> Mapping[str, Any]:
    """The request's `cost` with its `prices` applied: `prices[<the estimate's accelerator>]` prices it as
    `cost.usd_per_accelerator_hour` would (which wins when both are given); every id must be a catalog accelerator."""
    cost = request.get("cost") or {}
    given = request.get("prices") or {}
    for acc_id in given:
        if str(acc_id) not in catalog.accelerators and str(acc_id) not in catalog.unusable:
            bad(f"prices.{acc_id}", catalog.missing_message(acc_id))
    if acc is None or acc.id not in given or cost.get("usd_per_accelerator_hour") is not None:
        return cost
    usd = given[acc.id]
    if not valid_override(usd):
        bad(
            f"prices.{acc.id}",
            _("Must be a number of USD per accelerator-hour, more than 0 and at most {most:g}.").format(
                most=MAX_PRICE_OVERRIDE
            ),
        )
        return cost
    return {**cost, "usd_per_accelerator_hour": usd}


def valid_override(value: Any) -> bool:
    """A price a request may give: a number above 0 and at most MAX_PRICE_OVERRIDE."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 < value <= MAX_PRICE_OVERRIDE


def source_of(row: Price, terms: Terms, catalog: Catalog) -> dict[str, Any]:
    """The price source an answer states: the row, what it sells and how fresh it is."""
    return {
        "provider": row.provider,
        "instance_type": row.instance_type,
        "region": row.region,
        "pricing_model": row.pricing_model,
        "as_of": row.as_of,
        "source": row.source,
        "covers": row.covers,
        "accelerators_per_instance": terms.accelerators_per_instance,
        "max_accelerators": terms.max_accelerators,
        "billing_increment_seconds": terms.billing_increment_s,
        "minimum_billed_seconds": terms.minimum_billed_s,
        "startup_seconds": terms.startup_s,
        "interruptions_per_hour": terms.interruptions_per_hour,
        "scale_out": terms.scale_out,
        **freshness(row, catalog),
    }


def _pick(
    cost: Mapping[str, Any], acc: Accelerator, catalog: Catalog, bad: Callable[[str, str], None]
) -> Price | None:
    every = catalog.prices.get(acc.id, ())
    provider, pricing_model = cost.get("provider"), cost.get("pricing_model")
    region, instance_type = cost.get("region"), cost.get("instance_type")
    covers = str(cost.get("covers") or "instance")
    rows = price_rows(every, pricing_model=pricing_model, region=region, covers=covers)
    if pricing_model and not rows and not region:
        bad(
            "cost.pricing_model",
            _("No {pricing_model} price for {id} in the catalog.").format(
                pricing_model=repr(pricing_model), id=acc.id
            ),
        )
        return None
    if provider and not pricing_model:  # the provider's own pricing model when it lists no on-demand row
        mine = [r for r in rows if r.provider.lower() == str(provider).lower()]
        if not mine:
            listed_models = [m for m in PRICING_MODELS if any(r.provider.lower() == str(provider).lower()
                                                                and r.pricing_model == m for r in every)]  # fmt: skip
            if listed_models:
                rows = price_rows(every, pricing_model=listed_models[0], region=region, covers=covers)
    if region and not rows:
        listed = ", ".join(sorted({r.region for r in every if r.region})) or _("none")
        bad(
            "cost.region",
            _("No price for {id} in region {region}; regions listed: {listed}.").format(
                id=acc.id, region=repr(region), listed=listed
            ),
        )
        return None
    if provider:
        rows = [r for r in rows if r.provider.lower() == str(provider).lower()]
        if not rows:
            listed = ", ".join(sorted({r.provider for r in every})) or _("none")
            bad(
                "cost.provider",
                _("No {provider} price for {id}; providers listed: {listed}.").format(
                    provider=repr(provider), id=acc.id, listed=listed
                ),
            )
            return None
    if instance_type:
        kept = [r for r in rows if (r.instance_type or "").lower() == str(instance_type).lower()]
        if not kept:
            listed = ", ".join(sorted({r.instance_type for r in rows if r.instance_type})) or _("none")
            bad(
                "cost.instance_type",
                _("No price for {id} on instance type {value}; instance types listed: {listed}.").format(
                    id=acc.id, value=repr(instance_type), listed=listed
                ),
            )
            return None
        rows = kept
    return min(rows, key=cheapest_first) if rows else None


def freshness(row: Price, catalog: Catalog) -> dict[str, Any]:
    """The price's first day, its age in days on the catalog's `today`, and whether that is past the
    catalog's `stale_after_days` (then with a note). Unknown (null) when the catalog carries no day."""
    if row.effective_from is None or catalog.today is None:
        return {"effective_from": row.effective_from.isoformat() if row.effective_from else None,
                "age_days": None, "stale": None}  # fmt: skip
    age = max((catalog.today - row.effective_from).days, 0)
    limit = catalog.stale_after_days
    stale = limit is not None and age > limit
    out: dict[str, Any] = {"effective_from": row.effective_from.isoformat(), "age_days": age, "stale": stale}
    if stale:
        out["note"] = _(
            "This price took effect on {value}, more than {limit} days before the day priced: it may "
            "no longer be current. GET /v1/prices/stale lists such prices for an admin to refresh; "
            "cost.usd_per_accelerator_hour prices an estimate with a figure of your own."
        ).format(value=day(row.effective_from), limit=limit)
    return out


def describe(source: Any) -> str:
    """A price source as the details rows quote it: the row without its age (which changes every day)."""
    if isinstance(source, dict):
        return str({k: v for k, v in source.items() if k != "age_days"})
    return str(source)
