"""Expert-parallel all-to-all on the critical path: fully exposed by default, or overlapped with the compute of
another micro-batch (hardware.parallelism.expert_overlap). StepModel and model/arrays.py both call these (the vector
model passes numpy arrays through the same arithmetic)."""

from __future__ import annotations

from typing import Any

import numpy as np

# While the all-to-all of one micro-batch runs behind another's compute, its kernels hold part of the SMs: DeepSeek-V3
# (Liu et al. 2024, "DeepSeek-V3 Technical Report" §3.2.2) gives 20 of the H800's 132 SMs to communication under
# DualPipe; the overlapped compute is taken to slow by that share (assumption: compute is SM-bound)
EXPERT_OVERLAP_SM_SHARE = 20.0 / 132.0
# The all-to-alls of a layer: dispatch and combine, forward and backward
ALL_TO_ALLS_PER_MOE_LAYER = 4


def unpaired_share(pipeline: Any, virtual: Any, micro_batches: Any) -> Any:
    """Share of a step's all-to-all with no other micro-batch's compute to hide behind.

    Megatron-Core's 1F1B A2A overlap (overlap_moe_expert_parallel_comm, "combined 1F1B") runs the forward of one
    micro-batch with the backward of another: only the warm-up forwards and cool-down backwards stay alone. Their
    count on the first stage is Megatron-Core's (megatron/core/pipeline_parallel/schedules.py): p − 1 micro-batches
    for 1F1B, (p − 1)·2 + (v − 1)·p model chunks for interleaved 1F1B (of m·v), and one forward and one backward of
    m without a pipeline (the first forward and the last backward)."""
    p = np.asarray(pipeline)
    v = np.asarray(virtual)
    chunks = np.where(p <= 1, 1, np.where(v <= 1, p - 1, (p - 1) * 2 + (v - 1) * p))
    share = np.minimum(1.0, chunks / (np.asarray(micro_batches) * np.where(p <= 1, 1, v)))
    return float(share) if share.ndim == 0 else share


def exposed_expert_s(all_to_all_s: Any, compute_s: Any, unpaired: Any, overlap: bool) -> Any:
    """Seconds of a step's expert all-to-all on the critical path.

    Without overlap all of it (MoE all-to-all blocks the layer that needs its tokens). With overlap: the unpaired
    share, what of the rest exceeds the compute it runs beside, and the SMs the communication kernels take from
    that compute (EXPERT_OVERLAP_SM_SHARE)."""
    if not overlap:
        return all_to_all_s
    paired = all_to_all_s * (1.0 - unpaired)
    behind = compute_s * (1.0 - unpaired)
    return (
        all_to_all_s * unpaired
        + np.maximum(0.0, paired - behind)
        + EXPERT_OVERLAP_SM_SHARE * np.minimum(paired, behind)
    )
