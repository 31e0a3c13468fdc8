"""InferenceEvaluation → the JSON answer, human strings included (no physics here).

Conventions: bytes are per device unless named `total_`; `output_tokens_per_second` aggregates the batch
(batch × output tokens ÷ end-to-end time, prefill included); cost per million output tokens charges all
serving time to output tokens, cost per million input tokens charges only the prefill time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..hardware import Accelerator
from ..i18n import N_, _
from ..units import SECONDS_PER_HOUR, human_bytes, human_duration
from .intervals import intervals
from .model.cost import usd_per_hour
from .model.draft import ESTIMATED, MTP, NAMED, draft_per_device, draft_weights_bytes, resolve_draft
from .model.efficiency import (
    Factor,
    accelerator_class,
    bandwidth_efficiency,
    compute_profile,
    kv_bandwidth_efficiency,
    layer_overhead_s,
    mla_moe_layer_ratio,
    moe_expert_efficiency,
    moe_layer_floor_s,
)
from .model.evaluate import InferenceEvaluation
from .model.formats import compute_precision_on
from .model.memory import MemoryLayout, Workload, kv_bytes_per_token
from .model.plan import InferencePlan
from .model.speed import Speed
from .model.stacks import NEUTRAL, serving_stack, stack_factors
from .response_load import admission_notes, load_section, queue_notes


def build_response(p: InferencePlan, ev: InferenceEvaluation) -> dict[str, Any]:
    """The answer: one section builder per top-level field, in the contract's order."""
    w, acc, dec = p.workload, p.accelerator, p.decimal_places
    count, speed = ev.count, ev.speed
    notes: list[str] = [_(note) for note in w.model.notes] + ([ev.count_note] if ev.count_note else [])
    notes += _notes(p, count, ev.to_meet) + queue_notes(p, speed, dec) + admission_notes(ev)
    result: dict[str, Any] = {
        "model": _model_section(w),
        "hardware": {
            "accelerator": acc.id,
            "name": acc.name,
            "count": count,
            "engine": w.engine,
            "layout": w.layout,
            "accelerator_class": accelerator_class(acc),
            "serving_stack": serving_stack(w.engine, acc),
        },
        "memory": _memory_section(ev, dec),
        "latency": {
            "time_to_first_token_s": speed.time_to_first_token_s,
            "time_per_output_token_s": speed.time_per_output_token_s,
            "end_to_end_s": speed.end_to_end_s,
            "bound": {"prefill": speed.prefill_bound, "decode": speed.decode_bound},
            "percentiles": speed.percentiles,
            "human": _latency_human(speed, dec),
        },
        "load": load_section(p, speed),
        "throughput": {
            "output_tokens_per_second": speed.output_tokens_per_second,
            "per_sequence_tokens_per_second": speed.per_sequence_tokens_per_second,
            "requests_per_second": speed.requests_per_second,
            "samples_per_second": speed.samples_per_second,
        },
        "cost": _cost_section(w, speed, count, p),
        "intervals": None,
        "devices_needed": {
            "to_fit": ev.to_fit,
            "to_meet_targets": ev.to_meet,
            "targets_met": ev.targets_met,
        },
        "assumptions": _assumptions_section(p),
        "notes": notes,
    }
    # p10/p90 from the measured residuals of each metric's class (intervals.py), the classes in the assumptions
    result["intervals"], result["assumptions"]["intervals"] = intervals(result, acc)
    if p.details:
        result["details"] = _details(w, acc, ev.memory, speed)
    return result


def _model_section(w: Workload) -> dict[str, Any]:
    return {
        "name": w.model.name,
        "architecture": w.model.architecture,
        "total_parameters": w.model.total_parameters,
        "active_parameters": w.model.active_parameters,
        "source": w.model.source,
        "weights": {
            "precision": w.fmt.precision,
            "format": w.fmt.name,
            "bits_per_weight": w.fmt.body_bits,
            "embedding_bits_per_weight": w.fmt.embedding_bits,
            "bytes": w.weights_bytes,
            "source": w.fmt.source,
        },
        "kv_cache_precision": w.kv_precision,
    }


