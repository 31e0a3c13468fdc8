"""Training request → validated TrainingPlan. Every cross-field and physical check lives here or in the part
parsers it calls: layout_request.py, numerics_request.py, data_request.py, schedule_request.py.

All problems are collected and raised together as one InvalidRequest with dotted field paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..architecture import ModelSpec
from ..errors import InvalidRequest
from ..hardware import Accelerator, Catalog
from ..i18n import _
from ..models import resolve_model
from ..parallelism import Parallelism
from ..pricing import priced_cost, resolve_offer
from .data_request import parse_batch, parse_data
from .layout_request import check_expert_overlap, parse_parallelism
from .model.framework import JAX_STACKS, inferred_framework
from .model.plan import FRAMEWORKS, TrainingPlan
from .model.recompute import parse_recompute_modules
from .numerics_request import parse_numerics
from .schedule_request import parse_schedule


def build_plan(request: Mapping[str, Any], catalog: Catalog) -> TrainingPlan:
    """Validate the request against the model, the catalog and physics; fill defaults."""
    errors: dict[str, list[str]] = {}

    def bad(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    training: Mapping[str, Any] = request.get("training") or {}
    hardware: Mapping[str, Any] = request.get("hardware") or {}
    output: Mapping[str, Any] = request.get("output") or {}
    notes: list[str] = []

    model: ModelSpec | None = None
    try:
        model = resolve_model(request.get("model") or {})
    except InvalidRequest as err:
        errors.update(err.errors)
    acc, count = _hardware(hardware, catalog, notes, bad)
    layout = _numerics_and_layout(training, hardware, catalog, acc, count, model, notes, bad)
    par: Parallelism = layout["par"]
    seq, unit, units = parse_data(training, model, bad, notes)
    if par.context > 1 and (unit != "token" or seq % (2 * par.context)):
        # a causal sequence is cut into 2·cp chunks so each rank gets equal attention work (Megatron-Core CP)
        bad(
            "hardware.parallelism.context",
            _("training.sequence_length must be a multiple of 2 × context ({value}).").format(
                value=2 * par.context
            ),
        )
    gbs, micro = parse_batch(training, par, seq, unit, bad)
    stack = _stack(training, model, par, acc, notes, bad)
    schedule = parse_schedule(training, hardware, model, unit, count, bad)
    price = _price(priced_cost(request, acc, catalog, bad), acc, catalog, notes, bad)

    if errors:
        raise InvalidRequest(errors)
    assert model is not None and acc is not None
    return TrainingPlan(
        model=model,
        accelerator=acc,
        sequence_length=seq,
        global_batch=gbs,
        micro_batch=micro,
        units=units,
        unit=unit,
        decimals=int(output.get("decimal_places", 1)),
        details=bool(output.get("details", False)),
        notes=tuple(notes),
        **layout,
        **stack,
        **schedule,
        **price,
    )


def _numerics_and_layout(
    training: Mapping[str, Any],
    hardware: Mapping[str, Any],
    catalog: Catalog,
    acc: Accelerator | None,
    count: int,
    model: ModelSpec | None,
    notes: list[str],
    bad: Any,
) -> dict[str, Any]:
    """The plan's precision, optimizer, recomputation (mode, modules, how it was set) and parallel layout."""
    transformer = model is not None and model.shape is not None
    precision, optimizer, multiplier, recompute = parse_numerics(
        training, acc, notes, bad, catalog, transformer
    )
    modules = parse_recompute_modules(training, recompute, model.shape if model else None, bad)
    par = parse_parallelism(hardware, count, model, bad)
    if par.expert_tensor and not (hardware.get("parallelism") or {}).get("expert_tensor"):
        notes.append(
            _(
                "expert_tensor 1 assumed: expert ({expert}) does not divide context × data ({ranks}), so the "
                "expert ranks are drawn from tensor × context × data with the experts unsplit (Megatron-Core MoE "
                "parallel folding, as NVIDIA's recipes set it); give hardware.parallelism.expert_tensor to say "
                "otherwise."
            ).format(expert=par.expert, ranks=par.data * par.context)
        )
    check_expert_overlap(par, recompute, bad)
    return {
        "par": par,
        "precision": precision,
        "optimizer": optimizer,
        "optimizer_multiplier": float(multiplier) if multiplier is not None else None,
        "recompute": recompute,
        "recompute_modules": modules,
        "recompute_source": "given" if training.get("activation_recomputation") is not None else "default",
    }


def _stack(
    training: Mapping[str, Any],
    model: ModelSpec | None,
    par: Parallelism,
    acc: Accelerator | None,
    notes: list[str],
    bad: Any,
) -> dict[str, Any]:
    """The plan's software-side fields: flash attention, activation offload, loss chunks, framework, torch.compile."""
    offload = _offload(training, model, par, bad)
    loss_chunks = _loss_chunks(training, bad)
    framework, compiled, framework_source = _framework(training, par, acc, bad)
    if acc is not None and acc.kind == "tpu" and framework not in ("megatron", *JAX_STACKS):
        notes.append(
            _(
                "training.framework {framework} is a CUDA stack: on a TPU the estimate keeps XLA's kernels and "
                "the framework changes only the loss memory."
            ).format(framework=framework)
        )
    return {
        "flash_attention": bool(training.get("flash_attention", True)),
        "offload_layers": offload,
        "offload_source": "default" if training.get("activation_offload_layers") is None else "given",
        "loss_chunks": loss_chunks,
        "framework": framework,
        "torch_compile": compiled,
        "framework_source": framework_source,
    }


