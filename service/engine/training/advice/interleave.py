"""Advice to interleave a pipeline that runs one model chunk per stage (docs/formulas.md, "Interleaving advice").

Megatron-Core's default is one chunk per stage, and so is the estimate's when the request gives none: runs such as
BLOOM-176B (Megatron-DeepSpeed) and StarCoder (Megatron-LM, TP4 × PP4) published their pipelines without
interleaving. But the recipes Megatron-Core users run today interleave every pipeline: NeMo / Megatron-Bridge set
virtual_pipeline_model_parallel_size whenever pipeline > 1 (Llama 3 70B PP4 × VP5, Llama 3.1 405B PP8 × VP8,
Nemotron-4 340B PP8 × VP12, GPT-3 175B PP8 × VP6 in their performance summaries), Meta's Llama 3 405B ran an
interleaved schedule (Dubey et al. 2024 §3.3.2), and Narayanan et al. 2021 §2.2.2 divide the bubble by the chunks.
So when a Megatron-class run has a pipeline bubble, the answer offers the chunks per stage that the planner also
searches for one device count (plan.INTERLEAVED_CHUNKS), the fastest that still fits, verified by evaluating the
changed plan. Stacks without an interleaved schedule get no such advice: DeepSpeed's pipeline engine has none,
torchtitan runs its own schedules, XLA stacks on TPUs pipeline differently, and the zero-bubble schedule has its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...hardware import Catalog
from ...i18n import _, pct
from ...units import human_duration
from ..model.evaluate import Evaluation, evaluate
from ..model.plan import INTERLEAVED_CHUNKS, TrainingPlan
from .common import recommendation

# training.framework values whose stacks have Megatron-Core's interleaved 1F1B schedule
INTERLEAVING_FRAMEWORKS = ("megatron", "nemo", "megatron-bridge")
# advice only when interleaving saves at least this share of the run (smaller gains sit inside the model's error)
MIN_SAVING_SHARE = 0.02


def can_interleave(plan: TrainingPlan) -> bool:
    """A pipeline of one chunk per stage under plain 1F1B, on a stack with Megatron-Core's interleaved schedule."""
    par, shape = plan.par, plan.model.shape
    return (
        par.pipeline > 1
        and par.virtual_pipeline == 1
        and par.pipeline_schedule == "1f1b"
        and plan.framework in INTERLEAVING_FRAMEWORKS
        and plan.accelerator.kind != "tpu"
        and plan.offload_layers == 0  # Megatron-Core's activation offload runs without a pipeline
        and shape is not None
        and plan.unit == "token"
    )


def chunk_candidates(plan: TrainingPlan) -> tuple[int, ...]:
    """The chunks per stage tried: those of the planner's given-count search that the layers allow (pipeline ×
    chunks ≤ layers + 2, the embedding and the loss counted as chunks: layout_request.parse_parallelism)."""
    shape = plan.model.shape
    assert shape is not None
    p = plan.par.pipeline
    return tuple(v for v in INTERLEAVED_CHUNKS if v > 1 and p * v <= shape.layers + 2)


def interleaved(plan: TrainingPlan, chunks: int) -> TrainingPlan:
    """`plan` with `chunks` per stage: what the request with hardware.parallelism.virtual_pipeline = chunks builds
    (no other field defaults from it), without re-parsing the request."""
    return plan.with_fields(par=replace(plan.par, virtual_pipeline=chunks))


def runs_interleaved(pipeline: int, micro_batches: int) -> bool:
    """Megatron-Core's interleaved schedule takes the micro-batches in groups of one per stage: their count must be a
    multiple of the pipeline degree (forward_backward_pipelining_with_interleaving raises "number of microbatches is
    not divisible by pipeline-model-parallel-size" otherwise), and with fewer than one per stage there is nothing to
    fill the chunks' gaps with (parallelism.pipeline_bubble_fraction)."""
    return micro_batches >= pipeline and micro_batches % pipeline == 0


def interleave_advice(
    request: Mapping[str, Any], catalog: Catalog, plan: TrainingPlan, ev: Evaluation
) -> dict | None:
    """The fastest interleaving that fits, when the run fits and it saves at least MIN_SAVING_SHARE."""
    if not ev.fits or not ev.bubble_s or not can_interleave(plan):
        return None
    best: tuple[int, Evaluation] | None = None
    for v in chunk_candidates(plan):
        # the plan the changed request validates to (chunk_candidates keeps within parse_parallelism's bounds)
        after = evaluate(interleaved(plan, v))
        if not after.fits or not runs_interleaved(plan.par.pipeline, after.micro_batches):
            continue
        if after.seconds < (best[1].seconds if best else ev.seconds * (1.0 - MIN_SAVING_SHARE)):
            best = (v, after)
    if best is None:
        return None
    v, after = best
    change = {"hardware": {"parallelism": {"virtual_pipeline": v}}}
    message = _(
        "The pipeline runs one model chunk per stage, and its bubble takes {bubble} of the run. Interleaving {v} "
        "chunks per stage (virtual_pipeline; Megatron-Core's interleaved 1F1B, which NeMo's recipes run on every "
        "pipeline) cuts the bubble to {after_bubble} and the run to {seconds}, {saved} less, and still fits."
    ).format(
        bubble=pct(ev.bubble_s / ev.seconds),
        v=v,
        after_bubble=pct(after.bubble_s / after.seconds),
        seconds=human_duration(after.seconds),
        saved=human_duration(ev.seconds - after.seconds),
    )
    return recommendation("interleave_pipeline", "info", message, change, "time.seconds", "<", ev.seconds)
