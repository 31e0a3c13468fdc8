"""estimate_inference: response contract, memory anchors, KV cache, parallel layouts, validation, cost."""

from __future__ import annotations

from typing import Any

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.hardware import Catalog
from scalecost.engine.inference.estimate import estimate_inference

from .reference_catalog import load_catalog

CATALOG = load_catalog()
GB = 1e9


def estimate(**request: Any) -> dict[str, Any]:
    request.setdefault("hardware", {"accelerator": "nvidia-h100-sxm-80gb"})
    request.setdefault("output", {"suggestions": False})
    return estimate_inference(request, CATALOG)


def errors_of(**request: Any) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as exc:
        estimate(**request)
    return exc.value.errors


def test_response_carries_every_contract_field() -> None:
    r = estimate_inference(
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}}, CATALOG
    )
    assert set(r["memory"]) >= {
        "per_device_bytes",
        "total_bytes",
        "device_capacity_bytes",
        "fits",
        "breakdown",
        "kv_cache_bytes_per_token",
        "max_batch_size",
        "max_context_tokens",
        "human",
    }
    assert set(r["memory"]["breakdown"]) == {"weights", "kv_cache", "activations", "overhead", "draft"}
    assert r["memory"]["breakdown"]["draft"] == 0  # no speculative decoding, no draft
    assert set(r["latency"]) >= {"time_to_first_token_s", "time_per_output_token_s", "end_to_end_s", "bound"}
    assert set(r["latency"]["bound"]) == {"prefill", "decode"}
    assert set(r["throughput"]) >= {
        "output_tokens_per_second",
        "per_sequence_tokens_per_second",
        "requests_per_second",
        "samples_per_second",
    }
    assert set(r["cost"]) >= {
        "usd_per_hour",
        "usd_per_million_output_tokens",
        "usd_per_million_input_tokens",
        "price_source",
    }
    assert set(r["devices_needed"]) == {"to_fit", "to_meet_targets", "targets_met"}
    assert r["devices_needed"]["to_meet_targets"] is None  # no targets given
    assert isinstance(r["suggestions"], list) and isinstance(r["recommendations"], list)
    assert "details" not in r
    for s in r["suggestions"]:
        assert set(s) >= {
            "accelerator",
            "count",
            "fits",
            "meets_targets",
            "output_tokens_per_second",
            "usd_per_hour",
            "usd_per_million_output_tokens",
        }


# ------------------------------------------------------------------ KV cache per token (FORMULAS.md)
@pytest.mark.parametrize(
    ("preset", "kv_bytes"),
    [
        ("llama-2-7b", 512 * 1024),  # 2·32 layers·32 heads·128·2 B (MHA)
        ("llama-3-8b", 128 * 1024),  # GQA: 8 KV heads
        ("llama-3-70b", 320 * 1024),  # 2·80·8·128·2
        ("deepseek-v3", (512 + 64) * 61 * 2),  # MLA latent + decoupled RoPE key, 61 layers, fp16
    ],
)
def test_kv_cache_bytes_per_token_match_the_published_figures(preset: str, kv_bytes: int) -> None:
    one = estimate(model={"preset": preset}, hardware={"accelerator": "nvidia-h200-sxm-141gb", "count": 1})
    assert (
        one["memory"]["kv_cache_bytes_per_token"] == kv_bytes
    )  # (per token; fitting is not needed for this)
    if (
        preset == "deepseek-v3"
    ):  # MLA: the latent is shared by all heads, so every tensor-parallel rank holds it
        eight = estimate(
            model={"preset": preset}, hardware={"accelerator": "nvidia-h200-sxm-141gb", "count": 8}
        )
        assert eight["memory"]["kv_cache_bytes_per_token"] == kv_bytes


def test_fp8_kv_cache_halves_the_cache() -> None:
    base = estimate(model={"preset": "llama-3-8b"})
    fp8 = estimate(model={"preset": "llama-3-8b"}, kv_cache_precision="fp8")
    assert fp8["memory"]["kv_cache_bytes_per_token"] * 2 == base["memory"]["kv_cache_bytes_per_token"]


