"""The estimate endpoints: the response is exactly the engine's answer; bad input is a 422 naming fields."""

from __future__ import annotations

import pytest
from scalecost.api.extensions.db import db_session
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.training.estimate import estimate_training
from scalecost.usecases.catalog import engine_catalog

FINE_TUNE = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 8,
        "parallelism": {"data": 8, "zero_stage": 1},
    },
    "output": {"details": True},
}
SERVE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
    "output": {"details": True},
}


def _engine_answer(app, kind: str, body: dict) -> dict:
    from scalecost.api.estimates.inference import InferenceRequestSchema
    from scalecost.api.estimates.training import TrainingRequestSchema

    schema = TrainingRequestSchema() if kind == "training" else InferenceRequestSchema()
    with app.app_context():
        catalog = engine_catalog(db_session())
        fn = estimate_training if kind == "training" else estimate_inference
        return fn(schema.load(body), catalog)


def _strip_none(value):
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


@pytest.mark.parametrize(("kind", "body"), [("training", FINE_TUNE), ("inference", SERVE)])
def test_response_is_the_engine_answer_with_no_field_dropped(app, client, kind, body):
    response = client.post(f"/v1/estimates/{kind}", json=body)
    assert response.status_code == 200, response.json
    assert response.json == _strip_none(_engine_answer(app, kind, body))


PIPELINE = {  # a Megatron-class pipeline given without virtual_pipeline: the interleave_pipeline advice
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": "100B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": 64,
        "parallelism": {"tensor": 8, "pipeline": 8, "sequence_parallel": True, "zero_stage": 1},
    },
}


def test_interleaving_advice_reaches_the_client_whole(app, client):
    response = client.post("/v1/estimates/training", json=PIPELINE)
    assert response.status_code == 200, response.json
    assert response.json == _strip_none(_engine_answer(app, "training", PIPELINE))
    advice = [r for r in response.json["recommendations"] if r["code"] == "interleave_pipeline"]
    assert len(advice) == 1 and advice[0]["change"]["hardware"]["parallelism"]["virtual_pipeline"] in (
        2,
        4,
        8,
    )
    assert advice[0]["expected"] == {
        "field": "time.seconds", "op": "<", "value": response.json["time"]["seconds"]
    }  # fmt: skip


def test_training_estimate_reports_every_section(client):
    body = client.post("/v1/estimates/training", json=FINE_TUNE).json
    assert {
        "compute",
        "memory",
        "time",
        "cost",
        "range",
        "assumptions",
        "scaling",
        "recommendations",
        "details",
    } <= set(body)
    assert body["compute"]["six_nd_flops"] == pytest.approx(6 * 6.738e9 * 1e9, rel=1e-3)
    assert body["memory"]["fits"] is True
    assert body["time"]["utilization_source"] != "given"
    assert (
        body["cost"]["total_usd"] > 0 and body["range"]["low"]["seconds"] < body["range"]["high"]["seconds"]
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {"hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "parallelism": {"data": 3}}},
            "hardware.parallelism",
        ),
        (
            {
                "hardware": {
                    "accelerator": "nvidia-a100-sxm-80gb",
                    "count": 8,
                    "parallelism": {"data": 1, "tensor": 8},
                },
                "model": {
                    "architecture": "transformer",
                    "layers": 4,
                    "hidden_size": 768,
                    "attention_heads": 12,
                    "vocab_size": 32000,
                },
            },
            "hardware.parallelism.tensor",
        ),
        ({"training": {"tokens": "1B", "global_batch_size": 64, "precision": "fp8"}}, "training.precision"),
        ({"hardware": {"accelerator": "nvidia-h900", "count": 8}}, "hardware.accelerator"),
        (
            {"training": {"tokens": "1B", "global_batch_size": 64, "framework": "jax"}},
            "training.framework",
        ),
        (
            {"training": {"tokens": "1B", "global_batch_size": 64, "torch_compile": "maybe"}},
            "training.torch_compile",
        ),
        ({"training": {"tokens": "1B", "global_batch_size": 64, "loss_chunks": 0}}, "training.loss_chunks"),
    ],
)
def test_impossible_training_requests_are_422_naming_the_field(client, change, field):
    response = client.post("/v1/estimates/training", json={**FINE_TUNE, **change})
    assert response.status_code == 422, response.json
    assert response.mimetype == "application/problem+json"
    assert any(k.startswith(field) for k in response.json["errors"]), response.json["errors"]


