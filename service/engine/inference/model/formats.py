"""Weight formats for serving: real bits per weight, precision ↔ format agreement, engine support.

Rules (documented once, used by `inference`):
- `weights.format` implies a precision (gptq/awq/gguf-q4_*/bnb-nf4 → int4; gguf-q8_0/bnb-int8 → int8).
  Omit `weights.precision` and it is inferred from the format; give both and they must agree.
- A bare `int8`/`int4` precision means the engine's usual format: llama.cpp → GGUF Q8_0 / Q4_K_M,
  hf-transformers → bitsandbytes int8 / NF4, vLLM and TensorRT-LLM → weight-only W8A16 / W4A16 group-128.
- GGUF runs only on llama.cpp (vLLM's GGUF loader is experimental, transformers de-quantizes GGUF to 16-bit);
  GPTQ/AWQ/bitsandbytes do not run on llama.cpp; TensorRT-LLM has no bitsandbytes path and no fp32 KV.
- fp8 weights need an accelerator with an fp8 peak (Ada, Hopper, Blackwell, MI300, Gaudi, Trainium).
- fp4 weights (mxfp4, nvfp4) run on vLLM, TensorRT-LLM and SGLang; the matmuls use the accelerator's fp4 peak
  when the catalog lists one, else the weights de-quantize to 16-bit compute (weight-only, vLLM's Marlin FP4
  fallback), see `compute_precision_on`.
- EXL2 (`exl2-<b>bpw`) runs only on ExLlamaV2, which also loads GPTQ and 16-bit checkpoints (computed in fp16).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...architecture import ModelSpec, embedding_parameters, mlp_parameters
from ...i18n import _

ENGINES = ("vllm", "tensorrt-llm", "llama.cpp", "hf-transformers", "sglang", "exllamav2")
WEIGHT_PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")
# EXL2 average bits per weight offered: exllamav2 README "EXL2 quantization": any average between 2 and 8 bpw
# (convert.py -b takes a float); we list the half-bit steps from 2.5 (the README's smallest benchmarked quant).
EXL2_BITS = (2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0)
EXL2_FORMATS = tuple(f"exl2-{b:.1f}bpw" for b in EXL2_BITS)
FORMATS = (
    "gptq",
    "awq",
    "gguf-q4_0",
    "gguf-q4_k_m",
    "gguf-q8_0",
    "bnb-nf4",
    "bnb-int8",
    "mxfp4",
    "nvfp4",
    *EXL2_FORMATS,
)
KV_PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8")

# Storage bytes per KV element (IEEE 754 binary32/binary16, bfloat16, OCP FP8 E4M3/E5M2, INT8 with per-head
# scales — TensorRT-LLM INT8 KV cache).
KV_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0}
# llama.cpp's 8-bit cache type is q8_0: 34 bytes per 32 values (ggml block_q8_0)
LLAMA_CPP_Q8_0_KV_BYTES = 34 / 32

# Which bit class each format belongs to (the precision it implies).
FORMAT_PRECISION = {
    "gptq": "int4",
    "awq": "int4",
    "gguf-q4_0": "int4",
    "gguf-q4_k_m": "int4",
    "bnb-nf4": "int4",
    "gguf-q8_0": "int8",
    "bnb-int8": "int8",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    # EXL2 mixes 2-8-bit levels: up to 5 bpw it is in the 4-bit class (like Q4_K_M at 4.85), above it the 8-bit one
    **{f: ("int4" if b <= 5.0 else "int8") for f, b in zip(EXL2_FORMATS, EXL2_BITS, strict=True)},
}

# Formats each engine can load; None = plain precision with no named format.
ENGINE_FORMATS: dict[str, frozenset[str]] = {
    # vLLM docs "Quantization": GPTQ, AWQ, BitsAndBytes; GGUF is experimental there and excluded here.
    "vllm": frozenset({"gptq", "awq", "bnb-nf4", "bnb-int8"}),
    # TensorRT-LLM docs "Quantization": INT4/INT8 weight-only, AWQ, GPTQ, FP8, SmoothQuant; no bitsandbytes/GGUF.
    "tensorrt-llm": frozenset({"gptq", "awq"}),
    # llama.cpp loads GGUF only (README "Supported models ... GGUF").
    "llama.cpp": frozenset({"gguf-q4_0", "gguf-q4_k_m", "gguf-q8_0"}),
    # transformers quantization docs: GPTQ, AWQ, bitsandbytes load quantized; GGUF is de-quantized on load.
    "hf-transformers": frozenset({"gptq", "awq", "bnb-nf4", "bnb-int8"}),
    # SGLang docs "Quantization" (platform table): awq, gptq, bitsandbytes, mxfp4, modelopt_fp4 (NVFP4); its gguf
    # path is left out like vLLM's (GGUF here means llama.cpp).
    "sglang": frozenset({"gptq", "awq", "bnb-nf4", "bnb-int8", "mxfp4", "nvfp4"}),
    # exllamav2 README "EXL2 quantization": "supports the same 4-bit GPTQ models as V1, but also a new EXL2 format"
    "exllamav2": frozenset({"gptq", *EXL2_FORMATS}),
}
# vLLM: quantization "mxfp4" (gpt-oss checkpoints) and ModelOpt/compressed-tensors NVFP4 (vLLM docs
# "Quantization"); TensorRT-LLM docs "Quantization": NVFP4 and MXFP4 recipes.
ENGINE_FORMATS["vllm"] = ENGINE_FORMATS["vllm"] | {"mxfp4", "nvfp4"}
ENGINE_FORMATS["tensorrt-llm"] = ENGINE_FORMATS["tensorrt-llm"] | {"mxfp4", "nvfp4"}

# Precisions an engine cannot run at all: llama.cpp has no fp8/fp4 GGUF type (ggml.h ggml_type list);
# transformers' fp4 path is not modelled; ExLlamaV2 computes in fp16 (no fp32 path, no fp8/fp4 kernels).
ENGINE_EXCLUDED_PRECISIONS: dict[str, frozenset[str]] = {
    "llama.cpp": frozenset({"fp8", "fp4"}),
    "hf-transformers": frozenset({"fp4"}),
    "exllamav2": frozenset({"fp32", "fp8", "fp4"}),
}

# KV-cache dtypes per engine: vLLM kv_cache_dtype auto|fp8 (EngineArgs); TensorRT-LLM FP8 and INT8 KV cache
# (docs "Quantization"); llama.cpp cache types f32/f16/bf16/q8_0/q4_0 (int8 = q8_0, no fp8); transformers'
# DynamicCache keeps the model dtype (QuantizedCache is int2/int4 only).
ENGINE_KV_PRECISIONS: dict[str, frozenset[str]] = {
    "vllm": frozenset({"fp32", "fp16", "bf16", "fp8"}),
    "tensorrt-llm": frozenset({"fp16", "bf16", "fp8", "int8"}),
    "llama.cpp": frozenset({"fp32", "fp16", "bf16", "int8"}),
    "hf-transformers": frozenset({"fp32", "fp16", "bf16"}),
    # SGLang --kv-cache-dtype auto|fp8_e5m2|fp8_e4m3 ("auto" = model dtype), as vLLM
    "sglang": frozenset({"fp32", "fp16", "bf16", "fp8"}),
    # ExLlamaV2 caches: FP16, Q8/Q6/Q4 (ExLlamaV2Cache_Q8 = int8 here); its FP8 cache is not supported by the
    # dynamic generator (README "Dynamic generator")
    "exllamav2": frozenset({"fp16", "int8"}),
}


def kv_element_bytes(engine: str, precision: str) -> float:
    """Bytes per stored K or V element."""
    if engine in ("llama.cpp", "exllamav2") and precision == "int8":
        # ExLlamaV2Cache_Q8: uint8 values + one fp16 scale per 32 (cache.py shape_s = head_dim // 32) = 34/32 B
        return LLAMA_CPP_Q8_0_KV_BYTES
    return KV_BYTES[precision]


# What a bare int8/int4 precision means on each engine (module docstring).
ENGINE_DEFAULT_FORMAT: dict[str, dict[str, str]] = {
    "llama.cpp": {"int8": "gguf-q8_0", "int4": "gguf-q4_k_m"},
    "hf-transformers": {"int8": "bnb-int8", "int4": "bnb-nf4"},
    # a bare int4/int8 on ExLlamaV2 means an EXL2 quant at that average (4.0 / 8.0 bpw)
    "exllamav2": {"int8": "exl2-8.0bpw", "int4": "exl2-4.0bpw"},
}


@dataclass(frozen=True)
class WeightFormat:
    """Bits per stored weight: transformer-block matrices vs. token embedding + LM head."""

    name: str  # a FORMATS id, or "fp16", "w8a16", "w4a16-g128", ... for plain precisions
    precision: str  # bit class: one of WEIGHT_PRECISIONS
    body_bits: float
    embedding_bits: float
    family: str  # efficiency-table family: 16-bit | fp8 | int8 | int4 | bnb-int8 | bnb-nf4 | exl2
    source: str
    # MoE models: bits of the block weights outside the routed experts (None = body_bits); gpt-oss ships only
    # its expert MLPs in MXFP4, attention and router stay bf16 (OpenAI gpt-oss model card)
    dense_bits: float | None = None
    # bits of the LM head when it differs from the input embedding (None = embedding_bits for both)
    head_bits: float | None = None
    # the input embedding table stays in host memory (ExLlamaV2 set_device_map embed_cpu=True): no device bytes
    embedding_on_host: bool = False

    @property
    def compute_precision(self) -> str:
        """Precision the matmuls run at: fp8 and 16/32-bit natively; weight-only formats de-quantize to fp16.
        fp4 is accelerator-dependent: see compute_precision_on."""
        return self.precision if self.precision in ("fp32", "fp16", "bf16", "fp8") else "fp16"


# group-128 int4 with fp16 scale + packed 4-bit zero per group: 4 + (16 + 4)/128 bits — AutoGPTQ/AutoAWQ
# quant_config (w_bit 4, q_group_size 128, zero_point) and Frantar et al. 2023 (GPTQ) §5.
_G128_INT4_BITS = 4 + 20 / 128
_FORMATS: dict[str, WeightFormat] = {
    "fp32": WeightFormat("fp32", "fp32", 32, 32, "16-bit", "IEEE 754 binary32"),
    "fp16": WeightFormat("fp16", "fp16", 16, 16, "16-bit", "IEEE 754 binary16"),
    "bf16": WeightFormat("bf16", "bf16", 16, 16, "16-bit", "bfloat16"),
    # vLLM FP8 (W8A8): per-tensor scales, lm_head and embeddings stay 16-bit (vLLM docs "FP8 W8A8")
    "fp8": WeightFormat(
        "fp8", "fp8", 8, 16, "fp8", "vLLM docs FP8 W8A8: layers fp8, lm_head/embeddings 16-bit"
    ),
    # weight-only int8 with a per-channel scale (gpt-fast quantize.py int8; TRT-LLM W8A16); embeddings 16-bit
    "w8a16": WeightFormat("w8a16", "int8", 8, 16, "int8", "gpt-fast quantize.py int8 weight-only"),
    "w4a16-g128": WeightFormat(
        "w4a16-g128", "int4", _G128_INT4_BITS, 16, "int4", "group-128 int4 weight-only (TRT-LLM/vLLM W4A16)"
    ),
    "gptq": WeightFormat(
        "gptq", "int4", _G128_INT4_BITS, 16, "int4", "GPTQ g128: 4 + 20/128 bits; 16-bit embeddings/head"
    ),
    "awq": WeightFormat(
        "awq", "int4", _G128_INT4_BITS, 16, "int4", "AutoAWQ g128 zero-point: 4 + 20/128 bits"
    ),
    # ggml-common.h block_q4_0: fp16 scale + 32 × 4 bit = 18 B per 32 weights = 4.5 bpw; llama-quantize keeps
    # output.weight at Q6_K (6.5625 bpw) and token_embd at Q4_0 → embeddings + head average 5.53 bpw
    "gguf-q4_0": WeightFormat(
        "gguf-q4_0", "int4", 4.5, (4.5 + 6.5625) / 2, "int4", "ggml block_q4_0 18 B / 32 weights; Q6_K output"
    ),
    # Q4_K_M mixes Q4_K (4.5 bpw) and Q6_K (6.56 bpw) tensors: llama.cpp reports Llama-2-7B 3.80 GiB (4.84 bpw,
    # llama.cpp PR #3084 table) and Llama-3-8B 4.58 GiB (4.90 bpw, XiongjieDai GPU-Benchmarks README)
    "gguf-q4_k_m": WeightFormat(
        "gguf-q4_k_m", "int4", 4.85, 4.85, "int4", "llama.cpp Q4_K_M ≈ 4.85 bpw measured"
    ),
    # ggml-common.h block_q8_0: fp16 scale + 32 × int8 = 34 B per 32 weights = 8.5 bpw
    "gguf-q8_0": WeightFormat("gguf-q8_0", "int8", 8.5, 8.5, "int8", "ggml block_q8_0: 34 B / 32 weights"),
    # QLoRA (Dettmers et al. 2023) §3: NF4 + double quantization = 4 + 8/64 + 32/(64·256) = 4.127 bits
    "bnb-nf4": WeightFormat(
        "bnb-nf4", "int4", 4.127, 16, "bnb-nf4", "QLoRA §3 NF4 + double quant 4.127 bits"
    ),
    # LLM.int8() (Dettmers et al. 2022) §3: int8 weights + fp32 row scale; outliers handled in activations
    "bnb-int8": WeightFormat(
        "bnb-int8", "int8", 8 + 32 / 4096, 16, "bnb-int8", "LLM.int8(): int8 + row scale"
    ),
}
# OCP Microscaling Formats (MX) v1.0 §5: MXFP4 = 32 E2M1 elements (4 bit) sharing one E8M0 scale (8 bit)
# → 4 + 8/32 = 4.25 bits; gpt-oss keeps attention, router and embeddings in bf16 (model card)
_FORMATS["mxfp4"] = WeightFormat(
    "mxfp4", "fp4", 4 + 8 / 32, 16, "int4", "OCP MX v1.0: E2M1 + E8M0 scale per 32 = 4.25 bits", dense_bits=16
)
# NVIDIA 'Introducing NVFP4' (2025): E2M1 with an FP8 E4M3 scale per 16 values + one FP32 scale per tensor
# → 4 + 8/16 = 4.5 bits (the per-tensor scale is negligible); ModelOpt keeps lm_head/embeddings 16-bit
_FORMATS["nvfp4"] = WeightFormat(
    "nvfp4", "fp4", 4 + 8 / 16, 16, "int4", "NVIDIA NVFP4 blog: E2M1 + E4M3 scale per 16 = 4.5 bits"
)
# EXL2: convert.py's -b is the average over the decoder layers' total bits (quantized values, group scales,
# permutation: conversion/qparams.py total_bits; optimize.py weight_budget = numel × target bpw), so `b` already
# includes its overhead. The head is quantized at -hb 6 ≈ 6.3 bpw (doc/convert.md) and the token embedding stays
# fp16 in system RAM (model.py set_device_map embed_cpu=True).
EXL2_HEAD_BITS = 6.3
for _name, _bits in zip(EXL2_FORMATS, EXL2_BITS, strict=True):
    _FORMATS[_name] = WeightFormat(
        _name,
        FORMAT_PRECISION[_name],
        _bits,
        16,
        "exl2",
        f"exllamav2 convert.py -b {_bits}: {_bits} bpw average incl. scales; head 6.3 bpw; embedding in host RAM",
        head_bits=EXL2_HEAD_BITS,
        embedding_on_host=True,
    )
# GGUF F32/F16/BF16 files store every tensor (incl. embeddings) at that width (ggml_type)
_PLAIN = {
    "fp32": "fp32",
    "fp16": "fp16",
    "bf16": "bf16",
    "fp8": "fp8",
    "int8": "w8a16",
    "int4": "w4a16-g128",
    "fp4": "nvfp4",
}


def resolve_weight_format(
    engine: str, precision: str | None, fmt: str | None
) -> tuple[WeightFormat | None, dict[str, list[str]]]:
    """Pick the WeightFormat for (engine, precision, format) or return field errors (collected, not raised)."""
    errors: dict[str, list[str]] = {}
    if precision is not None and precision not in WEIGHT_PRECISIONS:
        errors["weights.precision"] = [
            _("Unknown precision {precision}; valid: {WEIGHT_PRECISIONS}.").format(
                precision=repr(precision), WEIGHT_PRECISIONS=", ".join(WEIGHT_PRECISIONS)
            )
        ]
    if fmt is not None and fmt not in FORMATS:
        errors["weights.format"] = [
            _("Unknown format {fmt}; valid: {FORMATS}.").format(fmt=repr(fmt), FORMATS=", ".join(FORMATS))
        ]
    if errors or engine not in ENGINES:
        return None, errors
    if fmt is not None:
        implied = FORMAT_PRECISION[fmt]
        if precision is not None and precision != implied:
            errors["weights.format"] = [
                _(
                    "Format {fmt} stores {implied} weights but weights.precision is {precision}; set precision "
                    "to {implied2} or omit it (it is inferred from the format)."
                ).format(fmt=repr(fmt), implied=implied, precision=repr(precision), implied2=repr(implied))
            ]
            return None, errors
        if fmt not in ENGINE_FORMATS[engine]:
            valid = ", ".join(sorted(ENGINE_FORMATS[engine]))
            errors["weights.format"] = [
                _(
                    "Format {fmt} does not run on engine {engine}; formats for {engine2}: {valid} (GGUF runs "
                    "only on llama.cpp)."
                ).format(fmt=repr(fmt), engine=repr(engine), engine2=engine, valid=valid)
            ]
            return None, errors
        return on_engine(engine, _FORMATS[fmt]), errors
    precision = precision or "fp16"
    if precision in ENGINE_EXCLUDED_PRECISIONS.get(engine, frozenset()):
        allowed = [p for p in WEIGHT_PRECISIONS if p not in ENGINE_EXCLUDED_PRECISIONS[engine]]
        errors["weights.precision"] = [
            _("Engine {engine} has no {precision} weights; valid: {allowed}.").format(
                engine=repr(engine), precision=precision, allowed=", ".join(allowed)
            )
        ]
        return None, errors
    name = ENGINE_DEFAULT_FORMAT.get(engine, {}).get(precision) or _PLAIN[precision]
    return on_engine(engine, _FORMATS[name]), errors


def on_engine(engine: str, fmt: WeightFormat) -> WeightFormat:
    """ExLlamaV2 keeps every model's token embedding in host memory (model.py set_device_map embed_cpu=True)."""
    if engine == "exllamav2" and not fmt.embedding_on_host:
        return replace(fmt, embedding_on_host=True)
    return fmt


