"""Unusual but parseable price files, on SQLite and PostgreSQL: each is refused with a 422 naming the row and the
field (the CLI: one line, exit 1, no traceback), or imported with the odd row listed under `refused`; never a 500,
never a row that PostgreSQL refuses mid-transaction (a dry run that said "added" and an apply that failed), never a
row SQLite stores that the API cannot show, edit or delete afterwards. The bounds: service/usecases/price_bounds.py."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest
from scalecost.store.models import AcceleratorPrice
from scalecost.usecases import price_imports
from scalecost.usecases.price_formats import PriceFileError

from tests.test_cli import run as run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
TODAY = dt.date(2026, 12, 1)
CSV_HEADER = (
    "accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,"
    "usd_per_accelerator_hour,as_of,source,effective_from"
)
CSV_ROW = {
    "accelerator_id": "nvidia-h100-sxm-80gb",
    "provider": "lambda",
    "instance_type": "gpu_8x_h100_sxm5",
    "accelerators_per_instance": "8",
    "region": "us-east-1",
    "pricing_model": "on-demand",
    "usd_per_accelerator_hour": "2.99",
    "as_of": "2025-H2",
    "source": "https://lambda.ai/pricing",
    "effective_from": "2025-07-01",
}


def catalog_csv(**cells: str) -> bytes:
    row = {**CSV_ROW, **cells}
    quoted = ['"' + row[c].replace('"', '""') + '"' for c in CSV_HEADER.split(",")]
    return (CSV_HEADER + "\n" + ",".join(quoted) + "\n").encode()


def fixture_json(name: str) -> dict:
    return json.loads((FIXTURES / name).read_bytes())


def aws(change) -> bytes:
    doc = fixture_json("aws-ec2-offer-excerpt.json")
    change(doc, next(iter(doc["products"])))
    return json.dumps(doc).encode()


def azure(change, page: dict | None = None) -> bytes:
    doc = fixture_json("azure-retail-page.json")
    change(doc["Items"][0])
    doc.update(page or {})
    return json.dumps(doc).encode()


def gcp(change) -> bytes:
    doc = fixture_json("gcp-billing-skus.json")
    change(doc["skus"][0])
    return json.dumps(doc).encode()


def setter(path: str, value):
    """A change that sets the item's value at a dotted path ('pricingInfo.0.effectiveTime')."""

    def change(item, *_):
        *parents, last = path.split(".")
        for part in parents:
            item = item[int(part)] if part.isdigit() else item[part]
        item[int(last) if last.isdigit() else last] = copy.deepcopy(value)

    return change


def aws_product(attribute: str | None, value):
    def change(doc, sku):
        if attribute is None:
            doc["products"][sku]["productFamily"] = value
        else:
            doc["products"][sku]["attributes"][attribute] = value

    return change


UNIT_PRICE = "pricingInfo.0.pricingExpression.tieredRates.0"
FIVE_THOUSAND_DIGITS = "9" * 5000

