"""TrainingPlan → numbers (FLOPs, memory, time, cost). The lean path: no strings, no recommendations."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

from ...offers import eviction_rate_per_device_hour
from ...units import SECONDS_PER_HOUR
from .checkpoint import checkpoint_write_s
from .compute import StepTime, StepWork, step_work
from .flops import UnitFlops, flops_per_unit, recompute_gemm_factor
from .goodput import Goodput, goodput
from .memory import (
    MemoryBreakdown,
    fragmentation_fraction,
    model_states,
    parameters_per_device,
    runtime_reserve_bytes,
    training_memory,
)
from .plan import TrainingPlan
from .recompute import recomputes_attention
from .step import StepModel

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
    basis: Basis  # the accelerator-independent numbers it was computed from (the advice's catalog scan reuses them)
    # run-level overheads: checkpoint interval used, expected interruptions, the time they lose, goodput fraction
    run: Goodput | None = None

    @property
    def interruptions_s(self) -> float:
        return self.run.interruptions_s if self.run is not None else 0.0

    @property
    def stragglers_s(self) -> float:
        return self.run.stragglers_s if self.run is not None else 0.0

    @property
    def goodput(self) -> float:
        return self.run.fraction if self.run is not None else 1.0

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

    @cached_property  # the answer, its range and the advice read it many times
    def seconds(self) -> float:
        return (
            self.compute_s
            + self.bubble_s
            + self.communication_s
            + self.checkpoint_s
            + self.validation_s
            + self.stragglers_s
            + self.interruptions_s
        )

    def seconds_at(self, utilization: float) -> float:
        """Total time if the same plan ran at another utilization (checkpoint writes do not scale; the time lost to
        interruptions is taken to scale with the stepping it re-does)."""
        scale = self.utilization / utilization
        return (self.seconds - self.checkpoint_s) * scale + self.checkpoint_s

    def accelerator_hours(self, devices: int, seconds: float | None = None) -> float:
        return devices * (self.seconds if seconds is None else seconds) / SECONDS_PER_HOUR


@dataclass(frozen=True)
class Basis:
    """What evaluate needs that does not depend on the accelerator: FLOPs per unit, parameters per device and the
    memory of every micro-batch it may pick. Memory per device follows from the model, layout, precision,
    optimizer and micro-batch, not from the device (only the capacity it is compared with does), so the advice's
    catalog scan evaluates one plan on every accelerator with one Basis."""

    flops: UnitFlops
    params: tuple[float, float]  # (non-expert, expert) parameters on the busiest device before ZeRO
    work: StepWork  # the step's compute work (StepModel divides it by each accelerator's rates)
    # (micro-batch, its memory) in order of preference: the plan's own when it fixes one, else the powers of two
    # dividing the per-replica batch, largest first (ending with 1)
    candidates: tuple[tuple[int, MemoryBreakdown], ...]
    # the runtime reserve and fragmentation share those memories include (memory.part_overhead_bytes: the terms
    # that depend on the kind of part; for_part swaps them for another kind's)
    reserve: float = 0.0
    fragmentation: float = 0.0


def for_part(plan: TrainingPlan, b: Basis) -> Basis:
    """`b` with its memories' part overhead that of plan.accelerator (a TPU has no CUDA context and no caching
    allocator)."""
    acc = plan.accelerator
    reserve, fragmentation = runtime_reserve_bytes(acc), fragmentation_fraction(acc)
    if (reserve, fragmentation) == (b.reserve, b.fragmentation):
        return b
    candidates = tuple((micro, mem.on(acc)) for micro, mem in b.candidates)
    return replace(b, candidates=candidates, reserve=reserve, fragmentation=fragmentation)


def basis(plan: TrainingPlan) -> Basis:
    """The accelerator-independent part of evaluate(plan)."""
    per_replica = plan.per_replica_batch
    if plan.micro_batch is not None:
        micros = [plan.micro_batch]
    else:
        micros = _candidate_micro_batches(plan, per_replica)
    params = parameters_per_device(plan.model, plan.par)
    states = model_states(plan, params)
    candidates = tuple(
        (micro, training_memory(plan, micro, per_replica // micro, params, states)) for micro in micros
    )
    flops = flops_per_unit(plan)
    acc = plan.accelerator
    return Basis(
        flops,
        params,
        step_work(plan, flops),
        candidates,
        runtime_reserve_bytes(acc),
        fragmentation_fraction(acc),
    )


def evaluate(plan: TrainingPlan, known: Basis | None = None, model: StepModel | None = None) -> Evaluation:
    """Numbers for a validated plan (`known`: its basis, when the caller evaluates it on several accelerators;
    `model`: its StepModel, when the caller already stepped it)."""
    b = for_part(plan, known) if known is not None else basis(plan)
    flops = b.flops
    per_unit = flops.total
    units_per_step = plan.units_per_step
    steps = math.ceil(plan.units / units_per_step)
    pre_steps = math.ceil(plan.pretraining_units / units_per_step) if plan.pretraining_units else 0
    micro, memory, predicted = _micro_batch(plan, b, model or StepModel(plan, flops, b.params, b.work))
    peak = plan.accelerator.peak(plan.precision) or 0.0
    step_flops = per_unit * units_per_step
    u_pred = step_flops / (plan.par.devices * peak * predicted.busy_s)
    if plan.utilization is not None:
        step = predicted.scaled(u_pred / plan.utilization)
        utilization = plan.utilization
    else:
        step, utilization = predicted, u_pred
    evaluations, validation_flops, validation_s = _validation(plan, steps, per_unit, peak, utilization)
    unit_total = plan.units + plan.pretraining_units
    run = _run(plan, step, unit_total / units_per_step, steps + pre_steps, validation_s)
    return Evaluation(
        micro_batch=micro,
        micro_batch_chosen=plan.micro_batch is None,
        micro_batches=plan.per_replica_batch // micro,
        steps=steps,
        pretraining_steps=pre_steps,
        step_equivalents=unit_total / units_per_step,
        flops_per_unit=per_unit,
        gemm_flops_per_unit=flops.gemm,
        attention_flops_per_unit=flops.attention,
        training_flops=per_unit * plan.units,
        pretraining_flops=per_unit * plan.pretraining_units,
        validation_flops=validation_flops,
        hardware_flops=unit_total * _hardware_per_unit(plan, flops) + validation_flops,
        memory=memory,
        fits=memory.total <= plan.accelerator.memory_bytes,
        step=step,
        predicted_utilization=u_pred,
        utilization=utilization,
        training_s=plan.units / units_per_step * step.total_s,
        pretraining_s=plan.pretraining_units / units_per_step * step.total_s,
        checkpoint_s=run.checkpoint_s,
        validation_s=validation_s,
        checkpoints=run.checkpoints,
        evaluations=evaluations,
        usd_per_hour=plan.usd_per_hour,
        basis=b,
        run=run,
    )


def options(plan: TrainingPlan, b: Basis) -> list[tuple[int, MemoryBreakdown]]:
    """The micro-batches evaluate chooses among: the plan's own; else those that fit, largest first; else 1 (whose
    memory is shown: it does not fit)."""
    b = for_part(plan, b)
    if plan.micro_batch is not None:
        return [b.candidates[0]]
    capacity = plan.accelerator.memory_bytes
    return [(mb, mem) for mb, mem in b.candidates if mem.total <= capacity] or [b.candidates[-1]]


def seconds_floor(plan: TrainingPlan, b: Basis, model: StepModel) -> float:
    """A floor of evaluate(plan).seconds when the utilization is predicted: each of its step terms (compute, bubble,
    communication) at its least over the micro-batches evaluate may choose; checkpoints and validation only add.
    The advice's catalog scan discards a device with it before building the whole evaluation."""
    steps = [model.step(micro, memory) for micro, memory in options(plan, b)]
    step_equivalents = (plan.units + plan.pretraining_units) / plan.units_per_step
    return (
        step_equivalents * min(s.compute_s for s in steps)
        + step_equivalents * min(s.bubble_s for s in steps)
        + step_equivalents * min(s.communication_s for s in steps)
    )


