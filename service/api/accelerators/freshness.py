"""How old a catalog price is, as the catalog's answers show it (PriceSchema `age_days`, `stale`).

A price ages from its first day (effective_from); a current one older than PRICE_STALE_AFTER_DAYS is stale, as
in estimates (engine/pricing.freshness) and GET /v1/prices/stale. The ETag of an accelerator leaves both out
(accelerators.ETAG_SCHEMA): it follows the catalog's rows, not the calendar."""

from __future__ import annotations

import datetime as dt
from typing import Any

from flask import current_app, has_app_context

DEFAULT_STALE_AFTER_DAYS = 90


def today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def stale_after_days() -> int:
    if has_app_context():
        return int(current_app.config.get("PRICE_STALE_AFTER_DAYS", DEFAULT_STALE_AFTER_DAYS))
    return DEFAULT_STALE_AFTER_DAYS


def age_days(price: Any) -> int:
    return max((today() - price.effective_from).days, 0)


def is_stale(price: Any) -> bool:
    """Current (no effective_to) and older than the limit; a closed row is history, never stale."""
    return price.effective_to is None and age_days(price) > stale_after_days()
