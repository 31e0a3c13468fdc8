"""`azure-retail`: pages of the Azure Retail Prices API (`{"Items": [...], "NextPageLink": …}`).

Format: https://learn.microsoft.com/en-us/rest/api/cost-management/retail-prices/azure-retail-prices (each item:
`armSkuName`, `armRegionName`, `retailPrice`, `unitOfMeasure`, `type` Consumption | Reservation |
DevTestConsumption, `reservationTerm` for reservations, `meterName` ending in "Spot" or "Low Priority" for those
meters, `productName` ending in "Windows" for Windows meters, `effectiveStartDate`).

Kept: Virtual Machines meters billed per hour in USD, Linux (no "Windows" product), consumption (on-demand),
spot, and 1- or 3-year reservations (whose retailPrice is the price of the whole term: spread over 8,760 hours a
year). Low-priority, Windows and Dev/Test meters are ignored. An item without `currencyCode` is in its page's
`BillingCurrency` (USD when the page states none); an item whose currencyCode contradicts the page is refused. The instance type is armSkuName without its
"Standard_" prefix (`ND96isr_H100_v5`), as the catalog names Azure sizes.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from . import (
    HOURS_PER_YEAR,
    Offer,
    ParsedFile,
    PriceFileError,
    Refused,
    date_of,
    decimal_of,
    expect,
    load_json,
    optional_text,
)

PROVIDER = "azure"
TERMS = {"1 Year": ("reserved-1y", 1), "3 Years": ("reserved-3y", 3)}


def parse(data: bytes, name: str) -> ParsedFile:
    doc = load_json(data)
    page_currency = None
    if isinstance(doc, list):  # a bare array of items, as some exports save them
        items, base = doc, "$"
    else:
        doc = expect(doc, dict, "$", "an object (an Azure Retail Prices API page)")
        if "Items" not in doc:
            raise PriceFileError("$", "no `Items` array: not an Azure Retail Prices API page")
        items, base = expect(doc["Items"], list, "$.Items", "an array"), "$.Items"
        page_currency = optional_text(doc.get("BillingCurrency"), "$.BillingCurrency")
    parsed = ParsedFile(source="azure-retail", name=name)
    for i, item in enumerate(items):
        where = f"{base}[{i}]"
        item = expect(item, dict, where, "an object (a price item)")
        _item(item, where, parsed, page_currency)
    return parsed


def _text(item: dict[str, Any], name: str, where: str, required: bool = True) -> str:
    value = item.get(name)
    if value is None and not required:
        return ""
    return str(expect(value, str, f"{where}.{name}", "a string"))


def _item(item: dict[str, Any], where: str, parsed: ParsedFile, page_currency: str | None) -> None:
    if _text(item, "serviceName", where, required=False) != "Virtual Machines":
        parsed.ignored += 1
        return
    meter = _text(item, "meterName", where, required=False)
    product = _text(item, "productName", where, required=False)
    kind = _text(item, "type", where)
    if product.endswith("Windows") or "Low Priority" in meter or kind not in ("Consumption", "Reservation"):
        parsed.ignored += 1
        return
    sku = _text(item, "armSkuName", where)
    instance_type = sku.removeprefix("Standard_")
    region = _text(item, "armRegionName", where)
    price = decimal_of(item.get("retailPrice"), f"{where}.retailPrice")
    started = date_of(item.get("effectiveStartDate"), f"{where}.effectiveStartDate")
    refuse = _refusal(item, where, price, kind, page_currency)
    if refuse:
        parsed.refused.append(Refused(where, refuse, instance_type or None))
        return
    if kind == "Reservation":
        model, years = TERMS[_text(item, "reservationTerm", where)]
        hourly = price / (HOURS_PER_YEAR * years)
        how = f"reservation {years} year(s), {price} USD for the term / {HOURS_PER_YEAR * years} h"
    else:
        spot = meter.endswith("Spot") or _text(item, "skuName", where, required=False).endswith("Spot")
        model, hourly, how = ("spot" if spot else "on-demand"), price, ("spot" if spot else "consumption")
    parsed.offers.append(
        Offer(
            provider=PROVIDER,
            instance_type=instance_type,
            region=region or None,
            pricing_model=model,
            usd_per_hour=hourly,
            effective_from=started,
            where=where,
            source=f"Azure Retail Prices API, {region}, {sku} {how} (meterId {item.get('meterId', '?')})",
            has_accelerators=sku.startswith("Standard_N"),  # N-series: the GPU sizes
        )
    )


def _refusal(
    item: dict[str, Any], where: str, price: Decimal, kind: str, page_currency: str | None
) -> str | None:
    """Why the item is refused, or None. An item without currencyCode is in the page's BillingCurrency (the API
    answers `currencyCode=EUR` with a page whose BillingCurrency is EUR), and in USD only when neither says."""
    currency = optional_text(item.get("currencyCode"), f"{where}.currencyCode")
    if currency and page_currency and currency != page_currency:
        return f"priced in {currency}, but the page's BillingCurrency is {page_currency}"
    currency = currency or page_currency or "USD"
    if currency != "USD":
        return f"priced in {currency}, not USD (ask the API for currencyCode='USD')"
    unit = optional_text(item.get("unitOfMeasure"), f"{where}.unitOfMeasure")
    if unit != "1 Hour":
        return f"billed per {unit!r}, not per hour"
    if not _text(item, "armSkuName", where):
        return "no armSkuName"
    if price <= 0:
        return "the price is 0"
    term = optional_text(item.get("reservationTerm"), f"{where}.reservationTerm")
    if kind == "Reservation" and term not in TERMS:
        return f"reservation term {term!r} is neither '1 Year' nor '3 Years'"
    return None
