"""Inputs that answered 500 (or answered with non-JSON) before: each is now a 4xx problem naming what is
wrong, and no number on the wire is NaN or infinite (issue 9, item 5). Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
H100 = "/v1/accelerators/nvidia-h100-sxm-80gb"
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
}
INFERENCE = {
    "model": {"preset": "llama-3-8b"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
}
HUGE = "1" + "0" * 5000  # Python refuses int() of more than 4,300 digits: this was a 500


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.mimetype == "application/problem+json"
    return response.get_json()


def _post_raw(client, path: str, text: str, headers=None):
    return client.post(path, data=text, content_type="application/json", headers=headers or {})


def _etag(client, path=H100) -> str:
    return client.get(path).headers["ETag"]


# --- numbers a double cannot hold, and non-JSON numbers --------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/v1/estimates/training",
            {**TRAINING, "training": {**TRAINING["training"], "global_batch_size": "@"}},
            "training.global_batch_size",
        ),
        (
            "/v1/estimates/training",
            {**TRAINING, "hardware": {**TRAINING["hardware"], "utilization": "@"}},
            "hardware.utilization",
        ),
        ("/v1/estimates/inference", {**INFERENCE, "batch_size": "@"}, "batch_size"),
        (
            "/v1/estimates/inference",
            {**INFERENCE, "model": {"hf_config": {"hidden_size": "@"}}},
            "model.hf_config.hidden_size",
        ),
        ("/v1/scenarios/compare", {"ids": [1, "@"]}, "ids.1"),
        (
            "/v1/scenarios",
            {"name": "x", "kind": "training", "request": {**TRAINING, "output": {"decimal_places": "@"}}},
            "request.output.decimal_places",
        ),
    ],
)
@pytest.mark.parametrize("number", [HUGE, "-" + HUGE, "1e999", "NaN", "-Infinity"])
def test_huge_or_non_finite_json_numbers_are_422_naming_the_field(
    client, admin_headers, path, body, field, number
):
    text = json.dumps(body).replace('"@"', number)
    problem = _problem(_post_raw(client, path, text, admin_headers), 422)
    assert field in problem["errors"], problem


def test_huge_number_in_an_admin_body_is_422(client, admin_headers):
    text = json.dumps({"usd_per_hour": "@"}).replace('"@"', HUGE)
    response = client.put(
        f"{H100}/prices/aws",
        data=text,
        content_type="application/json",
        headers={**admin_headers, "If-Match": _etag(client)},
    )
    assert "usd_per_hour" in _problem(response, 422)["errors"]


def test_a_thirty_digit_integer_is_still_read_and_judged_by_the_schema(client):
    text = json.dumps({**INFERENCE, "batch_size": "@"}).replace('"@"', "9" * 30)
    problem = _problem(_post_raw(client, "/v1/estimates/inference", text), 422)
    assert (
        "Must be greater than or equal to 1 and less than or equal to 100000."
        in problem["errors"]["batch_size"]
    )


# --- path parameters: bounded length, ASCII digits -------------------------------------------------------


def test_provider_longer_than_its_column_is_404_not_a_database_error(client, admin_headers):
    # PostgreSQL refused the 65-character provider on insert (500); SQLite stored it.
    response = client.put(
        f"{H100}/prices/{'p' * 65}",
        json={"usd_per_hour": 1.0},
        headers={**admin_headers, "If-Match": _etag(client)},
    )
    _problem(response, 404)
    ok = client.put(
        f"{H100}/prices/{'p' * 64}",
        json={"usd_per_hour": 1.0},
        headers={**admin_headers, "If-Match": _etag(client)},
    )
    assert ok.status_code == 200, ok.json


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", f"/v1/accelerators/{'a' * 65}"),
        ("get", f"/v1/accelerators/{'a' * 65}/prices/history"),
        ("delete", f"{H100}/prices/{'p' * 65}"),
        ("get", f"/v1/models/{'m' * 65}"),
        ("delete", f"/v1/keys/{'k' * 129}"),
    ],
)
def test_over_long_path_segments_are_404(client, admin_headers, method, path):
    _problem(getattr(client, method)(path, headers={**admin_headers, "If-Match": "*"}), 404)


def test_every_path_parameter_is_bounded_in_the_contract(offline_app):
    spec = offline_app.extensions["scalecost.api"].spec.to_dict()
    for path, item in spec["paths"].items():
        for parameter in item.get("parameters", []):
            if parameter.get("in") != "path":
                continue
            schema = parameter["schema"]
            if schema["type"] == "string":
                assert schema.get("maxLength") in (64, 128), (path, parameter)
            else:
                assert "maximum" in schema and "minimum" in schema, (path, parameter)


def test_path_ids_in_non_ascii_digits_are_404(client, editor_headers):
    created = client.post(
        "/v1/scenarios",
        json={"name": "digits", "kind": "training", "request": TRAINING},
        headers=editor_headers,
    )
    assert created.status_code == 201, created.json
    scenario_id = created.json["id"]
    arabic_indic = str(scenario_id).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    fullwidth = str(scenario_id).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    assert client.get(f"/v1/scenarios/{scenario_id}", headers=editor_headers).status_code == 200
    _problem(client.get(f"/v1/scenarios/{arabic_indic}", headers=editor_headers), 404)
    _problem(client.get(f"/v1/scenarios/{fullwidth}/revisions", headers=editor_headers), 404)


# --- lone surrogates --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"name": "a\\ud800", "kind": "training", "request": @}', "name"),
        ('{"name": "ok", "tags": ["\\udfff"], "kind": "training", "request": @}', "tags.0"),
        ('{"name": "ok", "description": "\\ud800x", "kind": "training", "request": @}', "description"),
    ],
)
def test_lone_surrogate_in_a_scenario_is_422_naming_the_field(client, editor_headers, body, field):
    response = _post_raw(client, "/v1/scenarios", body.replace("@", json.dumps(TRAINING)), editor_headers)
    problem = _problem(response, 422)
    assert field in problem["errors"] and "surrogate" in problem["errors"][field][0]
    assert client.get("/v1/scenarios", headers=editor_headers).json == []


def test_lone_surrogate_in_free_form_hf_config_is_422(client, editor_headers):
    text = json.dumps({**INFERENCE, "model": {"hf_config": {"x": "@"}}}).replace('"@"', '"\\udc80"')
    assert "model.hf_config.x" in _problem(_post_raw(client, "/v1/estimates/inference", text), 422)["errors"]
    key = json.dumps({**INFERENCE, "model": {"hf_config": {"@": 1}}}).replace('"@"', '"k\\ud800"')
    assert _problem(_post_raw(client, "/v1/estimates/inference", key), 422)["errors"]


def test_valid_surrogate_pairs_are_text(client, editor_headers):
    body = '{"name": "rocket \\ud83d\\ude80", "kind": "training", "request": @}'.replace(
        "@", json.dumps(TRAINING)
    )
    response = _post_raw(client, "/v1/scenarios", body, editor_headers)
    assert response.status_code == 201 and response.json["name"] == "rocket 🚀"


# --- hf_config keys the estimate reads are typed -----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("intermediate_size", "x"),
        ("head_dim", "x"),
        ("max_position_embeddings", "x"),
        ("hidden_size", 10**29),
    ],
)
def test_hf_config_keys_with_wrong_types_are_422(client, key, value):
    config = {
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "vocab_size": 100,
        key: value,
    }
    response = client.post("/v1/estimates/training", json={**TRAINING, "model": {"hf_config": config}})
    assert f"model.hf_config.{key}" in _problem(response, 422)["errors"]


# An hf_config key the estimate does not read is free-form in the contract (additionalProperties: true): any
# integer a double can hold is schema-valid there. The body check refused every integer over 30 digits, so the
# contract's own example of a valid body (schemathesis: a 38-digit integer under an unknown key) was a 422.
SMALL_CONFIG = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}


@pytest.mark.parametrize("number", [str(2**127), "-" + "9" * 38, str(10**308), "-" + str(10**308)])
def test_an_ignored_hf_config_key_holds_any_integer_a_double_can_hold(client, editor_headers, number):
    config = {**SMALL_CONFIG, "x": "@", "nested": [{"y": "@"}]}
    text = json.dumps({**TRAINING, "model": {"hf_config": config}}).replace('"@"', number)
    response = _post_raw(client, "/v1/estimates/training", text)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    batch = json.dumps({"items": [{**INFERENCE, "model": {"hf_config": config}}]}).replace('"@"', number)
    response = _post_raw(client, "/v1/estimates/inference/batch", batch)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.json["results"][0]["status"] == 200, response.json["results"][0]
    saved = json.dumps(
        {"name": "big", "kind": "training", "request": {**TRAINING, "model": {"hf_config": config}}}
    ).replace('"@"', number)
    response = _post_raw(client, "/v1/scenarios", saved, editor_headers)
    assert response.status_code == 201, response.get_data(as_text=True)[:500]
    stored = client.get(f"/v1/scenarios/{response.json['id']}", headers=editor_headers).json["request"][
        "model"
    ]["hf_config"]
    assert stored["x"] == stored["nested"][0]["y"] == int(number)


@pytest.mark.parametrize("number", [str(10**309), "-" + str(10**309), "2" * 309])
def test_an_integer_beyond_a_double_is_422_naming_the_field_even_where_free_form(client, number):
    text = json.dumps({**TRAINING, "model": {"hf_config": {**SMALL_CONFIG, "x": "@"}}}).replace('"@"', number)
    problem = _problem(_post_raw(client, "/v1/estimates/training", text), 422)
    assert problem["errors"]["model.hf_config.x"] == [
        "Number out of range: JSON numbers must fit a 64-bit float (|x| < 1.8e308)."
    ]


# --- physical bounds: no NaN or infinity reaches the wire ---------------------------------------------------


def _finite_everywhere(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_everywhere(v) for v in value)
    return True


@pytest.mark.parametrize(
    ("section", "field", "value"),
    [
        ("hardware", "utilization", 5e-324),  # 200 with "seconds": NaN, "compute_s": Infinity before
        ("hardware", "utilization", 0.009),
        ("training", "epochs", 5e-324),  # "usd_per_million_tokens": Infinity before
        ("training", "epochs", 0.0009),
    ],
)
def test_tiny_utilization_or_epochs_are_422(client, section, field, value):
    body = json.loads(json.dumps(TRAINING))
    body[section][field] = value
    body["training"]["validation"] = {"interval_steps": 1, "tokens": 1}
    assert f"{section}.{field}" in _problem(client.post("/v1/estimates/training", json=body), 422)["errors"]


def test_smallest_allowed_utilization_and_epochs_give_finite_answers(client):
    body = json.loads(json.dumps(TRAINING))
    body["hardware"]["utilization"] = 0.01
    body["training"].update(tokens=1, epochs=0.001, validation={"interval_steps": 1, "tokens": 1})
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    assert "NaN" not in response.get_data(as_text=True) and "Infinity" not in response.get_data(as_text=True)
    assert _finite_everywhere(response.json)


@pytest.mark.parametrize(
    ("kind", "section", "field", "value"),
    [
        ("training", "cost", "infrastructure_overhead", 5),  # silently +500 % before
        ("training", "hardware", "utilization", 80),
        ("inference", "hardware", "apple_metal_memory_fraction", 75),
    ],
)
def test_percentages_where_fractions_belong_are_422_saying_so(client, kind, section, field, value):
    body = json.loads(json.dumps(TRAINING if kind == "training" else INFERENCE))
    body.setdefault(section, {})[field] = value
    problem = _problem(client.post(f"/v1/estimates/{kind}", json=body), 422)
    assert "a fraction, 0.05 means 5 %" in problem["errors"][f"{section}.{field}"][0]


def test_the_answer_refuses_to_serialize_non_finite_numbers(offline_app):
    with offline_app.app_context():
        with pytest.raises(ValueError):
            offline_app.json.dumps({"seconds": float("nan")})
        with pytest.raises(ValueError):
            offline_app.json.response({"compute_s": float("inf")})


# --- the contract tells the truth ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, "true", "yes", None])
@pytest.mark.parametrize("flag", ["details", "recommendations", "suggestions"])
def test_boolean_output_flags_accept_only_true_and_false(client, flag, value):
    problem = _problem(
        client.post("/v1/estimates/inference", json={**INFERENCE, "output": {flag: value}}), 422
    )
    assert f"output.{flag}" in problem["errors"]


def test_boolean_request_flags_accept_only_true_and_false(client):
    body = json.loads(json.dumps(TRAINING))
    body["training"]["flash_attention"] = 0
    assert (
        "training.flash_attention"
        in _problem(client.post("/v1/estimates/training", json=body), 422)["errors"]
    )
    body["training"]["flash_attention"] = False
    assert client.post("/v1/estimates/training", json=body).status_code == 200


def test_priced_as_of_is_null_for_an_override_and_the_contract_says_it_may_be(client, offline_app):
    body = {**INFERENCE, "cost": {"usd_per_accelerator_hour": 1.5}}
    response = client.post("/v1/estimates/inference", json=body)
    assert response.status_code == 200 and response.json["cost"]["priced_as_of"] is None
    schemas = offline_app.extensions["scalecost.api"].spec.to_dict()["components"]["schemas"]
    for name in ("InferenceCost", "TrainingCost"):
        assert schemas[name]["properties"]["priced_as_of"].get("nullable") is True


# --- OPTIONS, 414 and 431 answers are JSON ------------------------------------------------------------------


def test_options_answer_is_json_listing_the_allowed_methods(client):
    response = client.options("/v1/scenarios")
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert set(response.json["allow"]) == set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


def test_options_on_an_unknown_path_is_a_404_problem(client):
    _problem(client.options("/v1/nowhere"), 404)


def _gunicorn(tmp_path, port: int) -> subprocess.Popen:
    """gunicorn with the production config (its post_worker_init installs scalecost.gunicorn_errors)."""
    env = {
        **os.environ,
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path}/g.db",
    }
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "-c",
            "service/gunicorn_conf.py",
            "scalecost:create_app()",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _raw_request(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body


def test_gunicorn_answers_414_and_431_as_problem_json(tmp_path):
    port = free_port()
    proc = _gunicorn(tmp_path, port)
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/openapi.json", timeout=1)
                break
            except OSError:
                assert time.time() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        cases = {
            # over the 4,094-byte limit, yet read whole by gunicorn (no reset from unread bytes)
            414: b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            431: b"GET / HTTP/1.1\r\nHost: x\r\n"
            + b"".join(b"X-%d: 1\r\n" % i for i in range(150))
            + b"\r\n",
        }
        for status, request in cases.items():
            got, headers, body = _raw_request(port, request)
            assert got == status and headers["content-type"] == "application/problem+json", (got, headers)
            problem = json.loads(body)
            assert problem["status"] == status and problem["request_id"] == headers["x-request-id"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_a_long_integer_a_double_can_hold_is_read_in_a_free_form_object(client):
    """model.hf_config is free-form: a 32-digit integer there is schema-valid and reaches the engine (whose answer
    is about the config, not the number), while 310 digits stay refused as out of a double's range."""
    body = {
        "model": {"hf_config": {"num_hidden_layers": 2, "extra": -19670012753070961242469642010624}},
        "training": {"tokens": "1B", "global_batch_size": 8},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
    }
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 422
    assert "model.hf_config.extra" not in response.json["errors"]
    body["model"]["hf_config"]["extra"] = 10**309
    refused = client.post("/v1/estimates/training", json=body)
    assert "model.hf_config.extra" in refused.json["errors"]
