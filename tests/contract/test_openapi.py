"""The committed openapi.yaml is exactly what the code generates, and it is a valid OpenAPI document."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from openapi_spec_validator import validate
from scalecost.api.extensions.smorest import default_operation_id
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


def test_every_operation_has_a_unique_readable_operation_id():
    """Generated clients name their functions after operationId: every operation has one, unique, camelCase."""
    spec = generate_spec()
    seen: dict[str, tuple[str, str]] = {}
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            name = op.get("operationId")
            assert name and re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)*", name), (path, method, name)
            assert name not in seen, (name, seen.get(name), (path, method))
            seen[name] = (path, method)


def test_an_operation_without_a_name_gets_one_from_its_method_and_path():
    assert default_operation_id("/metrics", "get") == "getMetrics"
    assert default_operation_id("/v1/price-imports/{import_id}", "GET") == "getPriceImportsByImportId"


def test_spec_is_served_at_openapi_json_and_docs(offline_app):
    client = offline_app.test_client()
    spec = client.get("/openapi.json")
    assert spec.status_code == 200 and spec.json["info"]["title"] == "scalecost"
    assert client.get("/docs").status_code == 200
