"""The library (`import scalecost`): the API's answers and messages, in-process, on the seed's catalog."""

from __future__ import annotations

import subprocess
import sys

import pytest
import scalecost
from scalecost.library import (
    InferenceEstimate,
    InvalidFields,
    TrainingEstimate,
    catalog_from_database,
    catalog_from_seed,
)

TRAINING = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 512},
    "cost": {"provider": "aws"},
}
INFERENCE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "batch_size": 1,
    "prompt_tokens": 512,
    "output_tokens": 256,
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
}


def test_to_dict_is_the_apis_answer_for_the_same_body(client):
    answer = client.post("/v1/estimates/training", json=TRAINING)
    assert answer.status_code == 200, answer.json
    estimate = scalecost.estimate_training(TRAINING)
    assert isinstance(estimate, TrainingEstimate)
    assert estimate.to_dict() == answer.json
    answer = client.post("/v1/estimates/inference", json=INFERENCE)
    assert scalecost.estimate_inference(INFERENCE).to_dict() == answer.json


def test_headline_figures_read_the_answer():
    estimate = scalecost.estimate_training(TRAINING)
    data = estimate.to_dict()
    assert estimate.seconds == data["time"]["seconds"]
    assert estimate.days == pytest.approx(data["time"]["seconds"] / 86400)
    assert estimate.total_usd == data["cost"]["total_usd"] > 0
    assert estimate.accelerator_hours == data["cost"]["accelerator_hours"]
    assert estimate.per_device_bytes == data["memory"]["per_device_bytes"]
    assert estimate.fits is data["memory"]["fits"]
    assert estimate.human["time"] == data["time"]["human"]
    inference = scalecost.estimate_inference(INFERENCE)
    assert isinstance(inference, InferenceEstimate) and inference.fits
    assert inference.usd_per_hour == inference.to_dict()["cost"]["usd_per_hour"]


def test_2t_is_two_trillion_tokens_as_in_the_api():
    spelled = scalecost.estimate_training(TRAINING).to_dict()
    numeric = scalecost.estimate_training({**TRAINING, "training": {**TRAINING["training"], "tokens": 2e12}})
    assert numeric.to_dict() == spelled


@pytest.mark.parametrize(
    "body",
    [
        {**TRAINING, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 0}},
        {**TRAINING, "training": {**TRAINING["training"], "tokens": "2 lots"}},
        {"model": {"preset": "llama-2-70b"}},
    ],
    ids=["range", "count-syntax", "missing"],
)
def test_a_refused_field_raises_the_apis_422_messages(client, body):
    answer = client.post("/v1/estimates/training", json=body)
    assert answer.status_code == 422
    with pytest.raises(InvalidFields) as raised:
        scalecost.estimate_training(body)
    assert isinstance(raised.value, scalecost.InvalidRequest)
    assert raised.value.errors == answer.json["errors"]


def test_an_impossible_request_raises_the_engines_error_with_the_apis_messages(client):
    body = {
        **TRAINING,
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "parallelism": {"tensor": 3}},
    }
    answer = client.post("/v1/estimates/training", json=body, headers={"Accept-Language": "es"})
    assert answer.status_code == 422
    with pytest.raises(scalecost.InvalidRequest) as raised:
        scalecost.estimate_training(body, language="es")
    assert not isinstance(raised.value, InvalidFields)
    assert raised.value.errors == answer.json["errors"]


def test_the_batch_answers_as_the_batch_endpoint(client):
    items = [TRAINING, {**TRAINING, "hardware": {"accelerator": "nope", "count": 8}}, {}]
    answer = client.post("/v1/estimates/training/batch", json={"items": items})
    batch = scalecost.estimate_training_batch(items)
    assert [item.ok for item in batch] == [True, False, False]
    assert isinstance(batch[1].error, scalecost.InvalidRequest)
    assert batch.to_dict() == answer.json


def test_a_databases_catalog_answers_as_the_seed(migrated_url, app):
    catalog = catalog_from_database(migrated_url)  # the `app` fixture re-seeded it
    assert set(catalog.accelerators) == set(catalog_from_seed().accelerators)
    on_database = scalecost.estimate_training(TRAINING, catalog)
    assert on_database.to_dict() == scalecost.estimate_training(TRAINING).to_dict()


def test_plans_answer_as_the_api(client):
    body = {
        "model": {"preset": "llama-3-70b"},
        "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
        "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "engines": ["vllm"]},
    }
    answer = client.post("/v1/plans/inference", json=body).json
    plan = scalecost.plan_serving(body)
    mine = plan.to_dict()
    mine["search"].pop("server_seconds"), answer["search"].pop("server_seconds")
    assert mine == answer and plan.feasible


def test_import_scalecost_stays_light():
    code = "import scalecost, sys; print(sorted({'flask', 'scalecost.library', 'sqlalchemy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_top_level_offers_exactly_the_librarys_names():
    """`scalecost.LIBRARY` (the lazy re-exports) and `scalecost.library.__all__` name the same things: a name added
    to one list only would be missing from `import scalecost` or point at nothing."""
    import scalecost
    import scalecost.library

    assert scalecost.LIBRARY == set(scalecost.library.__all__)
    for name in scalecost.LIBRARY:
        assert getattr(scalecost, name) is getattr(scalecost.library, name)


def test_a_calibration_profile_is_refused_in_process_not_ignored():
    from scalecost.engine import InvalidRequest

    for call, body in (
        (scalecost.estimate_inference, INFERENCE),
        (scalecost.estimate_training, TRAINING),
    ):
        with pytest.raises(InvalidRequest) as err:
            call({**body, "calibration": "my-cluster"})
        assert "calibration" in err.value.errors
