"""The training model over arrays of parallel layouts: one numpy pass evaluates thousands of configurations.

The planner searches layouts (data, tensor, pipeline, context, expert, ZeRO stage, virtual pipeline, micro-batch)
of one plan on one accelerator. Evaluating each through TrainingPlan → evaluate costs ~100 µs of Python; here every
formula of memory.py, model/compute.py (StepModel) and evaluate.py is written once more over numpy arrays, term by
term in the same order, so that a layout costs well under a microsecond. It is the same model, not a second one:
tests/engine/test_vector_model.py checks that both paths agree to 1e-9 on random layouts of every model kind, and
fails the day one of them changes without the other.

Only what a layout changes is an array; the model, precision, optimizer, recomputation, sequence length, global
batch and accelerator come from the base plan (of its `par`, only the switches no layout column holds are read:
data_shard, expert_overlap, expert_tensor; its degrees, pipeline_schedule and `micro_batch` are ignored).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...offers import Terms, eviction_rate_per_device_hour
from ...parallelism import (
    DEVICES_PER_NODE,
    bubble_seconds,
    expert_shard_ranks,
    expert_tensor_ranks,
    pipeline_bubble_fraction,
    shard_ranks,
)
from ...units import SECONDS_PER_HOUR
from . import activations as act
from . import arrays_comm as vc
from . import compute as st
from . import memory as mem
from .checkpoint import CHECKPOINT_BYTES_PER_S_PER_NODE, checkpoint_write_s
from .cost import total_usd
from .expert_comm import exposed_expert_s, unpaired_share
from .flops import flops_per_unit
from .framework import inferred_framework, loss_bytes_per_logit
from .goodput import MAX_LOSS_SHARE, combined_rate, straggler_shares
from .layouts import Layouts
from .offload import host_link_bytes_per_s, offload_step_s
from .plan import TrainingPlan
from .recompute import keeps_scores, saved_terms

Array = np.ndarray


class RunInputs(NamedTuple):
    """The run-level terms' inputs, per layout, kept to re-price the run on another offer (on_offer)."""

    productive_s: Array  # stepping and validation, before stragglers
    stepping_s: Array  # compute + bubble + communication over the run
    validation_s: Array
    write_s: Array  # one checkpoint write
    all_steps: int


class LayoutNumbers(NamedTuple):
    """What the planner compares, per layout, in base units."""

    devices: Array
    memory_bytes: Array  # peak per device (MemoryBreakdown.total)
    fits: Array
    step_s: Array  # StepTime.total_s at the predicted utilization
    seconds: Array  # Evaluation.seconds
    utilization: Array  # predicted model-FLOPs utilization
    accelerator_hours: Array
    compute_s: Array
    communication_s: Array
    bubble_s: Array
    interruptions: Array | float = 0.0  # expected over the run (failures and evictions)
    evictions: Array | float = 0.0  # of which spot capacity reclaimed
    interruptions_s: Array | float = 0.0  # seconds they lose (restarts and re-done work)
    run: RunInputs | None = None  # what on_offer re-evaluates the run's interruptions from

    def on_offer(self, plan: TrainingPlan, terms: Terms) -> LayoutNumbers:
        """These layouts' numbers on an offer whose capacity may be reclaimed (spot): the run's interruptions at
        the offer's eviction rate on top of failures (goodput.combined_rate), the same numbers when it evicts as
        the plan's own offer does. Only the goodput terms are recomputed: a few array operations per offer."""
        own = plan.offer_terms
        same = (terms.interruptions_per_hour, terms.startup_s) == (own.interruptions_per_hour, own.startup_s)
        if self.run is None or same or (own.interruptions_per_hour == terms.interruptions_per_hour == 0.0):
            return self
        r = self.run
        checkpoint_s, stragglers_s, lost = _goodput(plan, r.productive_s, self.step_s, r.all_steps, self.devices,
                                                    r.write_s, terms)  # fmt: skip
        interruptions_s, count, evicted = lost
        seconds = r.stepping_s + checkpoint_s + r.validation_s + stragglers_s + interruptions_s
        return self._replace(seconds=seconds, accelerator_hours=self.devices * seconds / SECONDS_PER_HOUR,
                             interruptions=count, evictions=evicted, interruptions_s=interruptions_s)  # fmt: skip

    def usd(self, usd_per_hour: float, plan: TrainingPlan, terms: Terms | None = None) -> Array:
        """Total USD as the response computes it: the hours billed on `terms` (default: the plan's offer) at the
        price, + infrastructure overhead."""
        return total_usd(self.devices, self.seconds, usd_per_hour, plan, terms)


