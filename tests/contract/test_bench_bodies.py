"""The benches time what the endpoints hand the engine without importing the api (bench/bodies.py): for every
body they send, `as_loaded` must equal what the endpoint's schema loads, or their figures describe another
request."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scalecost.api.estimates.inference import InferenceRequestSchema
from scalecost.api.estimates.training import TrainingRequestSchema

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bodies  # noqa: E402
import compare_llm_analysis  # noqa: E402
import engine_bench  # noqa: E402
import estimate_bench  # noqa: E402


def _training_bodies():
    yield "estimate_bench.TRAINING", estimate_bench.TRAINING
    for case in compare_llm_analysis.CASES:
        yield f"compare_llm_analysis {case[0]}", case[4]
    for label, body in compare_llm_analysis.OURS_ONLY:
        yield f"compare_llm_analysis {label}", body
    for i, body in enumerate(engine_bench.sweep_bodies()[:8]):
        yield f"engine_bench grid {i}", body


TRAINING = list(_training_bodies())
INFERENCE = [
    ("estimate_bench.INFERENCE", estimate_bench.INFERENCE),
    ("estimate_bench.INFERENCE_NO_SUGGESTIONS", estimate_bench.INFERENCE_NO_SUGGESTIONS),
]


@pytest.mark.parametrize(("label", "body"), TRAINING, ids=[t[0] for t in TRAINING])
def test_training_bodies_load_as_the_endpoint_loads_them(label, body):
    assert bodies.as_loaded(body) == TrainingRequestSchema().load(body), label


@pytest.mark.parametrize(("label", "body"), INFERENCE, ids=[t[0] for t in INFERENCE])
def test_inference_bodies_load_as_the_endpoint_loads_them(label, body):
    assert bodies.as_loaded(body) == InferenceRequestSchema().load(body), label


def test_a_count_string_is_what_the_loader_converts():
    body = {**estimate_bench.TRAINING, "training": {**estimate_bench.TRAINING["training"], "tokens": "1B"}}
    assert bodies.as_loaded(body)["training"]["tokens"] == 1e9
    assert body["training"]["tokens"] == "1B"  # the caller's body is not changed
