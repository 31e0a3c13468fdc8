"""Checkpoint writes: the default write bandwidth and the seconds one checkpoint takes."""

from __future__ import annotations

from .memory import bytes_per_parameter
from .plan import TrainingPlan

# Checkpoint write bandwidth when not given: 2 GB/s per node written in parallel (one NVMe / parallel-FS client
# stream per node; torch.distributed.checkpoint writes shards concurrently).
CHECKPOINT_BYTES_PER_S_PER_NODE = 2e9


def checkpoint_write_s(plan: TrainingPlan) -> float:
    """Seconds to write one checkpoint: weights + optimizer states (fp32 master, moments; gradients are not
    saved) at the plan's write bandwidth."""
    w_b, _, o_b = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    return plan.model.total_parameters * (w_b + o_b) / plan.checkpoint_bytes_per_s
