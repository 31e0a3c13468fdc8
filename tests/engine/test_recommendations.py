"""Every recommendation must be true when its merge patch is applied and the request re-estimated."""

from __future__ import annotations

import operator
from typing import Any

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.hardware import Catalog
from scalecost.engine.patch import merge_patch
from scalecost.engine.training.estimate import estimate_training

OPS = {"==": operator.eq, "<": operator.lt, ">": operator.gt}


def _get(response: dict, dotted: str) -> Any:
    value: Any = response
    for key in dotted.split("."):
        value = value[key]
    return value


def _base(preset: str, accelerator: str, count: int, **training: Any) -> dict:
    return {
        "model": {"preset": preset},
        "training": {"tokens": 1e9, **training},
        "hardware": {"accelerator": accelerator, "count": count},
    }


SCENARIOS = {
    "7b_no_zero_does_not_fit": _base("llama-2-7b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64),
    "70b_on_8_a100_does_not_fit": _base("llama-2-70b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64),
    "70b_on_one_gpu_needs_more_devices": _base("llama-3-70b", "nvidia-h100-sxm-80gb", 1, global_batch_size=8),
    "micro_batch_too_big": merge_patch(
        _base("llama-2-13b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64, micro_batch_size=8),
        {"hardware": {"parallelism": {"zero_stage": 3}}},
    ),
    "utilization_too_high": merge_patch(
        _base("llama-2-7b", "nvidia-h100-sxm-80gb", 8, global_batch_size=64),
        {"hardware": {"utilization": 0.95, "parallelism": {"zero_stage": 1}}},
    ),
    "undertrained": merge_patch(
        _base("gpt-2-1.5b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64, tokens=3e9),
        {"hardware": {"parallelism": {"zero_stage": 1}}},
    ),
    "overtrained": merge_patch(
        _base("llama-3-8b", "nvidia-h100-sxm-80gb", 64, global_batch_size=512, tokens=15e12),
        {"hardware": {"parallelism": {"zero_stage": 1}}},
    ),
    "heavy_checkpointing_and_validation": merge_patch(
        _base("llama-2-7b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64, checkpoint_interval_steps=10),
        {
            "training": {"validation": {"interval_steps": 5, "tokens": 5e6}},
            "hardware": {"parallelism": {"zero_stage": 1}},
        },
    ),
    "pipeline_without_interleaving": merge_patch(
        _base("llama-3-70b", "nvidia-h100-sxm-80gb", 64, global_batch_size=64, sequence_length=4096),
        {
            "hardware": {
                "parallelism": {"tensor": 8, "pipeline": 8, "sequence_parallel": True, "zero_stage": 1}
            }
        },
    ),
    "cheaper_accelerator_for_resnet": {
        "model": {"preset": "resnet-50"},
        "training": {"samples": 1.28e6, "epochs": 90, "global_batch_size": 256, "precision": "fp16"},
        "hardware": {"accelerator": "nvidia-v100-sxm-16gb", "count": 8},
        "cost": {"provider": "aws"},
    },
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_recommendation_holds_when_applied(name: str, catalog: Catalog) -> None:
    request = SCENARIOS[name]
    out = estimate_training(request, catalog)
    assert out["recommendations"], f"{name}: expected at least one recommendation"
    for rec in out["recommendations"]:
        assert rec["severity"] in ("info", "warning", "critical")
        assert rec["message"] and rec["change"]
        changed = estimate_training(merge_patch(request, rec["change"]), catalog)
        expected = rec["expected"]
        got = _get(changed, expected["field"])
        assert OPS[expected["op"]](got, expected["value"]), (name, rec["code"], got, expected)


def test_scenarios_cover_every_recommendation_code(catalog: Catalog) -> None:
    codes = {
        rec["code"] for r in SCENARIOS.values() for rec in estimate_training(r, catalog)["recommendations"]
    }
    assert codes >= {
        "does_not_fit",
        "utilization_above_typical",
        "undertrained",
        "far_from_compute_optimal",
        "checkpointing_overhead",
        "validation_overhead",
        "cheaper_accelerator",
        "interleave_pipeline",
    }


def test_merge_patch_follows_rfc_7386() -> None:
    # RFC 7386 §3 example
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}, "tags": ["a", "b"]}
    patch = {
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": None},
        "tags": ["c"],
    }
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["c"],
        "phoneNumber": "+01-123-456-7890",
    }
    assert target["title"] == "Goodbye!"  # not modified


def _errors(request: dict, catalog: Catalog) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as err:
        estimate_training(request, catalog)
    return err.value.errors


def test_unknown_accelerator_lists_valid_ids(catalog: Catalog) -> None:
    errors = _errors(_base("llama-2-7b", "nvidia-z9000", 8), catalog)
    assert "nvidia-a100-sxm-80gb" in errors["hardware.accelerator"][0]


@pytest.mark.parametrize(
    ("accelerator", "precision"),
    [("nvidia-a100-sxm-80gb", "fp8"), ("nvidia-v100-sxm-16gb", "bf16"), ("nvidia-t4", "bf16")],
)
def test_precision_the_accelerator_lacks_is_rejected(
    catalog: Catalog, accelerator: str, precision: str
) -> None:
    errors = _errors(_base("llama-2-7b", accelerator, 8, precision=precision), catalog)
    assert "supported:" in errors["training.precision"][0]


def test_all_impossible_fields_are_reported_at_once(catalog: Catalog) -> None:
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 1e9, "global_batch_size": 30, "micro_batch_size": 4, "sequence_length": 8192},
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 48,
            "parallelism": {"data": 1, "tensor": 3, "pipeline": 16, "expert": 2},
        },
        "cost": {"provider": "nowhere-cloud"},
    }
    errors = _errors(request, catalog)
    assert {
        "hardware.parallelism.tensor",  # 3 does not divide 32 heads
        "hardware.parallelism.expert",  # dense model
        "training.global_batch_size",  # 30 not divisible by 4 × 1
        "cost.provider",
    } <= set(errors)
    assert "allowed" in errors["hardware.parallelism.tensor"][0]
    assert "lambda" in errors["cost.provider"][0]


