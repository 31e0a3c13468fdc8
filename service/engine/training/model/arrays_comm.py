"""The communication terms of the array model (model/arrays.py) over arrays of layouts: parallelism.py's group
bandwidths, all-to-all, all-reduce and NCCL latencies, and StepModel's tensor/pipeline/expert/context and data-parallel
seconds, term by term in the same order as the single estimate (tests/engine/test_vector_model.py checks both agree)."""

from __future__ import annotations

import numpy as np

from ... import parallelism
from ...hardware import Accelerator
from ...parallelism import domain_size, expert_tensor_ranks, scale_up_bytes_per_s, shard_ranks
from . import compute as st
from . import memory as mem
from .data_comm import gradient_buckets, replica_exposed_s, shard_group_exposed_s
from .expert_comm import ALL_TO_ALLS_PER_MOE_LAYER
from .flops import recompute_collectives
from .layouts import Layouts
from .plan import TrainingPlan

Array = np.ndarray


def network_bytes_per_s(acc: Accelerator, span: Array) -> Array:
    """parallelism.network_bytes_per_s over arrays of group spans (group size × stride): its two values, within a
    server and beyond one."""
    within, beyond = (parallelism.network_bytes_per_s(acc, n) for n in (1, parallelism.DEVICES_PER_NODE + 1))
    return np.where(span > parallelism.DEVICES_PER_NODE, beyond, within)


def group_bandwidth(acc: Accelerator, group_size: Array, stride: Array) -> Array:
    """parallelism.group_bandwidth over arrays of group sizes and strides."""
    up, out = scale_up_bytes_per_s(acc), network_bytes_per_s(acc, group_size * stride)
    inside, members, _ = group_nodes(acc, group_size, stride)
    bandwidth = np.where(inside, up, np.minimum(up, members * out))
    return np.where(group_size <= 1, np.inf, bandwidth)