def _assumptions_section(p: InferencePlan) -> dict[str, Any]:
    w = p.workload
    cls = accelerator_class(p.accelerator)
    mbu = bandwidth_efficiency(w.engine, cls, w.fmt.family)
    overhead = layer_overhead_s(w.engine, cls)
    eff_max, n_half, compute_source = compute_profile(w.engine, cls)
    # the values speed.py uses: the class tables × the stack's factors on this vendor's build (stacks.py)
    stack = stack_factors(w.engine, p.accelerator)
    precision, _weight_only = compute_precision_on(w.fmt, p.accelerator.supports("fp4"))
    if stack is not NEUTRAL:
        mbu = Factor(mbu.value * stack.bandwidth, f"{mbu.source}; × {stack.bandwidth:g} ({stack.source})")
        if stack.layer_overhead_s is not None:
            overhead = Factor(stack.layer_overhead_s, stack.source)
        eff_max *= stack.compute(precision)
        compute_source = f"{compute_source}; × {stack.compute(precision):g} ({stack.source})"
    assumptions: dict[str, Any] = {
        "workload": {
            "batch_size": w.batch,
            "prompt_tokens": w.prompt_tokens,
            "output_tokens": w.output_tokens,
        },
        "memory_bandwidth_efficiency": {"value": mbu.value, "source": mbu.source},
        "kv_bandwidth_efficiency": kv_bandwidth_efficiency(w.engine, cls).value * stack.kv_bandwidth,
        "layer_overhead_s": {"value": overhead.value, "source": overhead.source},
        "compute_efficiency": {"max": eff_max, "tokens_at_half": n_half, "source": compute_source},
        "usd_per_accelerator_hour": p.usd_per_accelerator_hour,
        "infrastructure_overhead": p.infrastructure_overhead,
    }
    if w.model.shape is not None and w.model.shape.is_moe:
        assumptions["moe_expert_efficiency"] = moe_expert_efficiency(w.engine, cls).value
        assumptions["moe_layer_floor_s"] = moe_layer_floor_s(w.engine, cls)
        if w.model.shape.kv_lora_rank:
            assumptions["mla_moe_layer_overhead_ratio"] = mla_moe_layer_ratio(w.engine, cls)
    draft = _draft_assumption(w)
    if draft is not None:
        assumptions["speculative_draft"] = draft
    return assumptions


_DRAFT_BASIS = {
    NAMED: N_(
        "The named draft model's own shape: its weights in {format_note}, and its own KV cache per token, on "
        "the target's devices and sharded like it."
    ),
    ESTIMATED: N_(
        "No draft_model named: the draft is estimated at the draft cost ratio ({share:.1%}) of the target's "
        "weights and KV cache per token, on the target's devices."
    ),
    MTP: N_(
        "The MTP module (one decoder block of the target's, eh_proj, its own embedding and LM head, as vLLM "
        "loads DeepSeek-V3's): not in the model's parameter count, added once; its KV is one layer's."
    ),
}


def _draft_assumption(w: Workload) -> dict[str, Any] | None:
    """How the speculative draft's memory and cost were derived (draft.py)."""
    d, spec = resolve_draft(w), w.schedule.speculative
    if d is None or spec is None or w.model.shape is None:
        return None
    whole = draft_per_device(w, 1, kv_bytes_per_token(w, 1))
    fmt = d.fmt.name if d.fmt is not None else None
    return {
        "method": spec.method,
        "basis": d.basis,
        "name": d.model.name if d.model is not None else None,
        "parameters": d.model.total_parameters if d.model is not None else None,
        "weights_format": fmt,
        "weights_bytes": draft_weights_bytes(w),
        "kv_cache_bytes_per_token": whole[1],
        "cost_ratio": spec.cost_ratio(w.model.shape.layers),
        "description": _(_DRAFT_BASIS[d.basis]).format(format_note=_(d.format_note), share=d.share),
    }