def test_unknown_accelerator_lists_valid_ids(client):
    response = client.post(
        "/v1/estimates/training", json={**FINE_TUNE, "hardware": {"accelerator": "nvidia-h900", "count": 8}}
    )
    assert "nvidia-h100-sxm-80gb" in " ".join(response.json["errors"]["hardware.accelerator"])


def test_unknown_preset_lists_valid_ids(client):
    response = client.post("/v1/estimates/training", json={**FINE_TUNE, "model": {"preset": "gpt-5"}})
    assert response.status_code == 422 and "llama-2-7b" in response.json["errors"]["model.preset"][0]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"model": {"architecture": "transformer", "parameters": 1e30}}, "model.parameters"),
        ({"hardware": {"accelerator": "nvidia-t4", "count": 10**9}}, "hardware.count"),
        ({"training": {"tokens": -5, "global_batch_size": 8}}, "training.tokens"),
        ({"training": {"tokens": "1B", "global_batch_size": 8, "precision": "fp2"}}, "training.precision"),
        (
            {"training": {"tokens": "1B", "global_batch_size": 8, "straggler_share": 0.9}},
            "training.straggler_share",
        ),
    ],
)
def test_absurd_magnitudes_are_422_with_the_bound_named(client, patch, field):
    response = client.post("/v1/estimates/training", json={**FINE_TUNE, **patch})
    assert response.status_code == 422
    messages = " ".join(response.json["errors"][field])
    assert any(word in messages for word in ("between", "equal", "one of")), messages


@pytest.mark.parametrize("body", [[], "text", 42, {"model": [[[[[]]]]]}])
def test_non_object_json_is_422_not_500(client, body):
    assert client.post("/v1/estimates/training", json=body).status_code in (400, 422)


def test_models_lists_presets_with_shapes_and_sources(client):
    presets = {p["id"]: p for p in client.get("/v1/models").json}
    required = {
        "gpt-2-1.5b",
        "gpt-3-175b",
        "llama-2-7b",
        "llama-2-13b",
        "llama-2-70b",
        "llama-3-8b",
        "llama-3-70b",
        "llama-3.1-405b",
        "mistral-7b",
        "mixtral-8x7b",
        "deepseek-v3",
        "bert-large",
        "resnet-50",
        "vit-l-16",
    }
    assert required <= set(presets)
    assert any(p["architecture"] == "lstm" for p in presets.values())
    assert presets["llama-2-70b"]["shape"]["kv_heads"] == 8 and presets["llama-2-70b"]["source"]
    assert presets["mixtral-8x7b"]["active_parameters"] < presets["mixtral-8x7b"]["total_parameters"]
    assert client.get("/v1/models/llama-3-8b").json["shape"]["hidden_size"] == 4096
    assert client.get("/v1/models/nope").status_code == 404


def test_catalog_cache_sees_this_processes_price_change_at_once(app, client, admin_headers):
    app.config["CATALOG_CACHE_TTL_S"] = 3600.0
    body = {**FINE_TUNE, "cost": {"provider": "runpod"}}
    before = client.post("/v1/estimates/training", json=body).json["cost"]["usd_per_accelerator_hour"]
    etag = client.get("/v1/accelerators/nvidia-a100-sxm-80gb").headers["ETag"]
    client.put(
        "/v1/accelerators/nvidia-a100-sxm-80gb/prices/runpod",
        json={"usd_per_hour": 1.5},
        headers={**admin_headers, "If-Match": etag},
    )
    after = client.post("/v1/estimates/training", json=body).json["cost"]["usd_per_accelerator_hour"]
    assert (before, after) == (1.89, 1.5)