def group_nodes(acc: Accelerator, group_size: Array, stride: Array) -> tuple[Array, Array, Array]:
    """parallelism.group_nodes over arrays: (the group fits one scale-up domain, members per domain, domains)."""
    domain = domain_size(acc)
    inside = group_size * stride <= domain
    members = np.where(
        stride < domain, np.maximum(1, np.minimum(group_size, domain // np.maximum(stride, 1))), 1
    )
    members = np.where(inside, group_size, members)
    return inside, members, np.where(inside, 1, -(-group_size // members))


def expert_all_to_all_seconds(
    acc: Accelerator,
    token_bytes: Array,
    experts: int,
    experts_per_token: int,
    group_size: Array,
    stride: Array,
) -> Array:
    """parallelism.expert_all_to_all_seconds over arrays of expert degrees and strides."""
    inside, members, domains = group_nodes(acc, group_size, stride)
    k = experts_per_token
    with np.errstate(divide="ignore", invalid="ignore"):
        fabric = token_bytes * k * (members - 1) / group_size / scale_up_bytes_per_s(acc)
        elsewhere = experts - experts / domains
        miss = np.ones(len(group_size))
        for i in range(min(k, experts)):
            miss = miss * np.maximum(0.0, elsewhere - i) / (experts - i)
        network = token_bytes * (domains - 1) * (1.0 - miss) / network_bytes_per_s(acc, group_size * stride)
    seconds = np.where(inside, fabric, np.maximum(fabric, network))
    return np.where((group_size > 1) & (token_bytes > 0), seconds, 0.0)


def all_reduce_seconds(payload: Array, ranks: Array, bandwidth: Array) -> Array:
    """parallelism.all_reduce_seconds over arrays (0 where a group has one rank)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = 2.0 * (ranks - 1) / ranks * payload / bandwidth
    return np.where((ranks > 1) & (payload > 0), seconds, 0.0)


def model_parallel_comm(
    plan: TrainingPlan, lay: Layouts, micro_batches: Array, attention_s: Array
) -> tuple[Array, Array, Array, Array]:
    """StepModel.model_parallel_comm and _context_parallel_comm: (tensor, pipeline, expert, context) seconds."""
    shape, acc = plan.model.shape, plan.accelerator
    zero = np.zeros(len(micro_batches))
    if shape is None:
        return zero, zero, zero, zero
    t, p, c, e, mb = lay.tensor, lay.pipeline, lay.context, lay.expert, lay.micro_batch
    act_bytes = plan.activation_bytes_per_value
    seq = plan.sequence_length // c
    layers_per_stage = -(-shape.layers // p)
    collectives = 4 + np.where(
        lay.sequence_parallel,
        recompute_collectives(plan.recompute, True),
        recompute_collectives(plan.recompute, False),
    )
    payload = mb * seq * shape.hidden_size * act_bytes
    tp = all_reduce_seconds(payload, t, group_bandwidth(acc, t, np.ones_like(t)))
    tensor_s = st.TP_EXPOSED * micro_batches * layers_per_stage * collectives * tp
    pp_bw = group_bandwidth(acc, p, t * c * lay.data)
    pp_split = np.where(lay.sequence_parallel, t, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pipeline_s = np.where(p > 1, 2 * micro_batches * payload / pp_split / pp_bw, 0.0)
    expert_s = zero
    if shape.is_moe:  # the all-to-all seconds, fully exposed (_step applies the overlap)
        # the expert ranks strided by the experts' own tensor degree (StepModel: par.expert_tensor_ranks)
        stride = np.broadcast_to(expert_tensor_ranks(t, plan.par.expert_tensor), t.shape)
        a2a = expert_all_to_all_seconds(acc, payload, shape.experts, shape.experts_per_token, e, stride)
        expert_s = np.where(
            e > 1, micro_batches * shape.moe_layers / p * ALL_TO_ALLS_PER_MOE_LAYER * a2a, 0.0
        )
    local_tokens = mb * plan.sequence_length / c
    kv_bytes = 2.0 * local_tokens * shape.kv_heads * shape.head_dim * act_bytes / t
    with np.errstate(divide="ignore", invalid="ignore"):
        ring = 3.0 * (c - 1) * kv_bytes / group_bandwidth(acc, c, t) * layers_per_stage * micro_batches
    context_s = np.where(c > 1, np.maximum(st.CP_MIN_EXPOSED * ring, ring - attention_s), 0.0)
    return tensor_s, pipeline_s, expert_s, context_s


def data_parallel_comm(
    plan: TrainingPlan, lay: Layouts, micro_batches: Array, compute_s: Array, dense: Array, expert: Array
) -> Array:
    """StepModel._data_parallel_terms and _data_parallel_comm: exposed gradient (and ZeRO-3 gather) seconds of the
    shard group (every gradient rank, or the base plan's data_shard group: parallelism.shard_ranks) and, under
    hybrid sharding, of the replicas' all-reduce (data_comm.py's exposure, the same functions)."""
    _, g_b, _ = mem.bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    ranks = shard_ranks(lay.data * lay.context, plan.par.data_shard)
    bandwidth = group_bandwidth(plan.accelerator, ranks, lay.tensor)
    grad_bytes = (dense + expert) * g_b
    total = np.where(lay.zero_stage >= 3, 1.5, 1.0) * all_reduce_seconds(grad_bytes, ranks, bandwidth)
    total = total + data_latency_s(plan, lay, ranks, dense + expert)
    exposed = shard_group_exposed_s(total, micro_batches, compute_s, lay.zero_stage)
    if not plan.par.data_shard:
        return exposed
    replicas = lay.data * lay.context // ranks
    stride = lay.tensor * ranks
    replica_total = all_reduce_seconds(
        grad_bytes / ranks, replicas, group_bandwidth(plan.accelerator, replicas, stride)
    )
    latency = gradient_buckets((dense + expert) / ranks, replicas) * collective_latency_s(
        plan.accelerator, True, replicas, stride
    )
    replica_total = np.where(replicas > 1, replica_total + latency, 0.0)
    return exposed + replica_exposed_s(replica_total, micro_batches, compute_s)


def collective_latency_s(acc: Accelerator, all_reduce: bool, group_size: Array, stride: Array) -> Array:
    """parallelism.collective_latency_s over arrays of group sizes and strides."""
    zero = np.zeros(len(group_size))
    if acc.kind != "gpu":
        return zero
    _, members, nodes = group_nodes(acc, group_size, stride)
    intra = (
        parallelism.NCCL_RING_NVLINK_LATENCY_S
        if acc.interconnect_bandwidth_bytes_per_s
        else parallelism.NCCL_RING_PCIE_LATENCY_S
    )
    inter_steps = nodes - 1
    ring = (group_size - 1 - inter_steps) * intra + inter_steps * parallelism.NCCL_NET_LATENCY_S
    if all_reduce:
        log_nodes = np.floor(np.log2(np.maximum(nodes, 1)) + 1e-9)
        tree = 2.0 * (
            (members - 1) * parallelism.NCCL_TREE_INTRA_LATENCY_S + log_nodes * parallelism.NCCL_NET_LATENCY_S
        )
        latency = parallelism.NCCL_BASE_LATENCY_S + np.minimum(2.0 * ring, tree)
    else:
        latency = parallelism.NCCL_BASE_LATENCY_S + ring
    return np.where(group_size > 1, latency, 0.0)


def data_latency_s(plan: TrainingPlan, lay: Layouts, ranks: Array, params: Array) -> Array:
    """step_model.data_latency_s over layouts."""
    acc, shape = plan.accelerator, plan.model.shape
    gather = collective_latency_s(acc, False, ranks, lay.tensor)
    buckets = gradient_buckets(params, ranks)
    other = np.where(
        lay.zero_stage == 0,
        buckets * collective_latency_s(acc, True, ranks, lay.tensor),
        buckets * 2.0 * gather,
    )
    if shape is not None:
        layers_per_stage = -(-shape.layers // lay.pipeline)
        other = np.where(lay.zero_stage >= 3, 3.0 * layers_per_stage * gather, other)
    return np.where(ranks > 1, other, 0.0)


# ---------------------------------------------------------------------------------------------------- totals
