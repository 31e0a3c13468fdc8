"""Serving advice: catalog-wide suggestions (lean path) and recommendations verified by re-estimation.

Every recommendation carries `change`, an RFC 7386 JSON Merge Patch of the request; it is emitted only after
the patched request was estimated again and the claim held (so a client can apply it blindly).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .errors import InvalidRequest
from .hardware import Accelerator, Catalog
from .inference import _estimate, meets_targets
from .inference_memory import fewest_fitting, valid_counts
from .inference_request import GPU_ONLY_FORMATS, Parsed, hardware_problems
from .inference_speed import estimate_speed
from .patch import merge_patch
from .quantization import ENGINE_KV_PRECISIONS
from .units import SECONDS_PER_HOUR, human_bytes

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
}
# Stop adding devices once one more step (next valid count) improves end-to-end time by less than 2%.
DIMINISHING = 0.98
_BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def suggestions(p: Parsed, catalog: Catalog) -> list[dict[str, Any]]:
    """Accelerators that can serve the request, cheapest per million output tokens first among those
    meeting the targets. Lean: memory and speed only, no advice, no details."""
    w = p.workload
    named = w.fmt.name if w.fmt.name in GPU_ONLY_FORMATS else None
    provider = p.cost.get("provider")
    rows: list[dict[str, Any]] = []
    for acc in catalog.accelerators.values():
        if hardware_problems(w, acc, named):
            continue
        count = fewest_fitting(w, acc)
        if count is None:
            continue
        speed = estimate_speed(w, acc, count)
        meets = meets_targets(speed, p.targets)
        if not meets and w.layout != "layer":  # layer split never speeds up with more devices
            best = speed.end_to_end_s
            for more in (c for c in w.counts if c > count):
                faster = estimate_speed(w, acc, more)
                if meets_targets(faster, p.targets):
                    count, speed, meets = more, faster, True
                    break
                if faster.end_to_end_s > DIMINISHING * best:
                    break  # past the knee: fixed overhead and all-reduces dominate, more devices stop helping
                best = faster.end_to_end_s
        usd = _price(catalog, acc, provider)
        per_hour = usd * count if usd is not None else None
        rate = speed.output_tokens_per_second or speed.samples_per_second
        per_million = per_hour / SECONDS_PER_HOUR / rate * 1e6 if per_hour is not None and rate else None
        rows.append(
            {
                "accelerator": acc.id,
                "count": count,
                "fits": True,
                "meets_targets": meets,
                "output_tokens_per_second": speed.output_tokens_per_second,
                "samples_per_second": speed.samples_per_second,
                "usd_per_hour": per_hour,
                "usd_per_million_output_tokens": per_million if w.mode == "token" else None,
                "usd_per_million_samples": per_million if w.mode == "sample" else None,
            }
        )
    rows.sort(key=lambda r: (not r["meets_targets"], _cost_key(r), -(r["output_tokens_per_second"] or 0.0)))
    return rows


def _cost_key(row: Mapping[str, Any]) -> float:
    value = row["usd_per_million_output_tokens"] or row["usd_per_million_samples"]
    return value if value is not None else math.inf


def _price(catalog: Catalog, acc: Accelerator, provider: Any) -> float | None:
    if provider:
        mine = [
            r.usd_per_hour
            for r in catalog.prices.get(acc.id, ())
            if r.provider.lower() == str(provider).lower()
        ]
        if mine:
            return min(mine)
    default = catalog.default_price(acc.id)
    return default.usd_per_hour if default else None


def recommendations(
    request: Mapping[str, Any], p: Parsed, result: Mapping[str, Any], catalog: Catalog
) -> list[dict[str, Any]]:
    """Concrete request changes, each re-estimated and kept only when its claim holds."""
    out: list[dict[str, Any]] = []

    def verified(change: dict[str, Any], claim: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        try:
            after = _estimate(merge_patch(dict(request), change), catalog, advice=False)
        except InvalidRequest:
            return None
        return after if claim(after) else None

    def add(code: str, severity: str, message: str, change: dict[str, Any]) -> None:
        out.append({"code": code, "severity": severity, "message": message, "change": change})

    w, mem = p.workload, result["memory"]
    fits = mem["fits"]
    count = result["configuration"]["hardware"]["count"]
    acc = p.accelerator
    fits_claim: Callable[[dict[str, Any]], bool] = lambda r: r["memory"]["fits"]  # noqa: E731

    if not fits:
        for step in _QUANTIZE_STEPS[w.engine]:
            if _BITS[step["precision"]] >= _BITS[w.fmt.precision]:
                continue
            change = {"weights": step}
            after = verified(change, fits_claim)
            if after:
                label = step["format"] or step["precision"]
                add(
                    "quantize-weights-to-fit",
                    "warning",
                    f"Weights in {label} take {after['memory']['human']['weights']} per device instead of "
                    f"{mem['human']['weights']}; the request then fits on {count} × {acc.id}.",
                    change,
                )
                break
        if w.kv_precision != "fp8" and "fp8" in ENGINE_KV_PRECISIONS[w.engine] and acc.supports("fp8"):
            change = {"kv_cache_precision": "fp8"}
            if verified(change, fits_claim):
                add(
                    "fp8-kv-cache",
                    "warning",
                    "An fp8 KV cache halves the cache "
                    f"({human_bytes(mem['breakdown']['kv_cache'])} → {human_bytes(mem['breakdown']['kv_cache'] / 2)}"
                    ") and the request fits.",
                    change,
                )
        to_fit = result["devices_needed"]["to_fit"]
        if to_fit and to_fit != count:
            change = {"hardware": {"count": to_fit}}
            if verified(change, fits_claim):
                add(
                    "more-devices",
                    "warning",
                    f"{to_fit} × {acc.id} hold the request ({w.layout} layout).",
                    change,
                )
        if 1 <= mem["max_batch_size"] < w.batch:
            change = {"batch_size": mem["max_batch_size"]}
            if verified(change, fits_claim):
                add(
                    "reduce-batch",
                    "warning",
                    f"At most {mem['max_batch_size']} concurrent sequences of {w.context_tokens} tokens fit.",
                    change,
                )
        ctx = mem["max_context_tokens"]
        if w.mode == "token" and 2 <= ctx < w.context_tokens:
            prompt = max(1, math.floor(w.prompt_tokens * ctx / w.context_tokens))
            change = {"prompt_tokens": prompt, "output_tokens": max(1, ctx - prompt)}
            if verified(change, fits_claim):
                add(
                    "reduce-context",
                    "warning",
                    f"Only {ctx} tokens per sequence fit at batch {w.batch}; shorten prompt and output.",
                    change,
                )

    if fits and w.layout == "tensor" and mem["max_batch_size"] < 2 * w.batch:
        more = next((c for c in valid_counts(w) if c > count), None)
        if more is not None:
            change = {"hardware": {"count": more}}
            after = verified(change, lambda r: r["memory"]["max_batch_size"] >= 4 * w.batch)
            if after:
                add(
                    "more-devices-for-headroom",
                    "info",
                    f"The request fits with room for only {mem['max_batch_size']} sequences; {more} × {acc.id} "
                    f"hold {after['memory']['max_batch_size']}.",
                    change,
                )

    s = w.model.shape
    kv_share = mem["breakdown"]["kv_cache"] / max(mem["per_device_bytes"], 1)
    if (
        s is not None
        and w.mode == "token"
        and not s.kv_lora_rank
        and s.kv_heads == s.attention_heads
        and s.attention_heads > 8
        and s.attention_heads % 8 == 0
        and kv_share >= 0.25
    ):
        change = _gqa_change(request, p)
        if change:
            before = mem["kv_cache_bytes_per_token"]
            expected = before * 8 / s.attention_heads
            after = verified(change, lambda r: abs(r["memory"]["kv_cache_bytes_per_token"] - expected) <= 1)
            if after:
                add(
                    "use-gqa-model",
                    "info",
                    f"The KV cache is {kv_share:.0%} of memory: a grouped-query variant with 8 KV heads (as "
                    f"Llama-2-70B, Llama 3 and Mistral use) stores {human_bytes(expected)} per token instead of "
                    f"{human_bytes(before)}.",
                    change,
                )

    if p.targets and not result["targets"]["met"]:
        to_meet = result["devices_needed"]["to_meet_targets"]
        if to_meet and to_meet != count:
            change = {"hardware": {"count": to_meet}}
            if verified(change, lambda r: r["targets"]["met"]):
                add("more-devices-for-targets", "warning", f"{to_meet} × {acc.id} meet every target.", change)
        for step in _QUANTIZE_STEPS[w.engine]:
            if _BITS[step["precision"]] >= _BITS[w.fmt.precision]:
                continue
            change = {"weights": step}
            if verified(change, lambda r: r["targets"]["met"] and r["memory"]["fits"]):
                add(
                    "quantize-for-targets",
                    "warning",
                    f"{step['format'] or step['precision']} weights stream fewer bytes per token and meet every "
                    "target.",
                    change,
                )
                break

    if w.fmt.precision == "fp32" and w.mode == "token":
        half = "bf16" if acc.supports("bf16") else "fp16"
        change = {"weights": {"precision": half, "format": None}}
        tps = result["throughput"]["output_tokens_per_second"]
        if verified(change, lambda r: r["throughput"]["output_tokens_per_second"] > 1.5 * tps):
            add(
                "use-16-bit-weights",
                "info",
                f"{half} weights halve memory and nearly double decode speed.",
                change,
            )

    if w.engine == "hf-transformers" and w.mode == "token":
        tps = result["throughput"]["output_tokens_per_second"]
        change = {"engine": "vllm"}
        after = verified(change, lambda r: r["throughput"]["output_tokens_per_second"] > 1.5 * tps)
        if after:
            gain = after["throughput"]["output_tokens_per_second"] / tps
            add(
                "switch-engine",
                "info",
                f"vLLM's CUDA-graph decode avoids per-layer Python overhead: {gain:.1f}× the output tokens/s.",
                change,
            )

    if fits and w.mode == "token" and mem["max_batch_size"] >= 2 * w.batch and not p.targets:
        batch = min(mem["max_batch_size"], 8 * w.batch)
        tps = result["throughput"]["output_tokens_per_second"]
        change = {"batch_size": batch}
        after = verified(
            change, lambda r: r["memory"]["fits"] and r["throughput"]["output_tokens_per_second"] > 1.3 * tps
        )
        if after:
            gain = after["throughput"]["output_tokens_per_second"] / tps
            add(
                "raise-batch",
                "info",
                f"Memory holds {mem['max_batch_size']} sequences; batch {batch} gives {gain:.1f}× the aggregate "
                "output tokens/s (decode is memory-bound, extra sequences share the weight reads).",
                change,
            )
    return out


def _gqa_change(request: Mapping[str, Any], p: Parsed) -> dict[str, Any] | None:
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