# (id, source, file, where the answer names): files the service answered with a 500, or stored rows of, today.
REFUSED_FILES = [
    ("csv-price-1e30", "csv", catalog_csv(usd_per_accelerator_hour="1e30"), "line 2, usd_per_accelerator_hour"),
    ("csv-price-5000-digits", "csv", catalog_csv(usd_per_accelerator_hour=FIVE_THOUSAND_DIGITS), "line 2, usd"),
    ("csv-count-superscript", "csv", catalog_csv(accelerators_per_instance="²"), "line 2, accelerators_per"),
    ("csv-count-5000-digits", "csv", catalog_csv(accelerators_per_instance=FIVE_THOUSAND_DIGITS), "line 2, acc"),
    ("csv-count-arabic-digits", "csv", catalog_csv(accelerators_per_instance="٨"), "line 2, accelerators_per"),
    ("csv-provider-65", "csv", catalog_csv(provider="p" * 65), "line 2, provider"),
    ("csv-provider-lowercases-past-64", "csv", catalog_csv(provider="İ" * 40), "line 2, provider"),
    ("csv-provider-history", "csv", catalog_csv(provider="History"), "line 2, provider"),
    ("csv-instance-type-129", "csv", catalog_csv(instance_type="i" * 129), "line 2, instance_type"),
    ("csv-region-65", "csv", catalog_csv(region="r" * 65), "line 2, region"),
    ("csv-as-of-33", "csv", catalog_csv(as_of="2025-" + "x" * 28), "line 2, as_of"),
    ("csv-source-2001", "csv", catalog_csv(source="s" * 2001), "line 2, source"),
    ("csv-nul-provider", "csv", catalog_csv(provider="lam\x00bda"), "line 2, provider"),
    ("csv-nul-instance-type", "csv", catalog_csv(instance_type="gpu\x00"), "line 2, instance_type"),
    ("csv-nul-region", "csv", catalog_csv(region="us\x00east"), "line 2, region"),
    ("csv-nul-as-of", "csv", catalog_csv(as_of="2025-H2\x00"), "line 2, as_of"),
    ("csv-nul-source", "csv", catalog_csv(source="contract\x00"), "line 2, source"),
    ("csv-control-provider", "csv", catalog_csv(provider="lam\x1bbda"), "line 2, provider"),
    ("aws-family-list", "aws-price-list", aws(aws_product(None, ["Compute Instance"])), ".productFamily"),
    ("aws-family-object", "aws-price-list", aws(aws_product(None, {"a": 1})), ".productFamily"),
    ("aws-instance-family-list", "aws-price-list", aws(aws_product("instanceFamily", ["GPU"])), ".instanceFamily"),
    ("aws-tenancy-list", "aws-price-list", aws(aws_product("tenancy", ["Shared"])), ".attributes.tenancy"),
    ("aws-instance-type-nul", "aws-price-list", aws(aws_product("instanceType", "p5.48xlarge\x00")), "instance_type"),
    ("aws-region-65", "aws-price-list", aws(aws_product("regionCode", "r" * 65)), "region"),
    (
        "aws-price-1e30",
        "aws-price-list",
        aws(lambda doc, sku: next(iter(next(iter(doc["terms"]["OnDemand"][sku].values()))["priceDimensions"].values()))["pricePerUnit"].update(USD="1e30")),
        ".pricePerUnit.USD",
    ),
    (
        "aws-csv-price-1e30",
        "aws-price-list",
        (FIXTURES / "aws-ec2-offer-excerpt.csv").read_bytes().replace(b'"55.0400000000"', b'"1e30"'),
        "line 7, PricePerUnit",
    ),
    ("azure-reservation-term-list", "azure-retail", azure(setter("reservationTerm", ["1 Year"])), "$.Items[0].reservationTerm"),
    ("azure-currency-list", "azure-retail", azure(setter("currencyCode", ["USD"])), "$.Items[0].currencyCode"),
    ("azure-unit-list", "azure-retail", azure(setter("unitOfMeasure", ["1 Hour"])), "$.Items[0].unitOfMeasure"),
    ("azure-price-1e30", "azure-retail", azure(setter("retailPrice", 1e30)), "$.Items[0].retailPrice"),
    ("azure-billing-currency-list", "azure-retail", azure(lambda item: None, {"BillingCurrency": ["EUR"]}), "$.BillingCurrency"),
    ("azure-region-nul", "azure-retail", azure(setter("armRegionName", "east\x00us")), "$.Items[0], region"),
    ("azure-sku-200", "azure-retail", azure(setter("armSkuName", "Standard_N" + "D" * 190)), "$.Items[0], instance_type"),
    ("gcp-units-5000-digits", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.unitPrice.units", FIVE_THOUSAND_DIGITS)), ".unitPrice.units"),
    ("gcp-units-superscript", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.unitPrice.units", "²")), ".unitPrice.units"),
    ("gcp-units-huge", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.unitPrice.units", "1" + "0" * 30)), ".unitPrice.units"),
    ("gcp-nanos-huge", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.unitPrice.nanos", 10**40)), ".unitPrice.nanos"),
    ("gcp-usage-type-list", "gcp-billing", gcp(setter("category.usageType", ["OnDemand"])), "$.skus[0].category.usageType"),
    ("gcp-resource-group-object", "gcp-billing", gcp(setter("category.resourceGroup", {"GPU": 1})), "$.skus[0].category.resourceGroup"),
    ("gcp-start-amount-list", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.startUsageAmount", [0])), ".startUsageAmount"),
    ("gcp-start-amount-text", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.startUsageAmount", "zero")), ".startUsageAmount"),
    ("gcp-currency-list", "gcp-billing", gcp(setter(f"{UNIT_PRICE}.unitPrice.currencyCode", ["USD"])), ".unitPrice.currencyCode"),
    ("gcp-unit-list", "gcp-billing", gcp(setter("pricingInfo.0.pricingExpression.usageUnit", ["h"])), ".usageUnit"),
    ("gcp-region-nul", "gcp-billing", gcp(setter("serviceRegions", ["us-central1\x00"])), "region"),
]  # fmt: skip
IDS = [case[0] for case in REFUSED_FILES]


def content_type(source: str, data: bytes) -> str:
    return "application/json" if data.lstrip()[:1] in (b"{", b"[") else "text/csv"


def post(client, headers, source: str, data: bytes, *, dry_run: bool):
    return client.post(
        "/v1/price-imports",
        query_string={"source": source, "dry_run": str(dry_run).lower(), "name": "odd"},
        data=data,
        headers={**headers, "Content-Type": content_type(source, data)},
    )


@pytest.mark.parametrize(("case", "source", "data", "where"), REFUSED_FILES, ids=IDS)
def test_the_reader_and_the_bounds_name_the_row_and_field(case, source, data, where):
    with pytest.raises(PriceFileError) as raised:
        price_imports.read_files(source, [price_imports.PriceFile("odd", data)])
    assert where in str(raised.value), (case, str(raised.value))


@pytest.mark.parametrize(("case", "source", "data", "where"), REFUSED_FILES, ids=IDS)
def test_an_unusual_file_is_a_422_naming_where_on_both_databases(
    client, admin_headers, case, source, data, where
):
    for dry_run in (True, False):
        response = post(client, admin_headers, source, data, dry_run=dry_run)
        assert response.status_code == 422, (case, dry_run, response.status_code, response.json)
        assert where in response.json["detail"] and "Nothing was imported" in response.json["detail"], (
            response.json
        )
        assert any(where in e for e in response.json["errors"]["body"]), response.json
    assert client.get("/v1/price-imports", headers=admin_headers).json == []


@pytest.mark.parametrize(
    "case",
    ["csv-price-1e30", "csv-count-superscript", "aws-family-list", "gcp-units-5000-digits", "csv-nul-region"],
)
def test_the_command_line_says_where_in_one_line(tmp_path, migrated_url, app, case):
    _id, source, data, where = REFUSED_FILES[IDS.index(case)]
    path = tmp_path / ("odd.json" if content_type(source, data) == "application/json" else "odd.csv")
    path.write_bytes(data)
    for extra in (["--dry-run"], []):
        result = run_cli(["prices", "import", "--source", source, *extra, str(path)], tmp_path, migrated_url)
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and where in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_instance_map_with_unicode_digits_is_refused_naming_the_line(tmp_path, migrated_url, app):
    extra = tmp_path / "map.csv"
    extra.write_text(
        "source,instance_type,accelerator_id,accelerators_per_instance,reference\n"
        "aws-price-list,p5.48xlarge,nvidia-h100-sxm-80gb,²,x\n",
        encoding="utf-8",
    )
    with pytest.raises(PriceFileError) as raised:
        price_imports.instance_map([extra])
    assert raised.value.where == "map.csv line 2", str(raised.value)
    fixture = str(FIXTURES / "aws-ec2-offer-excerpt.json")
    result = run_cli(
        ["prices", "import", "--source", "aws-price-list", "--dry-run", "--map", str(extra), fixture],
        tmp_path,
        migrated_url,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "map.csv line 2" in result.stderr, result.stderr


def dry(app, source: str, data: bytes) -> dict:
    with app.extensions["scalecost.db"].transaction() as session:
        return price_imports.run(
            session, source, [price_imports.PriceFile("odd", data)], dry_run=True, actor="t", today=TODAY
        )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (catalog_csv(effective_from="", as_of="0000"), "as_of names no period"),
        (catalog_csv(effective_from="", as_of="0001"), "before 2000-01-01"),
        (catalog_csv(effective_from="1999-12-31"), "before 2000-01-01"),
        (catalog_csv(effective_from="4223-01-01"), "after today"),
        (catalog_csv(effective_from="", as_of="4223"), "after today"),
        (catalog_csv(usd_per_accelerator_hour="100000.01"), "outside (0, 100000]"),
    ],
    ids=["as-of-0000", "as-of-0001", "1999", "4223", "as-of-4223", "over-100000"],
)
def test_a_row_dated_or_priced_out_of_bounds_is_refused_and_the_rest_imports(app, data, reason):
    answer = dry(app, "csv", data)
    assert answer["summary"]["added"] == 0 and answer["summary"]["refused"] == 1, answer["summary"]
    assert answer["refused"][0]["where"] == "line 2" and reason in answer["refused"][0]["reason"], answer[
        "refused"
    ]


def test_an_azure_page_billed_in_euros_is_not_read_as_dollars(app):
    def no_currency(item):
        del item["currencyCode"]

    doc = json.loads(azure(no_currency, {"BillingCurrency": "EUR"}))
    for item in doc["Items"]:
        item.pop("currencyCode", None)
    answer = dry(app, "azure-retail", json.dumps(doc).encode())
    assert answer["summary"]["added"] == answer["summary"]["changed"] == answer["summary"]["unchanged"] == 0
    assert all("EUR" in r["reason"] for r in answer["refused"]), answer["refused"]
    usd = dry(app, "azure-retail", (FIXTURES / "azure-retail-page.json").read_bytes())
    read_as_usd = usd["summary"]["added"] + usd["summary"]["changed"] + usd["summary"]["unchanged"]
    assert read_as_usd > 0 and answer["summary"]["refused"] > read_as_usd, (answer["summary"], usd["summary"])


def test_an_item_that_contradicts_its_pages_currency_is_refused(app):
    doc = json.loads(azure(lambda item: None, {"BillingCurrency": "EUR"}))  # items still say USD
    answer = dry(app, "azure-retail", json.dumps(doc).encode())
    assert answer["summary"]["added"] == 0 and answer["refused"], answer["summary"]
    assert any("BillingCurrency" in r["reason"] for r in answer["refused"]), answer["refused"]


def test_applying_what_the_bounds_let_through_stores_it_on_both_databases(app, client, admin_headers):
    # The longest values each column takes, and a provider that lower-cases to exactly 64 characters: the dry run
    # and the apply agree, and the provider can then be shown, edited and deleted.
    provider = "İ" * 32
    data = catalog_csv(provider=provider, instance_type="i" * 128, region="r" * 64, as_of="2025-" + "x" * 27)
    dry_answer = post(client, admin_headers, "csv", data, dry_run=True)
    assert dry_answer.status_code == 200 and dry_answer.json["summary"]["added"] == 1, dry_answer.json
    applied = post(client, admin_headers, "csv", data, dry_run=False)
    assert applied.status_code == 201, applied.json
    with app.extensions["scalecost.db"].session() as session:
        assert session.query(AcceleratorPrice).filter_by(provider=provider).count() == 1
    acc = client.get("/v1/accelerators/nvidia-h100-sxm-80gb")
    assert acc.status_code == 200 and any(p["provider"] == provider for p in acc.json["prices"]), acc.json
    deleted = client.delete(
        f"/v1/accelerators/nvidia-h100-sxm-80gb/prices/{provider}",
        headers={**admin_headers, "If-Match": acc.headers["ETag"]},
    )
    assert deleted.status_code == 204, deleted.json


def test_a_scenario_naming_a_provider_that_lower_cases_past_its_column_saves(app, client, editor_headers):
    # A catalog row stored before the bounds (40 characters, 80 once lower-cased): the scenario's cost row keeps
    # the provider lower-cased, which PostgreSQL refused (500); the scenario saves, its cost untracked.
    provider = "İ" * 40
    with app.extensions["scalecost.db"].transaction() as session:
        session.add(
            AcceleratorPrice(
                accelerator_id="nvidia-h100-sxm-80gb",
                provider=provider,
                pricing_model="on-demand",
                usd_per_hour=2,
                as_of="2025",
                effective_from=dt.date(2025, 1, 1),
            )
        )
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 8,
            "parallelism": {"data": 8, "zero_stage": 3},
        },
        "cost": {"provider": provider},
    }
    response = client.post(
        "/v1/scenarios",
        json={"name": "odd provider", "kind": "training", "request": request},
        headers=editor_headers,
    )
    assert response.status_code == 201, response.json
