"""The step model of one plan on one accelerator: StepModel divides a plan's step work (step_time.step_work) by the
accelerator's rates and adds the tensor, pipeline, expert, context and data-parallel communication each micro-batch
size implies, and the pipeline bubble. model/compute.py holds the constants (with their sources), the work and the
rates; this module the per-micro-batch seconds. model/arrays.py writes the same model over arrays of layouts."""

from __future__ import annotations

from ...parallelism import (
    all_reduce_seconds,
    bubble_seconds,
    collective_latency_s,
    expert_all_to_all_seconds,
    group_bandwidth,
    pipeline_bubble_fraction,
)
from .activations import layer_activation_bytes, saved_input_bytes
from .compute import (
    CP_MIN_EXPOSED,
    TP_EXPOSED,
    StepTime,
    StepWork,
    compute_rates,
    gemm_seconds,
    optimizer_seconds,
    step_work,
)
from .data_comm import gradient_buckets, replica_exposed_s, shard_group_exposed_s
from .expert_comm import ALL_TO_ALLS_PER_MOE_LAYER, exposed_expert_s, unpaired_share
from .flops import UnitFlops, recompute_collectives
from .memory import MemoryBreakdown, bytes_per_parameter, parameters_per_device
from .offload import host_link_bytes_per_s, offload_step_s
from .plan import TrainingPlan


def predict_step(plan: TrainingPlan, micro_batch: int, memory: MemoryBreakdown, flops: UnitFlops) -> StepTime:
    """Step time at the predicted efficiency for `plan` run with `micro_batch` (its `memory` and `flops`)."""
    return StepModel(plan, flops).step(micro_batch, memory)


