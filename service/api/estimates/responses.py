"""Response schemas of the estimate endpoints: base units in every field name, human strings beside.

These schemas document the JSON the engine builds (engine/training/response.py, engine/inference/response.py,
the advice modules, engine/pricing.py); the endpoints send that JSON as it is (`jsonify`), so every field here
is documentation: tests/contract/test_response_schemas.py validates the golden answers against openapi.yaml
with no undocumented property allowed, so the two cannot drift apart.

Only the top-level sections are `required`: a saved scenario keeps the answer of its day (GET
/v1/scenarios/{id} `estimate`), and older answers may lack a nested field added since.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma

F = ma.fields


def num(description: str, **kwargs) -> F.Float:
    """A number that is null when it does not apply (no price, another unit, …)."""
    return F.Float(allow_none=True, metadata={"description": description, **kwargs})


def number(description: str, **kwargs) -> F.Float:
    return F.Float(metadata={"description": description, **kwargs})


def integer(description: str, *, nullable: bool = False, **kwargs) -> F.Integer:
    return F.Integer(allow_none=nullable, metadata={"description": description, **kwargs})


def text(description: str | None = None, *, nullable: bool = False, **kwargs) -> F.String:
    metadata = {"description": description, **kwargs} if description else kwargs
    return F.String(allow_none=nullable, metadata=metadata)


def section(schema: type[ma.Schema], description: str, **kwargs) -> F.Nested:
    return F.Nested(schema, metadata={"description": description}, **kwargs)


class Documented(F.Raw):
    """A value dumped as it is and documented by its metadata alone: a union (oneOf/anyOf) that a marshmallow
    field cannot express. Give `nullable=True` for null (a `null` branch, the OpenAPI 3.0.3 way)."""

    def __init__(self, *, description: str, one_of: list[dict], nullable: bool = False, **kwargs):
        branches = [*one_of, NULL] if nullable else list(one_of)
        # allow_none stays False: apispec would add a type-less `nullable`, which OpenAPI 3.0.3 ignores
        super().__init__(metadata={"description": description, "oneOf": branches}, **kwargs)


class AsIs(F.Nested):
    """Documented as the nested schema (a `$ref`), dumped as it is: a stored JSON document that the schema
    describes but must neither filter nor convert (a document saved by an older version keeps its keys)."""

    # marshmallow's Field and Nested name this method's first parameter differently (hence the ignore)
    def _serialize(self, nested_obj: Any, attr: Any, obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return nested_obj


# OpenAPI 3.0.3 has no `type: "null"`: a branch that accepts null and nothing else (`nullable` needs a type).
NULL = {"type": "object", "nullable": True, "enum": [None]}


def ref(component: str) -> dict:
    return {"$ref": f"#/components/schemas/{component}"}


PRICE_SOURCE_ROW = {
    "type": "object",
    "additionalProperties": False,
    "description": "The catalog price row used (engine/pricing.py): the named provider's cheapest on-demand row, "
    "or the cheapest on-demand row over providers",
    "properties": {
        "provider": {"type": "string", "description": "Cloud or seller", "example": "aws"},
        "instance_type": {"type": "string", "nullable": True, "example": "p5.48xlarge"},
        "region": {"type": "string", "nullable": True, "example": "us-east-1"},
        "pricing_model": {
            "type": "string",
            "description": "on-demand, spot, reserved-1y or reserved-3y",
            "example": "on-demand",
        },
        "as_of": {"type": "string", "nullable": True, "description": "Period the price was listed"},
        "source": {"type": "string", "nullable": True, "description": "Where the price comes from"},
        "effective_from": {
            "type": "string",
            "format": "date",
            "nullable": True,
            "description": "First day of this price (its age counts from it)",
        },
        "age_days": {
            "type": "integer",
            "nullable": True,
            "description": "Days from effective_from to the day priced (today, or cost.as_of)",
        },
        "stale": {
            "type": "boolean",
            "nullable": True,
            "description": "Older than PRICE_STALE_AFTER_DAYS (default 90): the price may no longer be current",
        },
        "note": {"type": "string", "description": "Present when stale: what that means and what to do"},
    },
}
OVERRIDE = {
    "type": "string",
    "enum": ["override"],
    "description": "The request's cost.usd_per_accelerator_hour was used",
}


def price_source(description: str) -> Documented:
    return Documented(description=description, one_of=[OVERRIDE, PRICE_SOURCE_ROW], nullable=True)


class RecommendationExpectedSchema(ma.Schema):
    field = text("Dotted path of the answer field the claim is about", example="memory.fits")
    op = text("Comparison: ==, <, <=, > or >=", example="==")
    value = Documented(
        description="What the field compares against once `change` is applied",
        one_of=[{"type": "number"}, {"type": "boolean"}],
    )


class RecommendationSchema(ma.Schema):
    code = F.String(metadata={"example": "zero_stage"})
    severity = F.String(metadata={"enum": ["info", "warning", "critical"]})
    message = F.String()
    change = F.Dict(
        metadata={
            "description": "JSON Merge Patch (RFC 7386) of the request that applies the advice: any part of "
            "the request body, null deleting a field (a patch, so deliberately an open object)",
            "additionalProperties": True,
        }
    )
    expected = section(
        RecommendationExpectedSchema, "What re-estimating with `change` applied shows (field, op, value)"
    )


class DetailSchema(ma.Schema):
    name = F.String()
    formula = F.String()
    value = Documented(
        description="Number (or text) the step produced", one_of=[{"type": "number"}, {"type": "string"}]
    )
    unit = F.String(allow_none=True)
    source = F.String(allow_none=True)


# --- training -------------------------------------------------------------------------------------------


class TrainingResolvedModelSchema(ma.Schema):
    name = text("Preset or given name; null when none", nullable=True, example="Llama 2 7B")
    architecture = text(example="transformer")
    total_parameters = number("Parameters, all experts included")
    active_parameters = number("Parameters active per token (MoE: routed k + shared)")
    shape_inferred = F.Boolean(metadata={"description": "The transformer shape was inferred from the count"})
    source = text("Where the parameter count and shape come from", nullable=True)
    notes = F.List(F.String())


class TrainingComputeBreakdownSchema(ma.Schema):
    training = number("Model FLOPs of the training tokens (samples)")
    validation = number("Model FLOPs of validation passes")
    pretraining = number("Model FLOPs of the included pre-training")


class TrainingComputeHumanSchema(ma.Schema):
    total_flops = text(example="2.58e20 FLOPs")
    petaflop_days = text(example="2,985.3 PF-days")
    flops_per_unit = text(example="4.33e10 FLOPs per token")


class TrainingComputeSchema(ma.Schema):
    total_flops = num("Model FLOPs of the whole job (training + validation + pre-training if asked)")
    flops_per_token = num("Model FLOPs per training token (exact: matmuls, causal attention, LM head)")
    hardware_flops = num("FLOPs the hardware executes, including activation recomputation")
    petaflop_days = num("total_flops / (1e15 · 86400)")
    six_nd_flops = num("The 6·N·D convention for comparison (Kaplan et al. 2020)")
    flops_per_sample = num("Model FLOPs per training sample (cnn/vit)")
    breakdown = section(TrainingComputeBreakdownSchema, "FLOPs by phase (training, validation, pretraining)")
    human = section(TrainingComputeHumanSchema, "Human-readable strings")


class TrainingMemoryBreakdownSchema(ma.Schema):
    weights = number("Bytes per device")
    gradients = number("Bytes per device")
    optimizer_states = number("Bytes per device")
    activations = number("Bytes per device")
    overhead = number("CUDA context and fragmentation, bytes per device")


class TrainingMemoryHumanSchema(ma.Schema):
    per_device = text(example="61.2 GB")
    device_capacity = text(example="80 GB")
    headroom = text("Negative (leading '-') when it does not fit", example="18.8 GB")
    weights = text()
    gradients = text()
    optimizer_states = text()
    activations = text()
    overhead = text()


class TrainingMemorySchema(ma.Schema):
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


class TrainingTimeBreakdownSchema(ma.Schema):
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


class TrainingTimePhasesSchema(ma.Schema):
    training_s = number("Seconds of the training run itself")
    pretraining_s = number("Seconds of the included pre-training")


class TrainingTimeSchema(ma.Schema):
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
    interruptions = number("Expected interruptions over the run")
    breakdown = section(
        TrainingTimeBreakdownSchema,
        "Seconds: compute_s, pipeline_bubble_s, communication_s, checkpointing_s, validation_s, "
        "stragglers_s, interruptions_s",
    )
    phases = section(TrainingTimePhasesSchema, "Seconds per phase: training_s, pretraining_s")


class TrainingCostHumanSchema(ma.Schema):
    accelerator_hours = text(example="1,234.5 H100 SXM5 80GB-hours")
    total = text("USD, or `n/a (no price)`", example="$12,345")


class TrainingCostSchema(ma.Schema):
    accelerator_hours = num("Device-hours")
    usd_per_accelerator_hour = num("USD per device-hour used")
    price_source = price_source(
        "`override` (the request's price), the catalog row used, or null when no price is known"
    )
    compute_usd = num("USD")
    infrastructure_usd = num("USD")
    total_usd = num("USD")
    usd_per_million_tokens = num("USD per million training tokens")
    usd_per_million_samples = num("USD per million training samples (cnn/vit)")
    priced_as_of = F.String(
        allow_none=True,
        metadata={"description": "Catalog prices in force on this day (when cost.as_of); null otherwise"},
    )
    human = section(TrainingCostHumanSchema, "Human-readable strings")


class RangeEndSchema(ma.Schema):
    utilization = num("MFU at this end of the range, fraction")
    seconds = num("Wall-clock time, s")
    total_usd = num("USD")
    human = F.String()


class RangeSchema(ma.Schema):
    low = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Fastest/cheapest plausible"})
    high = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Slowest/dearest plausible"})


class ScalingKaplanSchema(ma.Schema):
    alpha_parameters = number("Exponent of L(N) ∝ N^-α")
    alpha_tokens = number("Exponent of L(D) ∝ D^-α")
    loss_ratio_if_parameters_doubled = number("L(2N)/L(N)")
    loss_ratio_if_tokens_doubled = number("L(2D)/L(D)")
    loss_ratio_vs_compute_optimal = number("This run's loss over the compute-optimal split's")


class ScalingSchema(ma.Schema):
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


class BytesPerParameterSchema(ma.Schema):
    weights = number("Bytes per parameter")
    gradients = number("Bytes per parameter")
    optimizer_states = number("Bytes per parameter")


class MemoryOverheadSchema(ma.Schema):
    cuda_context_bytes = number("Per device, bytes: the runtime reserve (CUDA context on GPUs, 0 on TPUs)")
    runtime_reserve_bytes = number(
        "Per device, bytes the runtime takes before the model: the CUDA context on GPUs; 0 on TPUs, whose catalog "
        "capacity is XLA's reported HBM limit"
    )
    fragmentation_fraction = number("Allocator fragmentation, fraction of the rest")


class TrainingEfficiencySchema(ma.Schema):
    peak_flops_per_s = num("Dense peak of the accelerator at this precision, FLOP/s")
    best_gemm_efficiency = number("Best large-GEMM fraction of peak on this accelerator and precision")
    pipeline_bubble_fraction = number("(p − 1)/(v·m + p − 1): fill and drain of the pipeline, fraction")


class ParallelismUsedSchema(ma.Schema):
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


class GoodputAssumptionsSchema(ma.Schema):
    fraction = number("Goodput used: stepping and validation time / wall time, fraction")
    source = text("`given` (training.goodput), or how it was modelled")
    interruptions_per_device_hour = number(
        "Interruptions per device-hour (training.interruptions_per_device_hour)"
    )
    restart_s = number(
        "Seconds from an interruption to training again, lost work aside (training.restart_seconds)"
    )
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


class TrainingAssumptionsSchema(ma.Schema):
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


class TrainingEstimateSchema(ma.Schema):
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


# --- inference ------------------------------------------------------------------------------------------


class InferenceWeightsUsedSchema(ma.Schema):
    precision = text(example="int4")
    format = text("Format id, or the plain precision's name", example="awq")
    bits_per_weight = number("Bits per weight of the transformer blocks, scales included")
    embedding_bits_per_weight = number("Bits per weight of the embeddings")
    bytes = number("Weights of the whole model, bytes")
    source = text("Where the bits per weight come from")


class InferenceResolvedModelSchema(ma.Schema):
    name = text("Preset or given name; null when none", nullable=True, example="Llama 3 8B")
    architecture = text(example="transformer")
    total_parameters = number("Parameters, all experts included")
    active_parameters = number("Parameters active per token (MoE: routed k + shared)")
    source = text("Where the parameter count and shape come from", nullable=True)
    weights = section(InferenceWeightsUsedSchema, "The weight format used")
    kv_cache_precision = text(example="fp16")


class InferenceResolvedHardwareSchema(ma.Schema):
    accelerator = text("Accelerator id", example="nvidia-rtx-4090")
    name = text(example="GeForce RTX 4090")
    count = integer("Devices used", example=1)
    engine = text("Serving engine", example="vllm")
    layout = text("`tensor` (tensor parallel) or `layer` (layers split across devices)", example="tensor")
    accelerator_class = text("Class the efficiency tables use for this device", example="consumer-gpu")


class InferenceMemoryBreakdownSchema(ma.Schema):
    weights = integer("Bytes per device")
    kv_cache = integer("Bytes per device")
    activations = integer("Bytes per device")
    overhead = integer("Engine reservations, bytes per device")


class InferenceMemoryHumanSchema(ma.Schema):
    per_device = text(example="5.9 GB")
    total = text()
    device_capacity = text()
    headroom = text("Negative (leading '-') when it does not fit")
    weights = text()
    kv_cache = text()
    kv_cache_per_token = text()


class InferenceMemorySchema(ma.Schema):
    per_device_bytes = num("Memory per device, bytes")
    total_bytes = num("Memory over all devices, bytes")
    device_capacity_bytes = num("Usable memory per device, bytes (Apple: the Metal share)")
    fits = F.Boolean()
    breakdown = section(
        InferenceMemoryBreakdownSchema, "Bytes per device: weights, kv_cache, activations, overhead"
    )
    kv_cache_bytes_per_token = num("KV-cache bytes per token (all layers)")
    max_batch_size = num("Largest batch that fits at this context")
    max_context_tokens = num("Longest context that fits at this batch, tokens")
    human = section(InferenceMemoryHumanSchema, "Human-readable strings")


class LatencyBoundSchema(ma.Schema):
    prefill = text("`compute` or `memory-bandwidth`", example="compute")
    decode = text("`compute` or `memory-bandwidth`; null for sample models", nullable=True)


class InferenceLatencyHumanSchema(ma.Schema):
    end_to_end = text(example="2.1 s")
    time_to_first_token = text("Token models only")
    time_per_output_token = text("Token models only")


class InferenceLatencySchema(ma.Schema):
    time_to_first_token_s = num("Prefill time, s")
    time_per_output_token_s = num("Decode step time, s")
    end_to_end_s = num("Prefill + all decode steps, s")
    bound = section(LatencyBoundSchema, "Per phase: memory-bandwidth or compute")
    human = section(InferenceLatencyHumanSchema, "Human-readable strings")


class InferenceThroughputSchema(ma.Schema):
    output_tokens_per_second = num("Aggregate over the batch")
    per_sequence_tokens_per_second = num("Tokens/s one sequence sees")
    requests_per_second = num("Completed requests per second")
    samples_per_second = num("Images/samples per second (cnn/vit)")


class InferenceCostSchema(ma.Schema):
    usd_per_hour = num("USD per hour for all devices")
    usd_per_million_output_tokens = num("USD")
    usd_per_million_input_tokens = num("USD")
    usd_per_million_samples = num("USD (cnn/vit)")
    price_source = price_source(
        "`override` (the request's price), the catalog row used, or null when no price is known"
    )
    priced_as_of = F.String(
        allow_none=True,
        metadata={
            "description": "Date of the catalog price used (cost.as_of, or the price row's as_of); null for "
            "an override or when no price is known"
        },
    )


class DevicesNeededSchema(ma.Schema):
    to_fit = integer("Fewest devices that hold the request; null when no count does", nullable=True)
    to_meet_targets = integer(
        "Fewest devices that meet every target; null without targets or when none does", nullable=True
    )
    targets_met = F.Boolean(
        allow_none=True,
        metadata={"description": "Whether the count used meets the targets; null without targets"},
    )


class SuggestionSchema(ma.Schema):
    accelerator = F.String()
    count = F.Integer()
    fits = F.Boolean()
    meets_targets = F.Boolean(allow_none=True)
    output_tokens_per_second = num("Aggregate tokens/s")
    samples_per_second = num("Images/samples per second (cnn/vit/mlp)")
    usd_per_hour = num("USD")
    usd_per_million_output_tokens = num("USD")
    usd_per_million_samples = num("USD (cnn/vit/mlp)")


class InferenceWorkloadSchema(ma.Schema):
    batch_size = integer("Concurrent sequences (samples)")
    prompt_tokens = integer("Tokens per prompt")
    output_tokens = integer("Tokens generated per sequence")


class SourcedFactorSchema(ma.Schema):
    value = number("The factor used")
    source = text("Where it comes from")


class ComputeEfficiencySchema(ma.Schema):
    max = number("Fraction of peak at large batch")
    tokens_at_half = number("Tokens per step at which half of `max` is reached")
    source = text("Where the fit comes from")


class InferenceAssumptionsSchema(ma.Schema):
    workload = section(InferenceWorkloadSchema, "The workload estimated")
    memory_bandwidth_efficiency = section(SourcedFactorSchema, "Achieved / datasheet bandwidth (MBU)")
    kv_bandwidth_efficiency = number("MBU of the KV-cache reads")
    layer_overhead_s = section(SourcedFactorSchema, "Fixed time per layer per step, s")
    compute_efficiency = section(
        ComputeEfficiencySchema, "Fraction of peak as a function of the step's tokens"
    )
    usd_per_accelerator_hour = num("Price used, USD per device-hour; null when none is known")
    infrastructure_overhead = number("Fraction added to the device price (storage, network, …)")
    moe_expert_efficiency = number("MoE models only: efficiency of the routed-expert GEMMs")


class InferenceEstimateSchema(ma.Schema):
    model = section(InferenceResolvedModelSchema, "The resolved model", required=True)
    hardware = section(InferenceResolvedHardwareSchema, "The resolved hardware")
    memory = F.Nested(InferenceMemorySchema, required=True)
    latency = F.Nested(InferenceLatencySchema, required=True)
    throughput = F.Nested(InferenceThroughputSchema, required=True)
    cost = F.Nested(InferenceCostSchema, required=True)
    devices_needed = section(
        DevicesNeededSchema, "Devices to fit, and to meet the targets if given", required=True
    )
    suggestions = F.List(F.Nested(SuggestionSchema), required=True)
    recommendations = F.List(F.Nested(RecommendationSchema), required=True)
    assumptions = section(InferenceAssumptionsSchema, "Efficiency factors and their sources")
    details = F.List(
        F.Nested(DetailSchema), metadata={"description": "Step-by-step calculation: present when asked"}
    )
    notes = F.List(F.String(), required=True)
