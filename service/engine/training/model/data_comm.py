"""Data-parallel communication on the critical path: how much of a step's gradient (and ZeRO-3 parameter) traffic
the compute hides, written once over `Num` (numeric.py): StepModel passes scalars, the planner's array model
(arrays_comm.py) arrays of layouts. The traffic itself (all-reduce seconds, NCCL latencies) is computed by each
caller; docs/formulas.md "Hybrid sharding" and "Training time"."""

from __future__ import annotations

from ...numeric import Num, ceil, maximum, where
from .compute import DDP_BUCKET_PARAMETERS, DDP_BUCKET_PARAMETERS_PER_RANK, DP_MIN_EXPOSED


def gradient_buckets(params: Num, ranks: Num) -> Num:
    """Buckets the gradients of `params` parameters travel in over `ranks` ranks: max(40M, 1M × ranks) parameters
    each (Megatron-Core DistributedDataParallel default), at least one."""
    bucket = maximum(DDP_BUCKET_PARAMETERS, DDP_BUCKET_PARAMETERS_PER_RANK * ranks)
    return maximum(1.0, ceil(params / bucket))


def shard_group_exposed_s(total: Num, micro_batches: Num, compute_s: Num, zero_stage: Num) -> Num:
    """Exposed seconds of the shard group's data-parallel traffic (`total`: one step's, or one micro-batch's under
    ZeRO-3, whose parameters are re-gathered every micro-batch and prefetched behind 0.8 of the compute).
    ZeRO-1/2 (distributed optimizer): the gradient reduce-scatter (half the volume) overlaps the last micro-batch's
    backward, the parameter all-gather (the other half) the next step's first forward (Megatron-Core
    overlap_grad_reduce / overlap_param_gather). ZeRO-0: the gradients reduce during the last micro-batch's backward
    (2/3 of its compute). Never less than DP_MIN_EXPOSED of the traffic."""
    zero3 = zero_stage >= 3
    total = where(zero3, total * micro_batches, total)
    micro = compute_s / maximum(micro_batches, 1)
    half = total / 2.0
    split = maximum(0.0, half - micro * 2.0 / 3.0) + maximum(0.0, half - micro / 3.0)
    plain = total - where(zero3, 0.8 * compute_s, micro * 2.0 / 3.0)
    exposed = where((zero_stage == 1) | (zero_stage == 2), split, plain)
    return maximum(DP_MIN_EXPOSED * total, exposed)


def replica_exposed_s(total: Num, micro_batches: Num, compute_s: Num) -> Num:
    """Exposed seconds of the replicas' all-reduce of the gradient shards (hybrid sharding; `total` 0 without): on
    the scale-out links during the last micro-batch's backward (2/3 of its compute), beside the shard group's
    reduce-scatter on the scale-up links."""
    hidden_behind = compute_s / maximum(micro_batches, 1) * 2.0 / 3.0
    return where(total > 0.0, maximum(DP_MIN_EXPOSED * total, total - hidden_behind), 0.0)