def test_kv_heads_replicate_when_tensor_degree_exceeds_them() -> None:
    # Llama-3-70B has 8 KV heads: t = 8 keeps one head per rank, t = 16 still one (replicated), never less
    t8 = estimate(
        model={"preset": "llama-3-70b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 8}
    )
    t16 = estimate(
        model={"preset": "llama-3-70b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 16}
    )
    assert t8["memory"]["kv_cache_bytes_per_token"] == 2 * 80 * 1 * 128 * 2
    assert t16["memory"]["kv_cache_bytes_per_token"] == t8["memory"]["kv_cache_bytes_per_token"]
    assert t16["memory"]["breakdown"]["weights"] < t8["memory"]["breakdown"]["weights"]


# ------------------------------------------------------------------ memory anchors
def test_7b_fp16_is_14_gb_of_weights_and_16_to_18_gb_at_moderate_context() -> None:
    r = estimate(model={"preset": "llama-2-7b"}, prompt_tokens=3072, output_tokens=1024)
    assert r["memory"]["breakdown"]["weights"] == pytest.approx(13.48 * GB, rel=0.01)
    assert 16 * GB <= r["memory"]["per_device_bytes"] <= 18 * GB


def test_7b_int8_is_about_7_gb_of_weights() -> None:
    r = estimate(model={"preset": "llama-2-7b"}, weights={"precision": "int8"})
    assert r["memory"]["breakdown"]["weights"] == pytest.approx(7.0 * GB, rel=0.02)


@pytest.mark.parametrize(
    ("engine", "weights"),
    [
        ("vllm", {"format": "awq"}),
        ("vllm", {"format": "gptq"}),
        ("llama.cpp", {"format": "gguf-q4_k_m"}),
        ("hf-transformers", {"format": "bnb-nf4"}),
    ],
)
def test_7b_4bit_is_4_to_5_gb_of_weights_and_6_to_8_gb_in_total(engine: str, weights: dict[str, str]) -> None:
    r = estimate(
        model={"preset": "llama-2-7b"},
        engine=engine,
        weights=weights,
        prompt_tokens=3072,
        output_tokens=1024,
        hardware={"accelerator": "nvidia-rtx-4090"},
    )
    assert 3.7 * GB <= r["memory"]["breakdown"]["weights"] <= 5 * GB
    assert 6 * GB <= r["memory"]["per_device_bytes"] <= 8 * GB


@pytest.mark.parametrize("card", ["nvidia-rtx-3090", "nvidia-rtx-4090"])
def test_a_24_gb_card_serves_7b_in_every_precision_but_fp32(card: str) -> None:
    acc = CATALOG.accelerators[card]
    for precision in ("fp16", "bf16", "fp8", "int8", "int4"):
        if precision == "fp8" and not acc.supports("fp8"):
            assert "weights.precision" in errors_of(
                model={"preset": "llama-2-7b"}, weights={"precision": "fp8"}, hardware={"accelerator": card}
            )
            continue
        r = estimate(
            model={"preset": "llama-2-7b"}, weights={"precision": precision}, hardware={"accelerator": card}
        )
        assert r["memory"]["fits"], precision
    fp32 = estimate(
        model={"preset": "llama-2-7b"}, weights={"precision": "fp32"}, hardware={"accelerator": card}
    )
    assert not fp32["memory"]["fits"]


def test_vllm_reserves_ten_percent_and_apple_counts_only_the_metal_share() -> None:
    h100 = estimate(model={"preset": "llama-3-8b"})
    assert h100["memory"]["device_capacity_bytes"] == pytest.approx(0.9 * 81559 * 2**20)  # nvidia-smi total
    mac = {"accelerator": "apple-m2-ultra"}
    default = estimate(model={"preset": "llama-3-8b"}, engine="llama.cpp", hardware=mac)
    wider = estimate(
        model={"preset": "llama-3-8b"},
        engine="llama.cpp",
        hardware={**mac, "apple_metal_memory_fraction": 0.9},
    )
    assert default["memory"]["device_capacity_bytes"] == pytest.approx(0.75 * 192 * GB)
    assert wider["memory"]["device_capacity_bytes"] == pytest.approx(0.9 * 192 * GB)


def test_max_batch_and_context_are_the_largest_that_fit() -> None:
    r = estimate(model={"preset": "llama-2-7b"}, hardware={"accelerator": "nvidia-rtx-4090"})
    m = r["memory"]
    assert estimate(
        model={"preset": "llama-2-7b"},
        hardware={"accelerator": "nvidia-rtx-4090"},
        batch_size=m["max_batch_size"],
    )["memory"]["fits"]
    # a static batch holds every sequence at once: one more does not fit
    assert not estimate(
        model={"preset": "llama-2-7b"},
        hardware={"accelerator": "nvidia-rtx-4090"},
        batch_size=m["max_batch_size"] + 1,
        serving={"scheduler": "static"},
    )["memory"]["fits"]
    # a continuous-batching engine runs what its KV cache holds and queues the rest (tests/engine/test_kv_queue.py);
    # vLLM allocates blocks as tokens are computed, so it holds more than max_batch_size whole contexts' worth of
    # requests (model/admission.py)
    over = 2 * m["max_batch_size"]
    queued = estimate(
        model={"preset": "llama-2-7b"}, hardware={"accelerator": "nvidia-rtx-4090"}, batch_size=over
    )
    load = queued["load"]
    assert queued["memory"]["fits"] and m["max_batch_size"] < load["running_requests"] < over
    assert load["queued_requests"] == over - load["running_requests"]
    context = r["assumptions"]["workload"]["prompt_tokens"] + r["assumptions"]["workload"]["output_tokens"]
    assert load["kv_admission"] == "on_demand" and load["kv_tokens_per_request"] < context
    assert m["max_context_tokens"] == 4096  # the whole Llama-2 context fits one sequence on 24 GB


def test_count_auto_picks_the_fewest_devices_that_fit() -> None:
    r = estimate(
        model={"preset": "llama-3-70b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"}
    )
    assert r["hardware"]["count"] == r["devices_needed"]["to_fit"] == 2
    assert r["memory"]["fits"]
    one = estimate(
        model={"preset": "llama-3-70b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 1}
    )
    assert not one["memory"]["fits"]


def test_layer_split_engines_divide_memory_but_do_not_speed_up() -> None:
    one = estimate(
        model={"preset": "llama-3-8b"}, engine="llama.cpp", hardware={"accelerator": "nvidia-rtx-4090"}
    )
    two = estimate(
        model={"preset": "llama-3-8b"},
        engine="llama.cpp",
        hardware={"accelerator": "nvidia-rtx-4090", "count": 2},
    )
    assert two["hardware"]["layout"] == "layer"
    assert two["memory"]["breakdown"]["weights"] == pytest.approx(
        one["memory"]["breakdown"]["weights"] / 2, rel=1e-6
    )
    assert two["latency"]["time_per_output_token_s"] >= one["latency"]["time_per_output_token_s"]


# ------------------------------------------------------------------ speed regimes
def test_decode_is_memory_bound_at_batch_one_and_compute_bound_at_large_batch() -> None:
    small = estimate(model={"preset": "llama-3-8b"}, prompt_tokens=128, output_tokens=32)
    large = estimate(model={"preset": "llama-3-8b"}, prompt_tokens=16, output_tokens=16, batch_size=1024)
    assert small["latency"]["bound"]["decode"] == "memory-bandwidth"
    assert large["latency"]["bound"]["decode"] == "compute"


def test_prefill_is_compute_bound_except_for_very_short_prompts() -> None:
    assert (
        estimate(model={"preset": "llama-3-8b"}, prompt_tokens=1024)["latency"]["bound"]["prefill"]
        == "compute"
    )
    tiny = estimate(model={"preset": "llama-3-8b"}, prompt_tokens=4)
    assert tiny["latency"]["bound"]["prefill"] == "memory-bandwidth"


def test_moe_decode_reads_only_the_experts_it_touches() -> None:
    r = estimate(
        model={"preset": "mixtral-8x7b"},
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
        output={"details": True, "suggestions": False},
    )
    step = next(d for d in r["details"] if d["name"] == "decode_weight_bytes_per_step")["value"]
    # batch 1 touches 2 of 8 experts: ≈ 12.9B active − input embedding ≈ 12.75B params × 2 B / 2 devices
    assert step == pytest.approx(12.75e9, rel=0.02)
    assert step < r["memory"]["breakdown"]["weights"] / 3


def test_vision_models_are_served_in_samples_per_second() -> None:
    r = estimate(model={"preset": "resnet-50"}, batch_size=32, hardware={"accelerator": "nvidia-t4"})
    assert r["throughput"]["output_tokens_per_second"] is None
    assert 1500 <= r["throughput"]["samples_per_second"] <= 3000
    assert r["latency"]["end_to_end_s"] == pytest.approx(32 / r["throughput"]["samples_per_second"], rel=1e-3)
    assert r["cost"]["usd_per_million_samples"] > 0


# ------------------------------------------------------------------ validation (all bad fields at once)
def test_every_bad_field_is_reported_in_one_error() -> None:
    errors = errors_of(
        model={"preset": "llama-3-8b"},
        weights={"precision": "fp3"},
        engine="tgi",
        batch_size=0,
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 0},
        targets={"ttft": 1},
    )
    assert {"weights.precision", "engine", "batch_size", "hardware.count", "targets.ttft"} <= set(errors)
    assert "vllm" in errors["engine"][0]


def test_unknown_accelerator_lists_the_valid_ids() -> None:
    errors = errors_of(model={"preset": "llama-3-8b"}, hardware={"accelerator": "nvidia-h300"})
    assert "nvidia-h100-sxm-80gb" in errors["hardware.accelerator"][0]


def test_context_beyond_the_models_maximum_is_rejected() -> None:
    errors = errors_of(model={"preset": "llama-2-7b"}, prompt_tokens=4000, output_tokens=200)
    assert "4096" in errors["output_tokens"][0] and "96" in errors["output_tokens"][0]


def test_tensor_degree_must_shard_the_heads() -> None:
    errors = errors_of(
        model={"preset": "llama-3-8b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 3}
    )
    assert "1, 2, 4, 8, 16, 32" in errors["hardware.count"][0]
    # MHA with 25 heads (GPT-2 XL): only 1, 5, 25 shard it
    errors = errors_of(
        model={"preset": "gpt-2-1.5b"}, hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 2}
    )
    assert "1, 5, 25" in errors["hardware.count"][0]


def test_fp8_needs_fp8_hardware() -> None:
    errors = errors_of(
        model={"preset": "llama-3-8b"},
        weights={"precision": "fp8"},
        kv_cache_precision="fp8",
        hardware={"accelerator": "nvidia-a100-sxm-80gb"},
    )
    assert {"weights.precision", "kv_cache_precision"} <= set(errors)
    assert "bf16" in errors["weights.precision"][0]


def test_formats_and_engines_must_match_the_hardware() -> None:
    assert (
        "llama.cpp"
        in errors_of(model={"preset": "llama-3-8b"}, weights={"format": "gguf-q4_0"})["weights.format"][0]
    )
    errors = errors_of(model={"preset": "llama-3-8b"}, hardware={"accelerator": "apple-m2-ultra"})
    assert "llama.cpp" in errors["engine"][0]
    errors = errors_of(
        model={"preset": "llama-3-8b"}, engine="tensorrt-llm", hardware={"accelerator": "amd-mi300x"}
    )
    assert "engine" in errors
    assert "kv_cache_precision" in errors_of(
        model={"preset": "llama-3-8b"}, engine="llama.cpp", kv_cache_precision="fp8"
    )


# ------------------------------------------------------------------ cost
def test_price_precedence_override_then_provider_then_catalog_default() -> None:
    h100 = {"accelerator": "nvidia-h100-sxm-80gb", "count": 2}
    default = estimate(model={"preset": "llama-3-8b"}, hardware=h100)
    cheapest = CATALOG.default_price(h100["accelerator"])
    assert default["cost"]["price_source"]["provider"] == cheapest.provider
    assert default["cost"]["usd_per_hour"] == pytest.approx(2 * cheapest.usd_per_hour)
    assert default["cost"]["priced_as_of"] == cheapest.as_of
    aws = estimate(model={"preset": "llama-3-8b"}, hardware=h100, cost={"provider": "aws"})
    assert aws["cost"]["usd_per_hour"] == pytest.approx(2 * 6.88)  # p5 after the June-2025 cut
    mine = estimate(
        model={"preset": "llama-3-8b"}, hardware=h100, cost={"provider": "aws", "usd_per_accelerator_hour": 1}
    )
    assert mine["cost"]["usd_per_hour"] == 2 and mine["cost"]["price_source"] == "override"
    padded = estimate(
        model={"preset": "llama-3-8b"},
        hardware=h100,
        cost={"usd_per_accelerator_hour": 1, "infrastructure_overhead": 0.25},
    )
    assert padded["cost"]["usd_per_hour"] == pytest.approx(2.5)
    errors = errors_of(
        model={"preset": "llama-3-8b"}, hardware=h100, cost={"provider": "oracle"}, batch_size=0
    )
    assert "aws" in errors["cost.provider"][0] and "batch_size" in errors


def test_no_price_gives_null_cost_and_a_note() -> None:
    r = estimate(model={"preset": "llama-3-8b"}, engine="llama.cpp", hardware={"accelerator": "apple-m4-max"})
    assert r["cost"]["usd_per_million_output_tokens"] is None and r["cost"]["price_source"] is None
    assert any("usd_per_accelerator_hour" in n for n in r["notes"])


def test_cost_per_million_tokens_follows_from_price_and_throughput() -> None:
    r = estimate(
        model={"preset": "llama-3-8b"},
        cost={"usd_per_accelerator_hour": 3.6},
        output={"suggestions": False},
        serving={"scheduler": "static"},
    )
    per_second = 3.6 / 3600
    assert r["cost"]["usd_per_million_output_tokens"] == pytest.approx(
        per_second / r["throughput"]["output_tokens_per_second"] * 1e6, rel=1e-9
    )
    assert r["cost"]["usd_per_million_input_tokens"] == pytest.approx(
        per_second * r["latency"]["time_to_first_token_s"] / 512 * 1e6, rel=1e-9
    )


def test_continuous_batching_charges_input_tokens_the_steps_that_carry_prefill() -> None:
    r = estimate(
        model={"preset": "llama-3-8b"},
        cost={"usd_per_accelerator_hour": 3.6},
        output={"suggestions": False},
        batch_size=16,
    )
    per_second, load = 3.6 / 3600, r["load"]
    assert load["scheduler"] == "continuous" and 0 < load["prefill_time_share"] < 1
    assert r["cost"]["usd_per_million_input_tokens"] == pytest.approx(
        per_second * load["prefill_time_share"] / (r["throughput"]["requests_per_second"] * 512) * 1e6,
        rel=1e-9,
    )
    assert r["cost"]["usd_per_million_output_tokens"] == pytest.approx(
        per_second / r["throughput"]["output_tokens_per_second"] * 1e6, rel=1e-9
    )


# ------------------------------------------------------------------ targets, details, rounding
def test_devices_to_meet_targets_is_the_fewest_count_that_meets_them() -> None:
    r = estimate(
        model={"preset": "llama-3-70b"},
        targets={"time_per_output_token_s": 0.02},
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"},
    )
    need = r["devices_needed"]["to_meet_targets"]
    assert need is not None and need > r["devices_needed"]["to_fit"]
    met = estimate(
        model={"preset": "llama-3-70b"},
        targets={"time_per_output_token_s": 0.02},
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": need},
    )
    assert met["devices_needed"]["targets_met"] and met["latency"]["time_per_output_token_s"] <= 0.02


def test_details_list_formulas_with_sources() -> None:
    r = estimate(model={"preset": "llama-3-8b"}, output={"details": True, "suggestions": False})
    assert r["details"] and all(
        set(d) == {"name", "formula", "value", "unit", "source"} for d in r["details"]
    )
    assert all(d["source"] for d in r["details"])


def test_decimal_places_set_the_human_strings_only() -> None:
    one = estimate(model={"preset": "llama-3-8b"})
    three = estimate(model={"preset": "llama-3-8b"}, output={"decimal_places": 3, "suggestions": False})
    assert (
        one["memory"]["human"]["weights"] == "15.0 GiB"
        and three["memory"]["human"]["weights"] == "14.958 GiB"
    )
    assert one["throughput"] == three["throughput"]  # numbers are never rounded


def test_empty_catalog_prices_are_fine() -> None:
    catalog = Catalog(CATALOG.accelerators, {})
    r = estimate_inference(
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}}, catalog
    )
    assert r["cost"]["usd_per_hour"] is None
    assert all(s["usd_per_hour"] is None for s in r["suggestions"])


