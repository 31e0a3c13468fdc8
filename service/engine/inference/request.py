"""Turn an inference request body into a validated Workload + hardware choice (all bad fields at once)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import InvalidRequest
from ..hardware import Accelerator, Catalog
from ..i18n import _
from ..models import ModelSpec, resolve_model
from ..pricing import priced_cost, resolve_price
from .disaggregation_request import check_disaggregation, parse_disaggregation, pool_prices
from .model.draft import bind_draft
from .model.formats import (
    ENGINE_KV_PRECISIONS,
    ENGINES,
    EXL2_FORMATS,
    KV_PRECISIONS,
    WeightFormat,
    default_kv_precision,
    resolve_weight_format,
)
from .model.memory import Workload, tensor_degree_error, valid_counts
from .model.plan import InferencePlan
from .schedule_request import check_draft, check_schedule, parse_schedule

DEFAULT_BATCH, DEFAULT_PROMPT, DEFAULT_OUTPUT = 1, 512, 256
MAX_COUNT = 1024  # explicit counts (the API's limit); "auto" searches up to inference_memory.MAX_DEVICES
DEFAULT_METAL_FRACTION = 0.75  # macOS wires ~65-75% of unified memory for Metal by default (docs/formulas.md, "Catalog conventions")
TARGET_KEYS = ("output_tokens_per_second", "time_to_first_token_s", "time_per_output_token_s")
# Where each engine runs: TensorRT-LLM is NVIDIA-only; vLLM has CUDA/ROCm/TPU/Neuron/Gaudi/CPU backends but no
# Metal; llama.cpp has CUDA/ROCm/Vulkan/Metal/CPU backends but no TPU or Neuron; transformers runs everywhere;
# SGLang runs on NVIDIA/AMD GPUs, Gaudi/Ascend accelerators and CPUs (server_args --device cuda|xpu|hpu|cpu|npu,
# docs "Platforms"); ExLlamaV2 is a CUDA/ROCm extension for GPUs (README "How to").
ENGINE_KINDS = {
    "vllm": frozenset({"gpu", "tpu", "asic", "cpu"}),
    "tensorrt-llm": frozenset({"gpu"}),
    "llama.cpp": frozenset({"gpu", "apple", "cpu"}),
    "hf-transformers": frozenset({"gpu", "tpu", "asic", "apple", "cpu"}),
    "sglang": frozenset({"gpu", "asic", "cpu"}),
    "exllamav2": frozenset({"gpu"}),
}
# GPTQ/AWQ/bitsandbytes kernels are CUDA/ROCm code (AutoGPTQ, AutoAWQ, bitsandbytes READMEs); so are the MXFP4/NVFP4
# GEMMs (Marlin, CUTLASS, FlashInfer, Aiter) and ExLlamaV2's EXL2 kernels.
GPU_ONLY_FORMATS = frozenset({"gptq", "awq", "bnb-nf4", "bnb-int8", "mxfp4", "nvfp4", *EXL2_FORMATS})


def parse_request(request: Mapping[str, Any], catalog: Catalog) -> InferencePlan:
    """Validate the request against the model, the engine, the catalog and the context; fill defaults."""
    errors: dict[str, list[str]] = {}

    def bad(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    model, engine, fmt = _model_and_format(request, errors, bad)
    hardware = request.get("hardware") or {}
    acc, fraction, count = _hardware(hardware, catalog, bad)
    batch = _positive(request, "batch_size", DEFAULT_BATCH, bad)
    prompt = _positive(request, "prompt_tokens", DEFAULT_PROMPT, bad)
    output = _positive(request, "output_tokens", DEFAULT_OUTPUT, bad)
    kv = _kv_precision(request, engine, bad)
    targets = _targets(request, bad)
    cost = priced_cost(request, acc, catalog, bad)
    usd, price_source = resolve_price(cost, acc, catalog, bad)
    overhead = cost.get("infrastructure_overhead", 0.0) or 0.0
    if isinstance(overhead, bool) or not isinstance(overhead, int | float) or overhead < 0:
        bad("cost.infrastructure_overhead", _("Must be a non-negative fraction (0.15 = +15 %)."))
        overhead = 0.0
    output_opts = request.get("output") or {}
    places = output_opts.get("decimal_places", 1)  # decimals in the human-readable strings
    if isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= 6:
        bad("output.decimal_places", _("Must be an integer 0-6 (decimals in the human-readable strings)."))
        places = 1

    schedule = parse_schedule(request, engine, bad)
    split, pools = parse_disaggregation(request, catalog, acc, bad)
    schedule = replace(schedule, disaggregation=split)
    if model is not None and fmt is not None and acc is not None and engine in ENGINES:
        kv = kv or default_kv_precision(engine, fmt)
        if schedule.speculative is not None:
            schedule = replace(schedule, speculative=bind_draft(schedule.speculative, model, fmt))
        workload = Workload(model, engine, fmt, kv, batch, prompt, output, float(fraction), schedule)
        check_schedule(workload, acc, bad)
        check_draft(workload, count, bad)
        _check_hardware(workload, acc, count, (request.get("weights") or {}).get("format"), bad)
        _check_context(workload, bad)
        check_disaggregation(workload, pools, lambda w, part: hardware_problems(w, part, None), bad)
    prices = pool_prices(request, split, catalog, (usd, price_source), bad)
    if errors:
        raise InvalidRequest(errors)
    assert model is not None and fmt is not None and acc is not None
    return InferencePlan(
        workload=workload,
        accelerator=acc,
        count=count,
        targets=targets,
        cost=cost,
        usd_per_accelerator_hour=usd,
        price_source=price_source,
        infrastructure_overhead=float(overhead),
        details=bool(output_opts.get("details", False)),
        decimal_places=places,
        suggestions=bool(output_opts.get("suggestions", True)),
        pool_prices=prices,
    )


def _model_and_format(
    request: Mapping[str, Any], errors: dict[str, list[str]], bad: Any
) -> tuple[ModelSpec | None, str, WeightFormat | None]:
    """The model, the engine and the weight format (the engine's reading of weights.precision/format)."""
    model: ModelSpec | None = None
    try:
        model = resolve_model(request.get("model") or {})
    except InvalidRequest as exc:
        errors.update(exc.errors)
    engine = request.get("engine") or "vllm"
    if engine not in ENGINES:
        bad(
            "engine",
            _("Unknown engine {engine}; valid: {ENGINES}.").format(
                engine=repr(engine), ENGINES=", ".join(ENGINES)
            ),
        )
    weights = request.get("weights") or {}
    fmt, fmt_errors = resolve_weight_format(engine, weights.get("precision"), weights.get("format"))
    errors.update(fmt_errors)
    if model is not None and weights.get("format") and model.architecture != "transformer":
        bad("weights.format", _("Named formats apply to transformer LLMs; give only weights.precision here."))
    return model, engine, fmt


def _hardware(
    hardware: Mapping[str, Any], catalog: Catalog, bad: Any
) -> tuple[Accelerator | None, float, int | None]:
    """(catalog part, Apple Metal memory fraction, device count or None for "auto")."""
    acc = catalog.accelerators.get(str(hardware.get("accelerator")))
    if acc is None:
        bad("hardware.accelerator", catalog.missing_message(hardware.get("accelerator")))
    fraction = hardware.get("apple_metal_memory_fraction", DEFAULT_METAL_FRACTION)
    if not isinstance(fraction, int | float) or not 0 < fraction <= 1:
        bad("hardware.apple_metal_memory_fraction", _("Must be a fraction in (0, 1], e.g. 0.75."))
        fraction = DEFAULT_METAL_FRACTION
    count_raw = hardware.get("count", 1)
    count: int | None = None
    if count_raw != "auto":
        if isinstance(count_raw, bool) or not isinstance(count_raw, int) or not 1 <= count_raw <= MAX_COUNT:
            bad(
                "hardware.count",
                _('Must be an integer 1-{MAX_COUNT} or "auto" (fewest devices that fit).').format(
                    MAX_COUNT=MAX_COUNT
                ),
            )
        else:
            count = count_raw
    return acc, fraction, count


def _kv_precision(request: Mapping[str, Any], engine: str, bad: Any) -> str | None:
    """kv_cache_precision as given (None: the engine's default for the weights), checked against the engine."""
    kv = request.get("kv_cache_precision")
    if kv is not None and kv not in KV_PRECISIONS:
        bad(
            "kv_cache_precision",
            _("Unknown KV precision {kv}; valid: {KV_PRECISIONS}.").format(
                kv=repr(kv), KV_PRECISIONS=", ".join(KV_PRECISIONS)
            ),
        )
    elif kv is not None and engine in ENGINES and kv not in ENGINE_KV_PRECISIONS[engine]:
        valid = ", ".join(p for p in KV_PRECISIONS if p in ENGINE_KV_PRECISIONS[engine])
        bad(
            "kv_cache_precision",
            _("Engine {engine} has no {kv} KV cache; valid: {valid}.").format(
                engine=repr(engine), kv=kv, valid=valid
            ),
        )
    return kv


def _targets(request: Mapping[str, Any], bad: Any) -> dict[str, float]:
    targets: dict[str, float] = {}
    for key, value in (request.get("targets") or {}).items():
        if key not in TARGET_KEYS:
            bad(
                f"targets.{key}",
                _("Unknown target; valid: {TARGET_KEYS}.").format(TARGET_KEYS=", ".join(TARGET_KEYS)),
            )
        elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            bad(f"targets.{key}", _("Must be a positive number."))
        else:
            targets[key] = float(value)
    return targets


def hardware_problems(w: Workload, acc: Accelerator, named_format: str | None) -> dict[str, str]:
    """Why this engine/format/precision cannot run on `acc` ({field: message}); empty when it can."""
    problems: dict[str, str] = {}
    if acc.kind not in ENGINE_KINDS[w.engine] or (
        w.engine == "tensorrt-llm" and acc.vendor.lower() != "nvidia"
    ):
        runs = [
            e
            for e in ENGINE_KINDS
            if acc.kind in ENGINE_KINDS[e] and (e != "tensorrt-llm" or acc.vendor.lower() == "nvidia")
        ]
        problems["engine"] = _(
            "Engine {engine} does not run on {id} ({kind}); engines for it: {runs}."
        ).format(engine=repr(w.engine), id=acc.id, kind=acc.kind, runs=", ".join(runs))
    if named_format in GPU_ONLY_FORMATS and acc.kind != "gpu":
        problems["weights.format"] = _(
            "Format {named_format} needs a GPU (CUDA/ROCm kernels); {id} is {kind}."
        ).format(named_format=repr(named_format), id=acc.id, kind=acc.kind)
    if "fp8" in (w.fmt.precision, w.kv_precision) and not acc.supports("fp8"):
        supported = ", ".join(
            p for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4") if acc.supports(p)
        )
        if w.fmt.precision == "fp8":
            problems["weights.precision"] = _(
                "fp8 weights need FP8 hardware; {id} supports: {supported}."
            ).format(id=acc.id, supported=supported or _("no listed precision"))
        if w.kv_precision == "fp8":
            problems["kv_cache_precision"] = _(
                "An fp8 KV cache needs FP8 hardware; {id} supports: {supported}."
            ).format(id=acc.id, supported=supported or _("no listed precision"))
    return problems


def _check_hardware(w: Workload, acc: Accelerator, count: int | None, named_format: str | None, bad) -> None:
    for path, message in hardware_problems(w, acc, named_format).items():
        bad(path, message)
    s = w.model.shape
    if count is None or s is None:
        return
    if w.layout == "tensor":
        reason = tensor_degree_error(s.attention_heads, s.kv_heads, count)
        if reason:
            valid = ", ".join(str(t) for t in valid_counts(w))
            bad(
                "hardware.count",
                _("Tensor-parallel degree {count} {reason}; valid degrees: {valid}.").format(
                    count=count, reason=reason, valid=valid
                ),
            )
    elif w.layout == "layer" and count > s.layers:
        bad(
            "hardware.count",
            _("{engine} splits layers across devices: at most {layers} devices.").format(
                engine=w.engine, layers=s.layers
            ),
        )


def _check_context(w: Workload, bad) -> None:
    s = w.model.shape
    cap = s.max_context_tokens if s is not None else None
    if not cap or w.model.architecture != "transformer":  # vision inputs are images, not prompt tokens
        return
    if w.mode == "sample":
        if w.prompt_tokens > cap:
            bad(
                "prompt_tokens",
                _("{prompt_tokens} tokens exceed the model's {cap}-token input.").format(
                    prompt_tokens=w.prompt_tokens, cap=cap
                ),
            )
    elif w.prompt_tokens >= cap:
        bad(
            "prompt_tokens",
            _("{prompt_tokens} prompt tokens leave no room in the model's {cap}-token context.").format(
                prompt_tokens=w.prompt_tokens, cap=cap
            ),
        )
    elif w.context_tokens > cap:
        bad(
            "output_tokens",
            _(
                "prompt_tokens + output_tokens = {context_tokens} exceeds the model's {cap}-token context; "
                "at most {value} output tokens."
            ).format(context_tokens=w.context_tokens, cap=cap, value=cap - w.prompt_tokens),
        )


def _positive(request: Mapping[str, Any], key: str, default: int, bad) -> int:
    value = request.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        bad(key, _("Must be a positive integer."))
        return default
    return value
