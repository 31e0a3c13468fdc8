"""The layouts a training planner may consider, and which of them the single estimate would accept.

A search space is the product of the allowed degrees; `enumerate_layouts` builds it as arrays and keeps the
layouts build_plan accepts for the plan (the same rules as layout_request.parse_parallelism and request._batch,
written over arrays): data × tensor × pipeline × context = devices, tensor divides the attention heads, pipeline (× virtual
chunks) does not exceed the layers, virtual chunks only with a pipeline, expert degree divides the experts and the
data degree (with a given expert_tensor: expert_tensor divides tensor × context × data and the expert degree the
rest), context degree divides the sequence into 2·cp chunks, micro-batch × data divides the global batch, a given
activation offload leaves at least one layer per stage on the device, a given data_shard group divides data × context.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...parallelism import DEVICES_PER_NODE, PIPELINE_SCHEDULES
from ..model.arrays import Layouts
from ..model.evaluate import MAX_AUTO_MICRO_BATCH_SAMPLES, MAX_AUTO_MICRO_BATCH_TOKENS
from ..model.framework import zero_bubble_chunks
from ..model.plan import INTERLEAVED_CHUNKS, SEARCHED_RECOMPUTATION, TrainingPlan

DEFAULT_MAX_DEVICES = 8192
# Device counts per doubling above one node: 8 steps, so a count is never more than 12.5 % above the smallest
# that would do (the planner's answer to "the smallest count that meets a deadline" is that fine at worst).
COUNTS_PER_OCTAVE = 8
DEFAULT_TENSOR = (
    1,
    2,
    4,
    8,
)  # tensor parallel stays inside an 8-GPU NVLink node (Narayanan et al. 2021 §3.2)
DEFAULT_PIPELINE = (1, 2, 4, 8, 16, 32)
# Pipeline degrees that absorb a device count's odd factor, so that counts of 24, 40 or 384 GPUs (3 × 128: BLOOM's
# 48 nodes ran TP4 × PP12 × DP8, Le Scao et al. 2022 §3.4.1) keep layouts whose data degree divides a power-of-two
# global batch: odd part × powers of two up to this degree (Megatron-LM splits uneven layer counts over stages).
MAX_PIPELINE_FOR_ODD_COUNTS = 64
DEFAULT_ZERO_STAGES = (0, 1, 2, 3)
# Interleaved chunks per stage: 1, 2, 4, 8 in every search (the catalog-wide planner, hardware.count and
# parallelism "auto" alike), as NeMo's large recipes run (Llama 3.1 405B PP8 × VP8 in the Megatron-Bridge
# performance summaries; Meta's 405B on 16,384 H100s, PP16 with an interleaved schedule, Dubey et al. 2024 §3.3.2),
# up to what the layer count allows (enumerate_layouts: pipeline × chunks ≤ layers + 2). Until the arrays work the
# catalog-wide default was 1, 2 and missed that layout (121.6 days instead of 78.8). Megatron overlaps the v-fold
# point-to-point traffic with the chunks' compute (overlap_p2p_comm, on for interleaved schedules), which the step
# model's one exposed send per stage keeps.
DEFAULT_VIRTUAL_PIPELINE = INTERLEAVED_CHUNKS
# Odd factors a searched count may have for the pipeline to take when the count is chosen too (count "auto"):
# 3, 5 and 7 (24, 40, 56, 96, 224 … devices), the grid of every count × every odd degree staying bounded.
MAX_ODD_FACTOR_COUNT_AUTO = 7
LONG_CONTEXT_TOKENS = 16384  # context parallelism is searched by default from 16K-token sequences on
DEFAULT_CONTEXT_LONG = (1, 2, 4, 8)
MAX_DEFAULT_EXPERT = 64
MAX_GRID_PER_CANDIDATE = (
    2_000_000  # product of the allowed degrees for one base plan: ~150 MB of arrays at most
)
MAX_GRID_TOTAL = 40_000_000  # over every accelerator and recomputation mode: a few seconds of enumeration
MAX_SEARCH_CONFIGURATIONS = 5_000_000  # valid layouts × offers of one request: a few seconds of server time


@dataclass(frozen=True)
class SearchSpace:
    device_counts: tuple[int, ...]
    tensor: tuple[int, ...] = DEFAULT_TENSOR
    pipeline: tuple[int, ...] = DEFAULT_PIPELINE
    context: tuple[int, ...] = (1,)
    expert: tuple[int, ...] = (1,)
    zero_stages: tuple[int, ...] = DEFAULT_ZERO_STAGES
    virtual_pipeline: tuple[int, ...] = DEFAULT_VIRTUAL_PIPELINE
    micro_batches: tuple[int, ...] = (1,)
    recomputation: tuple[str, ...] = SEARCHED_RECOMPUTATION
    # sequence parallelism with every tensor-parallel layout (Korthikanti et al. 2022), unless a given layout
    # turns it off (hardware.count "auto" with sequence_parallel false)
    sequence_parallel: bool = True
    # parallelism.PIPELINE_SCHEDULES tried for each pipelined layout: zero_bubble next to 1f1b where the stack ships
    # it (default_space; framework.zero_bubble_chunks), or a given one (hardware.count "auto")
    pipeline_schedules: tuple[str, ...] = ("1f1b",)
    # (fewest, most) chunks per stage of a zero_bubble layout: what the stack runs it with in the default space, any
    # for a given schedule (the estimate accepts it)
    zero_bubble_chunks: tuple[int, int] = (1, 1 << 30)

    @property
    def grid_size(self) -> int:
        """Layouts in the product of the allowed degrees, per recomputation mode."""
        size = 1
        for values in (
            self.device_counts,
            self.tensor,
            self.pipeline,
            self.context,
            self.expert,
            self.zero_stages,
            self.virtual_pipeline,
            self.micro_batches,
            self.pipeline_schedules,
        ):
            size *= len(values)
        return size


def bounded_grid_size(plan: TrainingPlan, space: SearchSpace) -> int:
    """SearchSpace.grid_size with only the (pipeline, virtual chunks) pairs enumerate_layouts can keep for `plan`
    (chunks only with a pipeline, pipeline × chunks ≤ layers + 2): what the search bounds (MAX_GRID_PER_CANDIDATE,
    MAX_GRID_TOTAL) weigh, so that chunks the layers exclude cost a search nothing."""
    layers = plan.model.shape.layers if plan.model.shape is not None else None
    fewest, most = space.zero_bubble_chunks
    triples = sum(
        1
        for p in space.pipeline
        for v in space.virtual_pipeline
        for schedule in space.pipeline_schedules
        if (v == 1 or p > 1)
        and (layers is None or p * v <= layers + 2)
        and (schedule != "zero_bubble" or (p > 1 and fewest <= v <= most))
    )
    per_triple = len(space.pipeline) * len(space.virtual_pipeline) * len(space.pipeline_schedules)
    return space.grid_size // per_triple * triples


def default_device_counts(max_devices: int, min_devices: int = 1) -> tuple[int, ...]:
    """1, 2, 4, then multiples of a node (8): every node up to 8 nodes, then COUNTS_PER_OCTAVE per doubling."""
    counts = [1, 2, 4]
    step, count = DEVICES_PER_NODE, DEVICES_PER_NODE
    while count <= max_devices:
        counts.append(count)
        if count >= step * COUNTS_PER_OCTAVE * 2:
            step *= 2
        count += step
    return tuple(c for c in counts if min_devices <= c <= max_devices)


def pipeline_for_counts(
    counts: tuple[int, ...], pipeline: tuple[int, ...], max_odd: int = MAX_PIPELINE_FOR_ODD_COUNTS
) -> tuple[int, ...]:
    """`pipeline` plus, for each count with an odd factor up to `max_odd`, that factor times the powers of two up to
    MAX_PIPELINE_FOR_ODD_COUNTS: the degrees that let a count of 3 × 2^k devices split as PP = 3·2^j."""
    degrees = set(pipeline)
    for count in counts:
        odd = count
        while odd > 1 and odd % 2 == 0:
            odd //= 2
        if odd > max_odd:
            continue
        degree = odd
        while 1 < degree <= MAX_PIPELINE_FOR_ODD_COUNTS and count % degree == 0:
            degrees.add(degree)
            degree *= 2
    return tuple(sorted(degrees))


def default_micro_batches(plan: TrainingPlan) -> tuple[int, ...]:
    """Powers of two up to evaluate's own ceiling for a chosen micro-batch (16K tokens; 256 samples)."""
    if plan.unit == "token" and plan.model.shape is not None:
        cap = max(1, MAX_AUTO_MICRO_BATCH_TOKENS // plan.sequence_length)
    else:
        cap = MAX_AUTO_MICRO_BATCH_SAMPLES
    cap = min(cap, plan.global_batch)
    values, micro = [], 1
    while micro <= cap:
        values.append(micro)
        micro *= 2
    return tuple(values)


def default_space(plan: TrainingPlan, max_devices: int, min_devices: int = 1) -> SearchSpace:
    """The degrees searched when the request names none: see the constants above."""
    shape = plan.model.shape
    expert: tuple[int, ...] = (1,)
    if shape is not None and shape.is_moe:
        expert = tuple(e for e in (1, 2, 4, 8, 16, 32, 64) if e <= min(shape.experts, MAX_DEFAULT_EXPERT))
    long = plan.unit == "token" and plan.sequence_length >= LONG_CONTEXT_TOKENS
    chunks = zero_bubble_chunks(plan.framework, plan.torch_compile)  # None: the stack ships no zero bubble
    return SearchSpace(
        device_counts=default_device_counts(max_devices, min_devices),
        context=DEFAULT_CONTEXT_LONG if long else (1,),
        expert=expert,
        micro_batches=default_micro_batches(plan),
        pipeline_schedules=PIPELINE_SCHEDULES if chunks else ("1f1b",),
        zero_bubble_chunks=chunks or (1, 1 << 30),
    )


def enumerate_layouts(plan: TrainingPlan, space: SearchSpace) -> Layouts:
    """Every layout of `space` that build_plan accepts for `plan` (its model, sequence and global batch).

    Built in two steps so that memory follows the valid layouts, not the whole product: the (count, tensor,
    pipeline, context, expert) combinations first, then those that pass × (ZeRO, virtual chunks, micro-batch)."""
    count, t, p, c, e = _product(
        space.device_counts, space.tensor, space.pipeline, space.context, space.expert
    )
    split = t * p * c
    d = np.maximum(count // split, 1)
    valid = count % split == 0
    shape = plan.model.shape
    if shape is not None:
        valid &= (shape.attention_heads % t == 0) | (t == 1)
        valid &= p <= shape.layers
        if plan.offload_layers:  # request._offload: at most one less than the layers per stage
            valid &= plan.offload_layers < -(-shape.layers // p)
    etp = plan.par.expert_tensor  # given (search/auto.py carries it on the base plan), or 0
    if shape is not None and shape.is_moe and etp:
        # layout_request._expert_tensor: expert × expert_tensor ranks drawn from tensor × context × data
        ranks = t * c * d
        valid &= (ranks % etp == 0) & (shape.experts % e == 0) & ((ranks // etp) % e == 0)
    elif shape is not None and shape.is_moe:
        # expert ranks come from context × data (Megatron-Core with expert_tensor = tensor; layout_request); the
        # layouts it would fold to expert_tensor 1 (layout_request.folded_expert_tensor) are not searched
        valid &= (e == 1) | ((shape.experts % e == 0) & ((d * c) % e == 0))
    else:
        valid &= e == 1
    if plan.unit == "token":
        valid &= (c == 1) | (plan.sequence_length % (2 * c) == 0)
    else:
        valid &= c == 1
    valid &= plan.global_batch % d == 0
    outer = np.flatnonzero(valid)
    schedules = tuple(int(s == "zero_bubble") for s in space.pipeline_schedules)
    z, v, mb, zb = _product(space.zero_stages, space.virtual_pipeline, space.micro_batches, schedules)
    rows = np.repeat(outer, len(z))
    z, v, mb, zb = (np.tile(column, len(outer)) for column in (z, v, mb, zb))
    d, t, p, c, e = d[rows], t[rows], p[rows], c[rows], e[rows]
    valid = (plan.global_batch % (d * mb) == 0) & ((v == 1) | (p > 1)) & (z >= 0) & (z <= 3)
    if any(
        schedules
    ):  # zero bubble needs a pipeline (layout_request), with the chunks its stack runs it with
        fewest, most = space.zero_bubble_chunks
        valid &= (zb == 0) | ((p > 1) & (v >= fewest) & (v <= most))
    shard = plan.par.data_shard
    if shard:
        # layout_request._data_shard: divides data × context, a multiple of context, under ZeRO, and its tensor ×
        # shard ranks hold whole expert × expert_tensor groups (without expert_tensor: shard a multiple of expert)
        etr = etp if etp else t
        valid &= ((d * c) % shard == 0) & (shard % c == 0) & (z >= 1)
        valid &= (e == 1) | ((shard * t) % (e * etr) == 0)
    if shape is not None:
        valid &= p * v <= shape.layers + 2  # embedding and loss as chunks (request.py)
    keep = np.flatnonzero(valid)
    sp = (t[keep] > 1) & space.sequence_parallel
    return Layouts(d[keep], t[keep], p[keep], c[keep], e[keep], z[keep], sp, v[keep], mb[keep], zb[keep] == 1)


def _product(*values: tuple[int, ...]) -> list[np.ndarray]:
    grids = np.meshgrid(*(np.array(v, dtype=np.int64) for v in values), indexing="ij")
    return [g.ravel() for g in grids]