def test_catalog_cache_rereads_the_fingerprint_after_its_ttl(app, client):
    import time
    from decimal import Decimal

    from scalecost.store.models import AcceleratorPrice
    from sqlalchemy import update

    app.config["CATALOG_CACHE_TTL_S"] = 0.3
    body = {**FINE_TUNE, "cost": {"provider": "runpod"}}
    assert client.post("/v1/estimates/training", json=body).json["cost"]["usd_per_accelerator_hour"] == 1.89
    with app.extensions["scalecost.db"].transaction() as session:  # another worker's write, as it were
        session.execute(
            update(AcceleratorPrice)
            .where(
                AcceleratorPrice.accelerator_id == "nvidia-a100-sxm-80gb",
                AcceleratorPrice.provider == "runpod",
            )
            .values(effective_to=None, usd_per_hour=Decimal("1.20"))
        )
        from scalecost.store.models import Accelerator

        session.execute(
            update(Accelerator).where(Accelerator.id == "nvidia-a100-sxm-80gb").values(version=99)
        )
    time.sleep(0.35)
    assert client.post("/v1/estimates/training", json=body).json["cost"]["usd_per_accelerator_hour"] == 1.2


@pytest.mark.parametrize(("kind", "body"), [("training", FINE_TUNE), ("inference", SERVE)])
def test_engine_leaves_the_request_untouched(app, kind, body):
    import copy

    from scalecost.api.estimates.inference import InferenceRequestSchema
    from scalecost.api.estimates.training import TrainingRequestSchema

    loaded = (TrainingRequestSchema() if kind == "training" else InferenceRequestSchema()).load(body)
    snapshot = copy.deepcopy(loaded)
    with app.app_context():
        (estimate_training if kind == "training" else estimate_inference)(
            loaded, engine_catalog(db_session())
        )
    assert loaded == snapshot


def test_recommendations_can_be_skipped_for_sweeps(client):
    without_zero = {k: v for k, v in FINE_TUNE.items() if k != "hardware"} | {
        "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "parallelism": {"zero_stage": 0}}
    }
    advised = client.post("/v1/estimates/training", json=without_zero).json
    assert any(r["code"] == "does_not_fit" for r in advised["recommendations"])
    lean = client.post(
        "/v1/estimates/training", json={**without_zero, "output": {"recommendations": False}}
    ).json
    assert lean["recommendations"] == [] and lean["memory"] == advised["memory"]