def _notes(p: InferencePlan, count: int, to_meet: int | None) -> list[str]:
    w, notes = p.workload, []
    if p.usd_per_accelerator_hour is None:
        notes.append(
            _("No price listed for {id}: give cost.usd_per_accelerator_hour for cost figures.").format(
                id=p.accelerator.id
            )
        )
    if p.targets and to_meet is None:
        notes.append(_("No device count meets every target with this model, format and engine."))
    if w.mode == "sample":
        notes.append(
            _(
                "{architecture} models are served as replicas in samples/s; the engine only sets memory "
                "reservations, and latency is per batch."
            ).format(architecture=w.model.architecture)
        )
    s = w.model.shape
    if s is not None and s.is_moe and s.experts >= 64 and w.mode == "token":
        notes.append(
            _(
                "Fine-grained MoE ({experts} experts): routing and grouped-GEMM launches are not "
                "calibrated here (our MoE fit is Mixtral's 8 experts); treat decode speed as an upper "
                "bound."
            ).format(experts=s.experts)
        )
    if w.layout == "layer" and count > 1:
        notes.append(
            _(
                "{engine} splits layers across the {count} devices: memory divides, devices run in turn."
            ).format(engine=w.engine, count=count)
        )
        if w.engine == "exllamav2":
            notes.append(
                _(
                    "hardware.count on exllamav2 is a layer split (gpu_split); its experimental tensor-parallel "
                    "loader (load_tp) is not modelled."
                )
            )
    if w.fmt.precision == "fp4" and not p.accelerator.supports("fp4"):
        notes.append(
            _(
                "{id} has no FP4 peak in the catalog: {format} weights are de-quantized to 16-bit compute "
                "(weight-only, as vLLM's Marlin FP4 fallback); memory and decode bytes stay at 4 bits."
            ).format(id=p.accelerator.id, format=w.fmt.name)
        )
    return notes


def _latency_human(speed: Speed, dec: int) -> dict[str, str]:
    human = {"end_to_end": human_duration(speed.end_to_end_s, dec)}
    if speed.time_to_first_token_s is not None:
        human["time_to_first_token"] = human_duration(speed.time_to_first_token_s, dec)
    if speed.time_per_output_token_s is not None:
        human["time_per_output_token"] = human_duration(speed.time_per_output_token_s, dec)
    return human


def _memory_section(ev: InferenceEvaluation, dec: int) -> dict[str, Any]:
    mem = ev.memory
    headroom = mem.capacity_bytes - mem.per_device_bytes
    return {
        "per_device_bytes": round(mem.per_device_bytes),
        "total_bytes": round(mem.total_bytes),
        "device_capacity_bytes": round(mem.capacity_bytes),
        "fits": mem.fits,
        "breakdown": {
            "weights": round(mem.weights_bytes),
            "kv_cache": round(mem.kv_cache_bytes),
            "activations": round(mem.activations_bytes),
            "overhead": round(mem.overhead_bytes),
            "draft": round(mem.draft_bytes),
        },
        "kv_cache_bytes_per_token": round(mem.kv_bytes_per_token),
        "max_batch_size": ev.max_batch_size,
        "max_context_tokens": ev.max_context_tokens,
        "human": {
            "per_device": human_bytes(mem.per_device_bytes, dec),
            "total": human_bytes(mem.total_bytes, dec),
            "device_capacity": human_bytes(mem.capacity_bytes, dec),
            "headroom": ("" if headroom >= 0 else "-") + human_bytes(abs(headroom), dec),
            "weights": human_bytes(mem.weights_bytes, dec),
            "kv_cache": human_bytes(mem.kv_cache_bytes, dec),
            "kv_cache_per_token": human_bytes(mem.kv_bytes_per_token, dec),
            "draft": human_bytes(mem.draft_bytes, dec),
        },
    }


def _cost_section(w: Workload, speed: Speed, count: int, p: InferencePlan) -> dict[str, Any]:
    """Cost per hour × (1 + infrastructure overhead); output tokens carry all serving time, input tokens
    only the prefill time (module docstring)."""
    usd = p.usd_per_accelerator_hour
    source = p.price_source
    as_of = source.get("as_of") if isinstance(source, dict) else None
    if usd is None:
        return {
            "usd_per_hour": None,
            "usd_per_million_output_tokens": None,
            "usd_per_million_input_tokens": None,
            "usd_per_million_samples": None,
            "price_source": None,
            "priced_as_of": None,
        }
    per_hour = usd_per_hour(count, usd, p.infrastructure_overhead)
    split = w.schedule.disaggregation
    prefill_hour = None
    if split is not None and p.pool_prices is not None:  # both pools; input tokens pay the prefill pool
        (pre_usd, _), (dec_usd, _) = p.pool_prices["prefill"], p.pool_prices["decode"]
        if pre_usd is None or dec_usd is None:
            return _cost_section(w, speed, count, replace(p, usd_per_accelerator_hour=None))
        prefill_hour = usd_per_hour(split.prefill.devices, pre_usd, p.infrastructure_overhead)
        per_hour = prefill_hour + usd_per_hour(split.decode.devices, dec_usd, p.infrastructure_overhead)
    per_second = per_hour / SECONDS_PER_HOUR
    out = in_ = samples = None
    if speed.output_tokens_per_second:
        out = per_second / speed.output_tokens_per_second * 1e6
    if prefill_hour is not None:
        in_ = prefill_hour / SECONDS_PER_HOUR / (speed.requests_per_second * w.prompt_tokens) * 1e6
    elif speed.load is not None:  # continuous batching: the prefill chunks' share of the engine's time
        in_ = (
            per_second
            * speed.load["prefill_time_share"]
            / (speed.requests_per_second * w.prompt_tokens)
            * 1e6
        )
    elif speed.time_to_first_token_s is not None:
        in_ = per_second * speed.time_to_first_token_s / (w.batch * w.prompt_tokens) * 1e6
    if speed.samples_per_second:
        samples = per_second / speed.samples_per_second * 1e6
    return {
        "usd_per_hour": per_hour,
        "usd_per_million_output_tokens": out,
        "usd_per_million_input_tokens": in_,
        "usd_per_million_samples": samples,
        "price_source": source,
        "priced_as_of": as_of,
    }


