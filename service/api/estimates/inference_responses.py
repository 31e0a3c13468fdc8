"""Response schema of POST /v1/estimates/inference (documentation of engine/inference/response.py's JSON; see
common_responses.py for how the schemas and the answers are kept together)."""

from __future__ import annotations

import marshmallow as ma

from ... import engine
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
from .interval_responses import INFERENCE_INTERVALS, InferenceIntervalBasisSchema, InferenceIntervalsSchema

F = ma.fields


class InferenceWeightsUsedSchema(Answer):
    precision = text(example="int4")
    format = text("Format id, or the plain precision's name", example="awq")
    bits_per_weight = number("Bits per weight of the transformer blocks, scales included")
    embedding_bits_per_weight = number("Bits per weight of the embeddings")
    bytes = number("Weights of the whole model, bytes")
    source = text("Where the bits per weight come from")


class InferenceResolvedModelSchema(Answer):
    name = text("Preset or given name; null when none", nullable=True, example="Llama 3 8B")
    architecture = text(example="transformer")
    total_parameters = number("Parameters, all experts included")
    active_parameters = number("Parameters active per token (MoE: routed k + shared)")
    source = text("Where the parameter count and shape come from", nullable=True)
    weights = section(InferenceWeightsUsedSchema, "The weight format used")
    kv_cache_precision = text(example="fp16")


class InferenceResolvedHardwareSchema(Answer):
    accelerator = text("Accelerator id", example="nvidia-rtx-4090")
    name = text(example="GeForce RTX 4090")
    count = integer("Devices used", example=1)
    engine = text("Serving engine", example="vllm")
    layout = text("`tensor` (tensor parallel) or `layer` (layers split across devices)", example="tensor")
    accelerator_class = text("Class the efficiency tables use for this device", example="consumer-gpu")
    serving_stack = text(
        "The engine's build on this part, vendor family / engine (cuda/vllm, rocm/vllm, gaudi/vllm, neuron/vllm, …): "
        "its factors scale the class tables (docs/formulas.md, 'Serving stacks')",
        example="cuda/vllm",
    )


class InferenceMemoryBreakdownSchema(Answer):
    weights = integer("Bytes per device")
    kv_cache = integer("Bytes per device")
    activations = integer("Bytes per device")
    overhead = integer("Engine reservations, bytes per device")
    draft = integer(
        "Speculative decoding's draft (draft model or MTP module): its weights and KV cache, bytes per device; "
        "0 without speculative decoding"
    )


class InferenceMemoryHumanSchema(Answer):
    per_device = text(example="5.9 GB")
    total = text()
    device_capacity = text()
    headroom = text("Negative (leading '-') when it does not fit")
    weights = text()
    kv_cache = text()
    kv_cache_per_token = text()
    draft = text()


class InferenceMemorySchema(Answer):
    per_device_bytes = num("Memory per device, bytes")
    total_bytes = num("Memory over all devices, bytes")
    device_capacity_bytes = num("Usable memory per device, bytes (Apple: the Metal share)")
    fits = F.Boolean()
    breakdown = section(
        InferenceMemoryBreakdownSchema, "Bytes per device: weights, kv_cache, activations, overhead, draft"
    )
    kv_cache_bytes_per_token = num("KV-cache bytes per token (all layers)")
    max_batch_size = num("Largest batch that fits at this context")
    max_context_tokens = num("Longest context that fits at this batch, tokens")
    human = section(InferenceMemoryHumanSchema, "Human-readable strings")


class LatencyBoundSchema(Answer):
    prefill = text("`compute` or `memory-bandwidth`", example="compute")
    decode = text("`compute` or `memory-bandwidth`; null for sample models", nullable=True)


class InferenceLatencyHumanSchema(Answer):
    OPTIONAL = frozenset({"time_to_first_token", "time_per_output_token"})
    end_to_end = text(example="2.1 s")
    time_to_first_token = text("Token models only; absent when the offered rate is saturated")
    time_per_output_token = text("Token models only; absent when the offered rate is saturated")


class PercentileSecondsSchema(Answer):
    p50 = number("Median, s")
    p90 = number("90th percentile, s")
    p99 = number("99th percentile, s")


class LatencyPercentilesSchema(Answer):
    time_to_first_token_s = section(PercentileSecondsSchema, "Time to first token percentiles, s")
    time_per_output_token_s = section(PercentileSecondsSchema, "Time per output token percentiles, s")