class StepModel:
    """predict_step for one plan on its accelerator, built once and stepped per micro-batch.

    evaluate() compares several micro-batches of a plan and the advice's catalog scan evaluates one plan on every
    accelerator, so what does not depend on the micro-batch (peaks, efficiencies, group bandwidths, parameters per
    device, the gradient all-reduce) is computed here once. The formulas are those of the docstrings below, with
    the same operations in the same order (the answers do not move by a bit).
    """

    def __init__(
        self,
        plan: TrainingPlan,
        flops: UnitFlops,
        params: tuple[float, float] | None = None,
        work: StepWork | None = None,
    ):
        model, acc, par = plan.model, plan.accelerator, plan.par
        self.plan, self.shape = plan, model.shape
        self.per_replica = plan.per_replica_batch
        self.bandwidth = acc.memory_bandwidth_bytes_per_s
        self.pipeline, self.virtual = par.pipeline, par.virtual_pipeline
        self.zero_bubble = par.pipeline_schedule == "zero_bubble"
        self._params = params
        self._compute_terms(plan, work or step_work(plan, flops))
        self._communication_ready = False  # the group bandwidths are looked up at the first step
        self._steps: dict[int, tuple[MemoryBreakdown, StepTime]] = {}  # micro-batch -> (its memory, step)

    def local_floor(self, micro_batch: int, memory: MemoryBreakdown) -> tuple[float, float]:
        """(StepTime.compute_s, a floor of StepTime.bubble_s) of `micro_batch`, with no bandwidth lookup: the bubble
        of the compute terms alone (communication only lengthens the pipeline stages)."""
        micro_batches = self.per_replica // micro_batch
        stage = self._gemm_s(micro_batch) + self.attention_s + self.memory_bound_s
        bubble = pipeline_bubble_fraction(self.pipeline, micro_batches, self.virtual, self.zero_bubble)
        return stage + self._optimizer_s(memory), bubble_seconds(stage, bubble)

    def step(self, micro_batch: int, memory: MemoryBreakdown) -> StepTime:
        """Seconds per optimizer step, by cause, with `micro_batch` (whose `memory` the plan needs); remembered,
        so a caller that bounds a plan's time before evaluating it does not step twice."""
        known = self._steps.get(micro_batch)
        if known is not None and known[0] is memory:
            return known[1]
        step = self._step(micro_batch, memory)
        self._steps[micro_batch] = (memory, step)
        return step

    def _step(self, micro_batch: int, memory: MemoryBreakdown) -> StepTime:
        if not self._communication_ready:
            plan = self.plan
            self._model_parallel_terms(plan)
            self._data_parallel_terms(plan, self._params or parameters_per_device(plan.model, plan.par))
            self._communication_ready = True
        micro_batches = self.per_replica // micro_batch
        gemm_s = gemm_seconds(self._work, self._gemm_rate, micro_batch)
        attention_s, memory_bound_s = self.attention_s, self.memory_bound_s
        compute_s = gemm_s + attention_s + memory_bound_s
        optimizer_s = optimizer_seconds(memory, self.bandwidth)
        tensor_s, pipeline_s, expert_s = self._model_parallel_comm(micro_batch, micro_batches, compute_s)
        data_s = self._data_parallel_comm(micro_batches, compute_s)
        context_s = (
            self._context_parallel_comm(micro_batch, micro_batches, attention_s)
            if self._work.context > 1
            else 0.0
        )
        offload_s = (
            self._offload_s(micro_batch, micro_batches, compute_s) if self.plan.offload_layers else 0.0
        )
        stage_work = compute_s + tensor_s + pipeline_s + expert_s + context_s + offload_s
        bubble = pipeline_bubble_fraction(self.pipeline, micro_batches, self.virtual, self.zero_bubble)
        bubble_s = bubble_seconds(stage_work, bubble)
        return StepTime(
            gemm_s,
            attention_s,
            memory_bound_s,
            optimizer_s,
            tensor_s,
            pipeline_s,
            data_s,
            expert_s,
            bubble_s,
            context_s,
            offload_s,
        )

    def _offload_s(self, micro_batch: int, micro_batches: int, compute_s: float) -> float:
        """Exposed seconds of the activation copies to and from the host (offload.py) in one step."""
        plan, shape = self.plan, self.shape
        if shape is None:
            return 0.0
        par = plan.par
        stored, _ = layer_activation_bytes(
            shape,
            par,
            plan.recompute,
            plan.flash_attention,
            plan.sequence_length // par.context,
            micro_batch,
            plan.activation_bytes_per_value,
            input_bytes=saved_input_bytes(plan.precision),  # FP8 1 byte, NVFP4 ~0.6 (activations.py)
            modules=plan.recompute_modules,
        )
        layers_per_stage = -(-shape.layers // par.pipeline)
        bandwidth = host_link_bytes_per_s(plan.accelerator)
        return float(
            offload_step_s(plan.offload_layers, layers_per_stage, stored, micro_batches, compute_s, bandwidth)
        )

    # ------------------------------------------------------------------ compute: GEMMs, attention, element-wise

    def _compute_terms(self, plan: TrainingPlan, work: StepWork) -> None:
        if work.framework != plan.framework:
            # a basis's work on a plan whose unnamed stack followed its part (framework.inferred_framework: ZeRO-3
            # is fsdp on a GPU, megatron on a TPU); the stacks inferred differ in their attention kernel only
            work = work._replace(framework=plan.framework)
        self._work = work
        self._gemm_rate, self.attention_s, self.memory_bound_s = compute_rates(
            work, plan.accelerator, plan.precision
        )

    def _optimizer_s(self, memory: MemoryBreakdown) -> float:
        return optimizer_seconds(memory, self.bandwidth)

    def _gemm_s(self, micro_batch: int) -> float:
        return gemm_seconds(self._work, self._gemm_rate, micro_batch)

    # ------------------------------------------------------------------ tensor, pipeline, expert, context

    def _model_parallel_terms(self, plan: TrainingPlan) -> None:
        shape, acc, par = self.shape, plan.accelerator, plan.par
        self._act_bytes = plan.activation_bytes_per_value
        if shape is None:
            return
        self._hidden = shape.hidden_size
        self._seq = plan.sequence_length // par.context  # the tokens of a micro-batch on one context rank
        self._layers_per_stage = -(-shape.layers // par.pipeline)
        # 2 all-reduces forward + 2 backward per layer (Shoeybi et al. 2019 Fig. 4) + recomputed ones
        self._collectives = 4 + recompute_collectives(plan.recompute, par.sequence_parallel)
        self._tensor = par.tensor
        self._tp_bw = group_bandwidth(acc, par.tensor, 1)
        if par.pipeline > 1:
            self._pp_bw = group_bandwidth(acc, par.pipeline, par.tensor * par.context * par.data)
            self._pp_split = par.tensor if par.sequence_parallel else 1
        self._expert = par.expert if shape.is_moe and par.expert > 1 else 1
        if (
            self._expert > 1
        ):  # seconds of one all-to-all per byte of a micro-batch's tokens (tokens × h × bytes)
            self._ep_s_per_byte = expert_all_to_all_seconds(
                acc, 1.0, shape.experts, shape.experts_per_token, par.expert, par.expert_tensor_ranks
            )
            self._ep_overlap = par.expert_overlap
        if par.context > 1:
            self._cp_seq_len = plan.sequence_length
            self._cp_bw = group_bandwidth(acc, par.context, par.tensor)

    def _model_parallel_comm(
        self, micro_batch: int, micro_batches: int, compute_s: float
    ) -> tuple[float, float, float]:
        """(tensor, pipeline, expert) communication seconds per step on the critical path (`compute_s`: the step's
        GEMM, attention and element-wise seconds, behind which an overlapped expert all-to-all runs)."""
        shape = self.shape
        if shape is None:
            return 0.0, 0.0, 0.0
        hidden, act_bytes, seq = self._hidden, self._act_bytes, self._seq
        payload = micro_batch * seq * hidden * act_bytes
        tensor_s = (
            TP_EXPOSED
            * micro_batches
            * self._layers_per_stage
            * self._collectives
            * all_reduce_seconds(payload, self._tensor, self._tp_bw)
        )
        pipeline_s = expert_s = 0.0
        if (
            self.pipeline > 1
        ):  # one activation forward, one gradient backward per micro-batch per stage boundary
            pipeline_s = 2 * micro_batches * payload / self._pp_split / self._pp_bw
        if self._expert > 1:  # dispatch + combine, forward and backward, per MoE layer of the stage
            all_to_all_s = (
                micro_batches
                * shape.moe_layers
                / self.pipeline
                * ALL_TO_ALLS_PER_MOE_LAYER
                * payload
                * self._ep_s_per_byte
            )
            unpaired = unpaired_share(self.pipeline, self.virtual, micro_batches) if self._ep_overlap else 1.0
            expert_s = float(exposed_expert_s(all_to_all_s, compute_s, unpaired, self._ep_overlap))
        return tensor_s, pipeline_s, expert_s

    def _context_parallel_comm(self, micro_batch: int, micro_batches: int, attention_s: float) -> float:
        """Exposed K/V ring exchange of context parallelism, seconds per step.

        Each rank passes its K/V block around the ring cp − 1 times in the forward pass; the backward pass sends
        K/V again and their gradients back (3 transfers in all). Each transfer overlaps the attention block being
        computed (Liu et al. 2023 "Ring Attention" §3; Megatron-Core context parallel P2P with overlap): only what
        exceeds the attention time is exposed, and never less than CP_MIN_EXPOSED of it (launch and sync gaps)."""
        shape, context = self.shape, self._work.context
        if context <= 1 or shape is None:
            return 0.0
        local_tokens = micro_batch * self._cp_seq_len / context
        kv_bytes = 2.0 * local_tokens * shape.kv_heads * shape.head_dim * self._act_bytes / self._tensor
        total = 3.0 * (context - 1) * kv_bytes / self._cp_bw * self._layers_per_stage * micro_batches
        return max(CP_MIN_EXPOSED * total, total - attention_s)

    # ------------------------------------------------------------------ data parallel (and ZeRO-3 gathers)

    def _data_parallel_terms(self, plan: TrainingPlan, params: tuple[float, float]) -> None:
        par = plan.par
        _, g_b, _ = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
        dense, expert = params
        ranks = par.shard_ranks  # every gradient rank, or the hybrid-sharding group
        dp_bw = group_bandwidth(plan.accelerator, ranks, par.tensor)
        # ZeRO-3 moves 1.5× the all-reduce volume (Rajbhandari et al. 2020 §7.2)
        volume = 1.5 if par.zero_stage >= 3 else 1.0
        grad_bytes = (dense + expert) * g_b
        self._data_total = volume * all_reduce_seconds(grad_bytes, ranks, dp_bw) + data_latency_s(
            plan, dense + expert
        )
        # hybrid sharding: each shard group's gradient shard is all-reduced across the replicas once per step
        # (FSDP2 HSDP: reduce-scatter in the shard group, all-reduce over dp_replicate), on the ranks strided by
        # tensor × data_shard
        self._replica_total = 0.0
        if par.replicas > 1:
            replica_bw = group_bandwidth(plan.accelerator, par.replicas, par.tensor * ranks)
            self._replica_total = all_reduce_seconds(
                grad_bytes / ranks, par.replicas, replica_bw
            ) + replica_latency_s(plan, (dense + expert) / ranks)

    def _data_parallel_comm(self, micro_batches: int, compute_s: float) -> float:
        """Exposed data-parallel gradient (and ZeRO-3 parameter) communication seconds per step (data_comm.py)."""
        zero_stage = self.plan.par.zero_stage
        shard_group = shard_group_exposed_s(self._data_total, micro_batches, compute_s, zero_stage)
        return shard_group + replica_exposed_s(self._replica_total, micro_batches, compute_s)


def data_latency_s(plan: TrainingPlan, params: float) -> float:
    """Collective latencies of one step's data-parallel traffic (parallelism.collective_latency_s): ZeRO-3 gathers
    each layer twice and reduce-scatters it once per micro-batch (FSDP units = transformer blocks); otherwise the
    gradients travel in buckets of max(40M, 1M × dp) parameters (Megatron-Core DistributedDataParallel default),
    one all-reduce each (ZeRO-0) or a reduce-scatter and a parameter all-gather (ZeRO-1/2). Over the shard group
    under hybrid sharding."""
    par, acc = plan.par, plan.accelerator
    ranks = par.shard_ranks
    if ranks <= 1:
        return 0.0
    if par.zero_stage >= 3 and plan.model.shape is not None:
        layers_per_stage = -(-plan.model.shape.layers // par.pipeline)
        return 3.0 * layers_per_stage * collective_latency_s(acc, False, ranks, par.tensor)
    buckets = gradient_buckets(params, ranks)
    if par.zero_stage == 0:
        return buckets * collective_latency_s(acc, True, ranks, par.tensor)
    return buckets * 2.0 * collective_latency_s(acc, False, ranks, par.tensor)


def replica_latency_s(plan: TrainingPlan, params: float) -> float:
    """Latencies of the replicas' all-reduce of `params` gradient-shard parameters, in the same buckets."""
    par, acc = plan.par, plan.accelerator
    replicas = par.replicas
    return gradient_buckets(params, replicas) * collective_latency_s(
        acc, True, replicas, par.tensor * par.shard_ranks
    )
