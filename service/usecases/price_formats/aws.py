"""`aws-price-list`: the AWS Price List EC2 offer file, JSON or CSV.

Format: https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-service-price-list-file-for-services.html
(JSON: `products` by SKU with `attributes`, `terms.OnDemand|Reserved` by SKU then offer-term code, each with
`priceDimensions`; CSV: five metadata rows, the column names on line 6, one row per price dimension).

Kept: compute instances running Linux on shared tenancy with no pre-installed software, capacity status `Used`
(the plain on-demand box price), per region (`regionCode`). Reserved terms: the standard offering class, one
purchase option per term length (No Upfront, else Partial, else All Upfront), as an effective hourly rate:
hourly fee + upfront fee / hours in the term (8,760 a year). Convertible reservations, savings plans, Windows,
dedicated hosts and capacity-reservation rows are ignored.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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
    member,
    optional_text,
    text_of,
)

PROVIDER = "aws"
COMPUTE_FAMILIES = {"Compute Instance", "Compute Instance (bare metal)"}
ACCELERATED_FAMILIES = {"GPU instance", "Machine Learning ASIC Instances", "FPGA Instances"}
PURCHASE_PREFERENCE = ("No Upfront", "Partial Upfront", "All Upfront")
TERM_MODELS = {"1yr": "reserved-1y", "3yr": "reserved-3y"}
TERM_HOURS = {"1yr": HOURS_PER_YEAR, "3yr": 3 * HOURS_PER_YEAR}
READ_ATTRIBUTES = (
    "operatingSystem", "tenancy", "preInstalledSw", "capacitystatus", "licenseModel", "marketoption", "instanceType",
    "regionCode", "gpu", "instanceFamily",
)  # fmt: skip


@dataclass(frozen=True)
class Product:
    instance_type: str
    region: str
    has_accelerators: bool


def _product(attributes: dict[str, Any], family: str | None) -> Product | None | str:
    """The product when its prices belong in the catalog; None when it is ignored; a reason when refused."""
    if family not in COMPUTE_FAMILIES:
        return None
    wanted = {
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
    }
    for name, value in wanted.items():
        if attributes.get(name, value) != value:
            return None
    if attributes.get("marketoption", "OnDemand") != "OnDemand":
        return None
    instance_type = attributes.get("instanceType")
    if not isinstance(instance_type, str) or not instance_type:
        return "no instanceType attribute"
    region = attributes.get("regionCode")
    if not isinstance(region, str) or not region:
        return "no regionCode attribute (an offer file older than the regionCode attribute)"
    gpus = str(attributes.get("gpu") or "0").strip()
    accelerated = gpus not in ("", "0", "NA") or attributes.get("instanceFamily") in ACCELERATED_FAMILIES
    return Product(instance_type, region, accelerated)


def parse(data: bytes, name: str) -> ParsedFile:
    if data.lstrip()[:1] == b"{":
        return parse_json(data, name)
    return parse_csv(data, name)


# --- JSON ---------------------------------------------------------------------------------------------------


def parse_json(data: bytes, name: str) -> ParsedFile:
    doc = expect(load_json(data), dict, "$", "an object (the offer file)")
    if "products" not in doc or "terms" not in doc:
        raise PriceFileError("$", "not an AWS Price List offer file: it has no `products` and `terms`")
    offer_code = doc.get("offerCode")
    if offer_code is not None and offer_code != "AmazonEC2":
        raise PriceFileError(
            "$.offerCode", f"{offer_code!r}: only the AmazonEC2 offer file lists instance prices"
        )
    parsed = ParsedFile(source="aws-price-list", name=name)
    if "publicationDate" in doc:
        parsed.published = date_of(doc["publicationDate"], "$.publicationDate")
    products = _json_products(expect(doc["products"], dict, "$.products", "an object"), parsed)
    terms = expect(doc["terms"], dict, "$.terms", "an object")
    for term_type in terms:
        if term_type not in ("OnDemand", "Reserved"):
            continue
        by_sku = expect(terms[term_type], dict, f"$.terms.{term_type}", "an object")
        for sku, offers in by_sku.items():
            where = member(f"$.terms.{term_type}", sku)
            offers = expect(offers, dict, where, "an object")
            product = products.get(sku)
            if product is None:
                parsed.ignored += len(offers)
                continue
            terms_of = [_json_term(term, member(where, code)) for code, term in offers.items()]
            if term_type == "OnDemand":
                for term in terms_of:
                    _on_demand(term, product, parsed)
            else:
                _reserved(terms_of, product, parsed)
    return parsed


def _json_products(products: dict[str, Any], parsed: ParsedFile) -> dict[str, Product]:
    kept: dict[str, Product] = {}
    for sku, product in products.items():
        where = member("$.products", sku)
        product = expect(product, dict, where, "an object")
        attributes = expect(product.get("attributes", {}), dict, f"{where}.attributes", "an object")
        for name in READ_ATTRIBUTES:  # the filter compares them with strings: an array or object is no value
            optional_text(attributes.get(name), member(f"{where}.attributes", name))
        found = _product(attributes, optional_text(product.get("productFamily"), f"{where}.productFamily"))
        if found is None:
            parsed.ignored += 1
        elif isinstance(found, str):
            parsed.refused.append(Refused(where, found, attributes.get("instanceType")))
        else:
            kept[sku] = found
    return kept


@dataclass(frozen=True)
class Term:
    """One offer term of a SKU: its dimensions (unit, USD price, where), effective date and attributes."""

    where: str
    effective: Any
    attributes: dict[str, str]
    dimensions: tuple[tuple[str, Decimal | None, str, str], ...]  # unit, price (None: not USD), where, text


def _json_term(term: Any, where: str) -> Term:
    term = expect(term, dict, where, "an object (an offer term)")
    dims = expect(term.get("priceDimensions"), dict, f"{where}.priceDimensions", "an object")
    dimensions = []
    for rate, dim in dims.items():
        dim_where = member(f"{where}.priceDimensions", rate)
        dim = expect(dim, dict, dim_where, "an object")
        prices = expect(dim.get("pricePerUnit"), dict, f"{dim_where}.pricePerUnit", "an object")
        usd = decimal_of(prices["USD"], f"{dim_where}.pricePerUnit.USD") if "USD" in prices else None
        dimensions.append((str(dim.get("unit", "")), usd, dim_where, str(dim.get("description", ""))))
    attributes = expect(term.get("termAttributes", {}), dict, f"{where}.termAttributes", "an object")
    effective = (term.get("effectiveDate"), f"{where}.effectiveDate")
    return Term(where, effective, {k: str(v) for k, v in attributes.items()}, tuple(dimensions))


def _hourly(term: Term) -> tuple[Decimal | None, Decimal, str | None]:
    """(hourly USD, upfront USD, why not usable)."""
    hourly: Decimal | None = None
    upfront = Decimal(0)
    for unit, usd, _where, _text in term.dimensions:
        if usd is None:
            return None, upfront, "no USD price"
        if unit == "Hrs":
            hourly = usd if hourly is None else min(hourly, usd)
        elif unit == "Quantity":
            upfront += usd
        else:
            return None, upfront, f"priced per {unit!r}, not per hour"
    if hourly is None and upfront == 0:
        return None, upfront, "no hourly price"
    return hourly or Decimal(0), upfront, None


def _on_demand(term: Term, product: Product, parsed: ParsedFile) -> None:
    hourly, _upfront, why = _hourly(term)
    if why or hourly is None:
        parsed.refused.append(Refused(term.where, why or "no hourly price", product.instance_type))
        return
    if hourly <= 0:
        parsed.refused.append(Refused(term.where, "the hourly price is 0", product.instance_type))
        return
    value, where = term.effective
    parsed.offers.append(
        Offer(
            provider=PROVIDER,
            instance_type=product.instance_type,
            region=product.region,
            pricing_model="on-demand",
            usd_per_hour=hourly,
            effective_from=date_of(value, where),
            where=term.where,
            source=f"AWS Price List (EC2 offer file), {product.region}, on-demand Linux {product.instance_type}",
            has_accelerators=product.has_accelerators,
        )
    )


def _reserved(terms: Iterable[Term], product: Product, parsed: ParsedFile) -> None:
    """One offer per term length: the standard class, the preferred purchase option."""
    chosen: dict[str, Term] = {}
    for term in terms:
        length = term.attributes.get("LeaseContractLength")
        option = term.attributes.get("PurchaseOption")
        if term.attributes.get("OfferingClass") != "standard" or length not in TERM_MODELS:
            parsed.ignored += 1
            continue
        if option not in PURCHASE_PREFERENCE:
            parsed.ignored += 1
            continue
        current = chosen.get(length)
        if current is None or PURCHASE_PREFERENCE.index(option) < PURCHASE_PREFERENCE.index(
            current.attributes["PurchaseOption"]
        ):
            if current is not None:
                parsed.ignored += 1
            chosen[length] = term
        else:
            parsed.ignored += 1
    for length, term in sorted(chosen.items()):
        hourly, upfront, why = _hourly(term)
        if why or hourly is None:
            parsed.refused.append(Refused(term.where, why or "no hourly price", product.instance_type))
            continue
        rate = hourly + upfront / TERM_HOURS[length]
        if rate <= 0:
            parsed.refused.append(
                Refused(term.where, "the effective hourly rate is 0", product.instance_type)
            )
            continue
        option = term.attributes["PurchaseOption"]
        value, where = term.effective
        parsed.offers.append(
            Offer(
                provider=PROVIDER,
                instance_type=product.instance_type,
                region=product.region,
                pricing_model=TERM_MODELS[length],
                usd_per_hour=rate,
                effective_from=date_of(value, where),
                where=term.where,
                source=(
                    f"AWS Price List (EC2 offer file), {product.region}, reserved {length} standard {option} "
                    f"Linux {product.instance_type} (hourly {hourly} + upfront {upfront} / {TERM_HOURS[length]} h)"
                ),
                has_accelerators=product.has_accelerators,
            )
        )


# --- CSV ----------------------------------------------------------------------------------------------------

METADATA = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")
COLUMNS = (
    "SKU", "OfferTermCode", "TermType", "EffectiveDate", "Unit", "PricePerUnit", "Currency",
    "LeaseContractLength", "PurchaseOption", "OfferingClass", "Product Family", "Instance Type", "Tenancy",
    "Operating System", "Pre Installed S/W", "CapacityStatus", "Region Code",
)  # fmt: skip
CSV_ATTRIBUTES = {  # CSV column -> JSON attribute name (the product filter reads the JSON names)
    "Instance Type": "instanceType",
    "Tenancy": "tenancy",
    "Operating System": "operatingSystem",
    "Pre Installed S/W": "preInstalledSw",
    "CapacityStatus": "capacitystatus",
    "License Model": "licenseModel",
    "MarketOption": "marketoption",
    "Region Code": "regionCode",
    "GPU": "gpu",
    "Instance Family": "instanceFamily",
}


def _rows(text: str) -> Iterator[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as error:
        raise PriceFileError(f"line {reader.line_num}", f"not CSV ({error})") from None


def parse_csv(data: bytes, name: str) -> ParsedFile:
    rows = _rows(text_of(data))
    parsed = ParsedFile(source="aws-price-list", name=name)
    line = 0
    for expected in METADATA:
        line, row = next(rows, (line + 1, []))
        if not row or row[0] != expected:
            raise PriceFileError(
                f"line {line}",
                f"expected the offer file's metadata row {expected!r} (a CSV offer file starts with "
                "FormatVersion, Disclaimer, Publication Date, Version, OfferCode)",
            )
        if expected == "Publication Date" and len(row) > 1:
            parsed.published = date_of(row[1], f"line {line}")
        if expected == "OfferCode" and len(row) > 1 and row[1] != "AmazonEC2":
            raise PriceFileError(
                f"line {line}", f"{row[1]!r}: only the AmazonEC2 offer file lists instance prices"
            )
    line, header = next(rows, (line + 1, []))
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise PriceFileError(f"line {line}", f"missing column(s) {', '.join(missing)}")
    index = {column: i for i, column in enumerate(header)}
    terms: dict[tuple[str, str, str], list[tuple[int, dict[str, str]]]] = {}
    products: dict[str, Product | None | str] = {}
    for line, row in rows:
        if not row:
            continue
        if len(row) != len(header):
            raise PriceFileError(f"line {line}", f"{len(row)} fields where the header has {len(header)}")
        record = {column: row[i] for column, i in index.items()}
        sku = record["SKU"]
        if sku not in products:
            attributes = {json_name: record[c] for c, json_name in CSV_ATTRIBUTES.items() if c in record}
            products[sku] = _product(attributes, record["Product Family"])
        terms.setdefault((record["TermType"], sku, record["OfferTermCode"]), []).append((line, record))
    for (term_type, sku, _code), lines in terms.items():
        product = products[sku]
        first_line = lines[0][0]
        if product is None or term_type not in ("OnDemand", "Reserved"):
            parsed.ignored += 1
            continue
        if isinstance(product, str):
            parsed.refused.append(Refused(f"line {first_line}", product, lines[0][1].get("Instance Type")))
            continue
        term = _csv_term(lines)
        if term_type == "OnDemand":
            _on_demand(term, product, parsed)
        else:
            _reserved([term], product, parsed)
    _one_reserved_option_per_length(parsed)
    return parsed


def _csv_term(lines: list[tuple[int, dict[str, str]]]) -> Term:
    first_line, first = lines[0]
    where = f"line {first_line}"
    dimensions = []
    for line, record in lines:
        usd = (
            decimal_of(record["PricePerUnit"], f"line {line}, PricePerUnit")
            if record["Currency"] == "USD"
            else None
        )
        dimensions.append((record["Unit"], usd, f"line {line}", record.get("PriceDescription", "")))
    attributes = {
        k: first[k] for k in ("LeaseContractLength", "PurchaseOption", "OfferingClass") if first.get(k)
    }
    return Term(where, (first["EffectiveDate"], f"{where}, EffectiveDate"), attributes, tuple(dimensions))


def _one_reserved_option_per_length(parsed: ParsedFile) -> None:
    """CSV terms arrive one at a time: keep, per instance, region and term length, the preferred option."""
    best: dict[tuple[str, str | None, str], Offer] = {}
    kept: list[Offer] = []
    for offer in parsed.offers:
        if offer.pricing_model == "on-demand":
            kept.append(offer)
            continue
        key = (offer.instance_type, offer.region, offer.pricing_model)
        current = best.get(key)
        if current is None or _preference(offer) < _preference(current):
            if current is not None:
                parsed.ignored += 1
            best[key] = offer
        else:
            parsed.ignored += 1
    parsed.offers = kept + list(best.values())


def _preference(offer: Offer) -> int:
    for i, option in enumerate(PURCHASE_PREFERENCE):
        if f" {option} " in offer.source:
            return i
    return len(PURCHASE_PREFERENCE)
