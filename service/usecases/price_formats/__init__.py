"""Readers of the price lists clouds publish: bytes in, offers out.

Pure: no Flask, no database, no clock. Each reader turns one file into `Offer`s (a price per instance-hour, with
its instance type, region, pricing model and first day), `Refused` rows (a row the reader understood but cannot
use, with the reason) and a count of rows it ignored (not accelerator compute: storage, Windows, dedicated
hosts, …). A file it cannot read raises `PriceFileError` naming the line or JSON path, and nothing is imported.

SOURCE names and the formats they read (tests/fixtures/prices/README.md cites each format's documentation):

- `aws-price-list`: the AWS Price List EC2 offer file, JSON or CSV (on-demand and reserved terms);
- `azure-retail`: Azure Retail Prices API pages (JSON, the `Items` array), consumption, spot and reservations;
- `gcp-billing`: Cloud Billing Catalog API `services.skus.list` pages (JSON), GPU and TPU SKUs;
- `skypilot`: SkyPilot's public catalog, one cloud's `vms.csv` (on-demand and spot; the file's name states its
  cloud and date);
- `csv`: a CSV in the catalog's own columns (service/store/seed/accelerator_prices.csv), for neoclouds and
  private contracts.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ...engine import PRICING_MODELS as PRICING_MODELS

HOURS_PER_YEAR = 8760  # 365 × 24: how AWS and Azure spread a term's price over its hours
# The largest amount a cell may state: a billion USD, above any term's upfront fee or whole-term price a cloud lists
# (a few million USD at most); a larger number is no price (1e30), and the map step bounds the price per
# accelerator-hour itself (usecases/price_bounds.py).
MAX_AMOUNT = Decimal(10**9)
MAX_COUNT_DIGITS = 18  # a count's digits (int() refuses 4,300 or more; a 1-1024 bound applies after)


@dataclass(frozen=True)
class Offer:
    """One price a file lists. `usd_per_hour` is per instance-hour unless `accelerator_id` is given (the
    catalog CSV names the accelerator and prices it per accelerator-hour already)."""

    provider: str
    instance_type: str
    region: str | None
    pricing_model: str
    usd_per_hour: Decimal
    effective_from: dt.date
    where: str  # "line 7" or a JSON path: how the answer names the row
    source: str  # what the catalog row's `source` will say
    has_accelerators: bool = True  # worth reporting when the mapping table lacks its instance type
    accelerator_id: str | None = None
    accelerators_per_instance: int | None = None
    as_of: str | None = None
    covers: str = (
        "instance"  # "accelerator": the price is the device alone, the VM billed apart (GCP GPU SKUs)
    )


@dataclass(frozen=True)
class Refused:
    where: str
    reason: str
    instance_type: str | None = None


@dataclass
class ParsedFile:
    source: str
    name: str
    offers: list[Offer] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    ignored: int = 0
    published: dt.date | None = None  # the file's own date (publication), when it states one


class PriceFileError(ValueError):
    """The file cannot be read as its SOURCE format; `where` names the line or JSON path."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


def text_of(data: bytes) -> str:
    """UTF-8 text (a byte-order mark is dropped); a byte that is not UTF-8 is named by its offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PriceFileError(f"byte {error.start}", "not UTF-8 text") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_json(data: bytes) -> Any:
    """JSON with the line and column of a syntax error (NaN and Infinity are not JSON)."""
    text = text_of(data)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise PriceFileError(f"line {error.lineno} column {error.colno}", f"not JSON ({error.msg})") from None
    except ValueError as error:
        raise PriceFileError("$", str(error)) from None
    except RecursionError:
        raise PriceFileError("$", "nested too deeply") from None


def expect(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    """`value` when it has the JSON type `kind`, else a PriceFileError at `where`."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise PriceFileError(where, f"expected {what}, found {type_name(value)}")
    return value


def member(path: str, key: str) -> str:
    """JSON path of `key` in the object at `path`: `$.products.ABC`, or `$.terms["A.B"]` when the key has dots."""
    if key.replace("_", "a").replace("-", "a").isalnum():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string", int: "a number", float: "a number", list: "an array"}.get(
        type(value), "an object"
    )


def date_of(text: Any, where: str) -> dt.date:
    """The day of an ISO 8601 date or timestamp ('2025-09-01', '2025-09-01T00:00:00Z', '…00.000Z')."""
    if not isinstance(text, str) or len(text) < 10:
        raise PriceFileError(where, f"expected an ISO 8601 date, found {text!r}")
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise PriceFileError(where, f"expected an ISO 8601 date, found {text!r}") from None


def decimal_of(text: Any, where: str) -> Decimal:
    """A price given as a decimal string or a JSON number, exactly."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise PriceFileError(where, f"expected a price, found {type_name(text)}")
    try:
        value = Decimal(str(text).strip())
    except ArithmeticError:
        raise PriceFileError(where, f"expected a price, found {short(text)}") from None
    if not value.is_finite():
        raise PriceFileError(where, f"expected a price, found {short(text)}")
    if abs(value) > MAX_AMOUNT:
        raise PriceFileError(where, f"expected a price of at most {MAX_AMOUNT:,} USD, found {short(text)}")
    return value


def short(value: Any, limit: int = 40) -> str:
    """repr() of a cell, cut to `limit` characters (a 5,000-digit number is named by its start)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}… ({len(str(value)):,} characters)"


def count_of(text: str, where: str) -> int:
    """A count written in ASCII digits ('8'); not '²', '٨' or 5,000 digits, which str.isdigit() accepts."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_COUNT_DIGITS):
        raise PriceFileError(where, f"expected an integer, found {short(text)}")
    return int(text)


def optional_text(value: Any, where: str) -> str | None:
    """A JSON string, or None when absent; anything else (an array, an object, a number) is a PriceFileError."""
    if value is None:
        return None
    return str(expect(value, str, where, "a string"))


Reader = Callable[[bytes, str], ParsedFile]


def readers() -> dict[str, Reader]:
    from . import aws, azure, catalog_csv, gcp, skypilot

    return {
        "aws-price-list": aws.parse,
        "azure-retail": azure.parse,
        "gcp-billing": gcp.parse,
        "skypilot": skypilot.parse,
        "csv": catalog_csv.parse,
    }


SOURCES = ("aws-price-list", "azure-retail", "gcp-billing", "skypilot", "csv")
PROVIDERS = {"aws-price-list": "aws", "azure-retail": "azure", "gcp-billing": "gcp"}  # csv: per row


def parse(source: str, data: bytes, name: str = "file") -> ParsedFile:
    """Read one file of SOURCE format. Raises PriceFileError (malformed) or KeyError (unknown SOURCE)."""
    reader = readers()[source]
    if not data.strip():
        raise PriceFileError("line 1", "the file is empty")
    return reader(data, name)
