"""Hand-checked training estimates against published figures (sources cited per test)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scalecost.engine.architecture import ModelSpec
from scalecost.engine.hardware import Catalog
from scalecost.engine.models import PRESETS
from scalecost.engine.parallelism import Parallelism, pipeline_bubble_fraction
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.model.activations import layer_activation_bytes
from scalecost.engine.training.model.memory import training_memory
from scalecost.engine.training.model.scaling import chinchilla_loss
from scalecost.engine.training.request import build_plan


@pytest.mark.parametrize(("zero", "gigabytes"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure_1_model_states(zero: int, gigabytes: float) -> None:
    # Rajbhandari et al. 2020 (ZeRO) Fig. 1: Ψ = 7.5B, N_d = 64, K = 12 → 120 / 31.4 / 16.6 / 1.9 GB per device
    model = ModelSpec("7.5B", "mlp", 7.5e9, 7.5e9)
    plan = replace(
        _plan(_gpt3_request()),
        model=model,
        par=Parallelism(data=64, zero_stage=zero),
        precision="fp16",
        optimizer="adam",
        sequence_length=1,
    )
    mem = training_memory(plan, 1, 1)
    states = mem.weights + mem.gradients + mem.optimizer_states
    assert states / 1e9 == pytest.approx(gigabytes, abs=0.05)


def _plan(request: dict):
    from .conftest import load_catalog

    return build_plan(request, load_catalog())


def _gpt3_request(**training: object) -> dict:
    return {
        "model": {"preset": "gpt-3-175b"},
        "training": {"tokens": 300e9, "global_batch_size": 1536, **training},
        "hardware": {
            "accelerator": "nvidia-a100-sxm-80gb",
            "count": 1024,
            "parallelism": {
                "data": 16,
                "tensor": 8,
                "pipeline": 8,
                "zero_stage": 1,
                "sequence_parallel": True,
            },
        },
    }


def test_gpt3_175b_on_300b_tokens_is_3_14e23_flops(catalog: Catalog) -> None:
    # Brown et al. 2020 Table D.1: GPT-3 175B training compute 3.14e23 FLOPs (6·N·D convention)
    out = estimate_training(_gpt3_request(), catalog)
    assert out["compute"]["six_nd_flops"] == pytest.approx(3.14e23, rel=0.01)
    # exact model FLOPs add causal attention scores and the LM head: a few % above 6ND, never below
    assert 1.0 < out["compute"]["total_flops"] / out["compute"]["six_nd_flops"] < 1.05
    assert out["compute"]["petaflop_days"] == pytest.approx(out["compute"]["total_flops"] / 8.64e19)


def test_full_recomputation_adds_a_forward_to_hardware_flops_only(catalog: Catalog) -> None:
    # bigscience math README / FORMULAS.md: full recompute → 8ND hardware FLOPs, model FLOPs unchanged
    full = estimate_training(_gpt3_request(activation_recomputation="full"), catalog)["compute"]
    none = estimate_training(_gpt3_request(activation_recomputation="none", flash_attention=False), catalog)[
        "compute"
    ]
    assert full["total_flops"] == none["total_flops"]
    assert none["hardware_flops"] == none["total_flops"]
    assert full["hardware_flops"] / full["total_flops"] == pytest.approx(4 / 3)


def test_chinchilla_70b_on_1_4t_tokens_is_compute_optimal(catalog: Catalog) -> None:
    # Hoffmann et al. 2022: Chinchilla 70B parameters on 1.4T tokens (20 tokens/parameter), C ≈ 5.76e23
    request = {
        "model": {"architecture": "transformer", "parameters": 70e9},
        "training": {"tokens": 1.4e12},
        "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 1024, "utilization": 0.4},
    }
    scaling = estimate_training(request, catalog)["scaling"]
    assert scaling["tokens_per_parameter"] == pytest.approx(20.0)
    assert scaling["compute_optimal_parameters"] == pytest.approx(70e9, rel=0.01)
    assert scaling["predicted_loss"] == pytest.approx(chinchilla_loss(70e9, 1.4e12))
    assert scaling["predicted_loss"] == pytest.approx(1.937, abs=0.002)  # 1.69 + 406.4/N^0.34 + 410.7/D^0.28


GPT3 = PRESETS["gpt-3-175b"].shape
S, B, H, A, T = 2048, 1, 12288, 96, 8


@pytest.mark.parametrize(
    ("recompute", "sequence_parallel", "expected_per_sbh"),
    [
        # Korthikanti et al. 2022 Table 2 (bytes per layer ÷ s·b·h), GPT-3 175B, t = 8, without dropout: their
        # 10 + 24/t + 5as/(ht) less the two residual dropout masks (1 byte each) and attention dropout's mask and
        # output (1 + 2 bytes per score); bench/measure_activations.py measures the rest
        ("none", False, 8 + 24 / T + 2 * A * S / (H * T)),  # tensor parallel (baseline)
        ("none", True, 32 / T + 2 * A * S / (H * T)),  # + sequence parallel
        ("selective", False, 8 + 24 / T),  # tensor parallel + selective recompute
        ("selective", True, 32 / T),  # + sequence parallel
        ("full", False, 2),  # full recompute keeps the layer input only
    ],
)
def test_korthikanti_table_2_activations(
    recompute: str, sequence_parallel: bool, expected_per_sbh: float
) -> None:
    par = Parallelism(tensor=T, sequence_parallel=sequence_parallel)
    stored, _ = layer_activation_bytes(GPT3, par, recompute, False, S, B)
    assert stored / (S * B * H) == pytest.approx(expected_per_sbh)


def test_flash_attention_never_stores_the_score_matrix() -> None:
    par = Parallelism(tensor=T)
    flash, _ = layer_activation_bytes(GPT3, par, "none", True, S, B)
    selective, _ = layer_activation_bytes(GPT3, par, "selective", False, S, B)
    assert flash == selective


def test_pipeline_bubble_matches_narayanan() -> None:
    # Narayanan et al. 2021 §2.2: (p − 1)/(m + p − 1); interleaving v divides the bubble time by v
    assert pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert pipeline_bubble_fraction(4, 8, 2) == pytest.approx(3 / 19)
    assert pipeline_bubble_fraction(1, 8) == 0.0


def test_llama2_7b_on_8_a100_response_shape(catalog: Catalog) -> None:
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 1e9, "global_batch_size": 64, "checkpoint_interval_steps": 500,
                     "validation": {"interval_steps": 500, "tokens": 1e6}},
        "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "parallelism": {"data": 8, "zero_stage": 1}},
        "output": {"details": True, "decimal_places": 2},
    }  # fmt: skip
    out = estimate_training(request, catalog)
    assert set(out) >= {
        "compute",
        "memory",
        "time",
        "cost",
        "range",
        "assumptions",
        "scaling",
        "recommendations",
    }
    assert out["memory"]["fits"] is True
    mem = out["memory"]
    assert sum(mem["breakdown"].values()) == pytest.approx(mem["per_device_bytes"])
    time = out["time"]
    assert sum(time["breakdown"].values()) == pytest.approx(time["seconds"])
    assert 0.3 < time["utilization"] < 0.7 and time["utilization_source"].startswith("predicted")
    assert out["range"]["low"]["seconds"] < time["seconds"] < out["range"]["high"]["seconds"]
    cost = out["cost"]
    assert cost["total_usd"] == pytest.approx(
        cost["billed_accelerator_hours"] * cost["usd_per_accelerator_hour"]
    )
    assert cost["billed_accelerator_hours"] >= cost["accelerator_hours"]  # start-up and increments are paid
    assert cost["price_source"]["provider"]
    assert out["assumptions"]["bytes_per_parameter"] == {
        "weights": 2.0,
        "gradients": 2.0,
        "optimizer_states": 12.0,
    }
    assert [row["name"] for row in out["details"]][0] == "parameters"
    assert time["human"].endswith("hours")


def test_given_utilization_sets_compute_time(catalog: Catalog) -> None:
    request = {
        "model": {"preset": "llama-2-7b"},
        # no interruptions, no stragglers: the wall time is the stepping alone (test_goodput.py tests both)
        "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096,
                     "interruptions_per_device_hour": 0, "straggler_share": 0},
        "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "utilization": 0.5,
                     "parallelism": {"zero_stage": 1}},
    }  # fmt: skip
    out = estimate_training(request, catalog)
    flops = out["compute"]["total_flops"]
    assert out["time"]["seconds"] == pytest.approx(flops / (8 * 312e12 * 0.5))
    assert out["time"]["utilization_source"] == "given"


def test_moe_holds_all_experts_but_computes_active(catalog: Catalog) -> None:
    request = {
        "model": {"preset": "mixtral-8x7b"},
        "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16,
                     "parallelism": {"data": 8, "tensor": 2, "expert": 8, "zero_stage": 1}},
    }  # fmt: skip
    out = estimate_training(request, catalog)
    mixtral = PRESETS["mixtral-8x7b"]
    assert out["compute"]["six_nd_flops"] == pytest.approx(6 * mixtral.active_parameters * 1e9)
    # weights on a device: non-expert / t + experts / (t · e), 2 bytes each
    assert out["memory"]["breakdown"]["weights"] < 2 * mixtral.total_parameters / 2 / 4


def test_resnet50_uses_samples_and_three_forward_passes(catalog: Catalog) -> None:
    request = {
        "model": {"preset": "resnet-50"},
        "training": {"samples": 1.28e6, "epochs": 90, "global_batch_size": 256, "precision": "fp16"},
        "hardware": {"accelerator": "nvidia-v100-sxm-16gb", "count": 8},
    }
    out = estimate_training(request, catalog)
    # training FLOPs = 3 × forward (8.2 GFLOPs per 224² image) × 90 epochs × 1.28M images
    assert out["compute"]["total_flops"] == pytest.approx(3 * 8.18e9 * 1.28e6 * 90, rel=0.01)
    assert out["compute"]["six_nd_flops"] is None and out["cost"]["usd_per_million_samples"] > 0
    assert out["memory"]["fits"]


def test_fp8_keeps_linear_inputs_in_one_byte() -> None:
    """FP8 training saves the four GEMM inputs of a gated layer at 1 byte (Transformer Engine; DeepSeek-V3 §3.3.2):
    per s·b·h, whole terms 8 → 6 and split terms lose 1 (attention output) + f/h (down-projection input)."""
    from scalecost.engine.models import resolve_model
    from scalecost.engine.parallelism import Parallelism

    shape = resolve_model({"preset": "llama-3-8b"}).shape
    assert shape is not None
    par = Parallelism()
    bf16, _ = layer_activation_bytes(shape, par, "selective", True, 8192, 1)
    fp8, _ = layer_activation_bytes(shape, par, "selective", True, 8192, 1, fp8_inputs=True)
    sbh = 8192 * shape.hidden_size
    assert bf16 - fp8 == pytest.approx(sbh * (2.0 + 1.0 + shape.ffn_hidden_size / shape.hidden_size))
