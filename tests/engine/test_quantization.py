"""Bytes per weight of serving formats, precision/format agreement and engine support (quantization.py)."""

from __future__ import annotations

import pytest
from scalecost.engine.inference.model.formats import (
    ENGINE_FORMATS,
    ENGINES,
    FORMAT_PRECISION,
    default_kv_precision,
    resolve_weight_format,
    weight_bytes,
    weight_format,
)
from scalecost.engine.models import PRESETS

LLAMA2_7B = PRESETS["llama-2-7b"]


def _fmt(engine: str, precision: str | None = None, fmt: str | None = None):
    resolved, errors = resolve_weight_format(engine, precision, fmt)
    assert not errors, errors
    assert resolved is not None
    return resolved


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("gguf-q4_0", 4.5),  # ggml block_q4_0: 18 bytes per 32 weights
        ("gguf-q8_0", 8.5),  # ggml block_q8_0: 34 bytes per 32 weights
        ("gguf-q4_k_m", 4.85),  # llama.cpp-reported file sizes: 4.84-4.90 bpw
        ("gptq", 4.15625),  # 4 + (16-bit scale + 4-bit zero) / 128
        ("awq", 4.15625),
        ("bnb-nf4", 4.127),  # QLoRA §3: double quantization costs 0.127 bits/param
    ],
)
def test_real_bits_per_weight_of_each_format(name: str, bits: float) -> None:
    assert weight_format(name).body_bits == pytest.approx(bits, abs=1e-3)


def test_llama2_7b_fp16_weights_are_about_14_gb() -> None:
    # 6,738,415,616 params × 2 bytes = 13.48 GB (HF safetensors of Llama-2-7b-hf: 13.5 GB)
    assert weight_bytes(LLAMA2_7B, _fmt("vllm", "fp16")) == pytest.approx(13.48e9, rel=0.005)


def test_llama2_7b_int8_weights_are_about_7_gb() -> None:
    # 6.48B block params × 1 B + 0.26B embedding/head params × 2 B = 7.0 GB
    assert weight_bytes(LLAMA2_7B, _fmt("vllm", "int8")) == pytest.approx(7.0e9, rel=0.01)
    # GGUF Q8_0: 6.74B × 8.5 / 8 = 7.16 GB (llama.cpp reports 6.67 GiB = 7.16 GB, PR #3084 table)
    assert weight_bytes(LLAMA2_7B, _fmt("llama.cpp", "int8")) == pytest.approx(7.16e9, rel=0.01)


@pytest.mark.parametrize(
    ("engine", "fmt", "published_bytes", "source"),
    [
        ("vllm", "awq", 3.89e9, "TheBloke/Llama-2-7B-AWQ model.safetensors 3.89 GB"),
        ("vllm", "gptq", 3.89e9, "TheBloke/Llama-2-7B-GPTQ main branch 3.90 GB"),
        ("llama.cpp", "gguf-q4_0", 3.83e9, "llama.cpp PR #3084 table: LLaMA 7B Q4_0 3.56 GiB"),
        ("llama.cpp", "gguf-q4_k_m", 4.08e9, "llama.cpp PR #3084 table: LLaMA 7B Q4_K_M 3.80 GiB"),
    ],
)
def test_4bit_7b_weights_match_published_file_sizes(
    engine: str, fmt: str, published_bytes: float, source: str
) -> None:
    got = weight_bytes(LLAMA2_7B, _fmt(engine, fmt=fmt))
    assert 3.7e9 <= got <= 5e9  # anchor: a 4-bit 7B takes ≈ 4-5 GB (real files 3.8-4.1 GB)
    assert got == pytest.approx(published_bytes, rel=0.03), source


def test_format_implies_precision_when_precision_is_omitted() -> None:
    for fmt, precision in FORMAT_PRECISION.items():
        engine = next(e for e in ENGINES if fmt in ENGINE_FORMATS[e])
        assert _fmt(engine, None, fmt).precision == precision


def test_format_and_precision_must_agree() -> None:
    resolved, errors = resolve_weight_format("vllm", "fp16", "awq")
    assert resolved is None
    assert "int4" in errors["weights.format"][0]


def test_gguf_runs_only_on_llama_cpp() -> None:
    for engine in ("vllm", "tensorrt-llm", "hf-transformers"):
        _, errors = resolve_weight_format(engine, None, "gguf-q4_k_m")
        assert "llama.cpp" in errors["weights.format"][0]
    _, errors = resolve_weight_format("llama.cpp", None, "awq")
    assert "gguf-q4_0" in errors["weights.format"][0]  # names the formats llama.cpp accepts


def test_unknown_precision_and_format_are_reported_together() -> None:
    _, errors = resolve_weight_format("vllm", "fp2", "exl2")
    assert set(errors) == {"weights.precision", "weights.format"}
    assert "int4" in errors["weights.precision"][0] and "gptq" in errors["weights.format"][0]


def test_bare_int_precisions_mean_each_engines_usual_format() -> None:
    assert _fmt("llama.cpp", "int4").name == "gguf-q4_k_m"
    assert _fmt("llama.cpp", "int8").name == "gguf-q8_0"
    assert _fmt("hf-transformers", "int4").name == "bnb-nf4"
    assert _fmt("vllm", "int4").name == "w4a16-g128"
    assert _fmt("tensorrt-llm", "int8").name == "w8a16"


def test_llama_cpp_has_no_fp8_weights() -> None:
    _, errors = resolve_weight_format("llama.cpp", "fp8", None)
    assert "fp16" in errors["weights.precision"][0]


def test_kv_cache_defaults_to_the_activation_dtype() -> None:
    assert default_kv_precision("vllm", _fmt("vllm", "bf16")) == "bf16"
    assert default_kv_precision("vllm", _fmt("vllm", "fp8")) == "fp16"
    assert default_kv_precision("vllm", _fmt("vllm", "fp32")) == "fp32"
    assert default_kv_precision("llama.cpp", _fmt("llama.cpp", "fp32")) == "fp16"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset", ["llama-2-7b", "llama-3-8b", "mixtral-8x7b", "gpt-2-1.5b", "deepseek-v3"])
def test_lower_bit_precisions_never_need_more_weight_memory_on_one_engine(engine: str, preset: str) -> None:
    """fp32 ≥ 16-bit ≥ every 8-bit format (fp8, int8 kinds) ≥ every 4-bit format, on the same engine."""
    model = PRESETS[preset]
    classes: dict[int, list[float]] = {32: [], 16: [], 8: [], 4: []}
    width = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4}
    for precision in width:
        resolved, _ = resolve_weight_format(engine, precision, None)
        if resolved is not None:
            classes[width[precision]].append(weight_bytes(model, resolved))
    for fmt in ENGINE_FORMATS[engine]:
        classes[width[FORMAT_PRECISION[fmt]]].append(weight_bytes(model, _fmt(engine, fmt=fmt)))
    filled = [v for _, v in sorted(classes.items(), reverse=True) if v]
    for higher, lower in zip(filled, filled[1:], strict=False):
        assert max(lower) <= min(higher)
