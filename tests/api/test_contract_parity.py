"""The HTTP contract and the engine share one source for every enum, and the contract exposes every knob
the engine has (the engine had `virtual_pipeline` while the schema refused it)."""

from __future__ import annotations

from scalecost import engine
from scalecost.api.accelerators import schemas as accelerator_schemas
from scalecost.api.estimates import inference as inference_schemas
from scalecost.api.estimates import training as training_schemas

BODY = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "1B", "global_batch_size": 512, "sequence_length": 4096, "micro_batch_size": 1},
    "hardware": {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": 64,
        "parallelism": {"data": 4, "tensor": 8, "pipeline": 2},
    },
    "output": {"recommendations": False},
}


def test_schema_enums_are_the_engines():
    assert training_schemas.TRAINING_PRECISIONS == list(engine.TRAINING_PRECISIONS)
    assert training_schemas.OPTIMIZERS == list(engine.OPTIMIZERS)
    assert training_schemas.RECOMPUTATION == list(engine.RECOMPUTATION)
    assert inference_schemas.ENGINES == list(engine.ENGINES)
    assert inference_schemas.WEIGHT_FORMATS == list(engine.FORMATS)
    assert inference_schemas.KV_PRECISIONS == list(engine.KV_PRECISIONS)
    assert inference_schemas.WEIGHT_PRECISIONS == list(engine.WEIGHT_PRECISIONS)
    assert accelerator_schemas.KINDS == list(engine.KINDS)


def test_virtual_pipeline_is_accepted_and_shrinks_the_bubble(client):
    plain = client.post("/v1/estimates/training", json=BODY)
    interleaved = {
        **BODY,
        "hardware": {
            **BODY["hardware"],
            "parallelism": {**BODY["hardware"]["parallelism"], "virtual_pipeline": 4},
        },
    }
    chunked = client.post("/v1/estimates/training", json=interleaved)
    assert plain.status_code == 200 and chunked.status_code == 200, chunked.json
    assert chunked.json["assumptions"]["parallelism"]["virtual_pipeline"] == 4
    bubble = plain.json["assumptions"]["efficiency"]["pipeline_bubble_fraction"]
    assert chunked.json["assumptions"]["efficiency"]["pipeline_bubble_fraction"] < bubble / 3


def test_virtual_pipeline_without_pipeline_names_the_field(client):
    body = {
        **BODY,
        "hardware": {**BODY["hardware"], "parallelism": {"data": 8, "tensor": 8, "virtual_pipeline": 2}},
    }
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 422
    assert "hardware.parallelism.virtual_pipeline" in response.json["errors"]
