"""Serving software stacks: the accelerator family and engine build a request runs on, and what that changes.

The serving tables (efficiency.py) were fitted on CUDA builds (gpt-fast, TensorRT-LLM, vLLM on NVIDIA parts). The
same engine name runs other vendors' builds — vLLM on ROCm (AMD's rocm/vllm images), vLLM or optimum-habana on Intel
Gaudi (HPU graphs over Synapse kernels), transformers-neuronx / NxD Inference behind vLLM on AWS Neuron — whose
kernels reach a different share of the datasheet. A stack is therefore derived from the request's engine and the
part's vendor (no new engine value: an existing request keeps its meaning, and the build follows from the part it
runs on), and carries three physically meaningful multipliers over the CUDA calibration:

- bandwidth / kv_bandwidth: the achieved memory-bandwidth fraction of the weight GEMVs and of the attention kernels
  reading the KV cache (× the engine/class MBU);
- gemm (16-bit) / gemm_fp8 (fp8 and fp4): the achieved GEMM fraction of the datasheet peak (× the engine/class
  compute efficiency);
- layer_overhead_s: the per-layer launch/host time per forward pass, when the build's differs.

Each row is fitted on the public points of tests/engine/data/public_serving_throughput.csv (sources there and in
docs/formulas.md, "Serving stacks"); tests/engine/test_stack_calibration.py prints the error per point and per stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...hardware import Accelerator


@dataclass(frozen=True)
class StackFactors:
    bandwidth: float  # × the engine/class MBU of the weight GEMVs
    kv_bandwidth: float  # × the engine/class MBU of the attention kernels reading the KV cache
    gemm: float  # × the engine/class GEMM efficiency at 16-bit
    gemm_fp8: float  # × the engine/class GEMM efficiency at fp8/fp4
    layer_overhead_s: float | None  # replaces the engine/class per-layer overhead when set
    source: str

    def compute(self, precision: str) -> float:
        """The GEMM multiplier for a compute precision (compute_precision_on's answer)."""
        return self.gemm_fp8 if precision in ("fp8", "fp4") else self.gemm


NEUTRAL = StackFactors(1.0, 1.0, 1.0, 1.0, None, "the engine's CUDA calibration (efficiency.py)")

_AMD = "AMD ROCm performance-results page (rocm/vllm 0.9.0.1 and 0.8.5 images) and OCI MI300X blog (2024)"
_INTEL = "Intel 'Model Performance Data' Gaudi 2 / Gaudi 3 LLM throughput tables (SynapseAI 1.18.0)"
_NEURON = (
    "aws-neuron-sdk inf2/trn1 throughput_ and latency_data_decoder.csv (Neuron 2.18, transformers-neuronx)"
)
_ROCM_MAMF = 0.51 / 0.80  # ml-engineering MAMF: MI300X 0.51 of peak vs H100 0.80 (training/model/compute.py)

_ROCM_VLLM = StackFactors(0.6, 0.6, _ROCM_MAMF, 0.4, None, f"fit: {_AMD}; 16-bit: MAMF ratio")
# (family, engine or "*", accelerator id fragment or "*") → factors; the first matching row wins
_FACTORS: dict[tuple[str, str, str], StackFactors] = {
    # vLLM on ROCm, MI300X, 22 points (FP8 weights and KV, TP8, batch 1 to 3,200): the weight and KV streams reach
    # 0.6 of the CUDA build's MBU (0.50 of 5.3 TB/s), FP8 GEMMs 0.4 of its share; no 16-bit point was found, so the
    # 16-bit GEMMs take the MI300X/H100 best-GEMM ratio (MAMF) instead of a fit
    # SGLang's ROCm build runs the same hipBLASLt GEMMs and AITER attention kernels (assumed: no public point read);
    # llama.cpp, transformers and ExLlamaV2 on ROCm keep the CUDA tables (no public point either)
    ("rocm", "vllm", "*"): _ROCM_VLLM,
    ("rocm", "sglang", "*"): _ROCM_VLLM,
    # Gaudi (optimum-habana text-generation and vLLM-Gaudi: HPU graphs over the same Synapse kernels). Streams at
    # the CUDA build's MBU, the attention kernels at 0.96 of the datasheet (× 1.15); the GEMMs differ by part:
    # Gaudi 2 reaches 1.4 × the CUDA share of its 865 TFLOPS FP8 (its MAMF is 0.97 of peak, training/model/compute.py),
    # Gaudi 3 0.7 × of its 1,835 TFLOPS (power/thermal throttling under dense GEMMs, SqueezeBits 2025)
    ("gaudi", "*", "gaudi2"): StackFactors(1.0, 1.15, 1.4, 1.4, None, f"fit: {_INTEL}, Gaudi 2 (16 points)"),
    ("gaudi", "*", "gaudi3"): StackFactors(1.0, 1.15, 0.7, 0.7, None, f"fit: {_INTEL}, Gaudi 3 (24 points)"),
    # Neuron (transformers-neuronx, Inf2 and Trn1, 120 points: TPOT and TTFT of 60 configurations): weights stream at
    # 0.72 of the datasheet (1.2 × the class prior 0.60), the attention kernels read the KV cache at 0.36 (0.6 ×), and
    # each layer costs 100 µs per forward pass (Llama-2-7B and -70B decode at 6.5 and 33 ms per token on the same 12
    # Inf2 chips: a fixed per-layer cost plus 0.7 of the bandwidth); prefill keeps the class prior
    ("neuron", "*", "*"): StackFactors(1.2, 0.6, 1.0, 1.0, 100e-6, f"fit: {_NEURON}"),
}


def accelerator_family(acc: Accelerator) -> str:
    """cuda | rocm | gaudi | neuron | tpu | apple | cpu | other: the vendor software stack a part runs."""
    vendor = acc.vendor.lower()
    if acc.kind == "gpu":
        return {"nvidia": "cuda", "amd": "rocm"}.get(vendor, "other")
    if acc.kind == "asic":
        if vendor == "intel" and "gaudi" in acc.id.lower():
            return "gaudi"
        return "neuron" if vendor == "aws" else "other"
    return {"tpu": "tpu", "apple": "apple", "cpu": "cpu"}.get(acc.kind, "other")


def serving_stack(engine: str, acc: Accelerator) -> str:
    """The engine's build for this part, e.g. cuda/vllm, rocm/vllm, gaudi/vllm, neuron/vllm."""
    return f"{accelerator_family(acc)}/{engine}"


def stack_factors(engine: str, acc: Accelerator) -> StackFactors:
    """The factors of this engine's build on this part (NEUTRAL on the CUDA builds the tables were fitted on)."""
    return _family_factors(engine, accelerator_family(acc), acc.id.lower())


@lru_cache(maxsize=256)
def _family_factors(engine: str, family: str, part: str) -> StackFactors:
    for (fam, eng, fragment), factors in _FACTORS.items():
        if fam == family and eng in (engine, "*") and (fragment == "*" or fragment in part):
            return factors
    return NEUTRAL


def table_rows() -> list[dict[str, object]]:
    """The stack rows, for reports."""
    return [
        {"family": fam, "engine": eng, "part": part, **{k: getattr(f, k) for k in _COLUMNS}}
        for (fam, eng, part), f in _FACTORS.items()
    ]


_COLUMNS = ("bandwidth", "kv_bandwidth", "gemm", "gemm_fp8", "layer_overhead_s", "source")
