"""Achieved-efficiency tables for serving: engine × accelerator class × weight family.

Three calibrated quantities, each with the public measurement it was fitted to:
- MBU: fraction of datasheet memory bandwidth a decode step achieves while streaming weights/KV;
- per-layer step overhead: launch/Python/host time per layer per forward pass (why small models and fast
  GPUs fall short of the bandwidth bound: docs/formulas.md "fixed per-step overhead");
- compute efficiency of GEMM-heavy phases (prefill, large-batch decode): eff_max · n/(n + n_half) for n
  tokens per forward — short prompts run small, inefficient GEMMs (TensorRT-LLM A100: ~35% at 128 tokens,
  ~69% at 2048, docs/formulas.md).
The fits and their errors are pinned by tests/engine/test_efficiency_calibration.py. The table lookups are pure
functions of (engine, class, family) strings and are memoised: the catalog ranking asks for every accelerator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ...hardware import Accelerator

CLASSES = ("hbm-gpu", "gddr-gpu", "apple", "cpu", "tpu", "asic")
# Tensor-parallel engines, which all capture CUDA graphs for decode and share the "cuda-graph" efficiency rows.
# SGLang: --tp-size (docs "Server Arguments"), CUDA graphs up to cuda_graph_max_bs (server_args.py). Its published
# gains over vLLM (LMSYS blog 2024-07-25, "up to 3.1x higher throughput on Llama-70B") are offline throughput at
# large batch from scheduling, not a per-step kernel figure, so it reuses the group's rows (docs/formulas.md).
TENSOR_PARALLEL_ENGINES = frozenset({"vllm", "tensorrt-llm", "sglang"})  # others split layers across devices


@dataclass(frozen=True)
class Factor:
    value: float
    source: str


def accelerator_class(acc: Accelerator) -> str:
    """hbm-gpu | gddr-gpu | apple | cpu | tpu | asic.

    Every HBM GPU in the catalog has a ≥ 300 GB/s scale-up fabric (NVLink/Infinity Fabric) and every GDDR board
    has none or a 112.5 GB/s bridge (reference accelerators.csv), so the fabric separates the two classes.
    """
    if acc.kind == "gpu":
        fabric = acc.interconnect_bandwidth_bytes_per_s or 0.0
        return "hbm-gpu" if fabric >= 200e9 else "gddr-gpu"
    return acc.kind


# ---------------------------------------------------------------- MBU: (engine, class, family) → Factor
_GPT_FAST = "gpt-fast README (A100-80GB, bs 1): Llama-2-7B"
_XD = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference README (llama.cpp, Llama-2-7B, Dec 2023)"
_EXL = "fit: exllamav2 README Performance, RTX 4090 Llama2-7B EXL2 3.0/4.0/5.0 bpw 257/211/179 t/s"
_MBU: dict[tuple[str, str, str], Factor] = {
    # CUDA-graph engines (vLLM, TensorRT-LLM; gpt-fast compiles to the same launch-free decode loop)
    ("cuda-graph", "hbm-gpu", "16-bit"): Factor(
        0.835, f"{_GPT_FAST} fp16 104.9 tok/s; 70B TP2/4/8 21.3/38.0/62.5"
    ),
    ("cuda-graph", "hbm-gpu", "fp8"): Factor(
        0.835, "assumed = 16-bit: FP8 GEMV streams 1 B/weight, no dequant"
    ),
    ("cuda-graph", "hbm-gpu", "int8"): Factor(0.70, f"{_GPT_FAST} int8 155.6 tok/s; 70B int8 19.1 tok/s"),
    ("cuda-graph", "hbm-gpu", "int4"): Factor(0.61, f"{_GPT_FAST} int4-g32 196.8 tok/s; 70B int4 25.3 tok/s"),
    ("cuda-graph", "gddr-gpu", "16-bit"): Factor(0.86, f"{_XD} F16 (cuBLAS GEMV) on RTX 3090/4090/A6000"),
    ("cuda-graph", "gddr-gpu", "fp8"): Factor(
        0.86, "assumed = 16-bit (no public batch-1 FP8 figure in our set)"
    ),
    ("cuda-graph", "gddr-gpu", "int8"): Factor(0.70, f"{_GPT_FAST} int8 (same kernels on GDDR assumed)"),
    ("cuda-graph", "gddr-gpu", "int4"): Factor(
        0.78, "AutoAWQ 0.1.6 README, RTX 4090 GEMM bs 1: Mistral-7B 156.3, Llama-2-13B 96.7/73.8 tok/s"
    ),
    # llama.cpp: same kernels on CUDA and Metal; its host overhead differs by class (below)
    ("llama.cpp", "*", "16-bit"): Factor(
        0.86, f"{_XD} F16: RTX 0.81-0.96, M2 Ultra 0.85-0.88 after overhead"
    ),
    ("llama.cpp", "*", "int8"): Factor(
        0.84, "llama.cpp discussion #4167: M2 Ultra 76c Llama-2-7B Q8_0 tg128 66.6"
    ),
    ("llama.cpp", "*", "int4"): Factor(
        0.80, f"{_XD} Q4_0: RTX 3090-4090, A6000, 6000 Ada, M2 Ultra 0.72-0.90"
    ),
    ("llama.cpp", "cpu", "*"): Factor(
        0.60,
        "llama.cpp issue #34: i9-13900K DDR5-6400 (102 GB/s) 7B 18.3 tok/s (≈0.68 if Q4_0; quant unstated)",
    ),
    # ExLlamaV2: its own EXL2/GPTQ GEMV kernels; no CUDA graphs, Python per-module launches (overhead below).
    # The 4090 points fit t = bytes/(BW·0.94) + 32 × 38 µs within 2% (tests/engine/test_efficiency_calibration.py)
    ("exllamav2", "*", "exl2"): Factor(0.94, _EXL),
    ("exllamav2", "*", "int4"): Factor(0.94, "assumed = EXL2 (same kernels; README GPTQ 7B/13B 205/114 t/s)"),
    ("exllamav2", "*", "16-bit"): Factor(0.835, "assumed: fp16 layers use cuBLAS GEMV like gpt-fast fp16"),
    # transformers eager: cuBLAS GEMV like gpt-fast; its loss is Python overhead (below), not bandwidth
    ("hf-transformers", "*", "16-bit"): Factor(0.835, "same cuBLAS kernels as gpt-fast fp16 (A100 fit)"),
    ("hf-transformers", "*", "fp8"): Factor(
        0.70, "assumed (fbgemm/fine-grained FP8 kernels, no public figure)"
    ),
    ("hf-transformers", "*", "int4"): Factor(0.61, f"{_GPT_FAST} int4 (ExLlama/AWQ GEMV class assumed)"),
    ("hf-transformers", "*", "int8"): Factor(0.70, f"{_GPT_FAST} int8"),
    # LLM.int8() is 15-23% slower than fp16 on BLOOM-176B (HF blog 'A Gentle Introduction to 8-bit Matrix
    # Multiplication', 2022) while reading half the bytes: 0.835 × 0.5 / 1.2 ≈ 0.35
    ("*", "*", "bnb-int8"): Factor(
        0.35, "HF blog LLM.int8 (2022): 15-23% slower than fp16 at half the bytes"
    ),
    ("*", "*", "bnb-nf4"): Factor(0.45, "assumed: bitsandbytes NF4 batch-1 GEMV de-quantizes in-kernel"),
    # Non-GPU classes without a measurement in our set: Databricks 'LLM Inference Performance Engineering'
    # (2023) reports production MBU of 55-60% at batch 1 — used as the prior.
    ("*", "tpu", "*"): Factor(0.60, "prior: Databricks 2023 batch-1 MBU 55-60%"),
    ("*", "asic", "*"): Factor(0.60, "prior: Databricks 2023 batch-1 MBU 55-60%"),
    ("*", "cpu", "*"): Factor(0.50, "assumed below llama.cpp's 0.6 (NUMA, no hand-tuned kernels)"),
}
_MBU_DEFAULT = Factor(0.60, "prior: Databricks 2023 batch-1 MBU 55-60%")

# --------------------------------------------------- per-layer overhead per forward pass (seconds)
_OVERHEAD: dict[tuple[str, str], Factor] = {
    ("cuda-graph", "hbm-gpu"): Factor(50e-6, "fit: gpt-fast 7B vs 70B int8/int4 (A100) → 0.05 ms/layer"),
    ("cuda-graph", "gddr-gpu"): Factor(
        30e-6, "fit: AutoAWQ RTX 4090 Llama-2-13B 64 vs 2048 ctx → 0.03 ms/layer"
    ),
    ("cuda-graph", "*"): Factor(50e-6, "as hbm-gpu (gpt-fast fit)"),
    ("llama.cpp", "gddr-gpu"): Factor(70e-6, f"fit: {_XD} A6000/6000 Ada 7B vs 70B Q4_0 → 0.07 ms/layer"),
    ("llama.cpp", "hbm-gpu"): Factor(150e-6, f"fit: {_XD} A100 & H100 PCIe Q4_0 vs F16 → 0.15 ms/layer"),
    ("llama.cpp", "apple"): Factor(130e-6, f"fit: {_XD} M2 Ultra 7B vs 70B Q4_0 → 0.13 ms/layer"),
    ("llama.cpp", "*"): Factor(70e-6, "as gddr-gpu"),
    ("exllamav2", "*"): Factor(38e-6, _EXL.replace("fit:", "fit (intercept):") + " → 0.038 ms/layer"),
    # PyTorch blog 'Accelerating Generative AI with PyTorch II: GPT, Fast' (2023): eager Llama-7B on A100
    # 25.5 tok/s vs 104.9 compiled → (1/25.5 − 1/104.9)/32 layers ≈ 0.93 ms/layer of Python/launch overhead
    ("hf-transformers", "*"): Factor(0.93e-3, "PyTorch 'GPT, Fast' blog: eager 25.5 tok/s vs compiled 104.9"),
}

# ----------------------------------------------------- compute efficiency: eff_max and n_half (tokens)
# TensorRT-LLM v0.5 perf page, A100 FP16 LLaMA-7B bs 1 first-token latency 16 ms @128, 133 ms @2048 tokens
# (minus 1.6 ms step overhead) → ≈0.37 and 0.70 of 312 TFLOPS → eff_max 0.74, n_half 120.
_COMPUTE: dict[tuple[str, str], tuple[float, float, str]] = {
    ("cuda-graph", "*"): (0.74, 120.0, "TensorRT-LLM v0.5 perf: A100 LLaMA-7B TTFT 16 ms@128, 133 ms@2048"),
    ("llama.cpp", "gddr-gpu"): (0.74, 120.0, f"{_XD} pp512 F16 RTX 4090 7349 tok/s = 0.60 of 165 TF"),
    ("llama.cpp", "hbm-gpu"): (0.25, 120.0, f"{_XD} pp512 F16 A100 5106, H100 PCIe 7367 tok/s = 0.13-0.22"),
    ("llama.cpp", "apple"): (0.80, 120.0, f"{_XD} pp512 F16 M2 Ultra 1380 tok/s = 0.68 of ~27 TF"),
    ("llama.cpp", "cpu"): (0.15, 120.0, "assumed: ggml CPU matmuls reach a small share of AMX/AVX-512 peak"),
    ("hf-transformers", "*"): (0.60, 120.0, "assumed: eager PyTorch + SDPA, below compiled engines"),
    ("exllamav2", "*"): (0.60, 120.0, "assumed as eager transformers: no published ExLlamaV2 prefill figure"),
    ("*", "tpu"): (0.50, 120.0, "assumed (no public serving prefill figure in our set)"),
    ("*", "asic"): (0.50, 120.0, "assumed (no public serving prefill figure in our set)"),
}
# TensorRT-LLM v0.5 perf, FP8 LLaMA-7B TTFT: H100 7 ms@128 / 36 ms@2048 (0.16 / 0.42 of 1979 TF), L40S
# 14 / 73 ms (0.19 / 0.55 of 733 TF) → FP8 eff_max ≈ 0.68 × the 16-bit value, n_half ≈ 250 tokens.
FP8_COMPUTE_FACTOR = Factor(0.68, "TensorRT-LLM v0.5 perf: H100/L40S FP8 LLaMA-7B TTFT 7/36 and 14/73 ms")
FP8_TOKENS_HALF = 250.0
# Native FP4 (W4A4 on an accelerator with an fp4 peak): no public prefill efficiency in our set, so it is assumed
# to lose as much against its peak as FP8 does (the same factor and n_half).
# Weight-only formats de-quantize inside the GEMM: llama.cpp pp512 Q4_0 vs F16 is 0.75-0.89 (XiongjieDai
# README: RTX 4090 5531 vs 7349, M2 Ultra 1217 vs 1380); AutoAWQ README: W4A16 loses to FP16 once compute-bound.
WEIGHT_ONLY_COMPUTE_FACTOR = Factor(0.75, f"{_XD} pp512 Q4_0 vs F16 ratio; AutoAWQ README")

# Vision models (cnn/vit): MLPerf Inference (v0.7/v1.0 datacenter, Offline) ResNet-50 ≈ 5.6k samples/s per T4
# at INT8 (130 TOPS, 8.2 GFLOP/sample) ≈ 0.35 of peak (recalled; TensorRT); n_half of 8 images assumed.
VISION_COMPUTE = (0.35, 8.0, "MLPerf Inference Offline ResNet-50 on T4 ≈ 5.6k img/s INT8 (≈ 0.35 of peak)")

# Apple GPUs: no peak in the catalog. M2 Ultra 76-core GPU ≈ 27.2 TFLOPS FP32 at 800 GB/s (accelerators.csv
# notes) and M-series GPUs run FP16 at the FP32 rate (philipturner/metal-benchmarks) → 34 FLOP per byte.
APPLE_FLOPS_PER_BYTE = 34.0
# Step overhead for vision batches (TensorRT engine launch) — assumed 0.5 ms per batch.
VISION_STEP_OVERHEAD_S = 0.5e-3

# Routed-expert GEMVs stream below dense MBU (gather/grouped kernels): gpt-fast mixtral-moe README, Mixtral-8x7B
# bf16 on 2/4/8 × A100 78.8/118.2/203.7 tok/s and int8 on 1/2/4/8 56.0/99.9/149.5/218.5 → expert bytes take
# 1.39× (bf16) to 1.68× (int8) the dense time per byte; 0.65 splits the difference. gpt-fast gathers the chosen
# experts' weights and multiplies with einsum (mixtral-moe/model.py ConditionalFeedForward): the factor stays for
# the engines without a fused MoE kernel (llama.cpp, transformers, ExLlamaV2).
MOE_EXPERT_EFFICIENCY = Factor(
    0.65, "fit: gpt-fast mixtral-moe README, Mixtral-8x7B bf16 TP2-8 and int8 TP1-8"
)
# The CUDA-graph engines run a fused MoE kernel (vLLM fused_moe, which SGLang shares; TensorRT-LLM's CUTLASS MoE
# assumed alike). Measured: vLLM PR #24700 (2025-09, github.com/vllm-project/vllm/pull/24700, "Benchmarks on
# H100", benchmarks/kernels/benchmark_moe.py with tuned configs, uniformly random routing): one MoE layer's kernel
# time at batch 1-128, Mixtral-8x7B BF16 TP2 (176 MB per expert shard) 144-491 µs and Qwen3-30B-A3B FP8 TP1
# (4.7 MB per expert) 40-248 µs. All 16 points fit 30 µs + touched expert bytes ÷ (0.92 × 3.35 TB/s) within
# ±9 % (tests/engine/test_fused_moe.py): experts stream at 0.92 of peak, 1.10 × the 0.835 dense
# MBU, after a fixed 30 µs per MoE layer (routing top-k, expert sort/align, two grouped-GEMM launches).
FUSED_MOE_EXPERT_EFFICIENCY = Factor(
    1.10, "vLLM PR #24700 fused_moe on H100: Mixtral BF16 TP2 and Qwen3-30B-A3B FP8, 0.92 of peak / 0.835"
)
FUSED_MOE_LAYER_FLOOR_S = Factor(30e-6, "vLLM PR #24700 fused_moe on H100: 30 µs per MoE layer call")


def _fused_moe(engine: str, cls: str) -> bool:
    """The CUDA-graph engines on GPUs (the kernel measured; Gaudi, Neuron and TPU builds have their own MoE ops)."""
    return _group(engine) == "cuda-graph" and cls in ("hbm-gpu", "gddr-gpu")


def moe_expert_efficiency(engine: str, cls: str) -> Factor:
    """Routed-expert streaming relative to dense MBU: the fused MoE kernel of the CUDA-graph engines on GPUs, else
    gpt-fast's."""
    return FUSED_MOE_EXPERT_EFFICIENCY if _fused_moe(engine, cls) else MOE_EXPERT_EFFICIENCY


