"""Response schema of POST /v1/plans/inference (documentation of engine/inference/plan_response.py's JSON:
tests/api/test_plans_inference.py validates real answers against openapi.yaml with no undocumented property)."""

from __future__ import annotations

import marshmallow as ma

from ...engine import SERVING_PLAN_REASONS as REASONS
from ..estimates.common_responses import (
    Answer,
    AsIs,
    CalibrationUsedSchema,
    integer,
    num,
    number,
    price_source,
    section,
    text,
)
from ..estimates.inference import InferenceRequestSchema
from ..estimates.inference_responses import LatencyPercentilesSchema
from ..estimates.interval_responses import InferenceIntervalBasisSchema, PlanDeploymentIntervalsSchema

F = ma.fields


class PlanWeightsSchema(Answer):
    precision = text("Bit class of the weights", example="fp8")
    format = text("The engine's reading of the format (estimate's model.weights.format)", example="fp8")


class PlanLatencySchema(Answer):
    time_to_first_token_s = number(
        "Time to first token, seconds: the p50 under continuous batching (vLLM, SGLang, TensorRT-LLM), the prefill "
        "of one full batch for engines that batch statically"
    )
    time_per_output_token_s = number(
        "Time per output token, seconds: the p50 under continuous batching, one decode step at the batch size "
        "for static batches"
    )
    end_to_end_s = number("Mean TTFT + (output_tokens − 1) × mean TPOT, seconds")
    percentile = F.String(
        allow_none=True,
        metadata={
            "description": "The percentile the objectives were checked at (slo.percentile); null for static "
            "batches, whose every request sees the same latencies",
            "example": "p90",
        },
    )
    percentiles = F.Nested(
        LatencyPercentilesSchema,
        allow_none=True,
        metadata={
            "description": "p50/p90/p99 TTFT and TPOT, seconds, under continuous batching; null for static batches"
        },
    )
    human = text("TTFT, TPOT and end-to-end time, readable")


class PlanThroughputSchema(Answer):
    requests_per_second_per_replica = number("batch ÷ end-to-end time (the estimate's requests_per_second)")
    output_tokens_per_second_per_replica = num("The estimate's output_tokens_per_second")
    fleet_requests_per_second = number("Replicas × requests_per_second_per_replica")
    utilization = number("Demand ÷ fleet capacity")


class PlanMemorySchema(Answer):
    per_device_bytes = number("bytes per device at the batch size")
    capacity_bytes = number("usable bytes per device under the engine's budget")
    fits = F.Boolean(metadata={"description": "Always true for a plan"})


class PlanAtCapacitySchema(Answer):
    usd_per_hour_per_replica = number("USD per hour of one replica")
    usd_per_million_input_tokens = number("One fully busy replica, prefill share (= the estimate's figure)")
    usd_per_million_output_tokens = number("One fully busy replica, decode share")
    usd_per_million_output_tokens_all_time = num(
        "One fully busy replica, all serving time charged to output tokens (= the estimate's figure)"
    )


class PlanCostFiguresSchema(Answer):
    usd_per_hour = number("USD per hour of the whole fleet")
    usd_per_accelerator_hour = number("The provider's price per accelerator-hour")
    usd_per_million_input_tokens = number(
        "At the workload's demand: fleet cost × prefill share ÷ input tokens"
    )
    usd_per_million_output_tokens = number(
        "At the workload's demand: fleet cost × decode share ÷ output tokens"
    )
    usd_per_request = number("Fleet cost per request served at the demand")
    prefill_share = number("TTFT ÷ end-to-end time: the share of device time spent in prefill")
    at_capacity = section(PlanAtCapacitySchema, "The same figures for one fully busy replica")
    infrastructure_overhead = number("Fraction added to the price")
    price_source = price_source("The catalog row used")


class PlanEvictionsSchema(Answer):
    per_instance_hour = number(
        "The offer's evictions per instance-hour (spot capacity reclaimed; 0 off spot), 1/h"
    )
    fleet_per_hour = number("Evictions per hour across the fleet's instances, 1/h")
    replica_down_share = number(
        "Share of the time one replica is down: evictions of its instances × the offer's start-up, fraction"
    )
    extra_replicas = integer(
        "Replicas added so that the capacity evictions leave still serves the demand at max_utilization"
    )