def test_sequence_past_the_context_is_a_context_extension_run_with_a_note(catalog: Catalog) -> None:
    """torchtitan trains Llama 3.1 8B (128K context) at 256K: estimated, and the answer says it is past the context."""
    request = _base("llama-2-7b", "nvidia-h100-sxm-80gb", 8)
    request["training"]["sequence_length"] = 8192  # Llama 2: 4,096
    answer = estimate_training(request, catalog)
    assert answer["assumptions"]["sequence_length"] == 8192
    assert any("context-extension" in note and "4096" in note for note in answer["assumptions"]["notes"])


def test_parallel_product_and_pipeline_depth(catalog: Catalog) -> None:
    request = _base("llama-2-7b", "nvidia-h100-sxm-80gb", 64)
    request["hardware"]["parallelism"] = {"data": 1, "tensor": 1, "pipeline": 64}
    errors = _errors(request, catalog)
    assert "hardware.parallelism.pipeline" in errors  # 64 > 32 layers
    request["hardware"]["parallelism"] = {"data": 3, "tensor": 2, "pipeline": 2}
    assert "hardware.parallelism" in _errors(request, catalog)


def test_a_cheaper_part_of_another_vendor_says_what_the_software_must_change(catalog: Catalog) -> None:
    """Moving a CUDA job to a TPU (or AMD, or an ASIC) is not a price change alone: the advice says so."""
    request = merge_patch(
        _base("llama-2-7b", "nvidia-a100-sxm-80gb", 8, global_batch_size=64),
        {"hardware": {"parallelism": {"data": 1, "tensor": 8}}, "cost": {"provider": None}},
    )
    recs = [
        r
        for r in estimate_training(request, catalog)["recommendations"]
        if r["code"] == "cheaper_accelerator"
    ]
    assert recs, "expected a cheaper accelerator for a TP8 7B on A100s"
    target = catalog.accelerators[recs[0]["change"]["hardware"]["accelerator"]]
    if target.vendor != "NVIDIA":
        assert "XLA" in recs[0]["message"] or "ROCm" in recs[0]["message"] or "SDK" in recs[0]["message"]
    else:
        assert "XLA" not in recs[0]["message"] and "ROCm" not in recs[0]["message"]


def test_stack_change_by_target_vendor(catalog: Catalog) -> None:
    from scalecost.engine.training.advice.catalog import _stack_change

    a100, h100 = catalog.accelerators["nvidia-a100-sxm-80gb"], catalog.accelerators["nvidia-h100-sxm-80gb"]
    tpu = next(a for a in catalog.accelerators.values() if a.kind == "tpu")
    amd = next(a for a in catalog.accelerators.values() if a.vendor == "AMD")
    assert _stack_change(a100, h100) is None
    assert "XLA" in (_stack_change(a100, tpu) or "")
    assert "ROCm" in (_stack_change(a100, amd) or "")


def test_catalog_scan_counts_no_cuda_context_on_a_tpu(catalog: Catalog) -> None:
    """31.7 GiB on an H100 is 30.7 GiB on a TPU v6e (no CUDA context), which has 31.25 GiB: the scan must keep it."""
    request = {
        "model": {"preset": "llama-3-8b"},
        "training": {
            "tokens": 1e10,
            "global_batch_size": 256,
            "sequence_length": 4864,
            "micro_batch_size": 1,
        },
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 32,
            "parallelism": {"data": 32, "zero_stage": 3},
        },
        "cost": {"provider": "aws"},
    }
    answer = estimate_training(request, catalog)
    gpu_bytes = answer["memory"]["per_device_bytes"]
    v6e = catalog.accelerators["google-tpu-v6e"]
    assert gpu_bytes > v6e.memory_bytes > gpu_bytes - 2**30  # fits only without the CUDA context
    cheaper = [r for r in answer["recommendations"] if r["code"] == "cheaper_accelerator"]
    assert cheaper and cheaper[0]["change"]["hardware"]["accelerator"] == "google-tpu-v6e"
    assert estimate_training(merge_patch(request, cheaper[0]["change"]), catalog)["memory"]["fits"]


def test_fit_advice_drops_what_full_recomputation_rules_out(catalog):
    """A selective run with named modules and expert overlap that does not fit: the full-recomputation advice also
    removes recompute_modules (selective only) and expert_overlap (refused with full recomputation), and applying
    the change as given validates and fits."""
    from scalecost.engine.patch import merge_patch

    request = {
        "model": {"preset": "mixtral-8x7b"},
        "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096, "micro_batch_size": 1,
                     "activation_recomputation": "selective", "recompute_modules": ["core_attn", "moe_act"]},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16,
                     "parallelism": {"data": 16, "expert": 8, "zero_stage": 1, "expert_overlap": True}},
    }  # fmt: skip
    answer = estimate_training(request, catalog)
    assert not answer["memory"]["fits"]
    fit = next(r for r in answer["recommendations"] if r["code"] == "does_not_fit")
    assert fit["change"]["training"] == {"activation_recomputation": "full", "recompute_modules": None}
    assert fit["change"]["hardware"]["parallelism"]["expert_overlap"] is None
    assert estimate_training(merge_patch(request, fit["change"]), catalog)["memory"]["fits"]
