"""`gcp-billing`: pages of the Cloud Billing Catalog API's `services.skus.list` (`{"skus": [...]}`).

Format: https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list and the Sku resource,
https://cloud.google.com/billing/docs/reference/rest/v1/services.skus#Sku (`description`, `category.resourceGroup`
and `category.usageType`, `serviceRegions`, `pricingInfo[].pricingExpression` with `usageUnit` and
`tieredRates[].unitPrice` as `units` + `nanos` / 1e9, `pricingInfo[].effectiveTime`).

Kept: SKUs of resource group GPU or TPU billed per hour in USD, usage types OnDemand (on-demand), Preemptible
(spot), Commit1Yr and Commit3Yr (reserved-1y, reserved-3y), one offer per service region. A GPU SKU prices one
GPU (a TPU SKU one chip): the machine's vCPUs and memory are billed by other SKUs and not included. The
instance type is the device named by the description, without its usage prefix ("Spot Preemptible ",
"Commitment v1: ") and region suffix (" running in Americas"): "Nvidia Tesla A100 GPU".
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from . import (
    MAX_AMOUNT,
    Offer,
    ParsedFile,
    PriceFileError,
    Refused,
    date_of,
    expect,
    load_json,
    optional_text,
    short,
)

PROVIDER = "gcp"
USAGE_TYPES = {
    "OnDemand": "on-demand",
    "Preemptible": "spot",
    "Commit1Yr": "reserved-1y",
    "Commit3Yr": "reserved-3y",
}
_PREFIX = re.compile(r"^(?:Spot Preemptible |Preemptible |Commitment v\d+: |Reserved )+", re.IGNORECASE)
_SUFFIX = re.compile(r"\s+(?:running\s+)?in\s+.*$|\s+for\s+\d+\s+years?$", re.IGNORECASE)


def device_name(description: str) -> str:
    """'Spot Preemptible Nvidia L4 GPU running in Americas' → 'Nvidia L4 GPU'."""
    return _SUFFIX.sub("", _PREFIX.sub("", description.strip())).strip()


def parse(data: bytes, name: str) -> ParsedFile:
    doc = load_json(data)
    if isinstance(doc, list):
        skus, base = doc, "$"
    else:
        doc = expect(doc, dict, "$", "an object (a services.skus.list page)")
        if "skus" not in doc:
            raise PriceFileError("$", "no `skus` array: not a Cloud Billing Catalog SKU list")
        skus, base = expect(doc["skus"], list, "$.skus", "an array"), "$.skus"
    parsed = ParsedFile(source="gcp-billing", name=name)
    for i, sku in enumerate(skus):
        where = f"{base}[{i}]"
        _sku(expect(sku, dict, where, "an object (a SKU)"), where, parsed)
    return parsed


def _sku(sku: dict[str, Any], where: str, parsed: ParsedFile) -> None:
    category = expect(sku.get("category"), dict, f"{where}.category", "an object")
    group = optional_text(category.get("resourceGroup"), f"{where}.category.resourceGroup")
    if group not in ("GPU", "TPU"):
        parsed.ignored += 1
        return
    usage = optional_text(category.get("usageType"), f"{where}.category.usageType")
    if usage not in USAGE_TYPES:
        parsed.ignored += 1
        return
    description = expect(sku.get("description"), str, f"{where}.description", "a string")
    device = device_name(description)
    regions = expect(sku.get("serviceRegions", []), list, f"{where}.serviceRegions", "an array")
    infos = expect(sku.get("pricingInfo"), list, f"{where}.pricingInfo", "an array")
    if not infos:
        parsed.refused.append(Refused(f"{where}.pricingInfo", "no price", device))
        return
    info = expect(infos[0], dict, f"{where}.pricingInfo[0]", "an object")
    expression = expect(
        info.get("pricingExpression"), dict, f"{where}.pricingInfo[0].pricingExpression", "an object"
    )
    price, refusal = _hourly_price(expression, f"{where}.pricingInfo[0].pricingExpression")
    if refusal or price is None:
        parsed.refused.append(Refused(where, refusal or "no price", device))
        return
    started = date_of(info.get("effectiveTime"), f"{where}.pricingInfo[0].effectiveTime")
    if not regions:
        parsed.refused.append(Refused(f"{where}.serviceRegions", "no service region", device))
        return
    sku_id = sku.get("skuId", "?")
    for j, region in enumerate(regions):
        region = expect(region, str, f"{where}.serviceRegions[{j}]", "a string")
        parsed.offers.append(
            Offer(
                provider=PROVIDER,
                instance_type=device,
                region=region,
                pricing_model=USAGE_TYPES[usage],
                usd_per_hour=price,
                effective_from=started,
                where=where,
                source=f"Cloud Billing Catalog SKU {sku_id} ({description}), {region}; device only, VM billed apart",
                covers="accelerator" if group == "GPU" else "instance",  # a TPU chip-hour includes its host
            )
        )


def _hourly_price(expression: dict[str, Any], where: str) -> tuple[Decimal | None, str | None]:
    unit = optional_text(expression.get("usageUnit"), f"{where}.usageUnit") or "h"
    if unit != "h":
        return None, f"priced per {unit!r}, not per hour"
    rates = expect(expression.get("tieredRates"), list, f"{where}.tieredRates", "an array")
    if not rates:
        return None, "no tiered rate"
    first = None
    for k, rate in enumerate(rates):
        rate = expect(rate, dict, f"{where}.tieredRates[{k}]", "an object")
        starts_at = _amount(rate.get("startUsageAmount"), f"{where}.tieredRates[{k}].startUsageAmount")
        if first is None or starts_at == 0:
            first = (k, rate)
            if starts_at == 0:
                break
    assert first is not None
    k, rate = first
    money = expect(rate.get("unitPrice"), dict, f"{where}.tieredRates[{k}].unitPrice", "an object")
    money_where = f"{where}.tieredRates[{k}].unitPrice"
    currency = optional_text(money.get("currencyCode"), f"{money_where}.currencyCode") or "USD"
    if currency != "USD":
        return None, f"priced in {currency}, not USD"
    units = money.get("units", "0")
    nanos = money.get("nanos", 0)
    digits = str(units).removeprefix("-")
    if (
        not isinstance(units, str | int)
        or isinstance(units, bool)
        or not (digits.isascii() and digits.isdigit())
        or abs(Decimal(digits)) > MAX_AMOUNT
    ):  # a Money's units: an int64 as a decimal string; anything past MAX_AMOUNT is no price
        raise PriceFileError(
            f"{money_where}.units", f"expected an integer of at most {MAX_AMOUNT:,}, found {short(units)}"
        )
    if not isinstance(nanos, int) or isinstance(nanos, bool) or abs(nanos) >= 10**9:
        raise PriceFileError(
            f"{money_where}.nanos",
            f"expected an integer between -999,999,999 and 999,999,999, found {short(nanos)}",
        )
    price = Decimal(int(str(units))) + Decimal(nanos) / Decimal(10**9)
    if price <= 0:
        return None, "the price is 0"
    return price, None


def _amount(value: Any, where: str) -> Decimal:
    """A tier's startUsageAmount: a number, or a decimal string (absent or null: 0)."""
    if value is None:
        return Decimal(0)
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ArithmeticError
        amount = Decimal(str(value).strip())
    except ArithmeticError:
        raise PriceFileError(where, f"expected a number, found {short(value)}") from None
    if not amount.is_finite():
        raise PriceFileError(where, f"expected a number, found {short(value)}")
    return amount
