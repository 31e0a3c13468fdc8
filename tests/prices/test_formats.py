"""The price list readers on small excerpts of each published format (tests/fixtures/prices/README.md cites
the documentation each follows), and on malformed files: the error names the line or JSON path."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from scalecost.usecases import price_formats
from scalecost.usecases.price_formats import PriceFileError, gcp
from scalecost.usecases.price_formats.mapping import read as read_map

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"


def parse(source: str, name: str):
    return price_formats.parse(source, (FIXTURES / name).read_bytes(), name)


def offers(parsed) -> dict[tuple, Decimal]:
    return {(o.instance_type, o.region, o.pricing_model): o.usd_per_hour for o in parsed.offers}


def test_aws_json_offer_file_on_demand_and_reserved():
    parsed = parse("aws-price-list", "aws-ec2-offer-excerpt.json")
    got = offers(parsed)
    assert parsed.published == dt.date(2025, 9, 12)
    assert got[("p5.48xlarge", "us-east-1", "on-demand")] == Decimal("55.04")
    assert got[("p5.48xlarge", "us-west-2", "on-demand")] == Decimal("55.04")
    assert got[("p4d.24xlarge", "us-east-1", "on-demand")] == Decimal("21.957642")
    # reserved: the standard class, No Upfront preferred over All Upfront; convertible ignored
    assert got[("p5.48xlarge", "us-east-1", "reserved-1y")] == Decimal("37.63")
    assert got[("p5.48xlarge", "us-east-1", "reserved-3y")] == Decimal("26.42")
    # Windows, an unused capacity reservation and EBS storage are not instance prices
    assert all(o.instance_type != "p5.48xlarge" or o.usd_per_hour != Decimal("72.704") for o in parsed.offers)
    assert ("m5.large", "us-east-1", "on-demand") in got  # kept, but not an accelerator instance:
    assert not next(o for o in parsed.offers if o.instance_type == "m5.large").has_accelerators
    assert next(o for o in parsed.offers if o.instance_type == "g4ad.xlarge").has_accelerators
    assert {o.effective_from for o in parsed.offers} == {dt.date(2025, 9, 1)}
    assert parsed.refused == []
    where = next(o.where for o in parsed.offers if o.instance_type == "p4d.24xlarge")
    assert where == '$.terms.OnDemand.H7NGEAC6UEHNTKSJ["H7NGEAC6UEHNTKSJ.JRTCKXETXF"]'


def test_aws_csv_offer_file_combines_upfront_and_hourly_rows():
    parsed = parse("aws-price-list", "aws-ec2-offer-excerpt.csv")
    got = offers(parsed)
    assert parsed.published == dt.date(2025, 9, 12)
    assert got[("p5.48xlarge", "us-east-1", "on-demand")] == Decimal("55.04")
    # Partial Upfront: 17.95 per hour + 157,253 upfront over 8,760 hours
    expected = Decimal("17.95") + Decimal(157253) / 8760
    assert got[("p5.48xlarge", "us-east-1", "reserved-1y")] == expected
    assert ("p5.48xlarge", "us-east-1", "on-demand") in got and len(parsed.offers) == 5
    assert next(o.where for o in parsed.offers if o.instance_type == "g6e.xlarge") == "line 12"


def test_azure_retail_page_consumption_spot_and_reservation():
    parsed = parse("azure-retail", "azure-retail-page.json")
    got = offers(parsed)
    assert got[("ND96isr_H100_v5", "eastus", "on-demand")] == Decimal("98.32")  # not the Windows meter
    assert got[("ND96isr_H100_v5", "eastus", "spot")] == Decimal("18.169536")
    assert got[("ND96isr_H100_v5", "eastus", "reserved-1y")] == Decimal("573987.0") / 8760
    assert got[("NC24ads_A100_v4", "eastus", "on-demand")] == Decimal("3.673")
    assert parsed.ignored == 2  # Windows, Low Priority
    assert [(r.where, r.reason) for r in parsed.refused] == [("$.Items[9]", "the price is 0")]
    assert not next(o for o in parsed.offers if o.instance_type == "D4s_v5").has_accelerators


def test_gcp_billing_skus_gpu_and_tpu_per_region():
    parsed = parse("gcp-billing", "gcp-billing-skus.json")
    got = offers(parsed)
    assert got[("Nvidia Tesla A100 GPU", "us-central1", "on-demand")] == Decimal("2.933908")
    assert got[("Nvidia Tesla A100 GPU", "us-west1", "on-demand")] == Decimal("2.933908")
    assert got[("Nvidia Tesla A100 GPU", "us-central1", "spot")] == Decimal("1.173563")
    assert got[("Nvidia Tesla A100 GPU", "us-central1", "reserved-1y")] == Decimal("1.848362")
    assert got[("TPU v5 Lite PodSlice chip", "us-central1", "on-demand")] == Decimal("1.2")
    assert parsed.ignored == 1  # the N1 core SKU


@pytest.mark.parametrize(
    ("description", "device"),
    [
        ("Nvidia Tesla A100 GPU running in Americas", "Nvidia Tesla A100 GPU"),
        ("Spot Preemptible Nvidia L4 GPU running in Belgium", "Nvidia L4 GPU"),
        ("Commitment v1: Nvidia Tesla A100 GPU in Americas for 1 Year", "Nvidia Tesla A100 GPU"),
        ("Nvidia H100 80GB GPU running in Virginia", "Nvidia H100 80GB GPU"),
    ],
)
def test_gcp_device_name(description, device):
    assert gcp.device_name(description) == device


def test_catalog_csv_columns():
    parsed = parse("csv", "catalog-prices.csv")
    got = {(o.accelerator_id, o.provider, o.pricing_model): o for o in parsed.offers}
    lambda_h100 = got[("nvidia-h100-sxm-80gb", "lambda", "on-demand")]
    assert lambda_h100.usd_per_hour == Decimal("2.99") and lambda_h100.accelerators_per_instance == 8
    assert got[("nvidia-b200", "acme-contract", "reserved-1y")].effective_from == dt.date(2026, 10, 2)
    assert [r.where for r in parsed.refused] == ["line 6"]  # reserved-2y is no pricing model


MALFORMED = [
    ("aws-price-list", b'{"products": {}, "terms": {"OnDemand": {"SKU1": []}}}', "$.terms.OnDemand.SKU1"),
    ("aws-price-list", b'{"products": {"A": {"attributes": 3}}, "terms": {}}', "$.products.A.attributes"),
    ("aws-price-list", b'{"offerCode": "AmazonS3", "products": {}, "terms": {}}', "$.offerCode"),
    ("aws-price-list", b'{"products": {},\n "terms": {,}}', "line 2 column 12"),
    ("aws-price-list", b'"FormatVersion","v1.0"\n"Disclaimer","x"\n', "line 3"),
    ("azure-retail", b'{"Items": [{"serviceName": "Virtual Machines", "type": 7}]}', "$.Items[0].type"),
    ("azure-retail", b'{"Items": {}}', "$.Items"),
    ("azure-retail", b'{"items": []}', "$"),
    ("azure-retail", b'{"Items": [NaN]}', "$"),
    ("gcp-billing", b'{"skus": [{"category": "GPU"}]}', "$.skus[0].category"),
    (
        "gcp-billing",
        json.dumps(
            {
                "skus": [
                    {
                        "description": "Nvidia L4 GPU running in Americas",
                        "category": {"resourceGroup": "GPU", "usageType": "OnDemand"},
                        "serviceRegions": ["us-central1"],
                        "pricingInfo": [
                            {"pricingExpression": {"tieredRates": [{"unitPrice": {"units": "x"}}]}}
                        ],
                    }
                ]
            }
        ).encode(),
        "$.skus[0].pricingInfo[0].pricingExpression.tieredRates[0].unitPrice.units",
    ),
    ("csv", b"accelerator_id,provider,usd_per_hour\n", "line 1"),
    ("csv", b"accelerator_id,provider,usd_per_accelerator_hour\nnvidia-t4,x,cheap\n", "line 2"),
    ("csv", b"accelerator_id,provider,usd_per_accelerator_hour\nnvidia-t4,x\n", "line 2"),
    ("csv", b"\xff\xfe", "byte 0"),
    ("csv", b"  \n", "line 1"),
]


@pytest.mark.parametrize(("source", "data", "where"), MALFORMED)
def test_a_malformed_file_is_refused_naming_where(source, data, where):
    with pytest.raises(PriceFileError) as raised:
        price_formats.parse(source, data, "f")
    assert raised.value.where.startswith(where), str(raised.value)


def test_instance_map_ships_with_references_and_can_be_extended():
    shipped = (
        Path(__file__).resolve().parents[2] / "service" / "store" / "seed" / "instance_map.csv"
    ).read_text()
    table = read_map(shipped)
    assert table[("aws-price-list", "p5.48xlarge")].accelerators_per_instance == 8
    assert table[("azure-retail", "nd96isr_h100_v5")].accelerator_id == "nvidia-h100-sxm-80gb"
    assert all(m.reference.startswith("https://") for m in table.values())
    extended = read_map(
        "source,instance_type,accelerator_id,accelerators_per_instance\naws-price-list,g4ad.xlarge,amd-v520,1\n",
        into=table,
    )
    assert extended[("aws-price-list", "g4ad.xlarge")].accelerator_id == "amd-v520"
    with pytest.raises(PriceFileError, match="line 2"):
        read_map("source,instance_type,accelerator_id,accelerators_per_instance\nnowhere,x,y,1\n", "m.csv")
