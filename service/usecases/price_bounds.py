"""What a price row may hold, whoever writes it: an import (dry run and apply alike) or an admin's PUT.

Checked before anything is stored, so that both databases store the same rows and PostgreSQL never refuses one
mid-transaction (docs/formulas.md, "Catalog conventions"):

- text: at most its column's length (service/store/models.py: provider 64, instance type 128, region 64,
  as_of 32) also once lower-cased, as the scenarios' cost table and the engine compare providers ('İ' lower-cases
  to two characters); no NUL or other control character (a NUL cannot be stored in PostgreSQL text); a source at
  most SOURCE_MAX characters (tab and line breaks allowed there);
- provider: not a word the catalog's paths reserve (`history`: GET .../prices/history is the price history);
- price: 0 < USD per accelerator-hour <= MAX_USD_PER_HOUR;
- first day: on or after EARLIEST, and at most MAX_DAYS_AHEAD days after today (an import refuses any day after
  today: import it on or after that day).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from decimal import Decimal

from ..store.models import AcceleratorPrice

# 100,000 USD per accelerator-hour: about 30 times the dearest on-demand accelerator-hour any cloud lists (a few
# to ~15 USD in 2025-2026); anything larger is a unit error (a term's price, cents, another currency), not a price.
MAX_USD_PER_HOUR = Decimal(100_000)
EARLIEST = dt.date(2000, 1, 1)  # no cloud rented accelerators before; an older day is a typo or a 0000 date
MAX_DAYS_AHEAD = 366  # an admin may announce a price up to a year ahead
SOURCE_MAX = 2000
RESERVED_PROVIDERS = frozenset({"history"})
_FREE_TEXT_CONTROLS = frozenset("\t\n\r")


def column_length(name: str) -> int:
    """The length of accelerator_prices' string column `name`."""
    length = getattr(AcceleratorPrice.__table__.c[name].type, "length", None)
    assert isinstance(length, int), name
    return length


def text_problem(value: str, limit: int, *, lower: bool = False, free_text: bool = False) -> str | None:
    """Why `value` cannot be stored in a column of `limit` characters (compared to providers lower-cased too
    when `lower`), or None. Control characters are refused (tab and line breaks allowed in `free_text`)."""
    for char in value:
        if unicodedata.category(char) == "Cc" and not (free_text and char in _FREE_TEXT_CONTROLS):
            return (
                "contains a NUL character" if char == "\x00" else f"contains the control character {char!r}"
            )
    if len(value) > limit:
        return f"is {len(value)} characters long, more than {limit}"
    if lower and len(value.lower()) > limit:
        return f"is {len(value.lower())} characters long once lower-cased, more than {limit}"
    return None


def provider_problem(provider: str) -> str | None:
    found = text_problem(provider, column_length("provider"), lower=True)
    if found is None and provider.strip().lower() in RESERVED_PROVIDERS:
        return f"{provider!r} is a reserved word of the catalog's paths, not a provider name"
    return found


def row_text_problems(row: dict[str, str | None]) -> list[tuple[str, str]]:
    """(column, why) for each text of a price row (provider, instance_type, region, as_of, source) that cannot
    be stored; absent and None values pass."""
    problems = []
    for column, value in row.items():
        if value is None:
            continue
        if column == "provider":
            why = provider_problem(value)
        elif column == "source":
            why = text_problem(value, SOURCE_MAX, free_text=True)
        else:
            why = text_problem(value, column_length(column))
        if why:
            problems.append((column, why))
    return problems


def latest_start(today: dt.date) -> dt.date:
    return today + dt.timedelta(days=MAX_DAYS_AHEAD)


def date_problem(day: dt.date, today: dt.date, latest: dt.date | None = None) -> str | None:
    """Why a price cannot start on `day` (before EARLIEST, or after `latest`: by default today + MAX_DAYS_AHEAD)."""
    latest = latest or latest_start(today)
    if day < EARLIEST:
        return f"{day.isoformat()} is before {EARLIEST.isoformat()}"
    if day > latest:
        return f"{day.isoformat()} is after {latest.isoformat()}"
    return None