def evaluate_layouts(
    plan: TrainingPlan, layouts: Layouts, checkpoint_bytes_per_s: float | None = None
) -> LayoutNumbers:
    """evaluate(plan with each layout and micro-batch) at the predicted utilization, vectorised.

    `checkpoint_bytes_per_s`: the request's write bandwidth; None = build_plan's default of
    CHECKPOINT_BYTES_PER_S_PER_NODE per node of each layout's device count. Layouts have no expert_tensor column: the
    base plan's expert_tensor holds for every layout (0: each layout's tensor degree; search/auto.py carries a given
    one and enumerate_layouts keeps the layouts it is valid for)."""
    lay = layouts
    devices = lay.devices.astype(np.float64)
    per_replica = plan.global_batch // lay.data
    micro_batches = per_replica // lay.micro_batch
    dense, expert = _parameters_per_device(plan, lay)
    weights, grads, optim, gathered = _model_states(plan, lay, dense, expert)
    activations, stored = _activation_bytes(plan, lay, micro_batches)
    overhead = gathered + mem.part_overhead_bytes(plan.accelerator, weights + grads + optim + activations)
    memory_total = weights + grads + optim + activations + overhead
    states = weights + grads + optim
    step = _step(plan, lay, devices, micro_batches, states, (dense, expert), stored)
    compute_s, communication_s, bubble_s = step
    busy_s = compute_s + communication_s
    return _totals(
        plan, devices, memory_total, compute_s, communication_s, bubble_s, busy_s, checkpoint_bytes_per_s
    )


# ---------------------------------------------------------------------------------------------------- memory


def _expert_degrees(plan: TrainingPlan, lay: Layouts) -> Array:
    """parallelism.expert_tensor_ranks over layouts: the base plan's given expert_tensor (search/auto.py carries
    it; enumerate_layouts keeps the layouts it is valid for), else each layout's tensor degree."""
    return np.broadcast_to(expert_tensor_ranks(lay.tensor, plan.par.expert_tensor), lay.tensor.shape)


def _parameters_per_device(plan: TrainingPlan, lay: Layouts) -> tuple[Array, Array]:
    """memory.parameters_per_device over layouts: (non-expert, expert) parameters on the busiest device."""
    return mem.layout_parameters(plan.model, lay.tensor, lay.pipeline, lay.expert, _expert_degrees(plan, lay))


def _model_states(
    plan: TrainingPlan, lay: Layouts, dense: Array, expert: Array
) -> tuple[Array, Array, Array, Array]:
    """memory.model_states over layouts: weights, gradients, optimizer states, ZeRO-3 gathered layers."""
    dp = shard_ranks(lay.data * lay.context, plan.par.data_shard)  # Parallelism.shard_ranks
    etr = _expert_degrees(plan, lay)
    edp = expert_shard_ranks(dp, lay.tensor, lay.expert, etr)  # Parallelism.expert_shard_ranks
    return mem.sharded_states(plan, (dense, expert), dp, edp, lay.zero_stage, (lay.tensor, lay.expert, etr))


def _activation_bytes(plan: TrainingPlan, lay: Layouts, micro_batches: Array) -> tuple[Array, Array | None]:
    """activations.activation_bytes over layouts, and the bytes a layer keeps per micro-batch (None without a
    shape: nothing to offload)."""
    model, act_bytes = plan.model, plan.activation_bytes_per_value
    t, p, b = lay.tensor, lay.pipeline, lay.micro_batch
    s_len = plan.sequence_length // lay.context
    if model.shape is None:
        if model.flops_per_sample:
            per_sample = model.flops_per_sample / act.CNN_FORWARD_FLOPS_PER_ACTIVATION_BYTE * act_bytes / 2.0
            return per_sample * b / (t * p), None
        width = math.sqrt(model.total_parameters / 12.0)
        layers = max(1.0, model.total_parameters / (12.0 * width * width))
        return 16.0 * width * layers * s_len * b * act_bytes / 2.0 / (t * p), None
    sh = model.shape
    stored, working = _layer_activation_bytes(plan, lay, s_len)
    in_flight, second = act.in_flight_micro_batches(p, micro_batches, lay.virtual_pipeline)
    first, last = act.kept_stage_bytes(sh.layers, p, plan.offload_layers, in_flight, second, stored)
    loss_bytes = loss_bytes_per_logit(plan.framework, act_bytes, xla=plan.accelerator.kind == "tpu")
    logits = s_len * b * sh.vocab_size / t / plan.loss_chunks
    return act.activation_peak(first, last, working, logits * loss_bytes, p), stored