def local_seconds_floor(plan: TrainingPlan, b: Basis, model: StepModel) -> float:
    """A cheaper floor of evaluate(plan).seconds than seconds_floor when the utilization is predicted: the compute
    terms and the bubble they alone imply, at their least over the micro-batches evaluate may choose (no bandwidth
    lookup, no step built)."""
    step_equivalents = (plan.units + plan.pretraining_units) / plan.units_per_step
    return min(
        step_equivalents * compute_s + step_equivalents * bubble_s
        for compute_s, bubble_s in (model.local_floor(micro, memory) for micro, memory in options(plan, b))
    )


def _micro_batch(plan: TrainingPlan, b: Basis, model: StepModel) -> tuple[int, MemoryBreakdown, StepTime]:
    """The micro-batch the plan runs (given, or chosen among those that fit), its memory and predicted step."""
    fitting = options(plan, b)
    if plan.micro_batch is None and plan.par.pipeline > 1 and len(fitting) > 1:
        # Pipelines trade micro-batch size against the bubble (p−1)/(m+p−1): take the fastest step
        # (Narayanan et al. 2021 §3.3: smaller micro-batches, more of them, shrink the bubble).
        scored = [(model.step(mb, mem), mb, mem) for mb, mem in fitting]
        predicted, micro, memory = min(scored, key=lambda t: (t[0].total_s, -t[1]))
        return micro, memory, predicted
    micro, memory = fitting[0]
    return micro, memory, model.step(micro, memory)


