"""Response schema of POST /v1/estimates/training (documentation of the JSON of engine/training/response.py and
response_assumptions.py; see common_responses.py for how the schemas and the answers are kept together)."""

from __future__ import annotations

import marshmallow as ma

from .common_responses import (
    Answer,
    CalibrationUsedSchema,
    DetailSchema,
    RecommendationSchema,
    integer,
    num,
    number,
    price_source,
    section,
    text,
)
from .interval_responses import TRAINING_INTERVALS, IntervalBasisSchema, TrainingIntervalsSchema

F = ma.fields


class TrainingResolvedModelSchema(Answer):
    name = text("Preset or given name; null when none", nullable=True, example="Llama 2 7B")
    architecture = text(example="transformer")
    total_parameters = number("Parameters, all experts included")
    active_parameters = number("Parameters active per token (MoE: routed k + shared)")
    shape_inferred = F.Boolean(metadata={"description": "The transformer shape was inferred from the count"})
    source = text("Where the parameter count and shape come from", nullable=True)
    notes = F.List(F.String())


class TrainingComputeBreakdownSchema(Answer):
    training = number("Model FLOPs of the training tokens (samples)")
    validation = number("Model FLOPs of validation passes")
    pretraining = number("Model FLOPs of the included pre-training")


class TrainingComputeHumanSchema(Answer):
    total_flops = text(example="2.58e20 FLOPs")
    petaflop_days = text(example="2,985.3 PF-days")
    flops_per_unit = text(example="4.33e10 FLOPs per token")


class TrainingComputeSchema(Answer):
    total_flops = num("Model FLOPs of the whole job (training + validation + pre-training if asked)")
    flops_per_token = num("Model FLOPs per training token (exact: matmuls, causal attention, LM head)")
    hardware_flops = num("FLOPs the hardware executes, including activation recomputation")
    petaflop_days = num("total_flops / (1e15 · 86400)")
    six_nd_flops = num("The 6·N·D convention for comparison (Kaplan et al. 2020)")
    flops_per_sample = num("Model FLOPs per training sample (cnn/vit)")
    breakdown = section(TrainingComputeBreakdownSchema, "FLOPs by phase (training, validation, pretraining)")
    human = section(TrainingComputeHumanSchema, "Human-readable strings")


class TrainingMemoryBreakdownSchema(Answer):
    weights = number("Bytes per device")
    gradients = number("Bytes per device")
    optimizer_states = number("Bytes per device")
    activations = number("Bytes per device")
    overhead = number("CUDA context and fragmentation, bytes per device")


class TrainingMemoryHumanSchema(Answer):
    per_device = text(example="61.2 GB")
    device_capacity = text(example="80 GB")
    headroom = text("Negative (leading '-') when it does not fit", example="18.8 GB")
    weights = text()
    gradients = text()
    optimizer_states = text()
    activations = text()
    overhead = text()


class TrainingMemorySchema(Answer):
    per_device_bytes = num("Peak memory per device, bytes")
    device_capacity_bytes = num("Device memory, bytes")
    fits = F.Boolean()
    headroom_bytes = num("capacity − per-device, bytes (negative when it does not fit)")
    micro_batch_size = F.Integer(
        metadata={"description": "Sequences (samples) per device per forward pass used"}
    )
    breakdown = section(
        TrainingMemoryBreakdownSchema,
        "Bytes per device: weights, gradients, optimizer_states, activations, overhead",
    )
    human = section(TrainingMemoryHumanSchema, "Human-readable strings")


class TrainingTimeBreakdownSchema(Answer):
    compute_s = number("Stepping time, s")
    pipeline_bubble_s = number("Pipeline fill and drain, s")
    communication_s = number("Exposed communication, s (includes activation_offload_s)")
    activation_offload_s = number(
        "Exposed activation copies to and from host memory (training.activation_offload_layers), s; part of "
        "communication_s"
    )
    checkpointing_s = number("Checkpoint writes, s")
    validation_s = number("Validation passes, s")
    interruptions_s = number(
        "Expected time lost to interruptions (failures, maintenance): restarts and re-done work, s"
    )
    stragglers_s = number("Expected time steps wait for their slowest worker (stragglers), s")


class TrainingTimePhasesSchema(Answer):
    training_s = number("Seconds of the training run itself")
    pretraining_s = number("Seconds of the included pre-training")