def weight_format(name: str) -> WeightFormat:
    """A format by name (FORMATS ids or the plain names fp32/fp16/bf16/fp8/w8a16/w4a16-g128)."""
    return _FORMATS[name]


def default_kv_precision(engine: str, fmt: WeightFormat) -> str:
    """KV cache defaults to the activation dtype: bf16 for bf16 models, fp32 for fp32, else fp16.

    vLLM kv_cache_dtype "auto" = model dtype (vLLM EngineArgs docs); llama.cpp type_k/type_v default f16
    (common.h); TensorRT-LLM has no fp32 KV path, so fp32 models fall back to fp16 there.
    """
    if engine == "tensorrt-llm" and fmt.precision in ("fp8", "fp4"):
        # NVIDIA's FP8/NVFP4 checkpoints (TensorRT Model Optimizer) quantize the KV cache to FP8 too
        # (hf_quant_config.json kv_cache_quant_algo "FP8"), and NVIDIA's published TensorRT-LLM tables ran with it
        return "fp8"
    if engine == "llama.cpp":
        return "fp16"
    if engine == "exllamav2":
        return "fp16"  # ExLlamaV2 computes and caches in fp16 whatever the checkpoint dtype
    if fmt.precision == "bf16":
        return "bf16"
    if fmt.precision == "fp32" and engine != "tensorrt-llm":
        return "fp32"
    return "fp16"


