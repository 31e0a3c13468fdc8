"""Every error is RFC 9457 problem+json with a request id; X-Request-ID is echoed and logged."""

from __future__ import annotations

import json
import logging

import pytest

PROBLEM_KEYS = {"type", "title", "status", "detail", "request_id"}


def _assert_problem(response, status: int) -> dict:
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    body = response.get_json(force=True)
    assert PROBLEM_KEYS <= set(body) and body["status"] == status
    assert body["request_id"] == response.headers["X-Request-ID"]
    return body


def test_unknown_route_is_404_problem(offline_app):
    _assert_problem(offline_app.test_client().get("/no/such/route"), 404)


def test_wrong_method_is_405_problem_with_allow_header(offline_app):
    response = offline_app.test_client().delete("/healthz")
    _assert_problem(response, 405)
    assert "GET" in response.headers["Allow"]


def test_non_json_body_is_415_problem(offline_app):
    response = offline_app.test_client().post("/v1/accelerators", data="hello", content_type="text/plain")
    _assert_problem(response, 415)


def test_invalid_query_is_422_problem_naming_the_field_and_allowed_values(client):
    body = _assert_problem(client.get("/v1/accelerators?kind=fpga&min_memory_bytes=-1"), 422)
    assert "gpu, tpu, asic, apple, cpu" in body["errors"]["query.kind"][0]
    assert "query.min_memory_bytes" in body["errors"]


def test_unhandled_exception_is_500_problem_without_stack_trace(offline_app):
    @offline_app.route("/boom")
    def boom():
        raise RuntimeError("secret internal detail")

    offline_app.config["PROPAGATE_EXCEPTIONS"] = False
    response = offline_app.test_client().get("/boom")
    body = _assert_problem(response, 500)
    text = json.dumps(body)
    assert "secret internal detail" not in text and "Traceback" not in text


def test_request_id_is_echoed_when_given_and_generated_otherwise(offline_app):
    client = offline_app.test_client()
    assert (
        client.get("/openapi.json", headers={"X-Request-ID": "abc-123"}).headers["X-Request-ID"] == "abc-123"
    )
    generated = client.get("/openapi.json").headers["X-Request-ID"]
    assert len(generated) == 32


@pytest.mark.parametrize("bad", ["a" * 200, "has space", "<script>"])
def test_unsafe_request_ids_are_replaced(offline_app, bad):
    assert (
        offline_app.test_client().get("/openapi.json", headers={"X-Request-ID": bad}).headers["X-Request-ID"]
        != bad
    )


def test_one_json_access_log_line_per_request(offline_app, caplog):
    with caplog.at_level(logging.INFO, logger="scalecost.access"):
        offline_app.test_client().get("/openapi.json", headers={"X-Request-ID": "log-me"})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "scalecost.access"]
    assert len(lines) == 1
    assert (
        lines[0]["request_id"] == "log-me"
        and lines[0]["status"] == 200
        and lines[0]["path"] == "/openapi.json"
    )


def test_unknown_query_parameter_is_422_naming_the_allowed_ones(client):
    response = client.get("/v1/accelerators?knd=gpu")
    assert response.status_code == 422
    message = response.json["errors"]["query.knd"][0]
    assert "kind" in message and "page_size" in message
    assert client.get("/v1/accelerators?kind=gpu&page=1&page_size=5").status_code == 200


def test_nul_characters_are_refused_before_they_reach_the_database(client, admin_headers):
    assert client.get("/v1/accelerators/nvidia%00t4").status_code == 404
    response = client.get("/v1/accelerators?vendor=NV%00IDIA")
    assert response.status_code == 422 and "NUL" in response.json["errors"]["query.vendor"][0]
    body = {"name": "bad\u0000name", "role": "viewer"}
    assert client.post("/v1/keys", json=body, headers=admin_headers).status_code == 422


@pytest.mark.parametrize("status", [414, 431])
def test_uri_and_header_limits_raised_in_the_app_are_problems(offline_app, status):
    from werkzeug.exceptions import RequestHeaderFieldsTooLarge, RequestURITooLarge

    error = {414: RequestURITooLarge, 431: RequestHeaderFieldsTooLarge}[status]

    @offline_app.route("/too-large")
    def too_large():
        raise error()

    _assert_problem(offline_app.test_client().get("/too-large"), status)


def test_options_is_json_with_the_allowed_methods(offline_app):
    response = offline_app.test_client().options("/healthz")
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert "GET" in response.json["allow"] and "GET" in response.headers["Allow"]


@pytest.mark.parametrize(
    ("status", "reason"),
    [(400, "Bad Request"), (414, "URI Too Long"), (431, "Request Header Fields Too Large")],
)
def test_gunicorn_own_errors_are_written_as_problems(status, reason):
    import socket

    from gunicorn import util
    from scalecost.gunicorn_errors import install

    original = util.write_error
    ours, theirs = socket.socketpair()
    try:
        install()
        util.write_error(ours, status, reason, "Request Line is too large (5000 > 4094)")
        ours.close()
        raw = theirs.makefile("rb").read()
    finally:
        util.write_error = original
        theirs.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    assert lines[0] == f"HTTP/1.1 {status} {reason}"
    assert headers["content-type"] == "application/problem+json"
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert PROBLEM_KEYS <= set(problem) and problem["status"] == status
    assert problem["request_id"] == headers["x-request-id"]
