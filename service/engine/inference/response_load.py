"""The answer's `load` section (how the engine batches and the steady state it reaches) and the notes on what caps
the requests it runs at once: its queue (load.running_limit) and its KV admission (admission.py)."""

from __future__ import annotations

from typing import Any

from ..i18n import _
from ..units import human_duration
from .model.admission import admission_source, held_tokens, kv_admission
from .model.evaluate import InferenceEvaluation
from .model.plan import InferencePlan
from .model.schedule import batched_tokens, chunked, max_num_seqs, mixed_chunk, overlap_schedule
from .model.speed import Speed


def load_section(p: InferencePlan, speed: Speed) -> dict[str, Any]:
    """How the engine batches (scheduler, budget) and the steady state it reaches; the SLO percentile."""
    w = p.workload
    sched = w.schedule
    section: dict[str, Any] = {
        "scheduler": sched.scheduler,
        "slo_percentile": sched.percentile,
        "requests_per_second_offered": sched.requests_per_second,
    }
    if speed.load is None:
        return {**section, "concurrency": w.batch, "saturated": False}
    budget, source = batched_tokens(sched, w.engine, p.accelerator)
    # the decode pool's part when disaggregated: its replicas hold the running requests (decode_slots)
    runs_on = sched.disaggregation.decode.accelerator if sched.disaggregation else p.accelerator
    seqs, seqs_source = max_num_seqs(sched, w.engine, runs_on)
    return {
        **section,
        "chunked_prefill": chunked(sched, w.engine),
        "mixed_chunk": mixed_chunk(sched, w.engine),
        "overlap_schedule": overlap_schedule(sched, w.engine),
        "front_end_latency_s": sched.front_end_latency_s,
        "lengths": "fixed" if sched.fixed_lengths else "varied",
        "max_num_batched_tokens": budget,
        "max_num_batched_tokens_source": source,
        "max_num_seqs": seqs,
        "max_num_seqs_source": seqs_source,
        "kv_admission": kv_admission(w),
        "kv_tokens_per_request": held_tokens(w),
        "kv_admission_source": admission_source(w),
        "concurrency": speed.load["concurrency"],
        "saturated": speed.load["saturated"],
        "sustainable_requests_per_second": speed.load["sustainable_requests_per_second"],
        "prefill_queue_saturated": speed.load["prefill_queue_saturated"],
        "prefill_time_share": speed.load["prefill_time_share"],
        **{key: speed.load[key] for key in _QUEUE_FIELDS if key in speed.load},
        "disaggregation": speed.load.get("disaggregation"),
    }


_QUEUE_FIELDS = ("running_requests", "queued_requests", "queue_wait_s", "running_limit")


def queue_notes(p: InferencePlan, speed: Speed, dec: int) -> list[str]:
    """Why some requests wait in the engine's queue (load.running_limit), and for how long."""
    w, load = p.workload, speed.load or {}
    if not load.get("queued_requests"):
        return []
    if load["running_limit"] == "kv_cache" and held_tokens(w) < w.context_tokens:
        why = _(
            "its KV cache holds {running} sequences of about {context} tokens each on average, the prompt and part "
            "of the output, as it allocates blocks while tokens are computed"
        )
    elif load["running_limit"] == "kv_cache":
        why = _("its KV cache holds {running} sequences of {context} tokens")
    elif max_num_seqs(w.schedule, w.engine, p.accelerator)[1] == "request":
        why = _("serving.max_num_seqs is {running}")
    else:
        why = _("its default max_num_seqs is {running}")
    return [
        _(
            "{batch} requests in flight, but {engine} runs {running} at once ({why}): the others wait in its queue, "
            "{wait} each before their prefill starts (counted in the time to first token)."
        ).format(
            batch=w.batch,
            engine=w.engine,
            running=round(load["running_requests"]),
            why=why.format(running=round(load["running_requests"]), context=held_tokens(w)),
            wait=human_duration(load["queue_wait_s"], dec),
        )
    ]


def admission_notes(ev: InferenceEvaluation) -> list[str]:
    """Where the engine runs more requests than fit at their whole context: it allocates KV as tokens are computed
    (vLLM, SGLang), and the memory answer holds what they hold on average (evaluate.resident_layout)."""
    w = ev.plan.workload
    closed_loop = w.schedule.requests_per_second is None and w.schedule.disaggregation is None
    # with requests queued, the queue note says what the cache holds
    if kv_admission(w) != "on_demand" or not closed_loop or ev.queued_requests:
        return []
    running = w.batch
    if ev.memory.kv_cache_bytes >= ev.memory.kv_bytes_per_token * running * w.context_tokens:
        return []
    return [
        _(
            "{engine} allocates KV-cache blocks as tokens are computed, so its {running} running requests hold about "
            "{held} tokens each on average (the prompt and part of the output) and all run, though {running} "
            "sequences of {context} tokens would not fit at once; when its blocks run out it preempts the newest "
            "request and computes it again later (not counted here)."
        ).format(engine=w.engine, running=running, held=held_tokens(w), context=w.context_tokens)
    ]
