"""Serving advice: recommendations verified by re-estimation (the catalog-wide suggestions: suggestions.py).

Every recommendation carries `change`, an RFC 7386 JSON Merge Patch of the request; it is emitted only after
the patched request was estimated again and the claim held (so a client can apply it blindly).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ...hardware import Catalog
from ...i18n import _, num, pct
from ...parallelism import built_at
from ...units import human_bytes
from ..model.admission import held_tokens
from ..model.evaluate import InferenceEvaluation
from ..model.formats import ENGINE_KV_PRECISIONS
from ..model.plan import InferencePlan
from ..model.schedule import seqs_limit
from .common import FITS, MET, Advice, recommend

# Step-down formats to try, largest first, per engine (what each engine loads: quantization.py).
_QUANTIZE_STEPS: dict[str, tuple[dict[str, Any], ...]] = {
    "vllm": (
        {"precision": "fp8", "format": None},
        {"precision": "int8", "format": None},
        {"precision": "int4", "format": "awq"},
    ),
    "tensorrt-llm": (
        {"precision": "fp8", "format": None},
        {"precision": "int8", "format": None},
        {"precision": "int4", "format": "awq"},
    ),
    "llama.cpp": (
        {"precision": "int8", "format": "gguf-q8_0"},
        {"precision": "int4", "format": "gguf-q4_k_m"},
    ),
    "hf-transformers": ({"precision": "int8", "format": "bnb-int8"}, {"precision": "int4", "format": "awq"}),
    "sglang": (
        {"precision": "fp8", "format": None},
        {"precision": "int8", "format": None},
        {"precision": "int4", "format": "awq"},
    ),
    "exllamav2": (
        {"precision": "int8", "format": "exl2-6.0bpw"},
        {"precision": "int4", "format": "exl2-4.0bpw"},
    ),
}
_BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4}


def recommendations(
    request: Mapping[str, Any], p: InferencePlan, ev: InferenceEvaluation, catalog: Catalog
) -> list[dict[str, Any]]:
    """Concrete request changes, one rule after the other. Each carries `expected` {field, op, value}: the changed
    request was evaluated again and the claim held (the same check a client can repeat)."""
    advice = Advice(request, p, ev, catalog)
    return [rec for rule in _RULES if (rec := rule(advice)) is not None]


def _quantize_to_fit(a: Advice) -> dict[str, Any] | None:
    """The largest step-down weight format that makes the request fit."""
    w, mem, dec = a.p.workload, a.ev.memory, a.p.decimal_places
    if a.ev.resident:
        return None
    for step in _QUANTIZE_STEPS[w.engine]:
        if _BITS[step["precision"]] >= _BITS[w.fmt.precision]:
            continue
        change: dict[str, Any] = {"weights": step}
        after = a.makes_room(change)
        if after:
            return recommend(
                "quantize-weights-to-fit",
                "warning",
                _(
                    "Weights in {value} take {weights_bytes} per device instead of {weights_bytes2}; the "
                    "request then fits on {count} × {id}."
                ).format(
                    value=step["format"] or step["precision"],
                    weights_bytes=human_bytes(after.memory.weights_bytes, dec),
                    weights_bytes2=human_bytes(mem.weights_bytes, dec),
                    count=a.ev.count,
                    id=a.p.accelerator.id,
                ),
                change,
                a.room,
            )
    return None


def _fp8_kv_cache(a: Advice) -> dict[str, Any] | None:
    w, mem, acc = a.p.workload, a.ev.memory, a.p.accelerator
    if (
        a.ev.resident
        or w.kv_precision == "fp8"
        or "fp8" not in ENGINE_KV_PRECISIONS[w.engine]
        or not acc.supports("fp8")
    ):
        return None
    change = {"kv_cache_precision": "fp8"}
    if not a.makes_room(change):
        return None
    kv = round(mem.kv_cache_bytes)
    return recommend(
        "fp8-kv-cache",
        "warning",
        _("An fp8 KV cache halves the cache ({kv} → {value}) and the request fits.").format(
            kv=human_bytes(kv), value=human_bytes(kv / 2)
        ),
        change,
        a.room,
    )


def _more_devices(a: Advice) -> dict[str, Any] | None:
    to_fit, count = a.ev.to_fit, a.ev.count
    if a.ev.resident or not to_fit or to_fit == count or not built_at(a.p.accelerator, to_fit):
        return None
    change = {"hardware": {"count": to_fit}}
    if not a.makes_room(change):
        return None
    layout = a.p.workload.layout
    return recommend(
        "more-devices",
        "warning",
        _("{to_fit} × {id} hold the request ({layout} layout).").format(
            to_fit=to_fit, id=a.p.accelerator.id, layout=layout
        ),
        change,
        a.room,
    )


def _reduce_batch(a: Advice) -> dict[str, Any] | None:
    w, ev = a.p.workload, a.ev
    kv = max(ev.kv_running_max, ev.max_batch_size)  # on-demand KV admission runs more (model/admission.py)
    most = seqs_limit(w.schedule, w.engine, a.p.accelerator, kv)
    if ev.resident or not 1 <= most < w.batch:
        return None
    change = {"batch_size": most}
    if not a.makes_room(change):
        return None
    if most < kv:
        message = _(
            "{engine} runs at most {max_num_seqs} sequences at once (max_num_seqs); at batch {batch} none waits in "
            "its queue."
        ).format(engine=w.engine, max_num_seqs=most, batch=most)
    elif most > ev.max_batch_size:
        message = _(
            "{engine} runs at most {batch} sequences at once: its KV cache holds about {held} tokens of each on "
            "average (it allocates blocks as tokens are computed); at batch {batch} none waits in its queue."
        ).format(engine=w.engine, batch=most, held=held_tokens(w))
    else:
        message = _("At most {max_batch_size} concurrent sequences of {context_tokens} tokens fit.").format(
            max_batch_size=most, context_tokens=w.context_tokens
        )
    return recommend("reduce-batch", "warning", message, change, a.room)


def _reduce_context(a: Advice) -> dict[str, Any] | None:
    w, ev = a.p.workload, a.ev
    if ev.resident:
        return None
    ctx = ev.max_context_tokens
    if w.mode != "token" or ctx is None or not 2 <= ctx < w.context_tokens:
        return None
    prompt = max(1, math.floor(w.prompt_tokens * ctx / w.context_tokens))
    change = {"prompt_tokens": prompt, "output_tokens": max(1, ctx - prompt)}
    if not a.makes_room(change):
        return None
    return recommend(
        "reduce-context",
        "warning",
        _("Only {ctx} tokens per sequence fit at batch {batch}; shorten prompt and output.").format(
            ctx=ctx, batch=w.batch
        ),
        change,
        a.room,
    )


def _headroom(a: Advice) -> dict[str, Any] | None:
    """Little room left at the whole context: either under twice the batch, or less than the batch itself where every
    request runs only because the engine allocates KV as tokens are computed (admission.py) and preempts when its
    blocks run out."""
    w, ev = a.p.workload, a.ev
    on_demand = ev.max_batch_size < w.batch
    if not ev.resident or w.layout != "tensor" or ev.max_batch_size >= 2 * w.batch:
        return None
    more = next((c for c in w.counts if c > ev.count and built_at(a.p.accelerator, c)), None)
    room = ("memory.max_batch_size", ">=", w.batch if on_demand else 4 * w.batch)
    after = a.verified({"hardware": {"count": more}}, room) if more else None
    if not after:
        return None
    if on_demand:
        message = _(
            "All {batch} requests run only because {engine} allocates KV-cache blocks as tokens are computed and "
            "preempts a request when they run out: {max_batch_size} fit at their whole context; {more} × {id} hold "
            "{max_batch_size2}."
        ).format(
            batch=w.batch,
            engine=w.engine,
            max_batch_size=ev.max_batch_size,
            more=more,
            id=a.p.accelerator.id,
            max_batch_size2=after.max_batch_size,
        )
    else:
        message = _(
            "The request fits with room for only {max_batch_size} sequences; {more} × {id} hold "
            "{max_batch_size2}."
        ).format(
            max_batch_size=ev.max_batch_size,
            more=more,
            id=a.p.accelerator.id,
            max_batch_size2=after.max_batch_size,
        )
    return recommend("more-devices-for-headroom", "info", message, {"hardware": {"count": more}}, room)


def _gqa(a: Advice) -> dict[str, Any] | None:
    w, mem = a.p.workload, a.ev.memory
    s = w.model.shape
    kv_share = round(mem.kv_cache_bytes) / max(round(mem.per_device_bytes), 1)
    mha = s is not None and not s.kv_lora_rank and s.kv_heads == s.attention_heads and s.attention_heads > 8
    if not (mha and s is not None and w.mode == "token" and s.attention_heads % 8 == 0 and kv_share >= 0.25):
        return None
    gqa = _gqa_change(a.request, a.p)
    before = round(mem.kv_bytes_per_token)
    claim = ("memory.kv_cache_bytes_per_token", "==", round(before * 8 / s.attention_heads))
    if not gqa or not a.verified(gqa, claim):
        return None
    return recommend(
        "use-gqa-model",
        "info",
        _(
            "The KV cache is {kv_share} of memory: a grouped-query variant with 8 KV heads (as "
            "Llama-2-70B, Llama 3 and Mistral use) stores {value} per token instead of {before}."
        ).format(kv_share=pct(kv_share, 0), value=human_bytes(claim[2]), before=human_bytes(before)),
        gqa,
        claim,
    )


def _devices_for_targets(a: Advice) -> dict[str, Any] | None:
    to_meet, count = a.ev.to_meet, a.ev.count
    if not a.p.targets or a.ev.targets_met or not to_meet or to_meet == count:
        return None
    if not built_at(a.p.accelerator, to_meet):
        return None
    if not a.verified({"hardware": {"count": to_meet}}, MET):
        return None
    return recommend(
        "more-devices-for-targets",
        "warning",
        _("{to_meet} × {id} meet every target.").format(to_meet=to_meet, id=a.p.accelerator.id),
        {"hardware": {"count": to_meet}},
        MET,
    )


def _quantize_for_targets(a: Advice) -> dict[str, Any] | None:
    w = a.p.workload
    if not a.p.targets or a.ev.targets_met:
        return None
    for step in _QUANTIZE_STEPS[w.engine]:
        if _BITS[step["precision"]] < _BITS[w.fmt.precision] and a.verified({"weights": step}, MET, FITS):
            return recommend(
                "quantize-for-targets",
                "warning",
                _("{value} weights stream fewer bytes per token and meet every target.").format(
                    value=step["format"] or step["precision"]
                ),
                {"weights": step},
                MET,
            )
    return None


def _sixteen_bit(a: Advice) -> dict[str, Any] | None:
    w, tps = a.p.workload, a.ev.speed.output_tokens_per_second
    if not tps or w.fmt.precision != "fp32" or w.mode != "token":
        return None
    half = "bf16" if a.p.accelerator.supports("bf16") else "fp16"
    change = {"weights": {"precision": half, "format": None}}
    faster = ("throughput.output_tokens_per_second", ">=", 1.5 * tps)
    if not a.verified(change, faster):
        return None
    return recommend(
        "use-16-bit-weights",
        "info",
        _("{half} weights halve memory and nearly double decode speed.").format(half=half),
        change,
        faster,
    )


def _switch_engine(a: Advice) -> dict[str, Any] | None:
    w, tps = a.p.workload, a.ev.speed.output_tokens_per_second
    if not tps or w.engine != "hf-transformers" or w.mode != "token":
        return None
    faster = ("throughput.output_tokens_per_second", ">=", 1.5 * tps)
    after = a.verified({"engine": "vllm"}, faster)
    if not after:
        return None
    gain = (after.speed.output_tokens_per_second or 0.0) / tps
    return recommend(
        "switch-engine",
        "info",
        _("vLLM's CUDA-graph decode avoids per-layer Python overhead: {gain}× the output tokens/s.").format(
            gain=num(gain, 1)
        ),
        {"engine": "vllm"},
        faster,
    )


def _raise_batch(a: Advice) -> dict[str, Any] | None:
    w, ev, tps = a.p.workload, a.ev, a.ev.speed.output_tokens_per_second
    most = seqs_limit(w.schedule, w.engine, a.p.accelerator, ev.max_batch_size)  # what runs without a queue
    if not tps or not ev.resident or w.mode != "token" or most < 2 * w.batch or a.p.targets:
        return None
    batch = min(most, 8 * w.batch)
    faster = ("throughput.output_tokens_per_second", ">=", 1.3 * tps)
    after = a.makes_room({"batch_size": batch}, faster)
    if not after:
        return None
    gain = (after.speed.output_tokens_per_second or 0.0) / tps
    return recommend(
        "raise-batch",
        "info",
        _(
            "Memory holds {max_batch_size} sequences; batch {batch} gives {gain}× the aggregate output "
            "tokens/s (decode is memory-bound, extra sequences share the weight reads)."
        ).format(max_batch_size=ev.max_batch_size, batch=batch, gain=num(gain, 1)),
        {"batch_size": batch},
        faster,
    )


_RULES: tuple[Callable[[Advice], dict[str, Any] | None], ...] = (
    _quantize_to_fit,
    _fp8_kv_cache,
    _more_devices,
    _reduce_batch,
    _reduce_context,
    _headroom,
    _gqa,
    _devices_for_targets,
    _quantize_for_targets,
    _sixteen_bit,
    _switch_engine,
    _raise_batch,
)


def _gqa_change(request: Mapping[str, Any], p: InferencePlan) -> dict[str, Any] | None:
    """A merge patch that turns the request's model into its 8-KV-head variant, or None."""
    spec = request.get("model") or {}
    s = p.workload.model.shape
    if s is None or p.workload.model.shape_inferred:
        return None
    if "hf_config" in spec:
        return {"model": {"hf_config": {"num_key_value_heads": 8}}}
    if "layers" in spec:
        return {"model": {"kv_heads": 8}}
    if "preset" in spec and not (s.biases or s.learned_position_embeddings or s.is_moe):
        return {
            "model": {
                "preset": None,
                "architecture": "transformer",
                "name": f"{p.workload.model.name} (8 KV heads)",
                "layers": s.layers,
                "hidden_size": s.hidden_size,
                "attention_heads": s.attention_heads,
                "kv_heads": 8,
                "ffn_hidden_size": s.ffn_hidden_size,
                "ffn_type": s.ffn_type,
                "vocab_size": s.vocab_size,
                "tied_embeddings": s.tied_embeddings,
                "max_context_tokens": s.max_context_tokens,
            }
        }
    return None
