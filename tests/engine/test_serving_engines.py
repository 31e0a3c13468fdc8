"""SGLang and ExLlamaV2 engines; EXL2, MXFP4 and NVFP4 formats: request → answer (issue 11)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.hardware import Catalog
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.model.formats import (
    EXL2_FORMATS,
    FORMATS,
    resolve_weight_format,
    weight_bytes,
)
from scalecost.engine.models import PRESETS

from .reference_catalog import load_catalog

CATALOG = load_catalog()
GB = 1e9


def estimate(catalog: Catalog = CATALOG, **request: Any) -> dict[str, Any]:
    request.setdefault("hardware", {"accelerator": "nvidia-h100-sxm-80gb"})
    request.setdefault("output", {"suggestions": False})
    return estimate_inference(request, catalog)


def errors_of(**request: Any) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as exc:
        estimate(**request)
    return exc.value.errors


def _weights(r: dict[str, Any]) -> float:
    return r["memory"]["breakdown"]["weights"]


# ------------------------------------------------------------------------------------------------ SGLang
def test_sglang_accepts_tensor_parallel_and_shards_weights() -> None:
    one = estimate(model={"preset": "llama-3-70b"}, engine="sglang", weights={"precision": "fp8"})
    four = estimate(
        model={"preset": "llama-3-70b"},
        engine="sglang",
        weights={"precision": "fp8"},
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
    )
    assert _weights(four) == pytest.approx(_weights(one) / 4)
    assert four["latency"]["time_per_output_token_s"] < one["latency"]["time_per_output_token_s"]
    # mem_fraction_static 0.88 at TP1, 0.85 at TP4 (server_args.py)
    assert one["memory"]["device_capacity_bytes"] == pytest.approx(0.88 * 80 * 2**30, rel=0.01)
    assert four["memory"]["device_capacity_bytes"] == pytest.approx(0.85 * 80 * 2**30, rel=0.01)


def test_sglang_refuses_a_tensor_degree_that_does_not_divide_the_heads() -> None:
    errors = errors_of(
        model={"preset": "llama-3-8b"},
        engine="sglang",
        hardware={"accelerator": "nvidia-h100-sxm-80gb", "count": 3},
    )
    assert "hardware.count" in errors and "1, 2, 4, 8" in errors["hardware.count"][0]


def test_sglang_decodes_like_vllm_per_step() -> None:
    """Same cuda-graph efficiency rows (no per-step SGLang figure published); the budgets differ. Scheduled like
    vLLM (mixed steps, no overlap) the figure is the same; under SGLang's own defaults (prompt-only steps, overlap
    scheduler) one request alone has no other prompt to wait for, so it differs only by reading the curve (1e-3)."""
    body = {"model": {"preset": "llama-3-8b"}, "weights": {"format": "awq"}}
    like_vllm = estimate(engine="sglang", serving={"mixed_chunk": True, "overlap_schedule": False}, **body)
    s = estimate(engine="sglang", **body)
    v = estimate(engine="vllm", **body)
    tpot = v["latency"]["time_per_output_token_s"]
    assert like_vllm["latency"]["time_per_output_token_s"] == pytest.approx(tpot)
    assert s["latency"]["time_per_output_token_s"] == pytest.approx(tpot, rel=1e-3)
    assert s["assumptions"]["memory_bandwidth_efficiency"] == v["assumptions"]["memory_bandwidth_efficiency"]


def test_sglang_loads_neither_gguf_nor_exl2() -> None:
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="sglang", weights={"format": "exl2-4.0bpw"})
    message = errors["weights.format"][0]
    assert "'exl2-4.0bpw'" in message and "'sglang'" in message
    for allowed in ("awq", "gptq", "mxfp4", "nvfp4"):
        assert allowed in message


# ------------------------------------------------------------------------------------------------ ExLlamaV2
def test_exl2_memory_follows_bits_per_weight() -> None:
    model = PRESETS["llama-2-7b"]
    s = model.shape
    assert s is not None
    table = s.vocab_size * s.hidden_size  # input embedding: host RAM on ExLlamaV2
    head = s.vocab_size * s.hidden_size
    body = model.total_parameters - table - head
    for name in ("exl2-3.0bpw", "exl2-4.0bpw", "exl2-6.5bpw"):
        bits = float(name[5:8])
        fmt, errors = resolve_weight_format("exllamav2", None, name)
        assert fmt is not None and not errors
        assert weight_bytes(model, fmt) == pytest.approx((body * bits + head * 6.3) / 8)
    r = estimate(
        model={"preset": "llama-2-7b"},
        engine="exllamav2",
        weights={"format": "exl2-4.0bpw"},
        hardware={"accelerator": "nvidia-rtx-4090"},
    )
    assert r["model"]["weights"]["bits_per_weight"] == 4.0
    assert r["model"]["weights"]["precision"] == "int4"
    assert _weights(r) == pytest.approx((body * 4.0 + head * 6.3) / 8)


def test_a_70b_fits_one_32gb_card_at_exl2_3bpw_but_not_at_4bpw() -> None:
    body = {
        "model": {"preset": "llama-2-70b"},
        "engine": "exllamav2",
        "hardware": {"accelerator": "nvidia-rtx-5090"},
    }
    assert estimate(weights={"format": "exl2-3.0bpw"}, **body)["memory"]["fits"]
    assert not estimate(weights={"format": "exl2-4.0bpw"}, **body)["memory"]["fits"]


def test_exllamav2_readme_70b_on_a_24gb_card_at_2_5bpw() -> None:
    """exllamav2 README: Llama2 70B runs on a single 24 GB GPU with a 2048-token context at 2.55 bpw."""
    r = estimate(
        model={"preset": "llama-2-70b"},
        engine="exllamav2",
        weights={"format": "exl2-2.5bpw"},
        prompt_tokens=1024,
        output_tokens=1024,
        hardware={"accelerator": "nvidia-rtx-4090"},
    )
    assert r["memory"]["fits"]


def test_exllamav2_maps_count_to_a_layer_split_with_a_note() -> None:
    r = estimate(
        model={"preset": "llama-3-70b"},
        engine="exllamav2",
        weights={"format": "exl2-4.0bpw"},
        hardware={"accelerator": "nvidia-rtx-4090", "count": 2},
    )
    assert r["memory"]["fits"]
    assert any("layer split" in n and "load_tp" in n for n in r["notes"])
    # a layer split never decodes faster than one device would at the same bytes
    too_many = errors_of(
        model={"preset": "llama-3-8b"},
        engine="exllamav2",
        hardware={"accelerator": "nvidia-rtx-4090", "count": 33},
    )
    assert "32" in too_many["hardware.count"][0]


def test_exllamav2_defaults_and_refusals() -> None:
    # bare int4 means EXL2 4.0 bpw; KV in fp16 even for a bf16 checkpoint
    r = estimate(
        model={"preset": "llama-3-8b"},
        engine="exllamav2",
        weights={"precision": "int4"},
        hardware={"accelerator": "nvidia-rtx-4090"},
    )
    assert r["model"]["weights"]["format"] == "exl2-4.0bpw"
    assert r["model"]["kv_cache_precision"] == "fp16"
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="exllamav2", weights={"format": "awq"})
    assert "exl2-4.0bpw" in errors["weights.format"][0] and "gptq" in errors["weights.format"][0]
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="exllamav2", weights={"precision": "fp8"})
    assert "'exllamav2'" in errors["weights.precision"][0] and "int4" in errors["weights.precision"][0]
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="exllamav2", kv_cache_precision="fp8")
    assert "fp16, int8" in errors["kv_cache_precision"][0]
    errors = errors_of(
        model={"preset": "llama-3-8b"}, engine="exllamav2", hardware={"accelerator": "apple-m2-ultra"}
    )
    assert "engine" in errors and "llama.cpp" in errors["engine"][0]


def test_exl2_runs_only_on_exllamav2() -> None:
    for engine in ("vllm", "tensorrt-llm", "llama.cpp", "hf-transformers"):
        _, errors = resolve_weight_format(engine, None, "exl2-3.0bpw")
        assert "weights.format" in errors
    errors = errors_of(model={"preset": "llama-3-8b"}, weights={"format": "exl2-3.0bpw", "precision": "int8"})
    assert "'int4'" in errors["weights.format"][0]  # 3.0 bpw is in the 4-bit class


def test_exl2_q8_cache_is_34_bytes_per_32_values() -> None:
    body = {
        "model": {"preset": "llama-3-8b"},
        "engine": "exllamav2",
        "hardware": {"accelerator": "nvidia-rtx-4090"},
    }
    fp16 = estimate(**body)["memory"]["kv_cache_bytes_per_token"]
    q8 = estimate(kv_cache_precision="int8", **body)["memory"]["kv_cache_bytes_per_token"]
    assert q8 == pytest.approx(fp16 / 2 * 34 / 32)


# ------------------------------------------------------------------------------------------------ MXFP4 / NVFP4
def test_mxfp4_is_4_25_bits_on_gpt_oss_experts_and_bf16_elsewhere() -> None:
    """gpt-oss-120b: OpenAI model card checkpoint 60.8 GiB (MXFP4 experts, bf16 rest)."""
    r = estimate(model={"preset": "gpt-oss-120b"}, weights={"format": "mxfp4"})
    assert r["model"]["weights"]["precision"] == "fp4"
    assert r["model"]["weights"]["bits_per_weight"] == 4.25
    assert _weights(r) / 2**30 == pytest.approx(60.8, rel=0.03)
    assert r["memory"]["fits"]  # the model card: fits a single 80 GB GPU


def test_nvfp4_is_4_5_bits_with_16_bit_embeddings() -> None:
    model = PRESETS["llama-3-8b"]
    s = model.shape
    assert s is not None
    embedding = 2 * s.vocab_size * s.hidden_size
    r = estimate(model={"preset": "llama-3-8b"}, weights={"format": "nvfp4"}, engine="tensorrt-llm")
    assert _weights(r) == pytest.approx(((model.total_parameters - embedding) * 4.5 + embedding * 16) / 8)
    # a bare fp4 precision means NVFP4 on the NVIDIA-led engines
    assert (
        estimate(model={"preset": "llama-3-8b"}, weights={"precision": "fp4"})["model"]["weights"]["format"]
        == "nvfp4"
    )


def test_fp4_uses_the_fp4_peak_when_the_accelerator_has_one() -> None:
    """Without an fp4 peak the weights de-quantize (weight-only, 16-bit compute); with one, prefill speeds up.
    Both catalogs are built here, so the test holds whether or not the shipped catalog lists an fp4 peak."""
    acc = CATALOG.accelerators["nvidia-b200"]
    fp8 = acc.peak("fp8")
    assert fp8 is not None
    peaks = {k: v for k, v in acc.peak_flops_per_s.items() if k != "fp4"}

    def catalog_with(peak: dict[str, float | None]) -> Catalog:
        b200 = replace(acc, peak_flops_per_s=peak)
        return Catalog({**CATALOG.accelerators, "nvidia-b200": b200}, CATALOG.prices)

    body = {
        "model": {"preset": "llama-3-70b"},
        "weights": {"format": "nvfp4"},
        "prompt_tokens": 4096,
        "hardware": {"accelerator": "nvidia-b200"},
    }
    without = estimate(catalog_with(peaks), **body)
    assert any("no FP4 peak" in n for n in without["notes"])
    with_fp4 = estimate(catalog_with({**peaks, "fp4": 2 * fp8}), **body)
    assert not any("no FP4 peak" in n for n in with_fp4["notes"])
    assert with_fp4["latency"]["time_to_first_token_s"] < 0.5 * without["latency"]["time_to_first_token_s"]
    assert with_fp4["memory"]["breakdown"]["weights"] == without["memory"]["breakdown"]["weights"]


def test_fp4_formats_are_refused_where_no_engine_kernel_exists() -> None:
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="llama.cpp", weights={"format": "mxfp4"})
    assert "gguf-q4_k_m" in errors["weights.format"][0]
    errors = errors_of(model={"preset": "llama-3-8b"}, engine="hf-transformers", weights={"precision": "fp4"})
    assert "weights.precision" in errors and "int4" in errors["weights.precision"][0]
    errors = errors_of(
        model={"preset": "llama-3-8b"},
        engine="vllm",
        weights={"format": "nvfp4"},
        hardware={"accelerator": "google-tpu-v5e"},
    )
    assert "GPU" in errors["weights.format"][0]
    errors = errors_of(model={"preset": "llama-3-8b"}, weights={"format": "mxfp4", "precision": "int4"})
    assert "'fp4'" in errors["weights.format"][0]


def test_every_new_format_is_listed_once() -> None:
    assert {"mxfp4", "nvfp4", "exl2-2.5bpw", "exl2-8.0bpw"} <= set(FORMATS)
    assert len(FORMATS) == len(set(FORMATS)) and len(EXL2_FORMATS) == 12