def moe_layer_floor_s(engine: str, cls: str) -> float:
    """Fixed time of one fused MoE call per MoE layer and forward pass (0 where no fused kernel is modelled)."""
    return FUSED_MOE_LAYER_FLOOR_S.value if _fused_moe(engine, cls) else 0.0


# A layer of multi-head latent attention (MLA) with fine-grained routed experts runs more kernels than a dense
# layer: ~25 per layer against ~11 (q/kv down- and up-projections with their norms, absorbed bmm's, a per-token-group
# FP8 quantization before each block-scaled GEMM, router GEMM, grouped top-k, expert sort and align, shared expert).
# Measured: SemiAnalysis InferenceX issue #1004 (2026-04), DeepSeek-R1-0528 FP8 TP8 on 8 × H200, SGLang v0.5.9,
# 16 concurrent decodes, 1,024 in / 1,024 out: 13.14 ms of kernels per decode step, 1,504 kernels (24.7 per layer),
# 4.91 ms of them routed-expert GEMMs, so 8,230 µs outside the experts. The model's own terms for that step: the
# all-reduces 1,112 µs, the KV reads 431 µs, the dense weights 534 µs, 61 layers × 50 µs and 58 fused-MoE calls ×
# 30 µs; the 1,363 µs left over the 58 MoE layers is 23.5 µs each, so an MLA layer with routed experts counts
# 1 + 23.5/50 = 1.47 × the per-layer overhead (its non-expert total then equals the measured 8,230 µs: one profile).
# Applied where the profile was taken: CUDA-graph engines on GPUs (as the fused-MoE figures above).
MLA_MOE_LAYER_OVERHEAD_RATIO = Factor(
    1.47, "InferenceX #1004: DeepSeek-R1 FP8 TP8 H200 SGLang 0.5.9 c16, 8,230 µs/step of non-expert kernels"
)