def test_fp4_training_runs_on_a_part_with_an_fp4_peak_and_is_422_elsewhere(client):
    fp4 = {**FINE_TUNE["training"], "precision": "fp4"}
    on = {**FINE_TUNE, "training": fp4, "hardware": {**FINE_TUNE["hardware"], "accelerator": "nvidia-b200"}}
    response = client.post("/v1/estimates/training", json=on)
    assert response.status_code == 200, response.json
    assert response.json["assumptions"]["precision"] == "fp4"
    off = client.post("/v1/estimates/training", json={**FINE_TUNE, "training": fp4})  # A100: no fp4
    assert off.status_code == 422
    (message,) = off.json["errors"]["training.precision"]
    assert "fp4" in message and "nvidia-b200" in message and "bf16" in message


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (
            {"engine": "sglang", "weights": {"format": "exl2-4.0bpw"}},
            "weights.format",
            ("'exl2-4.0bpw'", "'sglang'", "mxfp4", "nvfp4"),
        ),
        ({"engine": "exllamav2", "weights": {"format": "awq"}}, "weights.format", ("exl2-4.0bpw", "gptq")),
        ({"engine": "exllamav2", "kv_cache_precision": "fp8"}, "kv_cache_precision", ("fp16, int8",)),
        ({"engine": "llama.cpp", "weights": {"precision": "fp4"}}, "weights.precision", ("int4",)),
        ({"engine": "tgi"}, "engine", ("sglang", "exllamav2")),
    ],
)
def test_engine_format_mismatches_are_422_naming_the_field_and_the_allowed_values(client, body, field, words):
    request = {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-rtx-4090"}, **body}
    response = client.post("/v1/estimates/inference", json=request)
    assert response.status_code == 422, response.json
    messages = " ".join(response.json["errors"][field])
    assert all(w in messages for w in words), messages


def test_sglang_and_exllamav2_answer_over_http(client):
    for body in (
        {
            "engine": "sglang",
            "weights": {"format": "nvfp4"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
        },
        {
            "engine": "exllamav2",
            "weights": {"format": "exl2-3.0bpw"},
            "hardware": {"accelerator": "nvidia-rtx-4090"},
        },
    ):
        response = client.post("/v1/estimates/inference", json={"model": {"preset": "llama-3-8b"}, **body})
        assert response.status_code == 200, response.json
        assert response.json["model"]["weights"]["format"] == body["weights"]["format"]


def test_training_framework_is_a_request_field_reported_in_assumptions(client):
    body = {
        **FINE_TUNE,
        "training": {**FINE_TUNE["training"], "framework": "torchtitan", "torch_compile": True},
    }
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    used = response.json["assumptions"]
    assert (used["framework"], used["torch_compile"], used["attention_kernel"]) == (
        "torchtitan",
        True,
        "flash2",
    )


def test_expert_overlap_is_a_boolean_of_the_layout_echoed_in_the_assumptions(client):
    body = {
        "model": {"preset": "mixtral-8x7b"},
        "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 16,
            "parallelism": {"data": 16, "expert": 8, "zero_stage": 1, "expert_overlap": True},
        },
    }
    answer = client.post("/v1/estimates/training", json=body)
    assert answer.status_code == 200, answer.json
    assert answer.json["assumptions"]["parallelism"]["expert_overlap"] is True
    body["hardware"]["parallelism"]["expert_overlap"] = "sometimes"
    refused = client.post("/v1/estimates/training", json=body)
    assert refused.status_code == 422
    assert "hardware.parallelism.expert_overlap" in refused.json["errors"]


MOE = {
    "model": {"preset": "gpt-oss-120b"},
    "training": {"tokens": "1B", "global_batch_size": 512, "sequence_length": 4096, "micro_batch_size": 1},
    "hardware": {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": 64,
        "parallelism": {"data": 16, "pipeline": 4, "expert": 8, "zero_stage": 1},
    },
}


def test_recompute_modules_is_a_request_field_reported_in_assumptions(client):
    body = {**MOE, "training": {**MOE["training"], "recompute_modules": ["layernorm", "moe_act"]}}
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    assert response.json["assumptions"]["recompute_modules"] == ["moe_act", "layernorm"]
    default = client.post("/v1/estimates/training", json=MOE).json
    assert default["assumptions"]["recompute_modules"] == ["core_attn"]
    assert response.json["memory"]["per_device_bytes"] < default["memory"]["per_device_bytes"]


@pytest.mark.parametrize(
    ("training", "words"),
    [
        ({"recompute_modules": ["attention"]}, "core_attn"),
        ({"recompute_modules": "moe_act"}, "list"),
        ({"recompute_modules": ["moe_act"], "activation_recomputation": "full"}, "selective"),
        ({"recompute_modules": ["mla_up_proj"]}, "mla_up_proj"),
    ],
)
def test_bad_recompute_modules_are_422_naming_the_field_and_the_allowed_values(client, training, words):
    body = {**MOE, "training": {**MOE["training"], **training}}
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 422, response.json
    errors = response.json["errors"]
    field = next(k for k in errors if k.startswith("training.recompute_modules"))
    assert words.lower() in str(errors[field]).lower(), errors


FOLDED = {
    "model": {"preset": "qwen3-235b-a22b"},
    "training": {"tokens": "1B", "global_batch_size": 2048, "sequence_length": 4096, "micro_batch_size": 1},
    "hardware": {
        "accelerator": "nvidia-h100-sxm-80gb",
        "count": 256,
        "parallelism": {
            "data": 16, "tensor": 2, "pipeline": 8, "virtual_pipeline": 4, "expert": 32,
            "sequence_parallel": True, "zero_stage": 1,
        },
    },
}  # fmt: skip


def test_expert_ranks_may_span_tensor_ranks_with_expert_tensor(client):
    # the expert degree does not divide context × data: the layout runs only with expert_tensor 1, which is taken
    # (and said) when the request names none; naming it gives the same answer
    inferred = client.post("/v1/estimates/training", json=FOLDED)
    assert inferred.status_code == 200, inferred.json
    assert inferred.json["assumptions"]["parallelism"]["expert_tensor"] == 1
    assert any(n.startswith("expert_tensor 1 assumed") for n in inferred.json["assumptions"]["notes"])
    hardware = {
        **FOLDED["hardware"],
        "parallelism": {**FOLDED["hardware"]["parallelism"], "expert_tensor": 1},
    }
    response = client.post("/v1/estimates/training", json={**FOLDED, "hardware": hardware})
    assert response.status_code == 200, response.json
    assert response.json["assumptions"]["parallelism"]["expert_tensor"] == 1
    assert response.json["time"]["seconds"] == inferred.json["time"]["seconds"]


@pytest.mark.parametrize(
    ("expert_tensor", "field", "words"),
    [
        (3, "hardware.parallelism.expert_tensor", "[1, 2, 4, 8, 16, 32]"),
        (0, "hardware.parallelism.expert_tensor", "1"),
    ],
)
def test_bad_expert_tensor_is_422_naming_the_field_and_the_allowed_values(
    client, expert_tensor, field, words
):
    hardware = {
        **FOLDED["hardware"],
        "parallelism": {**FOLDED["hardware"]["parallelism"], "expert_tensor": expert_tensor},
    }
    response = client.post("/v1/estimates/training", json={**FOLDED, "hardware": hardware})
    assert response.status_code == 422, response.json
    assert words in str(response.json["errors"][field])


DRAFTED = {  # issue 30 §4: Llama 3.1 70B with a Llama 3.2 1B draft on 4 × H100 (vLLM, bf16)
    "model": {"preset": "llama-3.1-70b"},
    "weights": {"precision": "bf16"},
    "engine": "vllm",
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
    "output": {"suggestions": False},
}
SPECULATE = {"method": "draft_model", "acceptance_rate": 0.7}


def test_a_named_draft_shows_in_the_memory_breakdown_and_the_assumptions(app, client):
    body = {**DRAFTED, "serving": {"speculative": {**SPECULATE, "draft_model": {"preset": "llama-3.2-1b"}}}}
    plain = client.post("/v1/estimates/inference", json=DRAFTED)
    response = client.post("/v1/estimates/inference", json=body)
    assert response.status_code == 200, response.json
    assert response.json == _strip_none(_engine_answer(app, "inference", body))
    memory, draft = response.json["memory"], response.json["assumptions"]["speculative_draft"]
    assert (
        plain.json["memory"]["breakdown"]["draft"] == 0
        and "speculative_draft" not in plain.json["assumptions"]
    )
    assert memory["breakdown"]["draft"] > 1_235_814_400 * 2 / 4  # the sharded bf16 weights, plus its KV
    assert memory["max_batch_size"] < plain.json["memory"]["max_batch_size"]
    assert (draft["basis"], draft["weights_format"], draft["parameters"]) == ("named", "bf16", 1_235_814_400)
    assert draft["cost_ratio"] == pytest.approx(1_235_814_400 / 70_553_706_496, rel=1e-6)


@pytest.mark.parametrize(
    ("speculative", "field"),
    [
        ({"method": "mtp", "draft_model": {"preset": "llama-3.2-1b"}}, "serving.speculative.draft_model"),
        ({**SPECULATE, "draft_model": {"preset": "no-such-model"}}, "serving.speculative.draft_model.preset"),
        ({**SPECULATE, "draft_model": "llama-3.2-1b"}, "serving.speculative.draft_model"),
        (
            {**SPECULATE, "draft_model": {"architecture": "mlp", "parameters": "1B"}},
            "serving.speculative.draft_model",
        ),
    ],
)
def test_a_bad_draft_model_is_422_naming_it(client, speculative, field):
    response = client.post(
        "/v1/estimates/inference", json={**DRAFTED, "serving": {"speculative": speculative}}
    )
    assert response.status_code == 422, response.json
    assert field in response.json["errors"], response.json["errors"]