class DeploymentSchema(Answer):
    accelerator = text("Catalog id", example="nvidia-h100-sxm-80gb")
    name = text("Accelerator name")
    provider = text("Provider whose price is used (the cheapest listing this accelerator)")
    pricing_model = text(
        "The priced row's pricing model; null for a price given in the request", nullable=True
    )
    engine = text("Serving engine", example="vllm")
    weights = section(PlanWeightsSchema, "Weight format")
    kv_cache_precision = text("KV-cache precision")
    devices_per_replica = integer("Devices in one replica")
    tensor_parallel = integer("Tensor-parallel degree (1 for engines that split layers)")
    layout = text("tensor (vLLM, TensorRT-LLM) or layer (llama.cpp, transformers)")
    replicas = integer("Replicas serving the demand")
    total_devices = integer("replicas × devices_per_replica")
    instances = integer("Whole instances bought: total_devices / accelerators_per_instance, rounded up")
    instance_type = text("The offer's instance type", nullable=True)
    accelerators_per_instance = integer("Accelerators in one instance of the offer")
    price_stale = F.Boolean(
        allow_none=True,
        metadata={
            "description": "true: the price is older than PRICE_STALE_AFTER_DAYS (may no longer be current)"
        },
    )
    evictions = section(
        PlanEvictionsSchema, "Capacity lost to spot evictions, and the replicas that make it up"
    )
    batch_size = integer("Concurrent sequences per replica")
    concurrency = integer("Concurrent sequences in the fleet")
    latency = section(PlanLatencySchema, "Latency in the batching model")
    throughput = section(PlanThroughputSchema, "Capacity")
    memory = section(PlanMemorySchema, "Memory per device")
    cost = section(PlanCostFiguresSchema, "Cost")
    intervals = section(
        PlanDeploymentIntervalsSchema,
        "p10/p90 of one replica's TTFT, TPOT and output tokens/s from the measured residuals of each metric's class",
    )
    interval_basis = section(InferenceIntervalBasisSchema, "The class behind each metric of `intervals`")
    estimate_request = AsIs(
        InferenceRequestSchema,
        metadata={
            "description": "POST /v1/estimates/inference body for one replica: reproduces these numbers"
        },
    )


class NearestMissSchema(Answer):
    objective = text(
        "What came closest: time_to_first_token_s, time_per_output_token_s, cheapest_meeting_ttft, "
        "cheapest_meeting_tpot, replicas, memory or search_space"
    )
    message = text("The miss, readable")
    value = num("Its value (seconds, or replicas); null for memory")
    deployment = F.Nested(DeploymentSchema, allow_none=True, metadata={"description": "Where it was reached"})


ExclusionsSchema = Answer.from_dict(
    {r: integer(f"Configurations excluded: {r.replace('_', ' ')}") for r in REASONS},
    name="PlanExclusionsSchema",
)


class BatchRangeSchema(Answer):
    min = integer("Smallest batch searched")
    max = integer("Largest batch searched")


class PlanSearchStatsSchema(Answer):
    configurations_considered = integer("accelerator × provider × engine × format × KV × devices × batch")
    configurations_evaluated = integer("(group, batch) pairs run through the vectorised model")
    configurations_feasible = integer("Configurations meeting every objective")
    deployment_groups = integer("accelerators × engines × formats × KV precisions × devices per replica")
    groups_evaluated = integer("Groups that passed the engine, format, KV, device-count and price checks")
    batch_sizes = section(BatchRangeSchema, "Batch sizes searched per group")
    accelerators = integer("Accelerators searched")
    server_seconds = number("Server time of the search")
    complete = F.Boolean(
        metadata={
            "description": "false when the request's time budget (REQUEST_BUDGET_SECONDS) ended the search "
            "before every deployment group: the answer ranks what was evaluated"
        }
    )


class PlanWorkloadEchoSchema(Answer):
    requests_per_second = number("Demand")
    input_tokens_per_second = number("Demand × prompt_tokens")
    output_tokens_per_second = number("Demand × output_tokens")
    prompt_tokens = integer("Per request")
    output_tokens = integer("Per request")


class PlanSloEchoSchema(Answer):
    time_to_first_token_s = number("Objective")
    time_per_output_token_s = number("Objective")
    max_utilization = number("Headroom")
    percentile = text("The latency percentile the objectives hold at (p50, p90 or p99)", example="p90")
    front_end_latency_s = number(
        "Front-end latency counted in every time to first token (HTTP, gateway, tokenization), seconds"
    )
    basis = text("What the objectives are measured on")