def _validation(
    plan: TrainingPlan, steps: int, per_unit: float, peak: float, utilization: float
) -> tuple[int, float, float]:
    """(evaluations, FLOPs, seconds) of the validation passes."""
    evaluations = steps // plan.validation_interval if plan.validation_interval else 0
    # validation is forward-only: 2·N per token = 1/3 of training FLOPs (Kaplan et al. 2020)
    validation_flops = evaluations * plan.validation_units * per_unit / 3.0
    return evaluations, validation_flops, validation_flops / (plan.par.devices * peak * utilization)


def _run(
    plan: TrainingPlan, step: StepTime, step_equivalents: float, all_steps: int, validation_s: float
) -> Goodput:
    """Checkpoints (at the plan's interval, else the Young/Daly optimum), expected interruptions and the time they
    lose, over the stepping and validation time (training/goodput.py)."""
    return goodput(
        productive_s=step_equivalents * step.total_s + validation_s,
        step_s=step.total_s,
        all_steps=all_steps,
        devices=plan.par.devices,
        checkpoint_write_s=checkpoint_write_s(plan),
        interval_steps=plan.checkpoint_interval,
        rate_per_device_hour=plan.interruptions_per_device_hour,
        restart_s=plan.restart_s,
        given=plan.goodput,
        stragglers=plan.straggler_share,
        evictions=(eviction_rate_per_device_hour(plan.offer_terms), plan.offer_terms.startup_s),
    )


def _hardware_per_unit(plan: TrainingPlan, flops: UnitFlops) -> float:
    """FLOPs the hardware runs per unit: full recompute adds one more forward pass (8ND hardware FLOPs;
    bigscience math README), op-level selective checkpointing the forward of the matmuls it does not keep
    (recompute_gemm_factor), selective recompute of core attention or FlashAttention re-run the attention scores."""
    recompute_factor = 4.0 / 3.0 if plan.recompute == "full" else 1.0
    again = recomputes_attention(plan.recompute, plan.recompute_modules, plan.flash_attention)
    attn_factor = 4.0 / 3.0 if again else 1.0
    return flops.gemm * recompute_gemm_factor(plan) + flops.attention * max(recompute_factor, attn_factor)


def _candidate_micro_batches(plan: TrainingPlan, per_replica: int) -> list[int]:
    """Power-of-two micro-batches dividing the per-replica batch, largest first, down to 1."""
    if plan.unit == "token" and plan.model.shape is not None:
        cap = max(1, MAX_AUTO_MICRO_BATCH_TOKENS // plan.sequence_length)
    else:
        cap = MAX_AUTO_MICRO_BATCH_SAMPLES
    candidate = 1
    while candidate * 2 <= min(cap, per_replica) and per_replica % (candidate * 2) == 0:
        candidate *= 2
    micros = []
    while candidate >= 1:
        micros.append(candidate)
        candidate //= 2
    return micros