def mla_moe_layer_ratio(engine: str, cls: str) -> float:
    """Per-layer overhead multiple of an MLA layer with routed experts (1 where the profile does not speak)."""
    return MLA_MOE_LAYER_OVERHEAD_RATIO.value if _fused_moe(engine, cls) else 1.0


# A decode step beyond the engine's CUDA-graph batch runs eagerly: each layer's kernels are launched from Python
# (schedule.cuda_graph_max_batch). Eager PyTorch costs ≈ 0.93 ms per layer of host time (PyTorch blog 'Accelerating
# Generative AI with PyTorch II: GPT, Fast' (2023), eager Llama-7B on A100 25.5 tok/s vs 104.9 compiled, the
# hf-transformers row above); the launches overlap the GPU's work, so such a step takes the longer of the two.
EAGER_LAYER_OVERHEAD = Factor(
    0.93e-3, "PyTorch 'GPT, Fast' blog: eager 25.5 tok/s vs compiled 104.9 (Llama-7B A100)"
)
# Tensor-parallel all-reduce: fitted latency per all-reduce from gpt-fast Llama-2-7B TP 1/2/4/8
# (104.9/168.8/254.0/328.4 tok/s): 6-10 µs per NCCL all-reduce over NVLink; PCIe boards assumed 25 µs.
ALLREDUCE_LATENCY_S = Factor(8e-6, "fit: gpt-fast Llama-2-7B TP2/4/8 on NVLink A100")
ALLREDUCE_LATENCY_PCIE_S = Factor(25e-6, "assumed: NCCL over PCIe / host memory")
# llama.cpp / accelerate layer split: each device boundary adds one activation hand-off; fit to XiongjieDai
# Llama-3-8B Q4_K_M tg512 on 1/2/4/8 × RTX 4090 (130.6/124.7/120.3/118.1 tok/s) → ≈ 0.2 ms per hop.
LAYER_SPLIT_HOP_S = Factor(0.2e-3, "fit: XiongjieDai Llama-3-8B Q4_K_M 1/2/4/8 × RTX 4090")


