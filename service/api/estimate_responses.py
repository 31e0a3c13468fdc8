"""Response schemas of the estimate endpoints: base units in every field name, human strings beside."""

from __future__ import annotations

import marshmallow as ma

F = ma.fields


def num(description: str, **kwargs) -> F.Float:
    return F.Float(allow_none=True, metadata={"description": description, **kwargs})


def strings(description: str) -> F.Dict:
    return F.Dict(keys=F.String(), values=F.Raw(), metadata={"description": description})


class RecommendationSchema(ma.Schema):
    code = F.String(metadata={"example": "zero_stage"})
    severity = F.String(metadata={"enum": ["info", "warning", "critical"]})
    message = F.String()
    change = F.Dict(
        metadata={"description": "JSON Merge Patch (RFC 7386) of the request that applies the advice"}
    )
    expected = F.Dict(
        metadata={"description": "What re-estimating with `change` applied shows (field, op, value)"}
    )


class DetailSchema(ma.Schema):
    name = F.String()
    formula = F.String()
    value = F.Raw(metadata={"description": "Number (or text) the step produced"})
    unit = F.String(allow_none=True)
    source = F.String(allow_none=True)


# --- training -------------------------------------------------------------------------------------------


class TrainingComputeSchema(ma.Schema):
    total_flops = num("Model FLOPs of the whole job (training + validation + pre-training if asked)")
    flops_per_token = num("Model FLOPs per training token (exact: matmuls, causal attention, LM head)")
    hardware_flops = num("FLOPs the hardware executes, including activation recomputation")
    petaflop_days = num("total_flops / (1e15 · 86400)")
    six_nd_flops = num("The 6·N·D convention for comparison (Kaplan et al. 2020)")
    flops_per_sample = num("Model FLOPs per training sample (cnn/vit)")
    breakdown = strings("FLOPs by phase (training, validation, pretraining)")
    human = strings("Human-readable strings")


class TrainingMemorySchema(ma.Schema):
    per_device_bytes = num("Peak memory per device, bytes")
    device_capacity_bytes = num("Device memory, bytes")
    fits = F.Boolean()
    headroom_bytes = num("capacity − per-device, bytes (negative when it does not fit)")
    micro_batch_size = F.Integer(
        metadata={"description": "Sequences (samples) per device per forward pass used"}
    )
    breakdown = strings("Bytes per device: weights, gradients, optimizer_states, activations, overhead")
    human = strings("Human-readable strings")


class TrainingTimeSchema(ma.Schema):
    seconds = num("Wall-clock time, s")
    human = F.String(metadata={"example": "23.4 days"})
    steps = num("Optimizer steps")
    pretraining_steps = num("Optimizer steps of the included pre-training")
    tokens_per_second = num("Training tokens per second")
    samples_per_second = num("Training samples per second (cnn/vit)")
    utilization = num("Model FLOPs utilisation used while stepping, fraction")
    utilization_source = F.String(metadata={"description": "`given`, or how it was predicted"})
    predicted_utilization = num("What the utilisation model predicts for this run, fraction")
    effective_utilization = num("End-to-end MFU including bubble, checkpoints and validation, fraction")
    breakdown = strings(
        "Seconds: compute_s, pipeline_bubble_s, communication_s, checkpointing_s, validation_s"
    )
    phases = strings("Seconds per phase: training_s, pretraining_s")


class TrainingCostSchema(ma.Schema):
    accelerator_hours = num("Device-hours")
    usd_per_accelerator_hour = num("USD per device-hour used")
    price_source = F.Raw(metadata={"description": "`override`, or the catalog row used"})
    compute_usd = num("USD")
    infrastructure_usd = num("USD")
    total_usd = num("USD")
    usd_per_million_tokens = num("USD per million training tokens")
    usd_per_million_samples = num("USD per million training samples (cnn/vit)")
    priced_as_of = F.String(
        allow_none=True,
        metadata={"description": "Catalog prices in force on this day (when cost.as_of); null otherwise"},
    )
    human = strings("Human-readable strings")


class RangeEndSchema(ma.Schema):
    utilization = num("MFU at this end of the range, fraction")
    seconds = num("Wall-clock time, s")
    total_usd = num("USD")
    human = F.String()


class RangeSchema(ma.Schema):
    low = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Fastest/cheapest plausible"})
    high = F.Nested(RangeEndSchema, allow_none=True, metadata={"description": "Slowest/dearest plausible"})


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
    kaplan = strings("Kaplan et al. 2020 power laws (loss ∝ N^-0.076, D^-0.095) as relative figures")
    notes = F.List(F.String())


class TrainingEstimateSchema(ma.Schema):
    model = strings("The resolved model (parameter counts, shape, notes)")
    compute = F.Nested(TrainingComputeSchema)
    memory = F.Nested(TrainingMemorySchema)
    time = F.Nested(TrainingTimeSchema)
    cost = F.Nested(TrainingCostSchema)
    range = F.Nested(
        RangeSchema,
        allow_none=True,
        metadata={"description": "When utilisation is predicted: the spread comparable public runs achieved"},
    )
    assumptions = strings("Bytes per parameter, overheads and efficiency figures used")
    scaling = F.Nested(ScalingSchema, allow_none=True)
    recommendations = F.List(F.Nested(RecommendationSchema))
    details = F.List(
        F.Nested(DetailSchema), metadata={"description": "Step-by-step calculation (output.details)"}
    )
    notes = F.List(F.String())


# --- inference ------------------------------------------------------------------------------------------


class InferenceMemorySchema(ma.Schema):
    per_device_bytes = num("Memory per device, bytes")
    total_bytes = num("Memory over all devices, bytes")
    device_capacity_bytes = num("Usable memory per device, bytes (Apple: the Metal share)")
    fits = F.Boolean()
    breakdown = strings("Bytes per device: weights, kv_cache, activations, overhead")
    kv_cache_bytes_per_token = num("KV-cache bytes per token (all layers)")
    max_batch_size = num("Largest batch that fits at this context")
    max_context_tokens = num("Longest context that fits at this batch, tokens")
    human = strings("Human-readable strings")


class InferenceLatencySchema(ma.Schema):
    time_to_first_token_s = num("Prefill time, s")
    time_per_output_token_s = num("Decode step time, s")
    end_to_end_s = num("Prefill + all decode steps, s")
    bound = strings("Per phase: memory-bandwidth or compute")
    human = strings("Human-readable strings")


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
    price_source = F.Raw(metadata={"description": "`override`, or the catalog row used"})
    priced_as_of = F.String(
        allow_none=True,
        metadata={
            "description": "Date of the catalog price used (cost.as_of, or the price row's as_of); null for "
            "an override or when no price is known"
        },
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


class InferenceEstimateSchema(ma.Schema):
    model = strings("The resolved model")
    hardware = strings("The resolved hardware")
    memory = F.Nested(InferenceMemorySchema)
    latency = F.Nested(InferenceLatencySchema)
    throughput = F.Nested(InferenceThroughputSchema)
    cost = F.Nested(InferenceCostSchema)
    devices_needed = strings("Devices to fit, and to meet the targets if given")
    suggestions = F.List(F.Nested(SuggestionSchema))
    recommendations = F.List(F.Nested(RecommendationSchema))
    assumptions = strings("Efficiency factors and their sources")
    details = F.List(F.Nested(DetailSchema))
    notes = F.List(F.String())