def _layer_activation_bytes(plan: TrainingPlan, lay: Layouts, s_len: Array) -> tuple[Array, Array]:
    """activations.layer_activation_bytes over layouts: (kept per layer, one layer rebuilt during backward)."""
    sh, act_bytes = plan.model.shape, plan.activation_bytes_per_value
    assert sh is not None
    t, b, sp = lay.tensor, lay.micro_batch, lay.sequence_parallel
    sbh = s_len * b * sh.hidden_size
    replicated, split = act._layer_terms(
        sh, act._mlp_activation_scale(sh), act.saved_input_bytes(plan.precision)
    )
    per_layer = sbh * np.where(sp, (replicated + split) / t, replicated + split / t)
    if keeps_scores(plan.recompute, plan.recompute_modules, plan.flash_attention):
        scores = act.UNFUSED_SCORE_BYTES * sh.attention_heads * s_len * s_len * b
        per_layer = per_layer + (scores + act.unfused_kv_expansion(sh) * sbh) / t
    per_layer = per_layer * (act_bytes / 2.0)
    if plan.recompute == "full":
        stored = 2.0 * sbh / np.where(sp, t, 1) * act_bytes / 2.0
        return stored, per_layer
    if plan.recompute == "dots":
        kept, rebuilt = act._dots_terms(sh)
        stored = sbh * np.where(sp, (kept + rebuilt) / t, kept + rebuilt / t) * act_bytes / 2.0
        return stored, per_layer
    if plan.recompute == "selective_op":
        whole, sequence, reduce_scatter, split = act.op_sac_terms(sh)
        sp_on = sp & (t > 1)
        kept_op = whole + np.where(sp_on, (sequence + reduce_scatter) / t, sequence) + split / t
        return s_len * b * kept_op * act_bytes / 2.0, per_layer
    if plan.recompute == "selective":
        whole, parted = saved_terms(sh, plan.recompute_modules, act.saved_input_bytes(plan.precision))
        freed = sbh * np.where(sp, (whole + parted) / t, whole + parted / t) * (act_bytes / 2.0)
        return per_layer - freed, freed
    return per_layer, np.zeros(len(t))


# ---------------------------------------------------------------------------------------------------- step time