def _group(engine: str) -> str:
    return "cuda-graph" if engine in TENSOR_PARALLEL_ENGINES else engine


def _lookup(table: dict, keys: list[tuple]) -> object | None:
    for key in keys:
        if key in table:
            return table[key]
    return None


@lru_cache(maxsize=1024)
def bandwidth_efficiency(engine: str, cls: str, family: str) -> Factor:
    """MBU for streaming weights of `family` on this engine and accelerator class."""
    g = _group(engine)
    # engine-and-class rows first, then class priors (TPU/ASIC/CPU have no engine data), then engine rows
    keys = [
        (g, cls, family),
        (g, cls, "*"),
        ("*", cls, family),
        ("*", cls, "*"),
        (g, "*", family),
        ("*", "*", family),
    ]
    found = _lookup(_MBU, keys)
    if isinstance(found, Factor):
        return found
    fallback = _lookup(_MBU, [(g, cls, "16-bit"), (g, "*", "16-bit")])
    return fallback if isinstance(fallback, Factor) else _MBU_DEFAULT


@lru_cache(maxsize=1024)
def kv_bandwidth_efficiency(engine: str, cls: str) -> Factor:
    """MBU of the attention kernels reading the KV cache (16-bit streaming, whatever the weight format)."""
    return bandwidth_efficiency(engine, cls, "16-bit")