def weight_split(model: ModelSpec) -> tuple[float, float]:
    """(block parameters, embedding + LM-head parameters); non-transformers have no embedding split."""
    if model.shape is None:
        return float(model.total_parameters), 0.0
    embedding = float(embedding_parameters(model.shape))
    return float(model.total_parameters) - embedding, embedding


def weight_bytes(model: ModelSpec, fmt: WeightFormat) -> float:
    """Bytes held in device memory: params × bits of the format / 8; an MoE holds every expert (docs/formulas.md).

    Formats with `dense_bits` store an MoE's non-expert block weights at that width; `head_bits` prices the LM
    head apart from the input table, which `embedding_on_host` keeps off the device."""
    body, embedding = weight_split(model)
    body_bits_total = body * fmt.body_bits
    s = model.shape
    if fmt.dense_bits is not None and s is not None and s.is_moe:
        experts = float(s.moe_layers * s.experts * mlp_parameters(s, s.expert_ffn_hidden_size))
        body_bits_total = experts * fmt.body_bits + (body - experts) * fmt.dense_bits
    if s is None or (fmt.head_bits is None and not fmt.embedding_on_host):
        return (body_bits_total + embedding * fmt.embedding_bits) / 8.0
    table = _input_table_parameters(model)
    head = embedding - table
    table_bits = 0.0 if fmt.embedding_on_host else fmt.embedding_bits
    head_bits = fmt.embedding_bits if fmt.head_bits is None else fmt.head_bits
    return (body_bits_total + head * head_bits + table * table_bits) / 8.0


