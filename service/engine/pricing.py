"""Which price an estimate uses, shared by the training and inference estimators."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .hardware import Accelerator, Catalog, Price


def resolve_price(
    cost: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, bad: Callable[[str, str], None]
) -> tuple[float | None, Any]:
    """USD per accelerator-hour and its source: request override > named provider (its cheapest on-demand
    row) > catalog default (cheapest on-demand over providers) > none (cost fields null, with a note)."""
    override = cost.get("usd_per_accelerator_hour")
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int | float) or override < 0:
            bad("cost.usd_per_accelerator_hour", "Must be a non-negative number of USD per accelerator-hour.")
            return None, None
        return float(override), "override"
    if acc is None:
        return None, None
    rows = catalog.prices.get(acc.id, ())
    provider = cost.get("provider")
    if provider:
        mine = [r for r in rows if r.provider.lower() == str(provider).lower()]
        if not mine:
            listed = ", ".join(sorted({r.provider for r in rows})) or "none"
            bad("cost.provider", f"No {provider!r} price for {acc.id}; providers listed: {listed}.")
            return None, None
        row: Price | None = min(
            [r for r in mine if r.pricing_model == "on-demand"] or mine, key=lambda r: r.usd_per_hour
        )
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
    }
    return row.usd_per_hour, source
