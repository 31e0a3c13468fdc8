"""`csv`: prices in the catalog's own columns, one accelerator-hour price per row (neoclouds, private contracts).

The columns of service/store/seed/accelerator_prices.csv, plus an optional `effective_from` (ISO date):

    accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,
    usd_per_accelerator_hour,as_of,source[,effective_from]

Required: accelerator_id, provider, usd_per_accelerator_hour. pricing_model defaults to on-demand. A row
without effective_from starts on the first day of its `as_of` period ('2025-H2' → 2025-07-01, '2026-04' →
2026-04-01, '2025' → 2025-01-01); a row with neither is refused. The seed file itself imports as it stands.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re

from . import PRICING_MODELS, Offer, ParsedFile, PriceFileError, Refused, count_of, decimal_of, text_of

REQUIRED = ("accelerator_id", "provider", "usd_per_accelerator_hour")
OPTIONAL = (
    "instance_type", "accelerators_per_instance", "region", "pricing_model", "as_of", "source", "effective_from",
)  # fmt: skip


def start_of_period(as_of: str) -> dt.date | None:
    """First day of the period an `as_of` names ('2025-H2', '2026-04', '2025', '2024-H1-2025'), else None."""
    m = re.match(r"([0-9]{4})(?:-(H[12]|[0-9]{2})(?![0-9]))?", as_of or "")
    if not m:
        return None
    year, part = int(m.group(1)), m.group(2)
    if year < 1:  # '0000': no such year (price_bounds refuses the years before 2000 in any case)
        return None
    if part == "H2":
        return dt.date(year, 7, 1)
    if part and part.isdigit():
        return dt.date(year, int(part), 1) if 1 <= int(part) <= 12 else None
    return dt.date(year, 1, 1)


def parse(data: bytes, name: str) -> ParsedFile:
    reader = csv.reader(io.StringIO(text_of(data), newline=""))
    try:
        header = next(reader, [])
        header = [h.strip() for h in header]
        unknown = [h for h in header if h not in REQUIRED + OPTIONAL]
        if unknown:
            raise PriceFileError(
                "line 1", f"unknown column(s) {', '.join(unknown)}; columns: {', '.join(REQUIRED + OPTIONAL)}"
            )
        missing = [h for h in REQUIRED if h not in header]
        if missing:
            raise PriceFileError("line 1", f"missing column(s) {', '.join(missing)}")
        parsed = ParsedFile(source="csv", name=name)
        for row in reader:
            if not row or not any(cell.strip() for cell in row):
                continue
            line = reader.line_num
            if len(row) != len(header):
                raise PriceFileError(f"line {line}", f"{len(row)} fields where the header has {len(header)}")
            _row(dict(zip(header, (cell.strip() for cell in row), strict=True)), line, parsed)
    except csv.Error as error:
        raise PriceFileError(f"line {reader.line_num}", f"not CSV ({error})") from None
    if not parsed.offers and not parsed.refused:
        raise PriceFileError("line 2", "no price rows")
    return parsed


def _row(record: dict[str, str], line: int, parsed: ParsedFile) -> None:
    where = f"line {line}"
    price = decimal_of(record["usd_per_accelerator_hour"], f"{where}, usd_per_accelerator_hour")
    count = count_of(record.get("accelerators_per_instance") or "1", f"{where}, accelerators_per_instance")
    instance_type = record.get("instance_type") or None
    model = record.get("pricing_model") or "on-demand"
    for column in REQUIRED:
        if not record[column]:
            parsed.refused.append(Refused(where, f"{column} is empty", instance_type))
            return
    if model not in PRICING_MODELS:
        parsed.refused.append(
            Refused(where, f"pricing_model {model!r} is not one of {', '.join(PRICING_MODELS)}")
        )
        return
    if record.get("effective_from"):
        try:
            starts = dt.date.fromisoformat(record["effective_from"])
        except ValueError:
            raise PriceFileError(
                f"{where}, effective_from", f"expected an ISO date, found {record['effective_from']!r}"
            ) from None
    else:
        found = start_of_period(record.get("as_of", ""))
        if found is None:
            parsed.refused.append(
                Refused(where, "no effective_from, and as_of names no period", instance_type)
            )
            return
        starts = found
    if price <= 0:
        parsed.refused.append(Refused(where, "the price is 0 or negative", instance_type))
        return
    if not 1 <= count <= 1024:
        parsed.refused.append(Refused(where, "accelerators_per_instance must be 1-1024", instance_type))
        return
    parsed.offers.append(
        Offer(
            provider=record["provider"],
            instance_type=instance_type or "",
            region=record.get("region") or None,
            pricing_model=model,
            usd_per_hour=price,
            effective_from=starts,
            where=where,
            source=record.get("source") or f"{parsed.name} {where}",
            accelerator_id=record["accelerator_id"],
            accelerators_per_instance=count,
            as_of=record.get("as_of") or None,
        )
    )