class PlanPoolSchema(ma.Schema):
    tensor_parallel = integer("Devices per replica of the pool")
    replicas = integer("Engines in the pool")
    utilization = num("Prefill pool: demand ÷ its capacity (the M/D/1 queue's load)")
    batch_size = integer(
        "Decode pool: the batch per replica the pool was sized at (the objective's worst case)"
    )


class PlanPoolsLatencySchema(ma.Schema):
    time_to_first_token_s = num(
        "At slo.percentile: front end + prefill queue + prefill + KV transfer, seconds"
    )
    time_per_output_token_s = num("At slo.percentile: one decode-only step, seconds")
    end_to_end_s = number("Mean TTFT + (output_tokens − 1) × TPOT, seconds")
    kv_transfer_s = num("What moving the prompt's KV cache adds to TTFT, seconds")


class PlanPoolsCostSchema(ma.Schema):
    usd_per_hour = number("USD per hour of both pools")
    prefill_usd_per_hour = number("USD per hour of the prefill pool")
    usd_per_request = number("Cost per request at the demand")
    usd_per_million_input_tokens = number("The prefill pool's cost ÷ input tokens at the demand")
    usd_per_million_output_tokens = number("The decode pool's cost ÷ output tokens at the demand")


class PoolsDeploymentSchema(ma.Schema):
    accelerator = text("Catalog id (both pools)", example="nvidia-h100-sxm-80gb")
    name = text("Accelerator name")
    provider = text("Provider whose price is used")
    engine = text("Serving engine", example="vllm")
    weights = section(PlanWeightsSchema, "Weight format")
    kv_cache_precision = text("KV-cache precision")
    prefill = section(PlanPoolSchema, "Engines that run prompts only")
    decode = section(PlanPoolSchema, "Engines that only decode")
    total_devices = integer("Devices of both pools")
    latency = section(PlanPoolsLatencySchema, "The single estimate's figures at the demand")
    cost = section(PlanPoolsCostSchema, "Cost")
    estimate_request = AsIs(
        InferenceRequestSchema,
        metadata={
            "description": "POST /v1/estimates/inference body with serving.disaggregation and the demand as "
            "workload.requests_per_second: reproduces these numbers"
        },
    )


class DisaggregatedSchema(Answer):
    offered = F.Boolean(
        metadata={
            "description": "Whether disaggregated prefill/decode pools were searched (search.disaggregation)"
        }
    )
    wins = F.Boolean(
        allow_none=True,
        metadata={
            "description": "Whether the pools are cheaper than every co-located plan; null when not searched"
        },
    )
    reason = text("Why")
    plan = F.Nested(
        PoolsDeploymentSchema,
        allow_none=True,
        metadata={"description": "The cheapest pair of pools that meets the objectives"},
    )


class ServingPlanSchema(ma.Schema):
    calibration = F.Nested(
        CalibrationUsedSchema,
        metadata={"description": "The calibration profile the search used (only when the request names one)"},
    )
    feasible = F.Boolean(
        required=True, metadata={"description": "Whether any deployment meets every objective"}
    )
    plan = F.Nested(
        DeploymentSchema, allow_none=True, required=True, metadata={"description": "The cheapest"}
    )
    frontier = F.List(
        F.Nested(DeploymentSchema),
        required=True,
        metadata={"description": "Cost vs end-to-end latency Pareto points"},
    )
    disaggregated = F.Boolean(
        required=True,
        metadata={
            "description": "true: separate prefill and decode pools (disaggregated_serving.plan) are the cheapest "
            "answer; `plan` stays the cheapest co-located deployment"
        },
    )
    nearest_misses = F.List(F.Nested(NearestMissSchema), required=True)
    exclusions = section(ExclusionsSchema, "Configurations excluded, by first failing reason", required=True)
    search = section(PlanSearchStatsSchema, "Search statistics", required=True)
    workload = section(PlanWorkloadEchoSchema, "The workload planned", required=True)
    slo = section(PlanSloEchoSchema, "The objectives", required=True)
    disaggregated_serving = section(DisaggregatedSchema, "Separate prefill/decode pools", required=True)
    notes = F.List(F.String(), required=True)
    priced_as_of = text("cost.as_of when given")
