"""TrainingPlan → numbers (FLOPs, memory, time, cost). The lean path: no strings, no recommendations."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..units import SECONDS_PER_HOUR
from .memory import MemoryBreakdown, bytes_per_parameter, training_memory
from .plan import TrainingPlan
from .step_time import StepTime, flops_per_unit, predict_step

MAX_AUTO_MICRO_BATCH_TOKENS = (
    16384  # beyond ~16k tokens per micro-batch GEMMs are saturated (NeMo recipes use 2-16k)
)
MAX_AUTO_MICRO_BATCH_SAMPLES = (
    256  # CNN/ViT per-device batch rarely exceeds 256 (NVIDIA DeepLearningExamples)
)


@dataclass(frozen=True)
class Evaluation:
    """Every number the response needs, in base units (FLOPs, bytes, seconds, USD)."""

    micro_batch: int
    micro_batch_chosen: bool
    micro_batches: int  # per optimizer step per pipeline (gradient-accumulation steps)
    steps: int
    pretraining_steps: int
    # (training + pre-training units) / units per step: time is not rounded up to whole steps
    step_equivalents: float
    flops_per_unit: float  # model FLOPs per token (or per sample) incl. forward and backward
    gemm_flops_per_unit: float
    attention_flops_per_unit: float
    training_flops: float
    pretraining_flops: float
    validation_flops: float
    hardware_flops: float
    memory: MemoryBreakdown
    fits: bool
    step: StepTime  # at the utilization in use
    predicted_utilization: float
    utilization: float
    training_s: float
    pretraining_s: float
    checkpoint_s: float
    validation_s: float
    checkpoints: int
    evaluations: int
    usd_per_hour: float | None

    @property
    def total_flops(self) -> float:
        return self.training_flops + self.pretraining_flops + self.validation_flops

    @property
    def compute_s(self) -> float:
        return self.step_equivalents * self.step.compute_s

    @property
    def bubble_s(self) -> float:
        return self.step_equivalents * self.step.bubble_s

    @property
    def communication_s(self) -> float:
        return self.step_equivalents * self.step.communication_s

    @property
    def seconds(self) -> float:
        return self.compute_s + self.bubble_s + self.communication_s + self.checkpoint_s + self.validation_s

    def seconds_at(self, utilization: float) -> float:
        """Total time if the same plan ran at another utilization (checkpoint writes do not scale)."""
        scale = self.utilization / utilization
        return (self.seconds - self.checkpoint_s) * scale + self.checkpoint_s

    def accelerator_hours(self, devices: int, seconds: float | None = None) -> float:
        return devices * (self.seconds if seconds is None else seconds) / SECONDS_PER_HOUR


def evaluate(plan: TrainingPlan) -> Evaluation:
    """Numbers for a validated plan."""
    par, acc = plan.par, plan.accelerator
    flops = flops_per_unit(plan)
    gemm_unit, attn_unit, per_unit = flops.gemm, flops.attention, flops.total
    units_per_step = plan.units_per_step
    steps = math.ceil(plan.units / units_per_step)
    pre_steps = math.ceil(plan.pretraining_units / units_per_step) if plan.pretraining_units else 0
    per_replica = plan.per_replica_batch

    def memory_for(micro: int) -> MemoryBreakdown:
        return training_memory(plan, micro, per_replica // micro)

    capacity = acc.memory_bytes
    chosen = plan.micro_batch is None
    w_b, _, _ = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)

    def step_for(micro: int, memory: MemoryBreakdown) -> StepTime:
        return predict_step(plan, micro, memory, flops)

    if plan.micro_batch is not None:
        micro = plan.micro_batch
        memory = memory_for(micro)
        predicted = step_for(micro, memory)
    else:
        fitting = _fitting_micro_batches(plan, per_replica, memory_for, capacity)
        if par.pipeline > 1 and len(fitting) > 1:
            # Pipelines trade micro-batch size against the bubble (p−1)/(m+p−1): take the fastest step
            # (Narayanan et al. 2021 §3.3: smaller micro-batches, more of them, shrink the bubble).
            scored = [(step_for(mb, mem), mb, mem) for mb, mem in fitting]
            predicted, micro, memory = min(scored, key=lambda t: (t[0].total_s, -t[1]))
        else:
            micro, memory = fitting[0]
            predicted = step_for(micro, memory)
    m = per_replica // micro
    peak = acc.peak(plan.precision) or 0.0
    step_flops = per_unit * units_per_step
    u_pred = step_flops / (par.devices * peak * predicted.busy_s)
    if plan.utilization is not None:
        step = predicted.scaled(u_pred / plan.utilization)
        utilization = plan.utilization
    else:
        step, utilization = predicted, u_pred

    evaluations = steps // plan.validation_interval if plan.validation_interval else 0
    # validation is forward-only: 2·N per token = 1/3 of training FLOPs (Kaplan et al. 2020)
    validation_flops = evaluations * plan.validation_units * per_unit / 3.0
    validation_s = validation_flops / (par.devices * peak * utilization)
    checkpoints = (steps + pre_steps) // plan.checkpoint_interval if plan.checkpoint_interval else 0
    # a checkpoint holds weights + optimizer states (fp32 master, moments); gradients are not saved
    _, _, o_b = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    checkpoint_bytes = plan.model.total_parameters * (w_b + o_b)
    checkpoint_s = checkpoints * checkpoint_bytes / plan.checkpoint_bytes_per_s

    # full recompute: one more forward pass (8ND hardware FLOPs; bigscience math README)
    recompute_factor = 4.0 / 3.0 if plan.recompute == "full" else 1.0
    attn_factor = 4.0 / 3.0 if plan.recompute != "none" or plan.flash_attention else 1.0
    hardware_per_unit = gemm_unit * recompute_factor + attn_unit * max(recompute_factor, attn_factor)
    hardware_flops = (plan.units + plan.pretraining_units) * hardware_per_unit + validation_flops
    return Evaluation(
        micro_batch=micro,
        micro_batch_chosen=chosen,
        micro_batches=m,
        steps=steps,
        pretraining_steps=pre_steps,
        step_equivalents=(plan.units + plan.pretraining_units) / units_per_step,
        flops_per_unit=per_unit,
        gemm_flops_per_unit=gemm_unit,
        attention_flops_per_unit=attn_unit,
        training_flops=per_unit * plan.units,
        pretraining_flops=per_unit * plan.pretraining_units,
        validation_flops=validation_flops,
        hardware_flops=hardware_flops,
        memory=memory,
        fits=memory.total <= capacity,
        step=step,
        predicted_utilization=u_pred,
        utilization=utilization,
        training_s=plan.units / units_per_step * step.total_s,
        pretraining_s=plan.pretraining_units / units_per_step * step.total_s,
        checkpoint_s=checkpoint_s,
        validation_s=validation_s,
        checkpoints=checkpoints,
        evaluations=evaluations,
        usd_per_hour=plan.usd_per_hour,
    )


def _fitting_micro_batches(plan: TrainingPlan, per_replica: int, memory_for, capacity: float):  # type: ignore[no-untyped-def]
    """Power-of-two micro-batches dividing the per-replica batch that fit, largest first (else [1])."""
    if plan.unit == "token" and plan.model.shape is not None:
        cap = max(1, MAX_AUTO_MICRO_BATCH_TOKENS // plan.sequence_length)
    else:
        cap = MAX_AUTO_MICRO_BATCH_SAMPLES
    candidate = 1
    while candidate * 2 <= min(cap, per_replica) and per_replica % (candidate * 2) == 0:
        candidate *= 2
    fitting = []
    smallest = None
    while candidate >= 1:
        memory = memory_for(candidate)
        if memory.total <= capacity:
            fitting.append((candidate, memory))
        smallest = memory
        candidate //= 2
    assert smallest is not None
    return fitting or [(1, smallest)]