Row = tuple[str, str, float | None, str, str]  # name, formula, value, unit, source


def _details(w: Workload, acc: Accelerator, mem: MemoryLayout, speed: Speed) -> list[dict[str, Any]]:
    """Every step of the calculation: the rows common to all models, then the token (prefill/decode) or sample
    rows."""
    rows = _common_rows(w, acc, mem, speed) + (
        _token_rows(speed) if w.mode == "token" else _sample_rows(w, speed)
    )
    return [{"name": n, "formula": f, "value": v, "unit": u, "source": s} for n, f, v, u, s in rows]


def _common_rows(w: Workload, acc: Accelerator, mem: MemoryLayout, speed: Speed) -> list[Row]:
    cls, t = accelerator_class(acc), speed.terms
    mbu = bandwidth_efficiency(w.engine, cls, w.fmt.family)
    return [
        ("weights_bytes_total", "N_blocks·bits/8 + N_embed·bits_embed/8", w.weights_bytes, "bytes", w.fmt.source),
        ("kv_cache_bytes_per_token", "2·L·g·d·bytes (MLA: (r_kv + d_rope)·L·bytes), per device",
         mem.kv_bytes_per_token, "bytes", "docs/formulas.md Inference memory"),
        ("memory_bandwidth_efficiency", "achieved / datasheet bandwidth (MBU)", mbu.value, "fraction", mbu.source),
        ("step_overhead_s", "layers × per-layer overhead", t.get("step_overhead_s", 0.0), "s",
         layer_overhead_s(w.engine, cls).source),
        ("peak_flops_per_s", "dense peak at the compute precision", t.get("peak_flops_per_s", 0.0), "FLOP/s",
         "catalog (reference accelerators.csv)"),
    ]  # fmt: skip


def _token_rows(speed: Speed) -> list[Row]:
    t = speed.terms
    return [
        ("prefill_flops", "2·N·b·s + b·L·s²·a·(d_qk + d_v)", t["prefill_flops"], "FLOP", "docs/formulas.md"),
        ("prefill_compute_efficiency", "eff_max·n/(n + n_half)", t["prefill_compute_efficiency"], "fraction",
         "efficiency.py (TensorRT-LLM TTFT fit)"),
        ("decode_weight_bytes_per_step", "weights − input embedding − untouched experts, per device",
         t["decode_weight_bytes_per_device"], "bytes", "docs/formulas.md MoE decode"),
        ("decode_kv_bytes_per_step", "b · mean context · KV bytes per token", t["decode_kv_bytes_per_device"],
         "bytes", "docs/formulas.md Inference speed"),
        ("decode_step_s", "max(W/(BW·MBU), 2·N·b/(peak·eff)) + KV/(BW·MBU_kv) + overhead + all-reduce",
         speed.time_per_output_token_s, "s", "docs/formulas.md Inference speed"),
        ("allreduce_s_per_step", "2·L·(latency + 2(t−1)/t·b·h·bytes/link)", t["allreduce_s"], "s",
         "efficiency.py (gpt-fast TP fit); parallelism.py"),
    ]  # fmt: skip


def _sample_rows(w: Workload, speed: Speed) -> list[Row]:
    t = speed.terms
    return [
        ("flops_per_sample", "forward FLOPs per sample", t["flops_per_sample"], "FLOP", w.model.source or ""),
        ("compute_efficiency", "eff_max·b/(b + n_half)", t["compute_efficiency"], "fraction",
         "efficiency.py VISION_COMPUTE"),
    ]  # fmt: skip
