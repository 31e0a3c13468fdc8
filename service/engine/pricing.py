"""Which price an estimate uses, shared by the training and inference estimators."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .hardware import Accelerator, Catalog, Price
from .i18n import _, day

# How a price is paid: the catalog rows, price imports and the planner's offers share these (one source).
PRICING_MODELS = ("on-demand", "spot", "reserved-1y", "reserved-3y")


def resolve_price(
    cost: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, bad: Callable[[str, str], None]
) -> tuple[float | None, Any]:
    """USD per accelerator-hour and its source: request override > named provider (its cheapest on-demand
    row) > catalog default (cheapest on-demand over providers) > none (cost fields null, with a note).
    `cost.pricing_model` keeps only that pricing model's rows (then the cheapest of them, of the provider if one
    is named)."""
    override = cost.get("usd_per_accelerator_hour")
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int | float) or override < 0:
            bad(
                "cost.usd_per_accelerator_hour",
                _("Must be a non-negative number of USD per accelerator-hour."),
            )
            return None, None
        return float(override), "override"
    if acc is None:
        return None, None
    rows = catalog.prices.get(acc.id, ())
    provider, pricing_model = cost.get("provider"), cost.get("pricing_model")
    if pricing_model:  # only this pricing model's rows (spot, reserved, on-demand): the planner's offers
        rows = tuple(r for r in rows if r.pricing_model == pricing_model)
        if not rows:
            bad(
                "cost.pricing_model",
                _("No {pricing_model} price for {id} in the catalog.").format(
                    pricing_model=repr(pricing_model), id=acc.id
                ),
            )
            return None, None
    if provider:
        mine = [r for r in rows if r.provider.lower() == str(provider).lower()]
        if not mine:
            listed = ", ".join(sorted({r.provider for r in rows})) or _("none")
            bad(
                "cost.provider",
                _("No {provider} price for {id}; providers listed: {listed}.").format(
                    provider=repr(provider), id=acc.id, listed=listed
                ),
            )
            return None, None
        row: Price | None = min(
            [r for r in mine if r.pricing_model == "on-demand"] or mine, key=lambda r: r.usd_per_hour
        )
    elif pricing_model:
        row = min(rows, key=lambda r: r.usd_per_hour)
    else:
        row = catalog.default_price(acc.id)
    if row is None:
        return None, None
    source = {
        "provider": row.provider,
        "instance_type": row.instance_type,
        "region": row.region,
        "pricing_model": row.pricing_model,
        "as_of": row.as_of,
        "source": row.source,
        **freshness(row, catalog),
    }
    return row.usd_per_hour, source


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
