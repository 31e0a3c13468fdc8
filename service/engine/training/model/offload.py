"""Activation offload to host memory (Megatron-Core `cpu_offloading_num_layers`; docs/formulas.md "Activation offload").

The saved activations of the first `k` transformer layers of each pipeline stage are copied to host memory after
their forward pass and prefetched back before their backward pass; the device keeps the other layers' activations
plus a double buffer of two offloaded layers (Megatron-Core `cpu_offloading_double_buffering`). The copies run on
their own stream beside the compute of the offloaded layers: forward copies hide behind those layers' forward
(a third of their compute), backward prefetches behind their backward (two thirds); what exceeds it is exposed.
"""

from __future__ import annotations

from ...hardware import Accelerator
from ...numeric import Num, maximum, minimum, where

GB = 1e9
# Device ↔ host bandwidth per direction, by part (first matching id fragment wins):
# Grace superchips: NVLink-C2C 900 GB/s bidirectional = 450 GB/s each way (NVIDIA GH200 / GB200 NVL72 datasheets).
# PCIe x16 per direction: Gen5 64 GB/s, Gen4 32 GB/s, Gen3 16 GB/s (PCI-SIG; 32 / 16 / 8 GT/s × 16 lanes,
# 128b/130b). Generations from each part's datasheet (H100/H200/B200/MI300X/RTX 5090 Gen5, A100/A10/L4/L40S/
# RTX 3090/4090 Gen4, V100/T4 Gen3); "l4" also matches L40S.
HOST_LINK_BYTES_PER_S: tuple[tuple[str, float], ...] = (
    ("gb300", 450 * GB),
    ("gb200", 450 * GB),
    ("gh200", 450 * GB),
    ("v100", 16 * GB),
    ("t4", 16 * GB),
    ("a100", 32 * GB),
    ("a10", 32 * GB),
    ("l4", 32 * GB),
    ("rtx-3090", 32 * GB),
    ("rtx-4090", 32 * GB),
    ("rtx-6000-ada", 32 * GB),
    ("rtx-a6000", 32 * GB),
)
# Parts whose host memory sits behind a coherent NVLink-C2C link (Grace superchips): NVIDIA's own GB200/GB300
# pretraining recipes offload activations there to fit runs that would not fit otherwise (docs/formulas.md
# "Activation offload"), so a request that leaves activation_offload_layers out gets the fewest that fit
# (fit_defaults.py); so do Google's TPU recipes (offloads_to_fit). Over PCIe no public GPU recipe does: there a plan
# that does not fit stays "does not fit". TPU host links: no public figure was found; they take the PCIe Gen5 x16
# fallback below (the copies hide behind the offloaded layers' compute in every TPU recipe read).
COHERENT_HOST_PARTS = ("gb300", "gb200", "gh200")
PCIE_GEN5_X16 = 64 * GB  # every other current accelerator (Hopper, Blackwell, MI300-series, RTX 50)
DOUBLE_BUFFER_LAYERS = 2  # offloaded layers resident at once (Megatron-Core double buffering)


def host_link_bytes_per_s(acc: Accelerator) -> float:
    """Device ↔ host copy bandwidth per direction for `acc` (HOST_LINK_BYTES_PER_S, else PCIe Gen5 x16)."""
    key = acc.id.lower()
    return next((rate for fragment, rate in HOST_LINK_BYTES_PER_S if fragment in key), PCIE_GEN5_X16)


def coherent_host_link(acc: Accelerator) -> bool:
    """Whether `acc` reaches its host memory over NVLink-C2C (COHERENT_HOST_PARTS)."""
    key = acc.id.lower()
    return any(fragment in key for fragment in COHERENT_HOST_PARTS)


def offloads_to_fit(acc: Accelerator) -> bool:
    """Whether the published recipes for `acc` offload activations to host memory to fit a run: NVIDIA's GB200/GB300
    recipes on the Grace parts (COHERENT_HOST_PARTS), and Google's TPU recipes, whose MaxText configurations keep the
    layer inputs (and some projections) in host memory under remat_policy 'custom' (AI-Hypercomputer/tpu-recipes:
    7 of the 8 read in tests/engine/data/public_training_throughput.csv offload `decoder_layer_input` or
    projections)."""
    return coherent_host_link(acc) or acc.kind == "tpu"


def offloaded_layers(requested: Num, layers_per_stage: Num) -> Num:
    """Layers per stage whose activations go to the host (at most all but one: the last layer's feed the loss).
    Scalars (the single estimate) or arrays of layouts (the planner's array model) alike, as below."""
    return maximum(0, minimum(requested, layers_per_stage - 1))


def resident_layers(layers_per_stage: Num, offloaded: Num) -> tuple[Num, Num]:
    """(layers kept per micro-batch in flight, layers kept once): the not-offloaded layers for every micro-batch in
    flight, and the double buffer of offloaded layers once."""
    return (layers_per_stage - offloaded) * 1.0, minimum(offloaded, DOUBLE_BUFFER_LAYERS) * 1.0


def exposed_offload_s(copy_bytes: Num, bandwidth: float, offloaded_compute_s: Num) -> Num:
    """Seconds per step the copies add: each direction moves `copy_bytes`; forward copies hide behind a third of the
    offloaded layers' compute, backward prefetches behind two thirds."""
    one_way = copy_bytes / bandwidth
    exposed = maximum(0.0, one_way - offloaded_compute_s / 3.0) + maximum(
        0.0, one_way - 2.0 * offloaded_compute_s / 3.0
    )
    return where(copy_bytes > 0.0, exposed, 0.0)


def offload_step_s(
    requested: int, layers_per_stage: Num, stored: Num, micro_batches: Num, compute_s: Num, bandwidth: float
) -> Num:
    """Exposed seconds of one step's activation copies (StepModel and the array model alike): `requested` layers
    per stage (clamped by offloaded_layers) of `stored` bytes each, per micro-batch, over the host link, hidden
    behind the offloaded layers' share of the step's compute."""
    k = offloaded_layers(requested, layers_per_stage)
    copy_bytes = k * stored * micro_batches
    return exposed_offload_s(copy_bytes, bandwidth, compute_s * k / layers_per_stage)