class TrainingTimeSchema(Answer):
    seconds = num("Wall-clock time, s")
    human = F.String(metadata={"example": "23.4 days"})
    steps = num("Optimizer steps")
    pretraining_steps = num("Optimizer steps of the included pre-training")
    tokens_per_second = num(
        "Training tokens per second while the job runs, as a benchmark measures it (time lost to "
        "interruptions and stragglers excluded; seconds include both)"
    )
    samples_per_second = num("Training samples per second (cnn/vit), while the job runs")
    utilization = num("Model FLOPs utilisation used while stepping, fraction")
    utilization_source = F.String(metadata={"description": "`given`, or how it was predicted"})
    predicted_utilization = num("What the utilisation model predicts for this run, fraction")
    effective_utilization = num("End-to-end MFU including bubble, checkpoints and validation, fraction")
    goodput = number(
        "Stepping and validation time / wall time: what interruptions and checkpoints leave (steps slowed by "
        "stragglers count as stepping, as in an effective-training-time ratio), fraction"
    )
    interruptions = number("Expected interruptions over the run (failures, maintenance and spot evictions)")
    evictions = number(
        "Of the interruptions, spot capacity reclaimed by the provider (0 unless the price is a spot price)"
    )
    interruptions_per_hour = number("The job's expected interruptions per hour of wall time, 1/h")
    breakdown = section(
        TrainingTimeBreakdownSchema,
        "Seconds: compute_s, pipeline_bubble_s, communication_s, checkpointing_s, validation_s, "
        "stragglers_s, interruptions_s",
    )
    phases = section(TrainingTimePhasesSchema, "Seconds per phase: training_s, pretraining_s")


class TrainingCostHumanSchema(Answer):
    accelerator_hours = text(example="1,234.5 H100 SXM5 80GB-hours")
    total = text("USD, or `n/a (no price)`", example="$12,345")


class TrainingCostSchema(Answer):
    OPTIONAL = frozenset({"priced_as_of"})
    accelerator_hours = num("Device-hours of the run")
    usd_per_accelerator_hour = num("USD per device-hour used")
    price_source = price_source(
        "`override` (the request's price), the catalog row used, or null when no price is known"
    )
    instance_type = F.String(allow_none=True, metadata={"description": "The priced offer's instance type"})
    instances = integer("Whole instances paid for (hardware.count / accelerators_per_instance, rounded up)")
    startup_seconds = number("Provisioning to first step, billed (0 for a price given in the request)")
    interruptions_per_instance_hour = number(
        "Evictions per instance-hour of the priced offer (spot capacity; 0 when not reclaimed), 1/h"
    )
    billed_seconds = number(
        "Start-up + run, rounded up to the billing increment, at least the minimum billed"
    )
    billed_accelerator_hours = number("Accelerator-hours paid: whole instances × billed seconds / 3600")
    compute_usd = num("USD: billed accelerator-hours × price")
    infrastructure_usd = num("USD")
    total_usd = num("USD")
    usd_per_million_tokens = num("USD per million training tokens")
    usd_per_million_samples = num("USD per million training samples (cnn/vit)")
    priced_as_of = F.String(
        allow_none=True,
        metadata={"description": "Catalog prices in force on this day (when cost.as_of); null otherwise"},
    )
    human = section(TrainingCostHumanSchema, "Human-readable strings")


class RangeEndSchema(Answer):
    utilization = num("MFU at this end of the range, fraction")
    seconds = num("Wall-clock time, s")
    total_usd = num("USD")
    human = F.String()


class RangeSchema(Answer):
    low = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Fastest/cheapest plausible"})
    high = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Slowest/dearest plausible"})


class ScalingKaplanSchema(Answer):
    alpha_parameters = number("Exponent of L(N) ∝ N^-α")
    alpha_tokens = number("Exponent of L(D) ∝ D^-α")
    loss_ratio_if_parameters_doubled = number("L(2N)/L(N)")
    loss_ratio_if_tokens_doubled = number("L(2D)/L(D)")
    loss_ratio_vs_compute_optimal = number("This run's loss over the compute-optimal split's")


class ScalingSchema(Answer):
    OPTIONAL = frozenset(
        {
            "compute_optimal_loss",
            "compute_optimal_parameters",
            "compute_optimal_tokens",
            "compute_optimal_tokens_for_this_compute",
            "kaplan",
            "loss_optimal_parameters",
            "predicted_loss",
            "tokens_per_parameter",
        }
    )
    tokens_per_parameter = num("Training tokens per parameter (Chinchilla optimum ≈ 20)")
    compute_optimal_tokens = num("Compute-optimal tokens for this model size (Hoffmann et al. 2022)")
    compute_optimal_parameters = num(
        "Compute-optimal parameters for this compute budget (Hoffmann et al. 2022)"
    )
    compute_optimal_tokens_for_this_compute = num(
        "Tokens a compute-optimal model would see with this compute"
    )
    predicted_loss = num("Chinchilla L(N, D) = 1.69 + 406.4/N^0.34 + 410.7/D^0.28, nats/token")
    compute_optimal_loss = num("L at the compute-optimal split of the same compute, nats/token")
    loss_optimal_parameters = num("Parameters minimising L for this compute")
    kaplan = section(
        ScalingKaplanSchema, "Kaplan et al. 2020 power laws (loss ∝ N^-0.076, D^-0.095) as relative figures"
    )
    notes = F.List(F.String())