class InferenceLatencySchema(Answer):
    time_to_first_token_s = num(
        "Time to first token, s: prefill of the batch (static scheduler) or the p50 under continuous batching; "
        "null when the offered rate is saturated"
    )
    time_per_output_token_s = num(
        "Time per output token, s: decode step (static) or the p50 under continuous batching; null when saturated"
    )
    end_to_end_s = num(
        "Mean request latency, s: time to first token + (output tokens − 1) × time per output token"
    )
    bound = section(LatencyBoundSchema, "Per phase: memory-bandwidth or compute")
    percentiles = F.Nested(
        LatencyPercentilesSchema,
        allow_none=True,
        metadata={
            "description": "p50/p90/p99 under continuous batching; null for static batches or a saturated rate"
        },
    )
    human = section(InferenceLatencyHumanSchema, "Human-readable strings")


class PoolAnswerSchema(Answer):
    OPTIONAL = frozenset(
        {
            "utilization",
            "prefill_s",
            "queue_wait_s",
            "batch_per_replica",
            "step_s",
        }
    )
    accelerator = text("Catalog id of the pool's part", example="nvidia-h100-sxm-80gb")
    tensor_parallel = integer("Devices per replica (tensor-parallel degree)")
    replicas = integer("Engines in the pool")
    devices = integer("tensor_parallel × replicas")
    capacity_requests_per_second = number(
        "Most requests/s the pool serves (prefill: all steps full of prompts)"
    )
    utilization = number("Prefill pool: offered prompts ÷ capacity")
    prefill_s = number("Prefill pool: one prompt's own prefill steps, seconds")
    queue_wait_s = number("Prefill pool: mean wait before them (M/D/1), seconds")
    batch_per_replica = number("Decode pool: mean decoding requests per replica")
    step_s = number("Decode pool: one decode step (no prefill chunks), seconds")


class KvTransferSchema(Answer):
    bytes_per_request_per_decode_rank = number("Prompt KV each decode rank receives per request, bytes")
    seconds = number("Time the transfer adds to TTFT, seconds")
    link = text("scale-up (both pools in one domain) or scale-out (network)", example="scale-out")
    layerwise = F.Boolean(metadata={"description": "Streamed layer by layer under the prefill"})


class DisaggregationAnswerSchema(Answer):
    prefill = section(PoolAnswerSchema, "The prefill pool")
    decode = section(PoolAnswerSchema, "The decode pool")
    kv_transfer = section(KvTransferSchema, "The prompt's KV cache moved from prefill to decode")
    bottleneck = text("The pool that limits throughput: prefill or decode", example="decode")


