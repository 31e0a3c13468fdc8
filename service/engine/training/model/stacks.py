"""Training software stacks off the Megatron-on-NVIDIA calibration: what the stack changes in GEMM throughput.

The step model (compute.py) was fitted on Megatron-Core / NeMo on NVIDIA parts and takes each part's best-GEMM
efficiency (MAMF) from its table. Other stacks reach a different share of that inside a training step: XLA's GEMM
and attention fusions on GPUs (MaxText, Paxml), Intel's Megatron-DeepSpeed with Synapse kernels on Gaudi, AWS's
NeuronX Distributed on Trainium (where no MAMF is published and the table's 0.70 default is an assumption). One
multiplier per (vendor family, framework) on the GEMM and attention rates, fitted on the public points of
tests/engine/data/public_training_stacks.csv (docs/formulas.md, "Training stacks");
tests/engine/test_stack_calibration.py prints the error per point and per stack.
"""

from __future__ import annotations

from functools import lru_cache

from ...hardware import Accelerator
from .framework import JAX_STACKS

# (family, framework or "*") → multiplier on the GEMM and attention rates; the first matching row wins
_INTEL = "Intel Gaudi 2 model-performance training table (SynapseAI 1.19.0), 5 Megatron-DeepSpeed FP8 rows"
_NEURON = "AWS Neuron trn1 training_data_decoder.csv (Neuron 2.21.0 / 2.15.2), 6 NxD / NeMo-Megatron rows"
_GEMM_FACTORS: dict[tuple[str, str], tuple[float, str]] = {
    # Gaudi 2: its 0.97 MAMF (compute.py) overstates what Megatron-DeepSpeed's FP8 step reaches: 0.8 × (fit, 5 points:
    # +11.5 % signed median at 1.0, −6 % at 0.8)
    ("gaudi", "*"): (0.8, f"fit: {_INTEL}"),
    # Trainium: no published best-GEMM figure, so compute.py's 0.70 default applies; NeuronCore-v2's tensor engine
    # is a systolic array fed by DMA, as the TPU's MXU, and is taken at the TPU's 0.99 (× 0.99/0.70). The six points
    # prefer 1.5 (−21 % signed median at 1.0, −6 % at 1.41), which would put the GEMMs above the datasheet peak.
    ("neuron", "*"): (0.99 / 0.70, f"TPU-class systolic array (0.99 best GEMM); checked on {_NEURON}"),
    # JAX/XLA on NVIDIA GPUs (MaxText, Paxml): no factor. Named, the stack runs cuDNN fused attention and XLA's fused
    # element-wise work (framework.py), which leaves the 13 JAX-Toolbox points at 10.1 % median (−7.6 % signed; a
    # factor of 1.1 would centre them at +1 % for the same median), against 15.4 % before the framework was named.
}


def training_family(acc: Accelerator) -> str:
    """cuda | rocm | gaudi | neuron | tpu | other: the vendor software stack a part trains with."""
    vendor, key = acc.vendor.lower(), acc.id.lower()
    if acc.kind == "tpu":
        return "tpu"
    if acc.kind == "gpu":
        return {"nvidia": "cuda", "amd": "rocm"}.get(vendor, "other")
    if vendor == "intel" and "gaudi" in key:
        return "gaudi"
    return "neuron" if vendor == "aws" else "other"


def training_stack(framework: str, acc: Accelerator) -> str:
    """e.g. cuda/megatron, cuda/maxtext, gaudi/deepspeed, neuron/megatron, tpu/maxtext."""
    return f"{training_family(acc)}/{framework}"


def stack_gemm_factor(framework: str, acc: Accelerator) -> float:
    """Multiplier on the calibrated GEMM and attention rates for this stack on this part (1 on the calibration)."""
    return _factor(framework, training_family(acc))


@lru_cache(maxsize=256)
def _factor(framework: str, family: str) -> float:
    group = "jax" if framework in JAX_STACKS else framework
    for (fam, fw), (value, _source) in _GEMM_FACTORS.items():
        if fam == family and fw in (group, "*"):
            return value
    return 1.0
