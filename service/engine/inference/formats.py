"""Weight formats for serving: real bits per weight, precision ↔ format agreement, engine support.

Rules (documented once, used by `inference`):
- `weights.format` implies a precision (gptq/awq/gguf-q4_*/bnb-nf4 → int4; gguf-q8_0/bnb-int8 → int8).
  Omit `weights.precision` and it is inferred from the format; give both and they must agree.
- A bare `int8`/`int4` precision means the engine's usual format: llama.cpp → GGUF Q8_0 / Q4_K_M,
  hf-transformers → bitsandbytes int8 / NF4, vLLM and TensorRT-LLM → weight-only W8A16 / W4A16 group-128.
- GGUF runs only on llama.cpp (vLLM's GGUF loader is experimental, transformers de-quantizes GGUF to 16-bit);
  GPTQ/AWQ/bitsandbytes do not run on llama.cpp; TensorRT-LLM has no bitsandbytes path and no fp32 KV.
- fp8 weights need an accelerator with an fp8 peak (Ada, Hopper, Blackwell, MI300, Gaudi, Trainium).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..architecture import ModelSpec, embedding_parameters
from ..i18n import _

ENGINES = ("vllm", "tensorrt-llm", "llama.cpp", "hf-transformers")
WEIGHT_PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8", "int4")
FORMATS = ("gptq", "awq", "gguf-q4_0", "gguf-q4_k_m", "gguf-q8_0", "bnb-nf4", "bnb-int8")
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
}

# Precisions an engine cannot run at all (llama.cpp has no fp8 GGUF type — ggml.h ggml_type list).
ENGINE_EXCLUDED_PRECISIONS: dict[str, frozenset[str]] = {"llama.cpp": frozenset({"fp8"})}

# KV-cache dtypes per engine: vLLM kv_cache_dtype auto|fp8 (EngineArgs); TensorRT-LLM FP8 and INT8 KV cache
# (docs "Quantization"); llama.cpp cache types f32/f16/bf16/q8_0/q4_0 (int8 = q8_0, no fp8); transformers'
# DynamicCache keeps the model dtype (QuantizedCache is int2/int4 only).
ENGINE_KV_PRECISIONS: dict[str, frozenset[str]] = {
    "vllm": frozenset({"fp32", "fp16", "bf16", "fp8"}),
    "tensorrt-llm": frozenset({"fp16", "bf16", "fp8", "int8"}),
    "llama.cpp": frozenset({"fp32", "fp16", "bf16", "int8"}),
    "hf-transformers": frozenset({"fp32", "fp16", "bf16"}),
}


def kv_element_bytes(engine: str, precision: str) -> float:
    """Bytes per stored K or V element."""
    if engine == "llama.cpp" and precision == "int8":
        return LLAMA_CPP_Q8_0_KV_BYTES
    return KV_BYTES[precision]


# What a bare int8/int4 precision means on each engine (module docstring).
ENGINE_DEFAULT_FORMAT: dict[str, dict[str, str]] = {
    "llama.cpp": {"int8": "gguf-q8_0", "int4": "gguf-q4_k_m"},
    "hf-transformers": {"int8": "bnb-int8", "int4": "bnb-nf4"},
}


@dataclass(frozen=True)
class WeightFormat:
    """Bits per stored weight: transformer-block matrices vs. token embedding + LM head."""

    name: str  # a FORMATS id, or "fp16", "w8a16", "w4a16-g128", ... for plain precisions
    precision: str  # bit class: one of WEIGHT_PRECISIONS
    body_bits: float
    embedding_bits: float
    family: str  # efficiency-table family: 16-bit | fp8 | int8 | int4 | bnb-int8 | bnb-nf4
    source: str

    @property
    def compute_precision(self) -> str:
        """Precision the matmuls run at: fp8 and 16/32-bit natively; weight-only formats de-quantize to fp16."""
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
# GGUF F32/F16/BF16 files store every tensor (incl. embeddings) at that width (ggml_type)
_PLAIN = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8", "int8": "w8a16", "int4": "w4a16-g128"}


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
        return _FORMATS[fmt], errors
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
    return _FORMATS[name], errors


def weight_format(name: str) -> WeightFormat:
    """A format by name (FORMATS ids or the plain names fp32/fp16/bf16/fp8/w8a16/w4a16-g128)."""
    return _FORMATS[name]


def default_kv_precision(engine: str, fmt: WeightFormat) -> str:
    """KV cache defaults to the activation dtype: bf16 for bf16 models, fp32 for fp32, else fp16.

    vLLM kv_cache_dtype "auto" = model dtype (vLLM EngineArgs docs); llama.cpp type_k/type_v default f16
    (common.h); TensorRT-LLM has no fp32 KV path, so fp32 models fall back to fp16 there.
    """
    if engine == "llama.cpp":
        return "fp16"
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
    """Bytes held in memory: params × bits of the format / 8; an MoE holds every expert (docs/formulas.md)."""
    body, embedding = weight_split(model)
    return (body * fmt.body_bits + embedding * fmt.embedding_bits) / 8.0


def input_embedding_bytes(model: ModelSpec, fmt: WeightFormat) -> float:
    """The input embedding table: a decode step gathers b rows of it, it never streams the whole matrix."""
    if model.shape is None:
        return 0.0
    s = model.shape
    if s.tied_embeddings:
        return 0.0  # the one V·h matrix is also the LM head, which is read in full every step
    return float(s.vocab_size * s.hidden_size + s.learned_position_embeddings * s.hidden_size) * (
        fmt.embedding_bits / 8.0
    )