def _price(
    cost: Mapping[str, Any], acc: Accelerator | None, catalog: Catalog, notes: list[str], bad: Any
) -> dict[str, Any]:
    """The price per device-hour and its source (engine/pricing.py) and the infrastructure overhead; a note when no
    price is known (the last note of the plan)."""
    usd, source, terms = resolve_offer(cost, acc, catalog, bad)
    overhead = float(cost.get("infrastructure_overhead", 0.0) or 0.0)
    if overhead < 0:
        bad("cost.infrastructure_overhead", _("Must be ≥ 0."))
    if usd is None and acc is not None:
        notes.append(
            _("No catalog price for {id}; give cost.usd_per_accelerator_hour for USD figures.").format(
                id=acc.id
            )
        )
    return {
        "usd_per_hour": usd,
        "price_source": source,
        "infrastructure_overhead": overhead,
        "offer_terms": terms,
    }


def _loss_chunks(training: Mapping[str, Any], bad: Any) -> int:
    """training.loss_chunks: a whole number of chunks, at least 1 (default 1)."""
    chunks = training.get("loss_chunks")
    if chunks is None:
        return 1
    try:
        value = int(chunks)
    except (TypeError, ValueError, OverflowError):
        value = 0
    if value < 1 or (value != chunks and not isinstance(chunks, str)):  # 2.5 is no whole number; "3" is
        bad("training.loss_chunks", _("Must be a whole number, at least 1."))
        return 1
    return value


def _framework(
    training: Mapping[str, Any], par: Parallelism, acc: Accelerator | None, bad: Any
) -> tuple[str, bool, str]:
    """training.framework (FRAMEWORKS), training.torch_compile (default false) and how the framework was set. Not
    given: megatron (the calibration's stack), or fsdp where the layout shards the weights (zero_stage 3) on a CUDA
    part: Megatron-Core's data parallelism is its distributed optimizer (ZeRO-1), while ZeRO-3 is what PyTorch FSDP
    stacks (torchtitan, llm-foundry, Hugging Face / Accelerate, DeepSpeed) run, with FlashAttention-2 on Hopper."""
    if training.get("framework"):
        framework, source = str(training["framework"]), "given"
    else:
        framework, source = inferred_framework(par.zero_stage, acc)
    if framework not in FRAMEWORKS:
        bad(
            "training.framework",
            _("Must be one of {FRAMEWORKS}.").format(FRAMEWORKS=", ".join(FRAMEWORKS)),
        )
        framework = "megatron"
    compiled = training.get("torch_compile", False)
    if not isinstance(compiled, bool):
        bad("training.torch_compile", _("Must be true or false."))
        compiled = False
    return framework, compiled, source


def _offload(training: Mapping[str, Any], model: ModelSpec | None, par: Parallelism, bad: Any) -> int:
    """training.activation_offload_layers: layers per pipeline stage whose activations go to host memory."""
    layers = int(training.get("activation_offload_layers") or 0)
    if layers <= 0 or model is None:
        return 0
    if model.shape is None:
        bad(
            "training.activation_offload_layers",
            _("Activation offload needs a transformer with a known shape (layers); this model has none."),
        )
        return 0
    per_stage = -(-model.shape.layers // par.pipeline)
    if layers >= per_stage:
        bad(
            "training.activation_offload_layers",
            _("At most {value}: one less than the transformer layers per pipeline stage.").format(
                value=per_stage - 1
            ),
        )
        return 0
    return layers


def _hardware(
    hardware: Mapping[str, Any], catalog: Catalog, notes: list[str], bad: Any
) -> tuple[Accelerator | None, int]:
    """The catalog part (in the request's own cluster when hardware.interconnect is given) and the device count."""
    acc = catalog.accelerators.get(str(hardware.get("accelerator")))
    if acc is None:
        bad("hardware.accelerator", catalog.missing_message(hardware.get("accelerator")))
    if acc is not None and hardware.get("interconnect"):
        acc = _with_interconnect(acc, hardware["interconnect"], notes)
    count = int(hardware.get("count", 1) or 0)
    if count < 1:
        bad("hardware.count", _("Must be at least 1."))
        count = 1
    return acc, count


def _with_interconnect(acc: Accelerator, given: Mapping[str, Any], notes: list[str]) -> Accelerator:
    """The catalog part in the request's own cluster: its scale-up domain size and per-device network rate."""
    domain = given.get("scale_up_domain_devices") or acc.scale_up_domain
    network = given.get("scale_out_bytes_per_s") or acc.scale_out_bandwidth_bytes_per_s
    notes.append(
        _(
            "Cluster as given: {value} devices per scale-up domain, {value2} Gb/s per device between domains."
        ).format(value=domain or _("default"), value2=network / 1e9 * 8 if network else _("default"))
    )
    return replace(acc, scale_up_domain=domain, scale_out_bandwidth_bytes_per_s=network)