class InferenceLoadSchema(Answer):
    OPTIONAL = frozenset(
        {
            "disaggregation",
            "chunked_prefill",
            "mixed_chunk",
            "overlap_schedule",
            "front_end_latency_s",
            "lengths",
            "max_num_batched_tokens",
            "max_num_batched_tokens_source",
            "sustainable_requests_per_second",
            "prefill_queue_saturated",
            "prefill_time_share",
            "max_num_seqs",
            "max_num_seqs_source",
            "kv_admission",
            "kv_tokens_per_request",
            "kv_admission_source",
            "running_requests",
            "queued_requests",
            "queue_wait_s",
            "running_limit",
        }
    )
    scheduler = text("`continuous` or `static`", example="continuous")
    slo_percentile = text("Percentile the latency targets are held at", example="p90")
    requests_per_second_offered = num(
        "The request's Poisson arrival rate, requests/s; null at a fixed concurrency"
    )
    chunked_prefill = F.Boolean(metadata={"description": "Long prompts split over steps (continuous only)"})
    mixed_chunk = F.Boolean(
        metadata={"description": "Prefill chunks share steps with running decodes (continuous only)"}
    )
    overlap_schedule = F.Boolean(
        metadata={
            "description": "Next step launched before the last one's results are read (continuous only)"
        }
    )
    front_end_latency_s = number(
        "Front-end latency counted in every time to first token (HTTP, gateway, tokenization, streaming the first "
        "token), seconds (continuous only; slo.front_end_latency_s)"
    )
    lengths = text(
        "workload.lengths: `varied` (arrivals spread over time) or `fixed` (a closed loop's prompts that share a "
        "prefill step come back together; continuous only)",
        enum=list(engine.LENGTHS),
    )
    max_num_batched_tokens = integer("Tokens per engine step (continuous only)")
    max_num_batched_tokens_source = text("Where the step budget comes from")
    max_num_seqs = integer(
        "Most sequences the engine runs at once: serving.max_num_seqs, or the engine's default on a GPU (vLLM 1024 "
        "on >= 70 GiB other than the A100, else 256; TensorRT-LLM 2048); null: only the KV cache's room limits it",
        nullable=True,
    )
    max_num_seqs_source = text(
        "Where max_num_seqs comes from (`request`, or the engine's default)", nullable=True
    )
    kv_admission = text(
        "How the engine admits requests to its KV cache: `on_demand` (vLLM, SGLang: blocks allocated as tokens are "
        "computed, a request preempted when they run out) or `reserved` (TensorRT-LLM's GUARANTEED_NO_EVICT and "
        "static batches: room for the whole output set aside)",
        enum=["on_demand", "reserved"],
    )
    kv_tokens_per_request = integer(
        "Tokens of KV cache one running request holds on average under that admission, tokens: prompt + output/2 "
        "(vLLM), prompt + 0.535 x output (SGLang), prompt + output (reserved). It sets how many run at once when the "
        "KV cache is the limit (running_limit `kv_cache`); memory.max_batch_size and the planner keep the whole context"
    )
    kv_admission_source = text("Where the admission rule comes from (engine source and default)")
    concurrency = number(
        "Requests in flight: the batch size, or what the arrival rate implies (Little's law)"
    )
    saturated = F.Boolean(
        required=True,
        metadata={
            "description": "The offered rate exceeds what the deployment sustains: no latencies are given"
        },
    )
    sustainable_requests_per_second = num("Highest rate the largest batch that fits sustains, requests/s")
    prefill_queue_saturated = F.Boolean(
        metadata={"description": "Every engine step is full: prompts queue for the token budget"}
    )
    prefill_time_share = number(
        "Share of the engine's time the prefill chunks add to the steps that carry them (what input tokens are "
        "charged; the decode rows of those steps are charged to output tokens); disaggregated: the prefill pool's "
        "share of the devices"
    )
    running_requests = number(
        "Requests the engine runs at once (continuous, co-located): the concurrency, or fewer when the KV cache or "
        "serving.max_num_seqs holds fewer; the rest wait in the engine's queue"
    )
    queued_requests = number(
        "Requests waiting in the engine's queue, on average (concurrency − running_requests)"
    )
    queue_wait_s = number(
        "Seconds each request waits in the engine's queue before its prefill starts (in the time to first token): "
        "(concurrency − running_requests) / requests per second"
    )
    running_limit = text(
        "What caps the requests the engine runs at once, when requests queue or an arrival rate saturates: "
        "`kv_cache` (the largest batch whose KV cache fits at kv_tokens_per_request each) or `max_num_seqs`; null "
        "when nothing does",
        nullable=True,
        enum=["kv_cache", "max_num_seqs", None],
    )
    disaggregation = F.Nested(
        DisaggregationAnswerSchema,
        allow_none=True,
        metadata={
            "description": "serving.disaggregation: both pools and the KV transfer; null when co-located"
        },
    )


class InferenceThroughputSchema(Answer):
    output_tokens_per_second = num("Aggregate over the batch")
    per_sequence_tokens_per_second = num("Tokens/s one sequence sees")
    requests_per_second = num("Completed requests per second")
    samples_per_second = num("Images/samples per second (cnn/vit)")


class InferenceCostSchema(Answer):
    OPTIONAL = frozenset({"priced_as_of"})
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


class DevicesNeededSchema(Answer):
    to_fit = integer("Fewest devices that hold the request; null when no count does", nullable=True)
    to_meet_targets = integer(
        "Fewest devices that meet every target; null without targets or when none does", nullable=True
    )
    targets_met = F.Boolean(
        allow_none=True,
        metadata={"description": "Whether the count used meets the targets; null without targets"},
    )


class SuggestionSchema(Answer):
    OPTIONAL = frozenset({"samples_per_second", "usd_per_million_samples"})
    accelerator = F.String()
    count = F.Integer()
    fits = F.Boolean()
    meets_targets = F.Boolean(allow_none=True)
    output_tokens_per_second = num("Aggregate tokens/s")
    samples_per_second = num("Images/samples per second (cnn/vit/mlp)")
    usd_per_hour = num("USD")
    usd_per_million_output_tokens = num("USD")
    usd_per_million_samples = num("USD (cnn/vit/mlp)")