@lru_cache(maxsize=1024)
def layer_overhead_s(engine: str, cls: str) -> Factor:
    """Host/launch time per layer per forward pass."""
    g = _group(engine)
    found = _lookup(_OVERHEAD, [(g, cls), (g, "*")])
    return found if isinstance(found, Factor) else Factor(50e-6, "default (gpt-fast fit)")


def compute_efficiency(
    engine: str, cls: str, compute_precision: str, weight_only: bool, tokens: float
) -> float:
    """Fraction of dense peak reached by a forward pass over `tokens` tokens (prefill or batched decode)."""
    eff_max, n_half = compute_curve(engine, cls, compute_precision, weight_only)
    n = max(float(tokens), 1.0)
    return eff_max if math.isinf(n) else eff_max * n / (n + n_half)


def compute_curve(engine: str, cls: str, compute_precision: str, weight_only: bool) -> tuple[float, float]:
    """(eff_max, n_half tokens) of the compute-efficiency curve for this engine, class and GEMM format."""
    eff_max, n_half, _ = compute_profile(engine, cls)
    if compute_precision in ("fp8", "fp4"):
        eff_max *= FP8_COMPUTE_FACTOR.value
        n_half = FP8_TOKENS_HALF
    if weight_only:
        eff_max *= WEIGHT_ONLY_COMPUTE_FACTOR.value
    return eff_max, n_half