class BytesPerParameterSchema(Answer):
    weights = number("Bytes per parameter")
    gradients = number("Bytes per parameter")
    optimizer_states = number("Bytes per parameter")


class MemoryOverheadSchema(Answer):
    cuda_context_bytes = number("Per device, bytes: the runtime reserve (CUDA context on GPUs, 0 on TPUs)")
    runtime_reserve_bytes = number(
        "Per device, bytes the runtime takes before the model: the CUDA context on GPUs; 0 on TPUs, whose catalog "
        "capacity is XLA's reported HBM limit"
    )
    fragmentation_fraction = number("Allocator fragmentation, fraction of the rest")


class TrainingEfficiencySchema(Answer):
    peak_flops_per_s = num("Dense peak of the accelerator at this precision, FLOP/s")
    best_gemm_efficiency = number(
        "Best large-GEMM fraction of peak on this accelerator and precision, × the training stack's factor on it"
    )
    pipeline_bubble_fraction = number("(p − 1)/(v·m + p − 1): fill and drain of the pipeline, fraction")


class ParallelismUsedSchema(Answer):
    """Plan points (POST /v1/plans/training) share it and leave out what only an estimate's layout says."""

    OPTIONAL = frozenset({"data_shard", "expert_overlap", "expert_tensor", "pipeline_schedule"})

    data = integer("Data-parallel degree")
    tensor = integer("Tensor-parallel degree")
    pipeline = integer("Pipeline-parallel degree")
    expert = integer(
        "Expert-parallel degree (drawn from the data-parallel ranks; with expert_tensor, from tensor × data)"
    )
    expert_tensor = integer(
        "Tensor-parallel degree of the expert layers (`hardware.parallelism.expert_tensor`; `tensor` when not given)"
    )
    zero_stage = integer("ZeRO stage, 0–3")
    sequence_parallel = F.Boolean()
    virtual_pipeline = integer("Interleaved model chunks per pipeline stage")
    context = integer("Context-parallel degree: ranks each sequence is split over")
    data_shard = integer(
        "Ranks ZeRO shards over: data × context, or the hybrid-sharding group (`hardware.parallelism.data_shard`)"
    )
    pipeline_schedule = text("`1f1b` or `zero_bubble` (ZB-H1)", example="1f1b")
    expert_overlap = F.Boolean(
        metadata={"description": "Whether the expert all-to-all runs behind another micro-batch's compute"}
    )


class AutoChoiceSchema(ma.Schema):
    count = text("`auto` when the planner chose the device count, else `given`", enum=["auto", "given"])
    parallelism = text("`auto` when the planner chose the layout, else `given`", enum=["auto", "given"])
    chosen_count = integer("Devices used")
    chosen_parallelism = F.Nested(ParallelismUsedSchema)
    chosen_micro_batch_size = integer("Micro-batch used")
    objective = text("What the choice minimised")
    deadline_s = num("constraints.deadline in seconds (count auto)")
    configurations_evaluated = integer("Layouts the planner evaluated")


class GoodputAssumptionsSchema(Answer):
    fraction = number("Goodput used: stepping and validation time / wall time, fraction")
    source = text("`given` (training.goodput), or how it was modelled")
    interruptions_per_device_hour = number(
        "Interruptions per device-hour (training.interruptions_per_device_hour)"
    )
    restart_s = number(
        "Seconds from an interruption to training again, lost work aside (training.restart_seconds)"
    )
    evictions_per_device_hour = number(
        "Spot evictions per device-hour: the offer's per instance-hour / accelerators per instance (0 off spot)"
    )
    eviction_restart_s = number("Seconds from an eviction to training again: the offer's start-up, s")
    straggler_share = number(
        "Share of the stepping time lost to stragglers, fraction (training.straggler_share)"
    )
    straggler_source = text("`given`, or where the default comes from")
    checkpoint_interval_steps = integer("Steps between checkpoints; null when none is written", nullable=True)
    checkpoint_interval_source = text("`given`, or `Young/Daly optimum`")
    optimal_checkpoint_interval_steps = integer(
        "Young/Daly optimum √(2·write time·MTBI) in steps; null when the run needs none", nullable=True
    )
    checkpoint_write_s = number("Seconds to write one checkpoint (weights + optimizer states)")


