"""gzip of the API's JSON answers (api/extensions/compression.py): GET answers without an ETag, for clients that
accept it; answers with a strong ETag (If-Match compares strongly) and problems go as they are (writes too: only GET
is compressed)."""

from __future__ import annotations

import gzip
import json


def test_a_listing_is_gzipped_for_a_client_that_accepts_it(offline_app):
    client = offline_app.test_client()
    plain = client.get("/v1/models")
    packed = client.get("/v1/models", headers={"Accept-Encoding": "gzip"})
    assert plain.status_code == packed.status_code == 200
    assert plain.headers.get("Content-Encoding") is None
    assert packed.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(packed.data)) == plain.json
    assert len(packed.data) < 0.25 * len(plain.data)
    assert "Accept-Encoding" in plain.headers["Vary"] and "Accept-Encoding" in packed.headers["Vary"]


def test_an_answer_with_an_etag_is_sent_as_it_is(offline_app):
    response = offline_app.test_client().get("/v1/options", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200 and response.headers.get("ETag")
    assert response.headers.get("Content-Encoding") is None


def test_a_problem_is_sent_as_it_is(offline_app):
    response = offline_app.test_client().get("/v1/models/no-such-model", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 404 and response.headers.get("Content-Encoding") is None


def test_a_post_answer_is_sent_as_it_is(client):
    body = {
        "model": {"preset": "llama-2-7b"},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
    }
    response = client.post("/v1/estimates/inference", json=body, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200, response.json
    assert len(response.data) > 1024 and response.headers.get("Content-Encoding") is None
