"""Training request → validated TrainingPlan. Every cross-field and physical check lives here.

All problems are collected and raised together as one InvalidRequest with dotted field paths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..architecture import ModelSpec
from ..errors import InvalidRequest
from ..hardware import Accelerator, Catalog
from ..i18n import _, num
from ..models import resolve_model
from ..parallelism import DEVICES_PER_NODE, Parallelism
from ..pricing import resolve_price
from .fit_defaults import default_recompute_note
from .layout_request import check_expert_overlap, parse_parallelism
from .model.checkpoint import CHECKPOINT_BYTES_PER_S_PER_NODE
from .model.framework import default_recomputation, inferred_framework
from .model.goodput import MAX_STRAGGLER_SHARE
from .model.plan import FRAMEWORKS, OPTIMIZERS, RECOMPUTATION, TRAINING_PRECISIONS, TrainingPlan
from .model.recompute import parse_recompute_modules

DEFAULT_SEQUENCE_LENGTH = (
    2048  # GPT-3 / Megatron default context when the model gives none (Brown et al. 2020)
)
DEFAULT_BATCH_TOKENS = 4 * 1024 * 1024  # ~4M tokens per batch (Llama 2 pre-training, Touvron et al. 2023)
DEFAULT_BATCH_SAMPLES = 256  # ResNet-50 reference batch (Goyal et al. 2017 "ImageNet in 1 Hour")
SAMPLE_ARCHITECTURES = ("cnn", "vit")
# training.precision when not given: the first the accelerator supports. bf16 mixed precision is the default of
# Megatron-LM, NeMo and the Llama/OPT runs; fp16 mixed precision with loss scaling (Micikevicius et al. 2018)
# where there is no bf16 (V100, T4); else the 4-byte formats. fp8 is never chosen for the user: it needs a
# recipe (delayed scaling, Transformer Engine) and is asked for explicitly.
DEFAULT_PRECISIONS = ("bf16", "fp16", "tf32", "fp32")


def build_plan(request: Mapping[str, Any], catalog: Catalog) -> TrainingPlan:
    """Validate the request against the model, the catalog and physics; fill defaults."""
    errors: dict[str, list[str]] = {}

    def bad(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    training: Mapping[str, Any] = request.get("training") or {}
    hardware: Mapping[str, Any] = request.get("hardware") or {}
    cost: Mapping[str, Any] = request.get("cost") or {}
    output: Mapping[str, Any] = request.get("output") or {}
    notes: list[str] = []

    model: ModelSpec | None = None
    try:
        model = resolve_model(request.get("model") or {})
    except InvalidRequest as err:
        errors.update(err.errors)
    acc, count = _hardware(hardware, catalog, notes, bad)
    transformer = model is not None and model.shape is not None
    precision, optimizer, multiplier, recompute = _numerics(training, acc, notes, bad, catalog, transformer)
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
    seq, unit, units = _data(training, model, bad, notes)
    if par.context > 1 and (unit != "token" or seq % (2 * par.context)):
        # a causal sequence is cut into 2·cp chunks so each rank gets equal attention work (Megatron-Core CP)
        bad(
            "hardware.parallelism.context",
            _("training.sequence_length must be a multiple of 2 × context ({value}).").format(
                value=2 * par.context
            ),
        )
    gbs, micro = _batch(training, par, seq, unit, bad)
    offload = _offload(training, model, par, bad)
    loss_chunks = _loss_chunks(training, bad)
    framework, compiled, framework_source = _framework(training, par, acc, bad)
    if acc is not None and acc.kind == "tpu" and framework != "megatron":
        notes.append(
            _(
                "training.framework {framework} is a CUDA stack: on a TPU the estimate keeps XLA's kernels and "
                "the framework changes only the loss memory."
            ).format(framework=framework)
        )
    schedule = _schedule(training, hardware, model, unit, count, bad)
    usd, source = resolve_price(cost, acc, catalog, bad)
    overhead = float(cost.get("infrastructure_overhead", 0.0) or 0.0)
    if overhead < 0:
        bad("cost.infrastructure_overhead", _("Must be ≥ 0."))

    if errors:
        raise InvalidRequest(errors)
    assert model is not None and acc is not None
    if usd is None:
        notes.append(
            _("No catalog price for {id}; give cost.usd_per_accelerator_hour for USD figures.").format(
                id=acc.id
            )
        )
    return TrainingPlan(
        model=model,
        accelerator=acc,
        par=par,
        precision=precision,
        optimizer=optimizer,
        optimizer_multiplier=float(multiplier) if multiplier is not None else None,
        recompute=recompute,
        recompute_modules=modules,
        flash_attention=bool(training.get("flash_attention", True)),
        sequence_length=seq,
        global_batch=gbs,
        micro_batch=micro,
        units=units,
        unit=unit,
        usd_per_hour=usd,
        price_source=source,
        infrastructure_overhead=overhead,
        decimals=int(output.get("decimal_places", 1)),
        details=bool(output.get("details", False)),
        notes=tuple(notes),
        offload_layers=offload,
        offload_source="default" if training.get("activation_offload_layers") is None else "given",
        recompute_source="given" if training.get("activation_recomputation") is not None else "default",
        loss_chunks=loss_chunks,
        framework=framework,
        torch_compile=compiled,
        framework_source=framework_source,
        **schedule,
    )


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


def _numerics(
    training: Mapping[str, Any],
    acc: Accelerator | None,
    notes: list[str],
    bad: Any,
    catalog: Catalog | None = None,
    transformer: bool = True,
) -> tuple[str, str, Any, str]:
    """(precision, optimizer, optimizer memory multiplier as given, activation recomputation; its default follows
    the part's stack for a transformer with a known shape, framework.default_recomputation)."""
    if training.get("precision") is None:  # not given: the best the accelerator supports, said in the notes
        precision = default_precision(acc, notes) if acc is not None else DEFAULT_PRECISIONS[0]
        if not precision:
            bad(
                "training.precision",
                _("{name} supports none of {precisions}.").format(
                    name=acc.name if acc else _("The device"), precisions=", ".join(DEFAULT_PRECISIONS)
                ),
            )
    elif (precision := str(training["precision"])) not in TRAINING_PRECISIONS:
        bad(
            "training.precision",
            _("Must be one of {TRAINING_PRECISIONS}.").format(
                TRAINING_PRECISIONS=", ".join(TRAINING_PRECISIONS)
            ),
        )
    elif acc is not None and not acc.supports(precision):
        supported = [p for p in TRAINING_PRECISIONS if acc.supports(p)]
        message = _("{name} has no {precision} support; supported: {value}.").format(
            name=acc.name, precision=precision, value=", ".join(supported) or _("none")
        )
        if precision == "fp4" and catalog is not None:  # few parts have it: say which
            having = sorted(i for i, a in catalog.accelerators.items() if a.supports("fp4"))
            message += " " + _("Accelerators with an fp4 peak in the catalog: {ids}.").format(
                ids=", ".join(having) or _("none")
            )
        bad("training.precision", message)
    optimizer = str(training.get("optimizer", "adamw"))
    if optimizer not in OPTIMIZERS:
        bad("training.optimizer", _("Must be one of {OPTIMIZERS}.").format(OPTIMIZERS=", ".join(OPTIMIZERS)))
    multiplier = training.get("optimizer_memory_multiplier")
    if multiplier is not None and float(multiplier) < 0:
        bad("training.optimizer_memory_multiplier", _("Must be ≥ 0."))
    recompute = training.get("activation_recomputation")
    if recompute is None:  # the stack's own default; "selective" when the modules it recomputes are named
        recompute = (
            "selective"
            if training.get("recompute_modules") is not None
            else default_recomputation(acc, transformer)
        )
        if recompute != "selective":
            notes.append(default_recompute_note(recompute))
    recompute = str(recompute)
    if recompute not in RECOMPUTATION:
        bad(
            "training.activation_recomputation",
            _("Must be one of {RECOMPUTATION}.").format(RECOMPUTATION=", ".join(RECOMPUTATION)),
        )
    return precision, optimizer, multiplier, recompute


def _schedule(
    training: Mapping[str, Any],
    hardware: Mapping[str, Any],
    model: ModelSpec | None,
    unit: str,
    count: int,
    bad: Any,
) -> dict[str, Any]:
    """The plan's utilization, pre-training, checkpoint and validation fields."""
    utilization = hardware.get("utilization")
    if utilization is not None and not 0.0 < float(utilization) <= 1.0:
        bad("hardware.utilization", _("Must be in (0, 1]."))
    pretraining_units = 0.0
    if training.get("include_pretraining"):
        if unit == "sample":
            bad("training.include_pretraining", _("Pre-training phase is defined for token models only."))
        elif model is not None:
            # compute-optimal default D = 20·N (Hoffmann et al. 2022)
            pretraining_units = float(training.get("pretraining_tokens") or 20.0 * model.total_parameters)
    ckpt_interval = training.get("checkpoint_interval_steps")
    if ckpt_interval is not None and int(ckpt_interval) < 1:
        bad("training.checkpoint_interval_steps", _("Must be at least 1."))
    nodes = math.ceil(count / DEVICES_PER_NODE)
    ckpt_bw = float(
        training.get("checkpoint_write_bandwidth_bytes_per_s") or CHECKPOINT_BYTES_PER_S_PER_NODE * nodes
    )
    if ckpt_bw <= 0:
        bad("training.checkpoint_write_bandwidth_bytes_per_s", _("Must be positive."))
    validation: Mapping[str, Any] = training.get("validation") or {}
    val_interval = validation.get("interval_steps")
    val_units = float(validation.get("tokens") or validation.get("samples") or 0.0)
    if val_interval is not None and int(val_interval) < 1:
        bad("training.validation.interval_steps", _("Must be at least 1."))
    return {
        **_goodput_fields(training, bad),
        "pretraining_units": pretraining_units,
        "utilization": float(utilization) if utilization is not None else None,
        "checkpoint_interval": int(ckpt_interval) if ckpt_interval else None,
        "checkpoint_bytes_per_s": ckpt_bw,
        "validation_interval": int(val_interval) if val_interval and val_units > 0 else None,
        "validation_units": val_units,
    }


def _goodput_fields(training: Mapping[str, Any], bad: Any) -> dict[str, Any]:
    """training.goodput (a fraction that replaces the interruption model), or the model's two rates."""
    fields: dict[str, Any] = {}
    given = training.get("goodput")
    if given is not None:
        if not 0.0 < float(given) <= 1.0:
            # "90 %" as a value: a literal "% o" in a msgid reads as a %-format to Babel's compile check
            bad(
                "training.goodput",
                _("Must be in (0, 1]: a fraction (0.9 means {percent} of the wall time steps).").format(
                    percent="90 %"
                ),
            )
        fields["goodput"] = float(given)
    rate = training.get("interruptions_per_device_hour")
    if rate is not None:
        if float(rate) < 0:
            bad("training.interruptions_per_device_hour", _("Must be ≥ 0."))
        fields["interruptions_per_device_hour"] = float(rate)
    restart = training.get("restart_seconds")
    if restart is not None:
        if float(restart) < 0:
            bad("training.restart_seconds", _("Must be ≥ 0."))
        fields["restart_s"] = float(restart)
    slow = training.get("straggler_share")
    if slow is not None:
        if not 0.0 <= float(slow) <= MAX_STRAGGLER_SHARE:
            bad(
                "training.straggler_share",
                _("Must be in [0, {most}]: a fraction of the stepping time.").format(
                    most=MAX_STRAGGLER_SHARE
                ),
            )
        fields["straggler_share"] = float(slow)
    return fields


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


def default_precision(acc: Accelerator, notes: list[str]) -> str:
    """The precision used when the request gives none (DEFAULT_PRECISIONS), said in the notes; "" if none."""
    chosen = next((p for p in DEFAULT_PRECISIONS if acc.supports(p)), "")
    if chosen == "bf16":
        notes.append(
            _("training.precision not given: bf16 mixed precision, the best {name} supports.").format(
                name=acc.name
            )
        )
    elif chosen:
        lacking = ", ".join(p for p in DEFAULT_PRECISIONS[: DEFAULT_PRECISIONS.index(chosen)])
        notes.append(
            (
                _(
                    "training.precision not given: {chosen} mixed precision, the best {name} supports (it has no {lacking})."
                )
                if chosen == "fp16"
                else _(
                    "training.precision not given: {chosen}, the best {name} supports (it has no {lacking})."
                )
            ).format(chosen=chosen, name=acc.name, lacking=lacking)
        )
    return chosen


# The longest published context extension of a RoPE model: YaRN (Peng et al. 2023, arXiv 2309.00071) fine-tuned
# Llama 2 (4,096 tokens) to 128K, 32× its pretrained context; longer sequences are refused as likely typos.
CONTEXT_EXTENSION_LIMIT = 32


def _data(
    training: Mapping[str, Any], model: ModelSpec | None, bad: Any, notes: list[str]
) -> tuple[int, str, float]:
    """(sequence length, unit, training units with epochs applied). A sequence longer than the model's context is a
    context-extension run (Llama 3.1's 128K stage, torchtitan's 256K benchmarks): estimated, with a note, unless the
    model learns absolute positions (no embedding row past its context)."""
    epochs = float(training.get("epochs", 1) or 1)
    if model is not None and model.architecture in SAMPLE_ARCHITECTURES:
        samples = training.get("samples")
        if not samples or float(samples) <= 0:
            bad(
                "training.samples",
                _("Required (> 0) for {architecture} models, which train on samples.").format(
                    architecture=model.architecture
                ),
            )
            samples = 0
        seq = int(model.default_sequence_length or 1)
        return seq, "sample", float(samples or 0) * epochs
    given: int | None = training.get("sequence_length")
    max_ctx = model.shape.max_context_tokens if model is not None and model.shape is not None else None
    if given is None:
        given = (model.default_sequence_length if model is not None else None) or DEFAULT_SEQUENCE_LENGTH
        given = min(given, max_ctx) if max_ctx else given
    seq = int(given)
    if seq < 1:
        bad("training.sequence_length", _("Must be at least 1."))
        seq = 1
    elif (
        max_ctx
        and seq > max_ctx
        and model is not None
        and model.shape
        and model.shape.learned_position_embeddings
    ):
        bad(  # learned absolute positions (BERT, GPT-2/3) have no row past the context: no extension possible
            "training.sequence_length",
            _("Exceeds the model's maximum context of {max_ctx} tokens.").format(max_ctx=max_ctx),
        )
    elif max_ctx and seq > CONTEXT_EXTENSION_LIMIT * max_ctx:
        bad(
            "training.sequence_length",
            _(
                "Exceeds {limit} tokens, {factor} × the model's context of {max_ctx} tokens: the longest published "
                "context extension (YaRN, Peng et al. 2023: Llama 2 from 4K to 128K)."
            ).format(
                limit=CONTEXT_EXTENSION_LIMIT * max_ctx, factor=CONTEXT_EXTENSION_LIMIT, max_ctx=max_ctx
            ),
        )
    elif max_ctx and seq > max_ctx:
        notes.append(
            _(
                "training.sequence_length {seq} is beyond the model's context of {max_ctx} tokens: estimated as a "
                "context-extension run (positions past the pretrained range need RoPE scaling or similar)."
            ).format(seq=num(seq, 0), max_ctx=num(max_ctx, 0))
        )
    tokens = training.get("tokens")
    if tokens is None and training.get("samples"):
        tokens = float(training["samples"]) * seq
    if not tokens or float(tokens) <= 0:
        bad("training.tokens", _("Required (> 0): training tokens (or samples × sequence_length)."))
        tokens = 0
    return seq, "token", float(tokens) * epochs


def _batch(
    training: Mapping[str, Any], par: Parallelism, seq: int, unit: str, bad: Any
) -> tuple[int, int | None]:
    dp = par.data
    gbs = training.get("global_batch_size")
    if gbs is None:
        target = DEFAULT_BATCH_SAMPLES if unit == "sample" else max(1, round(DEFAULT_BATCH_TOKENS / seq))
        gbs = max(dp, math.ceil(target / dp) * dp)
    gbs = int(gbs)
    micro = training.get("micro_batch_size")
    micro = int(micro) if micro is not None else None
    if gbs < 1:
        bad("training.global_batch_size", _("Must be at least 1."))
    elif micro is not None and micro < 1:
        bad("training.micro_batch_size", _("Must be at least 1."))
    elif gbs % (dp * (micro or 1)):
        bad(
            "training.global_batch_size",
            _("Must be divisible by micro_batch_size × data ({value} × {dp} = {value2}).").format(
                value=micro or 1, dp=dp, value2=dp * (micro or 1)
            ),
        )
    return max(gbs, 1), micro