class TrainingAssumptionsSchema(Answer):
    OPTIONAL = frozenset({"auto", "calibration"})
    bytes_per_parameter = section(BytesPerParameterSchema, "Weights, gradients and optimizer states")
    overhead = section(MemoryOverheadSchema, "Memory overheads")
    efficiency = section(TrainingEfficiencySchema, "Peak and efficiency figures")
    parallelism = section(ParallelismUsedSchema, "The layout used")
    precision = text(example="bf16")
    optimizer = text(example="adamw")
    activation_recomputation = text(example="selective")
    recompute_modules = F.List(
        F.String(),
        metadata={
            "description": 'The modules "selective" recomputes (`training.recompute_modules`); empty otherwise'
        },
    )
    flash_attention = F.Boolean()
    framework = text("The training stack the step time assumes (`training.framework`)", example="megatron")
    training_stack = text(
        "Vendor family / framework whose GEMM factor the step uses (cuda/megatron, gaudi/deepspeed, neuron/…, "
        "tpu/maxtext; docs/formulas.md, 'Training stacks')",
        example="cuda/megatron",
    )
    framework_source = text(
        "How the stack was set: `given`, the default (megatron) or inferred from a ZeRO-3 layout (fsdp)",
        example="given",
    )
    torch_compile = F.Boolean(metadata={"description": "Whether the PyTorch model is torch.compile'd"})
    loss_chunks = integer("Chunks the loss is computed in (`training.loss_chunks`; 1: all logits at once)")
    activation_recomputation_source = text(
        "How activation_recomputation was set: `given`, the default (selective; full for a transformer on a TPU) or "
        "chosen on a TPU as the least recomputation that fits (dots before full)",
        example="default",
    )
    activation_offload_layers = integer(
        "Transformer layers per pipeline stage whose saved activations go to host memory "
        "(`training.activation_offload_layers`; 0: none)"
    )
    activation_offload_source = text(
        "How activation_offload_layers was set: `given`, the default (none) or chosen to fit on a Grace part "
        "(GH200, GB200, GB300: the fewest layers that fit when the request names none)",
        example="default",
    )
    attention_kernel = text(
        "`fused` (cuDNN / FlashAttention-3 class, NVIDIA Hopper and Blackwell), `flash2` (FlashAttention-2), `xla` "
        "(TPUs), `vendor` (other parts' own kernels) or `unfused`",
        example="fused",
    )
    sequence_length = integer("Tokens per sequence; null for sample models", nullable=True)
    global_batch_size = integer("Sequences (samples) per optimizer step")
    micro_batch_size = integer("Per device per forward pass")
    micro_batch_source = text("`given`, or how it was chosen")
    gradient_accumulation_steps = integer("Micro-batches per optimizer step per pipeline")
    goodput = section(GoodputAssumptionsSchema, "Interruptions, restarts and checkpoint interval")
    notes = F.List(F.String())
    auto = section(AutoChoiceSchema, 'What hardware.count / hardware.parallelism "auto" chose (only then)')
    intervals = F.Nested(
        IntervalBasisSchema,
        allow_none=True,
        metadata={"description": "The class behind `intervals`; null without"},
    )
    calibration = section(CalibrationUsedSchema, "The calibration profile used (only with `calibration`)")


class TrainingEstimateSchema(Answer):
    OPTIONAL = frozenset({"details", "notes", "calibration"})
    model = section(
        TrainingResolvedModelSchema, "The resolved model (parameter counts, shape, notes)", required=True
    )
    compute = F.Nested(TrainingComputeSchema, required=True)
    memory = F.Nested(TrainingMemorySchema, required=True)
    time = F.Nested(TrainingTimeSchema, required=True)
    cost = F.Nested(TrainingCostSchema, required=True)
    range = F.Nested(
        RangeSchema,
        allow_none=True,
        required=True,
        metadata={"description": "When utilisation is predicted: the spread comparable public runs achieved"},
    )
    assumptions = section(
        TrainingAssumptionsSchema, "Bytes per parameter, overheads and efficiency figures used", required=True
    )
    intervals = F.Nested(
        TrainingIntervalsSchema, allow_none=True, required=True, metadata={"description": TRAINING_INTERVALS}
    )
    scaling = F.Nested(
        ScalingSchema,
        allow_none=True,
        required=True,
        metadata={
            "description": "Scaling laws: compute-optimal size and tokens, predicted loss (token models)"
        },
    )
    recommendations = F.List(F.Nested(RecommendationSchema), required=True)
    details = F.List(
        F.Nested(DetailSchema),
        metadata={"description": "Step-by-step calculation (output.details): present when asked"},
    )
    notes = F.List(F.String(), metadata={"description": "Not sent at present: see assumptions.notes"})
    calibration = section(
        CalibrationUsedSchema, "The calibration profile and revision used (only when the request names one)"
    )