def _input_table_parameters(model: ModelSpec) -> float:
    """Parameters of the input embedding (and learned positions) apart from the LM head; 0 when tied."""
    s = model.shape
    if s is None or s.tied_embeddings:
        return 0.0
    return float(s.vocab_size * s.hidden_size + s.learned_position_embeddings * s.hidden_size)


def compute_precision_on(fmt: WeightFormat, fp4_peak: bool) -> tuple[str, bool]:
    """(precision the matmuls run at, weight-only de-quantization) for this format on an accelerator.

    fp4 formats use the fp4 peak where the accelerator has one (Blackwell W4A4); elsewhere the weights are
    de-quantized in the GEMM and the matmuls run in fp16, like W4A16 (vLLM: "Your GPU does not have native
    support for FP4 computation ... Weight-only FP4 compression will be used leveraging the Marlin kernel")."""
    if fmt.precision == "fp4":
        return ("fp4", False) if fp4_peak else ("fp16", True)
    return fmt.compute_precision, fmt.precision in ("int8", "int4")


def input_embedding_bytes(model: ModelSpec, fmt: WeightFormat) -> float:
    """The input embedding table: a decode step gathers b rows of it, it never streams the whole matrix."""
    if model.shape is None:
        return 0.0
    s = model.shape
    if s.tied_embeddings or fmt.embedding_on_host:
        return (
            0.0  # tied: the one V·h matrix is also the LM head, read in full every step; host: not on device
        )
    return _input_table_parameters(model) * (fmt.embedding_bits / 8.0)