class InferenceWorkloadSchema(Answer):
    batch_size = integer("Concurrent sequences (samples)")
    prompt_tokens = integer("Tokens per prompt")
    output_tokens = integer("Tokens generated per sequence")


class SourcedFactorSchema(Answer):
    value = number("The factor used")
    source = text("Where it comes from")


class ComputeEfficiencySchema(Answer):
    max = number("Fraction of peak at large batch")
    tokens_at_half = number("Tokens per step at which half of `max` is reached")
    source = text("Where the fit comes from")


class SpeculativeDraftSchema(Answer):
    method = text("mtp or draft_model", example="draft_model")
    basis = text(
        "named: the draft_model's own shape; estimated: the draft cost ratio × the target's weights and KV per "
        "token; mtp: the MTP module",
        example="named",
    )
    name = text("The draft's name; null when estimated", nullable=True)
    parameters = num("The draft's parameters; null when estimated")
    weights_format = text("Weight format of the draft; null when estimated", nullable=True, example="bf16")
    weights_bytes = number("The whole draft's weights, bytes (all devices)")
    kv_cache_bytes_per_token = number("The draft's KV cache per token, bytes (all devices)")
    cost_ratio = number("One draft pass as a share of one target decode step")
    description = text("How the draft's memory and cost were derived")


class InferenceAssumptionsSchema(Answer):
    OPTIONAL = frozenset(
        {
            "moe_expert_efficiency",
            "moe_layer_floor_s",
            "mla_moe_layer_overhead_ratio",
            "calibration",
            "speculative_draft",
        }
    )
    workload = section(InferenceWorkloadSchema, "The workload estimated")
    memory_bandwidth_efficiency = section(SourcedFactorSchema, "Achieved / datasheet bandwidth (MBU)")
    kv_bandwidth_efficiency = number("MBU of the KV-cache reads")
    layer_overhead_s = section(SourcedFactorSchema, "Fixed time per layer per step, s")
    compute_efficiency = section(
        ComputeEfficiencySchema, "Fraction of peak as a function of the step's tokens"
    )
    usd_per_accelerator_hour = num("Price used, USD per device-hour; null when none is known")
    infrastructure_overhead = number("Fraction added to the device price (storage, network, …)")
    moe_expert_efficiency = number(
        "MoE models only: routed-expert streaming rate relative to the dense MBU (1.10 under the fused MoE kernel of "
        "vLLM, SGLang and TensorRT-LLM on GPUs; 0.65 elsewhere)"
    )
    moe_layer_floor_s = number(
        "MoE models only: fixed time of one fused MoE call per MoE layer and forward pass, seconds (on top of "
        "layer_overhead_s)"
    )
    mla_moe_layer_overhead_ratio = number(
        "MLA models with routed experts only: the multiple of layer_overhead_s each MoE layer counts (its extra "
        "kernels; 1.47 for the CUDA-graph engines on GPUs, else 1)"
    )
    intervals = F.Nested(
        InferenceIntervalBasisSchema,
        allow_none=True,
        metadata={"description": "The class behind each metric of `intervals`; null without"},
    )
    calibration = section(CalibrationUsedSchema, "The calibration profile used (only with `calibration`)")
    speculative_draft = section(
        SpeculativeDraftSchema,
        "Speculative decoding only: the draft's memory and cost, and how they were derived",
    )


class InferenceEstimateSchema(Answer):
    OPTIONAL = frozenset({"details", "calibration"})
    model = section(InferenceResolvedModelSchema, "The resolved model", required=True)
    hardware = section(InferenceResolvedHardwareSchema, "The resolved hardware")
    memory = F.Nested(InferenceMemorySchema, required=True)
    latency = F.Nested(InferenceLatencySchema, required=True)
    throughput = F.Nested(InferenceThroughputSchema, required=True)
    load_section = section(
        InferenceLoadSchema,
        "How the engine batches requests and the steady state it reaches",
        required=True,
        data_key="load",
    )
    cost = F.Nested(InferenceCostSchema, required=True)
    intervals = F.Nested(
        InferenceIntervalsSchema,
        allow_none=True,
        required=True,
        metadata={"description": INFERENCE_INTERVALS},
    )
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
    calibration = section(
        CalibrationUsedSchema, "The calibration profile and revision used (only when the request names one)"
    )
