"""The committed openapi.yaml is exactly what the code generates, and it is a valid OpenAPI document."""

from __future__ import annotations

from pathlib import Path

import yaml
from openapi_spec_validator import validate
from scalecost.cli.openapi import generate_spec, spec_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_committed_openapi_yaml_matches_the_code():
    committed = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    assert committed == spec_yaml(generate_spec()), (
        "openapi.yaml is stale: run `scalecost openapi write` and commit it"
    )


def test_openapi_yaml_validates():
    validate(yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8")))


def test_every_operation_documents_success_and_error_responses():
    spec = generate_spec()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            codes = set(op["responses"])
            assert any(c.startswith("2") or c == "304" for c in codes), (path, method)
            assert any(c.startswith("4") or c.startswith("5") or c == "default" for c in codes), (
                path,
                method,
            )


def test_spec_is_served_at_openapi_json_and_docs(offline_app):
    client = offline_app.test_client()
    spec = client.get("/openapi.json")
    assert spec.status_code == 200 and spec.json["info"]["title"] == "scalecost"
    assert client.get("/docs").status_code == 200
