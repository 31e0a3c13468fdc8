"""One continuous-batching engine step: d decoding requests and c prefill tokens, in seconds (numpy arrays).

T(d, c) = max(weights the d + c tokens touch ÷ (BW·MBU) + c·KV write, GEMM time of d decode rows at the asymptotic
efficiency + c prefill rows at the prefill curve's efficiency) + d·max(KV read, attention FLOPs) per sequence at the
generation's mean context + per-layer overhead + tensor-parallel all-reduces of d + c rows.

speed.py's terms, from its own helpers (token_work / token_device at batch 1), folded into per-step coefficients
once per deployment: at c = 0 this is speed.py's decode step at batch d, at d = 0 and c = P its one-prompt prefill
(tests/engine/test_continuous_batching.py holds both to 1e-9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ...hardware import Accelerator
from ...parallelism import group_bandwidth
from .arrays import FloatArray
from .efficiency import (
    allreduce_latency_s,
    compute_curve,
    moe_expert_efficiency,
)
from .memory import Workload
from .schedule import batched_tokens, chunked, mixed_chunk, overlap_schedule
from .speed import token_device, token_work

Coefficient = Any  # a float, or a column of floats (one row per deployment) when deployments are stacked


@dataclass(frozen=True)
class StepParts:
    """Per-step coefficients of one deployment (seconds per unit), and the scheduler's budget; every field is a
    float, or a (K, 1) column when K deployments are stacked (stack_parts) and evaluated in one array."""

    prompt: Coefficient  # tokens prefilled per request (the prompt less its cached prefix)
    output: Coefficient
    budget: Coefficient
    chunked: Coefficient  # bool
    mixed: Coefficient  # bool: prompt chunks share steps with decodes (else prompt-only steps stall them)
    overlap: Coefficient  # 1.0 when the engine launches the next step before reading the last one's results
    dense_s: Coefficient  # streaming the dense weights once
    expert_s: Coefficient  # streaming every routed expert once (a step reads the touched share)
    expert_miss: (
        Coefficient  # (1 − k/E): an expert is untouched by one token with this probability; 1 for dense
    )
    kv_write_s: Coefficient  # per prefill token
    eff_max: Coefficient
    n_half: Coefficient
    decode_row_s: Coefficient  # GEMM seconds per decode row at the asymptotic efficiency
    prefill_flop_s: Coefficient  # prefill body seconds per prompt token at efficiency 1
    head_flop_s: Coefficient  # LM-head seconds per prompt token at efficiency 1 (one row per prompt)
    per_sequence_s: Coefficient  # KV read (or attention) per decoding sequence at the mean context
    fixed_s: Coefficient  # per-layer overhead and layer-split hops
    comm_fixed_s: Coefficient  # all-reduce latencies (tensor parallel)
    comm_row_s: Coefficient  # all-reduce ring seconds per row
    verify_rows: Coefficient = 1.0  # speculative decoding: k + 1 rows per decoding sequence (schedule.py)
    draft_share: Coefficient = 0.0  # k × draft cost ratio: draft passes per step, in plain decode steps
    tokens_per_step: Coefficient = 1.0  # accepted tokens per sequence per step, (1 − α^(k+1))/(1 − α)
    graph_rows: Coefficient = float("inf")  # decode rows replayed as a CUDA graph; more run eagerly
    eager_s: Coefficient = 0.0  # host time of one eager step (layers × per-layer launch overhead)
    front_end_s: Coefficient = 0.0  # front-end latency in every TTFT (schedule.front_end_latency_s)
    together: Coefficient = (
        0.0  # 1.0: fixed lengths, a closed loop's prompts arrive in groups (continuous.py)
    )


def stack_parts(parts: Sequence[StepParts]) -> StepParts:
    """K deployments as one StepParts of (K, 1) columns: the planner evaluates them in one array."""
    return StepParts(
        **{f.name: np.array([getattr(p, f.name) for p in parts])[:, None] for f in fields(StepParts)}
    )


def row(parts: StepParts, i: int) -> StepParts:
    """Deployment i of stacked parts, as floats."""
    values = {f.name: getattr(parts, f.name) for f in fields(StepParts)}
    return StepParts(**{k: (v[i, 0].item() if isinstance(v, np.ndarray) else v) for k, v in values.items()})


def step_parts(w: Workload, acc: Accelerator, count: int) -> StepParts:
    one = w if w.batch == 1 else replace(w, batch=1)
    work = token_work(one)
    d = token_device(one, acc, count, work.layers)
    eff_decode, n_half = compute_curve(w.engine, d.cls, d.precision, d.weight_only)
    dense = w.weights_bytes - w.input_embedding_bytes - w.expert_bytes
    s = w.model.shape
    stream = d.t * d.bw * d.mbu
    comm_fixed = comm_row = 0.0
    if d.tensor and d.devices > 1:
        comm_fixed = 2 * work.layers * allreduce_latency_s(acc)
        ring = 2.0 * (d.devices - 1) / d.devices / group_bandwidth(acc, d.devices, 1)
        comm_row = 2 * work.layers * ring * work.hidden * one.act_bytes
    budget, _ = batched_tokens(w.schedule, w.engine, acc)
    spec = w.schedule.speculative
    return StepParts(
        # prefix caching: only the uncached part of a prompt is prefilled (at least its last token)
        prompt=max(w.prompt_tokens * (1.0 - w.schedule.prefix_hit_rate), 1.0),
        output=float(w.output_tokens),
        budget=float(budget),
        chunked=chunked(w.schedule, w.engine),
        mixed=mixed_chunk(w.schedule, w.engine),
        overlap=1.0 if overlap_schedule(w.schedule, w.engine) else 0.0,
        dense_s=dense / stream,
        expert_s=w.expert_bytes / moe_expert_efficiency(w.engine, d.cls).value / stream,
        expert_miss=1.0 - s.experts_per_token / s.experts if s is not None and s.is_moe else 1.0,
        kv_write_s=d.kv_token / (d.bw * d.kv_mbu),
        eff_max=eff_decode,
        n_half=n_half,
        decode_row_s=2.0 * work.matmul / d.t / (d.peak * eff_decode),
        prefill_flop_s=work.body_flops / w.prompt_tokens / d.t / d.peak,
        head_flop_s=work.head_flops / w.prompt_tokens / d.t / d.peak,
        per_sequence_s=max(
            work.ctx * d.kv_token / (d.bw * d.kv_mbu),
            work.decode_attention_flops / d.t / (d.peak * eff_decode),
        ),
        fixed_s=d.step_overhead + d.hops,
        comm_fixed_s=comm_fixed,
        comm_row_s=comm_row,
        verify_rows=1.0 + spec.draft_tokens if spec else 1.0,
        draft_share=spec.draft_tokens * spec.cost_ratio(work.layers) if spec else 0.0,
        tokens_per_step=spec.tokens_per_step if spec else 1.0,
        graph_rows=d.graph_rows,
        eager_s=d.eager_s,
        front_end_s=w.schedule.front_end_latency_s,
        together=1.0 if w.schedule.fixed_lengths and w.schedule.requests_per_second is None else 0.0,
    )


def step_seconds(p: StepParts, decoding: FloatArray, chunk: FloatArray | float) -> FloatArray:
    """One engine step with `decoding` requests at the generation's mean context and `chunk` prefill tokens; with
    speculative decoding each decoding request verifies k + 1 tokens (rows), and the draft's k passes add
    draft_share plain decode steps."""
    dec = np.asarray(decoding, dtype=float)
    c = np.asarray(chunk, dtype=float)
    step = _step(p, dec, c, p.verify_rows)
    if np.all(p.draft_share == 0.0):
        return step
    return step + p.draft_share * _step(p, dec, np.zeros_like(c), 1.0)


def _step(p: StepParts, dec: FloatArray, c: FloatArray | float, verify_rows: Coefficient) -> FloatArray:
    # Terms that are exactly zero are skipped (dense models' experts, verify_rows 1, no eager rows): the result is
    # bitwise the same; a decode-only step passes chunk 0.0 (a scalar) so its prefill terms cost one column each.
    rows_d = dec if _is_one(verify_rows) else dec * verify_rows
    n = rows_d + c
    memory = p.dense_s + c * p.kv_write_s
    if np.any(p.expert_s):
        memory = memory + p.expert_s * (1.0 - p.expert_miss ** np.maximum(n, 1.0))
    rows = np.maximum(c, 1.0)
    heads = np.maximum(c / p.prompt, 1.0)
    compute = (
        p.decode_row_s * rows_d
        + p.prefill_flop_s * c * (rows + p.n_half) / (p.eff_max * rows)
        + p.head_flop_s * c * (heads + p.n_half) / (p.eff_max * heads)
    )
    comm = np.where(n > 0, p.comm_fixed_s + p.comm_row_s * n, 0.0)
    gpu = np.maximum(memory, compute) + dec * p.per_sequence_s + p.fixed_s + comm
    # beyond the CUDA-graph batch the host launches each layer's kernels: the step takes the longer of the two
    eager = rows_d > p.graph_rows
    if not np.any(eager):
        return gpu
    return np.where(eager, np.maximum(gpu, p.eager_s), gpu)


def _is_one(value: Coefficient) -> bool:
    return isinstance(value, float) and value == 1.0