@lru_cache(maxsize=1024)
def compute_profile(engine: str, cls: str) -> tuple[float, float, str]:
    """(eff_max, n_half tokens, source) for this engine and class."""
    g = _group(engine)
    found = _lookup(_COMPUTE, [(g, cls), (g, "*"), ("*", cls)])
    if isinstance(found, tuple):
        return found
    return (0.5, 120.0, "assumed")


def vision_efficiency(batch: int) -> float:
    eff_max, n_half, _ = VISION_COMPUTE
    return eff_max * batch / (batch + n_half)


_PEAK_CHAINS = {
    "fp16": ("fp16", "bf16", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp8": ("fp8", "fp16", "bf16"),
    "fp32": ("fp32", "tf32"),
    "fp4": (
        "fp4",
        "fp8",
        "fp16",
        "bf16",
    ),  # only asked when acc.peak("fp4") exists (formats.compute_precision_on)
}


def peak_flops(acc: Accelerator, precision: str) -> tuple[float, str]:
    """Dense peak for `precision` with documented fallbacks: fp16 ↔ bf16, then fp32 (or tf32 for fp32);
    Apple GPUs (no catalog peak) get bandwidth × APPLE_FLOPS_PER_BYTE."""
    chain = _PEAK_CHAINS.get(precision, (precision, "fp16", "bf16", "fp32"))
    for p in chain:
        value = acc.peak(p)
        if value:
            return value, p
    if acc.kind == "apple":
        return acc.memory_bandwidth_bytes_per_s * APPLE_FLOPS_PER_BYTE, "apple-estimate"
    # last resort: a ridge of 10 FLOP/byte (CPU-like) so compute never dominates spuriously
    return acc.memory_bandwidth_bytes_per_s * 10.0, "bandwidth-estimate"


def allreduce_latency_s(acc: Accelerator) -> float:
    """Fixed cost of one small all-reduce: NVLink-class fabric vs PCIe (bandwidth: parallelism.py)."""
    fabric = acc.interconnect_bandwidth_bytes_per_s
    return ALLREDUCE_LATENCY_S.value if fabric and fabric >= 200e9 else ALLREDUCE_LATENCY_PCIE_S.value


def table_rows() -> list[dict[str, object]]:
    """The MBU and overhead tables as rows, for reports and `details`."""
    rows: list[dict[str, object]] = []
    for (engine, cls, family), f in sorted(_MBU.items()):
        rows.append(
            {
                "table": "mbu",
                "engine": engine,
                "class": cls,
                "family": family,
                "value": f.value,
                "source": f.source,
            }
        )
    for (engine, cls), f in sorted(_OVERHEAD.items()):
        rows.append(
            {
                "table": "layer_overhead_s",
                "engine": engine,
                "class": cls,
                "family": "*",
                "value": f.value,
                "source": f.source,
            }
        )
    for (engine, cls), (eff, n_half, source) in sorted(_COMPUTE.items()):
        rows.append(
            {
                "table": "compute_eff_max",
                "engine": engine,
                "class": cls,
                "family": f"n_half={n_half:g}",
                "value": eff,
                "source": source,
            }
        )
    return rows