def _step(
    plan: TrainingPlan,
    lay: Layouts,
    devices: Array,
    micro_batches: Array,
    states: Array,
    params: tuple[Array, Array],
    stored: Array | None,
) -> tuple[Array, Array, Array]:
    """StepModel.step over layouts: (compute_s, communication_s, bubble_s) per step (`params`: the dense and expert
    parameters per device, `stored`: a layer's kept activation bytes per micro-batch)."""
    acc, (dense, expert) = plan.accelerator, params
    flops = flops_per_unit(plan)
    work = st.step_work(plan, flops)  # only `devices` and `shape_base` depend on the layout: redone below
    # compute_rates on one device: the GEMM rate grows with the devices, attention and element-wise seconds shrink
    rate_1, attention_1, memory_bound_1 = st.compute_rates(work._replace(devices=1), acc, plan.precision)
    attention_s = attention_1 / devices
    memory_bound_s = memory_bound_1 / devices
    if plan.framework_source != "given":
        # a stack the request did not name follows each layout's ZeRO stage (framework.inferred_framework); the
        # stacks inferred differ in their attention kernel only (same element-wise fusion and loss)
        other = inferred_framework(0 if plan.framework_source == "zero_stage" else 3, acc)[0]
        if other != plan.framework:
            _, attention_o, memory_bound_o = st.compute_rates(
                work._replace(devices=1, framework=other), acc, plan.precision
            )
            differs = (lay.zero_stage >= 3) != (plan.framework_source == "zero_stage")
            attention_s = np.where(differs, attention_o / devices, attention_s)
            memory_bound_s = np.where(differs, memory_bound_o / devices, memory_bound_s)
    gemm_s = _gemm_s(plan, lay, work, devices, rate_1)
    compute_s = gemm_s + attention_s + memory_bound_s
    optimizer_s = st.OPTIMIZER_PASSES * states / acc.memory_bandwidth_bytes_per_s
    tensor_s, pipeline_s, expert_s, context_s = vc.model_parallel_comm(plan, lay, micro_batches, attention_s)
    if plan.model.shape is not None and plan.model.shape.is_moe:
        unpaired = unpaired_share(lay.pipeline, lay.virtual_pipeline, micro_batches)
        overlap = plan.par.expert_overlap
        expert_s = np.where(lay.expert > 1, exposed_expert_s(expert_s, compute_s, unpaired, overlap), 0.0)
    data_s = vc.data_parallel_comm(plan, lay, micro_batches, compute_s, dense, expert)
    offload_s = 0.0
    if plan.offload_layers and stored is not None and plan.model.shape is not None:  # StepModel._offload_s
        per_stage = -(-plan.model.shape.layers // lay.pipeline)
        bandwidth = host_link_bytes_per_s(acc)
        offload_s = offload_step_s(
            plan.offload_layers, per_stage, stored, micro_batches, compute_s, bandwidth
        )
    stage_work = compute_s + tensor_s + pipeline_s + expert_s + context_s + offload_s
    zero_bubble = lay.zero_bubble if lay.zero_bubble.any() else False  # all 1F1B: the scalar branch, cheaper
    bubble = pipeline_bubble_fraction(lay.pipeline, micro_batches, lay.virtual_pipeline, zero_bubble)
    bubble_s = bubble_seconds(stage_work, bubble)
    communication_s = tensor_s + pipeline_s + data_s + expert_s + context_s + offload_s
    return compute_s + optimizer_s, communication_s, bubble_s


def _gemm_s(plan: TrainingPlan, lay: Layouts, work: st.StepWork, devices: Array, rate_1: float) -> Array:
    """compute.gemm_seconds over layouts: the GEMM rate's shape factor follows each layout's tensor degree and
    tokens per micro-batch (and, for routed experts, the rows each expert sees)."""
    hidden = plan.model.shape.hidden_size if plan.model.shape else 4096
    shape_base = 1.0 + st.GEMM_WIDTH_KNEE * lay.tensor / hidden
    if work.tokens_per_micro is not None:
        tokens_mb = lay.micro_batch * work.tokens_per_micro / lay.context
    else:
        tokens_mb = np.full(len(devices), 4096.0)
    f_shape = 1.0 / (shape_base + st.GEMM_TOKENS_KNEE / np.maximum(tokens_mb, 1.0))
    if work.shapeless is not None:
        f_shape = f_shape * work.shapeless
    gemm_s = (work.gemm_work - work.routed_gemm_work) / (devices * rate_1 * f_shape)
    if work.routed_gemm_work > 0.0 and plan.model.shape is not None:  # st.gemm_seconds' expert GEMMs
        expert_base, rows_per_token = st.expert_gemm_shape(
            plan.model.shape, _expert_degrees(plan, lay), lay.expert, lay.tensor, lay.sequence_parallel
        )
        rows = np.maximum(tokens_mb * rows_per_token, 1.0)
        gemm_s = gemm_s + work.routed_gemm_work * (expert_base + st.GEMM_TOKENS_KNEE / rows) / (
            devices * rate_1
        )
    return gemm_s


def _totals(
    plan: TrainingPlan,
    devices: Array,
    memory_total: Array,
    compute_s: Array,
    communication_s: Array,
    bubble_s: Array,
    busy_s: Array,
    checkpoint_bytes_per_s: float | None,
) -> LayoutNumbers:
    """evaluate's seconds (steps, validation at the predicted utilization, checkpoints and interruptions of the
    run's goodput) over layouts."""
    flops = flops_per_unit(plan)
    per_unit = flops.total
    units_per_step = plan.units_per_step
    steps = math.ceil(plan.units / units_per_step)
    peak = plan.accelerator.peak(plan.precision) or 0.0
    utilization = per_unit * units_per_step / (devices * peak * busy_s)
    evaluations = steps // plan.validation_interval if plan.validation_interval else 0
    validation_flops = evaluations * plan.validation_units * per_unit / 3.0
    validation_s = validation_flops / (devices * peak * utilization)
    pre_steps = math.ceil(plan.pretraining_units / units_per_step) if plan.pretraining_units else 0
    if checkpoint_bytes_per_s is None:  # request.py's default: so much per node of the layout
        bandwidth = CHECKPOINT_BYTES_PER_S_PER_NODE * np.ceil(devices / DEVICES_PER_NODE)
    else:
        bandwidth = np.full(len(devices), float(checkpoint_bytes_per_s))
    write_s = checkpoint_write_s(plan.with_fields(checkpoint_bytes_per_s=1.0)) / bandwidth
    step_equivalents = (plan.units + plan.pretraining_units) / units_per_step
    step_s = busy_s + bubble_s
    run = RunInputs(
        step_equivalents * step_s + validation_s,
        step_equivalents * compute_s + step_equivalents * bubble_s + step_equivalents * communication_s,
        validation_s,
        write_s,
        steps + pre_steps,
    )
    checkpoint_s, stragglers_s, (interruptions_s, count, evicted) = _goodput(
        plan, run.productive_s, step_s, run.all_steps, devices, write_s, plan.offer_terms
    )
    seconds = run.stepping_s + checkpoint_s + validation_s + stragglers_s + interruptions_s
    return LayoutNumbers(
        devices=devices,
        memory_bytes=memory_total,
        fits=memory_total <= plan.accelerator.memory_bytes,
        step_s=step_s,
        seconds=seconds,
        utilization=utilization,
        accelerator_hours=devices * seconds / SECONDS_PER_HOUR,
        compute_s=step_equivalents * compute_s,
        communication_s=step_equivalents * communication_s,
        bubble_s=step_equivalents * bubble_s,
        interruptions=count,
        evictions=evicted,
        interruptions_s=interruptions_s,
        run=run,
    )


def _goodput(
    plan: TrainingPlan,
    productive_s: Array,
    step_s: Array,
    all_steps: int,
    devices: Array,
    write_s: Array,
    terms: Terms,
) -> tuple[Array, Array, tuple[Array, Array, Array]]:
    """goodput.goodput over layouts on an offer's `terms`: (checkpoint seconds, seconds lost to stragglers, (seconds
    lost to interruptions, expected interruptions, of which evictions))."""
    evictions = eviction_rate_per_device_hour(terms)
    per_device, restart_s = combined_rate(
        plan.interruptions_per_device_hour, plan.restart_s, evictions, terms.startup_s
    )
    rate = per_device * devices / 3600.0
    if plan.straggler_share is not None:
        slow = np.full(len(devices), plan.straggler_share)
    else:
        slow = straggler_shares(devices)
    step_s = step_s / (1.0 - slow)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau_opt = np.where(rate > 0, np.sqrt(2.0 * write_s / rate), np.inf)
        optimal = np.where((step_s > 0) & np.isfinite(tau_opt), np.maximum(1, np.round(tau_opt / step_s)), 0)
    optimal = np.where(optimal >= all_steps, 0, optimal)
    if plan.checkpoint_interval:
        interval = np.full(len(devices), float(plan.checkpoint_interval))
        checkpoints = all_steps // interval
    else:
        interval = np.where(optimal > 0, optimal, max(all_steps, 1))
        checkpoints = np.where(optimal > 0, all_steps // interval, 0)
    checkpoint_s = checkpoints * write_s
    tau = np.minimum(interval, max(all_steps, 1)) * step_s
    productive_s = productive_s / (1.0 - slow)
    stragglers_s = productive_s * slow
    busy = productive_s + checkpoint_s
    if plan.goodput is not None:
        lost = np.maximum(0.0, productive_s / plan.goodput - busy)
    else:
        share = np.minimum(rate * (restart_s + tau / 2.0), MAX_LOSS_SHARE)
        lost = busy * share / (1.0 - share)
    wall = busy + lost
    return checkpoint_s, stragglers_s, (lost, rate * wall, evictions * devices / 3600.0 * wall)