@pytest.mark.parametrize(
    ("model", "accelerator", "mode"),
    [
        ({"preset": "vit-l-16"}, "nvidia-l4", "samples"),
        ({"preset": "bert-large"}, "nvidia-t4", "samples"),
        ({"architecture": "mlp", "parameters": "100M"}, "nvidia-l4", "samples"),
        ({"preset": "lstm-2x1500"}, "nvidia-t4", "tokens"),
        ({"architecture": "transformer", "parameters": "1B"}, "google-tpu-v5e", "tokens"),
        ({"preset": "llama-3-8b"}, "cpu-2s-xeon-spr", "tokens"),
        ({"preset": "llama-3-8b"}, "intel-gaudi2", "tokens"),
    ],
)
def test_every_architecture_and_accelerator_kind_gets_an_estimate(model, accelerator: str, mode: str) -> None:
    r = estimate(model=model, batch_size=8, hardware={"accelerator": accelerator})
    assert r["memory"]["fits"] and r["latency"]["end_to_end_s"] > 0
    if mode == "samples":
        assert r["throughput"]["samples_per_second"] > 0
        if r["model"]["architecture"] != "transformer":  # images have no token context
            assert r["memory"]["max_context_tokens"] is None
    else:
        assert r["throughput"]["output_tokens_per_second"] > 0
