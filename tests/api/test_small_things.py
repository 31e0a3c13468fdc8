"""Small things a user trips over (issue 9): clear errors, never silent misreadings. Each runs on SQLite and,
with TEST_DATABASE_URL, on PostgreSQL (the `app` fixture)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
import yaml
from scalecost.api.extensions.fields import count_pattern
from scalecost.store import keys

ROOT = Path(__file__).resolve().parents[2]
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 8,
        "parallelism": {"data": 8, "zero_stage": 1},
    },
    "output": {"recommendations": False},
}
SERVE = {
    "model": {"preset": "llama-3-8b"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
    "output": {"recommendations": False},
}
A100S = ["nvidia-a100-sxm-80gb", "nvidia-a100-sxm-40gb", "nvidia-a100-pcie-80gb", "nvidia-a100-pcie-40gb"]
H100S = {"nvidia-h100-sxm-80gb", "nvidia-h100-pcie-80gb", "nvidia-h100-nvl-94gb"}


def _train(client, **training):
    return client.post(
        "/v1/estimates/training", json={**TRAINING, "training": {**TRAINING["training"], **training}}
    )


# -- counts -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tokens", "write"), [("1,5B", "1.5B"), ("1,000,000", "1000000"), ("2,5T", "2.5T")])
def test_a_count_with_a_comma_is_422_saying_what_to_write(client, tokens, write):
    response = _train(client, tokens=tokens)
    assert response.status_code == 422, response.json
    message = " ".join(response.json["errors"]["training.tokens"])
    assert f'write "{write}"' in message and "1.5B" in message, message


def test_a_comma_in_the_model_size_is_refused_too(client):
    body = {**SERVE, "model": {"architecture": "transformer", "parameters": "7,5B"}}
    response = client.post("/v1/estimates/inference", json=body)
    assert response.status_code == 422
    assert 'write "7.5B"' in " ".join(response.json["errors"]["model.parameters"])


@pytest.mark.parametrize(("lower", "upper"), [("1b", "1B"), ("500m", "500M"), ("0.001t", "0.001T")])
def test_a_count_suffix_reads_the_same_in_either_case(client, lower, upper):
    a, b = _train(client, tokens=lower), _train(client, tokens=upper)
    assert a.status_code == b.status_code == 200, (a.json, b.json)
    assert a.json["compute"]["total_flops"] == b.json["compute"]["total_flops"]


def test_the_documented_count_pattern_admits_both_cases_and_no_comma():
    pattern = re.compile(count_pattern(1e16))
    assert all(pattern.match(t) for t in ("7B", "7b", "350M", "350m", "1.2T", "1.2t", "25k", "25K"))
    assert not any(pattern.match(t) for t in ("1,5B", "1,000", "7X"))
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    tokens = spec["components"]["schemas"]["TrainingRun"]["properties"]["tokens"]
    documented = next(o["pattern"] for o in tokens["oneOf"] if o.get("type") == "string")
    assert re.match(documented, "7b") and re.match(documented, "7B") and not re.match(documented, "1,5B")


# -- unknown accelerator ----------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["A100", "a100"])
def test_unknown_a100_suggests_the_a100_parts_first_then_lists_every_id(client, given):
    body = {**TRAINING, "hardware": {"accelerator": given, "count": 8}}
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 422
    message = response.json["errors"]["hardware.accelerator"][0]
    suggested, _, every = message.partition("All ids:")
    assert suggested.index("did you mean") < suggested.index(A100S[0]) < suggested.index(A100S[1]), message
    assert all(i in suggested for i in A100S)
    assert "nvidia-t4" in every and "google-tpu-v5e" in every, "the full list follows"


@pytest.mark.parametrize("endpoint", ["training", "inference"])
def test_unknown_h100_suggests_the_h100_parts_first(client, endpoint):
    base = TRAINING if endpoint == "training" else SERVE
    body = {**base, "hardware": {"accelerator": "h100", "count": 8 if endpoint == "training" else 1}}
    response = client.post(f"/v1/estimates/{endpoint}", json=body)
    assert response.status_code == 422
    message = response.json["errors"]["hardware.accelerator"][0]
    first = re.search(r"did you mean ([^?]*)\?", message).group(1).split(", ")
    assert set(first[:3]) == H100S, message


# -- precision not given ----------------------------------------------------------------------------------


@pytest.mark.parametrize("accelerator", ["nvidia-v100-sxm-32gb", "nvidia-t4"])
def test_no_precision_on_a_device_without_bf16_is_fp16_said_in_assumptions(client, accelerator):
    body = {**TRAINING, "hardware": {"accelerator": accelerator, "count": 8}}
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    assumptions = response.json["assumptions"]
    assert assumptions["precision"] == "fp16"
    assert any("precision not given" in n and "fp16" in n for n in assumptions["notes"]), assumptions["notes"]


def test_an_explicit_bf16_on_a_v100_is_still_refused(client):
    body = {**TRAINING, "hardware": {"accelerator": "nvidia-v100-sxm-32gb", "count": 8}}
    body["training"] = {**TRAINING["training"], "precision": "bf16"}
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 422 and "training.precision" in response.json["errors"]


def test_the_contract_documents_the_default_precision_rule():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    description = spec["components"]["schemas"]["TrainingRun"]["properties"]["precision"]["description"]
    assert "bf16, fp16" in description and "assumptions" in description


# -- money below a cent -----------------------------------------------------------------------------------


def test_a_job_costing_a_fraction_of_a_cent_is_not_shown_as_zero_dollars(client):
    body = {
        **TRAINING,
        "training": {"tokens": 1e6, "global_batch_size": 8, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
        "cost": {"usd_per_accelerator_hour": 0.01},
    }
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    cost = response.json["cost"]
    assert 0 < cost["total_usd"] < 0.005
    human = cost["human"]["total"]
    assert human != "$0.00" and len(re.sub(r"[^0-9]", "", human).lstrip("0")) >= 2, human
    assert float(human.lstrip("$")) == pytest.approx(cost["total_usd"], rel=0.05)


# -- key names and the last admin key ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cli", "anonymous", "seed", "CLI", "Seed"])
def test_the_audit_trails_own_actor_names_are_refused_as_key_names(client, admin_headers, name):
    response = client.post("/v1/keys", json={"name": name, "role": "viewer"}, headers=admin_headers)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    message = " ".join(response.json["errors"]["name"])
    assert "cli, anonymous, seed" in message and "audit" in message, message


def test_names_that_merely_contain_an_actor_name_are_fine(client, admin_headers):
    for name in ("cli-bot", "seeder", "anonymous2"):
        assert (
            client.post("/v1/keys", json={"name": name, "role": "viewer"}, headers=admin_headers).status_code
            == 201
        )


def test_the_store_refuses_reserved_names_too(app):
    with app.extensions["scalecost.db"].transaction() as session, pytest.raises(ValueError, match="audit"):
        keys.create(session, "Anonymous", "viewer", actor="test")


def test_revoking_the_last_live_admin_key_is_409_and_it_keeps_working(client, admin_headers):
    response = client.delete("/v1/keys/test-admin", headers=admin_headers)
    assert response.status_code == 409, response.json
    assert response.mimetype == "application/problem+json"
    assert "last live admin key" in response.json["detail"]
    assert client.get("/v1/keys", headers=admin_headers).status_code == 200
    events = client.get("/v1/audit-events?target=key:test-admin", headers=admin_headers).json
    assert [e["action"] for e in events] == ["key.create"], "a refused revocation leaves no audit event"


def test_an_admin_key_can_be_revoked_while_another_admin_remains(client, admin_headers):
    client.post("/v1/keys", json={"name": "second-admin", "role": "admin"}, headers=admin_headers)
    assert client.delete("/v1/keys/second-admin", headers=admin_headers).status_code == 204
    # and revoking one's own key is fine when another admin key is live
    secret = client.post(
        "/v1/keys", json={"name": "third-admin", "role": "admin"}, headers=admin_headers
    ).json["key"]
    assert client.delete("/v1/keys/test-admin", headers=admin_headers).status_code == 204
    third = {"Authorization": f"Bearer {secret}"}
    assert client.delete("/v1/keys/third-admin", headers=third).status_code == 409


def test_revoked_admins_do_not_count_and_viewers_can_always_go(client, admin_headers):
    client.post("/v1/keys", json={"name": "old-admin", "role": "admin"}, headers=admin_headers)
    assert client.delete("/v1/keys/old-admin", headers=admin_headers).status_code == 204
    assert client.delete("/v1/keys/test-admin", headers=admin_headers).status_code == 409
    client.post("/v1/keys", json={"name": "a-viewer", "role": "viewer"}, headers=admin_headers)
    assert client.delete("/v1/keys/a-viewer", headers=admin_headers).status_code == 204


def test_two_concurrent_revocations_cannot_remove_both_admin_keys(app):
    """The first revocation holds its transaction open; the second must wait for it, then see it and refuse.
    On PostgreSQL the admin rows are locked (FOR UPDATE), on SQLite the write lock serialises them."""
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        keys.create(session, "admin-a", "admin", actor="test")
        keys.create(session, "admin-b", "admin", actor="test")
    outcome: dict[str, object] = {}

    def second() -> None:
        try:
            with database.transaction() as session:
                keys.revoke(session, "admin-b", actor="test")
            outcome["b"] = "revoked"
        except keys.LastAdminKey:
            outcome["b"] = "last admin"
        finally:
            outcome["b_done_at"] = time.monotonic()

    with database.transaction() as session:
        keys.revoke(session, "admin-a", actor="test")
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(1.0)
        assert thread.is_alive(), f"the second revocation did not wait for the first: {outcome}"
        committed_at = time.monotonic()
    thread.join(timeout=30)
    assert outcome["b"] == "last admin", outcome
    assert outcome["b_done_at"] >= committed_at
    with database.transaction() as session:
        live = [k.name for k in keys.list_keys(session) if k.role == "admin" and k.revoked_at is None]
    assert live == ["admin-b"]


# -- who may change a scenario ----------------------------------------------------------------------------


def test_the_contract_and_readme_say_who_may_change_a_scenario():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    tag = next(t for t in spec["tags"] if t["name"] == "scenarios")
    assert "any `editor` or `admin` key" in tag["description"] and "whoever created it" in tag["description"]
    item = spec["paths"]["/v1/scenarios/{scenario_id}"]
    assert "any scenario, not only its owner's" in item["put"]["description"]
    assert "any scenario, not only its owner's" in item["delete"]["description"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Who may change a scenario" in readme and "whoever" in readme


def test_any_editor_may_change_another_editors_scenario_and_the_revision_names_who(
    client, app, editor_headers
):
    """What the documentation says is what happens."""
    from tests.conftest import make_key

    other = {"Authorization": f"Bearer {make_key(app, 'other-editor', 'editor')}"}
    created = client.post(
        "/v1/scenarios",
        json={"name": "shared", "kind": "training", "request": {**TRAINING, "output": {}}},
        headers=editor_headers,
    )
    assert created.status_code == 201, created.json
    sid, etag = created.json["id"], created.headers["ETag"]
    body = {"name": "shared-renamed", "kind": "training", "request": {**TRAINING, "output": {}}}
    replaced = client.put(f"/v1/scenarios/{sid}", json=body, headers={**other, "If-Match": etag})
    assert replaced.status_code == 200, replaced.json
    assert replaced.json["owner"] == "test-editor"
    revisions = client.get(f"/v1/scenarios/{sid}/revisions", headers=other).json
    assert [r["author"] for r in revisions] == ["test-editor", "other-editor"]
