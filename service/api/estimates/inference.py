"""POST /v1/estimates/inference: request schema (every field with its unit and allowed values)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ...engine.i18n import N_
from ..extensions.fields import Float, Integer, String, fraction_range
from ..models.schemas import ModelSpecField
from .common import PRICE_OVERRIDES, CostSchema, OutputSchema, calibration_field

# one source for every enum: the engine's tuples
WEIGHT_PRECISIONS = list(engine.WEIGHT_PRECISIONS)
KV_PRECISIONS = list(engine.KV_PRECISIONS)
WEIGHT_FORMATS = list(engine.FORMATS)
ENGINES = list(engine.ENGINES)


class WeightsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    precision = String(validate=validate.OneOf(WEIGHT_PRECISIONS), metadata={"example": "fp16"})
    format = String(
        validate=validate.OneOf(WEIGHT_FORMATS),
        metadata={"description": "Quantisation format, with its real bytes per weight", "example": "awq"},
    )


class DeviceCount(ma.fields.Field):
    """A tensor-parallel degree, or "auto" for the fewest devices that fit."""

    default_error_messages = {"invalid": N_('Give an integer from 1 to 1024, or "auto".')}

    def __init__(self, **kwargs):
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault(
            "oneOf",
            [{"type": "integer", "minimum": 1, "maximum": 1024}, {"type": "string", "enum": ["auto"]}],
        )
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if value == "auto":
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
            raise self.make_error("invalid")
        return value


class InferenceHardwareSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerator = String(
        required=True,
        validate=validate.Length(1, 64),
        metadata={"description": "Catalog id (GET /v1/accelerators)", "example": "nvidia-rtx-4090"},
    )
    count = DeviceCount(metadata={"description": 'Tensor-parallel degree, or "auto" (default 1)'})
    apple_metal_memory_fraction = Float(
        validate=fraction_range(0.1, 1),
        metadata={"description": "Share of Apple unified memory Metal may use (default 0.75)"},
    )


class TargetsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    output_tokens_per_second = Float(
        validate=validate.Range(min=0.001, max=1e9),
        metadata={"description": "Aggregate tokens/s (0.001 to 1e9)"},
    )
    time_to_first_token_s = Float(
        validate=validate.Range(min=1e-6, max=86400), metadata={"description": "seconds (1e-6 to 86,400)"}
    )
    time_per_output_token_s = Float(
        validate=validate.Range(min=1e-6, max=3600), metadata={"description": "seconds (1e-6 to 3,600)"}
    )


SCHEDULERS = list(engine.SCHEDULERS)
PERCENTILES = list(engine.PERCENTILES)


class SpeculativeSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    method = String(
        required=True,
        validate=validate.OneOf(list(engine.SPECULATIVE_METHODS)),
        metadata={"description": "mtp: multi-token-prediction heads; draft_model: a separate small model"},
    )
    draft_tokens = Integer(
        validate=validate.Range(1, 8),
        metadata={"description": "Tokens drafted per step, 1 to 8 (default: mtp 1, draft_model 4)"},
    )
    acceptance_rate = Float(
        validate=validate.Range(0.3, 0.95),
        metadata={
            "description": "Per-token acceptance rate, 0.3 to 0.95 (default for mtp 0.85, DeepSeek-V3 report; "
            "required for draft_model)"
        },
    )
    draft_cost_ratio = Float(
        validate=validate.Range(min=0, max=1, min_inclusive=False),
        metadata={
            "description": "One draft pass as a share of one target decode step (default: mtp 1/layers; "
            "draft_model: the named draft's weight bytes ÷ the target's, else 0.05)"
        },
    )
    draft_model = ModelSpecField(
        metadata={
            "description": "method draft_model only: the draft, in any form `model` takes (preset, shape, "
            "parameter count, hf_config); its weights and KV cache are counted on the target's devices. Without "
            "it, the draft's memory is estimated as draft_cost_ratio × the target's weights and KV per token"
        }
    )


class PoolSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerator = String(
        validate=validate.Length(1, 128),
        metadata={"description": "Catalog id of the pool's part (default: hardware.accelerator)"},
    )
    tensor_parallel = Integer(
        validate=validate.Range(1, 1024),
        metadata={
            "description": "Devices per replica of the pool (tensor-parallel degree), 1 to 1,024 (default 1)"
        },
    )
    replicas = Integer(
        required=True,
        validate=validate.Range(1, 10_000),
        metadata={"description": "Engines (replicas) in the pool, 1 to 10,000"},
    )


class DisaggregationSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    prefill = ma.fields.Nested(
        PoolSchema, required=True, metadata={"description": "Engines that run prompts only"}
    )
    decode = ma.fields.Nested(PoolSchema, required=True, metadata={"description": "Engines that only decode"})
    layerwise_kv_transfer = ma.fields.Boolean(
        metadata={
            "description": "Stream the prompt's KV cache layer by layer under the prefill (Splitwise, Mooncake); "
            "default false: sent after the prefill"
        }
    )


class ServingSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    scheduler = String(
        validate=validate.OneOf(SCHEDULERS),
        metadata={
            "description": "continuous: requests join and leave the batch at every engine step, prompts prefilled in "
            "chunks beside running decodes (default for vllm, sglang, tensorrt-llm); static: a whole batch is "
            "prefilled, then decoded (default for the other engines)",
            "example": "continuous",
        },
    )
    chunked_prefill = ma.fields.Boolean(
        metadata={
            "description": "Split long prompts over steps (default: true on vllm and sglang, false on tensorrt-llm)"
        }
    )
    mixed_chunk = ma.fields.Boolean(
        metadata={
            "description": "Prefill chunks share engine steps with the running decodes (default: true on vllm and "
            "tensorrt-llm; false on sglang, whose --enable-mixed-chunk is off: a prompt is prefilled in steps of its "
            "own while the decodes wait)"
        }
    )
    overlap_schedule = ma.fields.Boolean(
        metadata={
            "description": "The engine launches the next step before reading the last one's results, so a new "
            "prompt also waits for the step already queued (default: true on sglang, whose overlap scheduler is on "
            "unless --disable-overlap-schedule; false on vllm without --async-scheduling and on tensorrt-llm)"
        }
    )
    speculative = ma.fields.Nested(
        SpeculativeSchema,
        metadata={
            "description": "Speculative decoding: k drafted tokens verified in one step accept "
            "(1 − α^(k+1))/(1 − α) tokens on average (continuous scheduler)"
        },
    )
    disaggregation = ma.fields.Nested(
        DisaggregationSchema,
        metadata={
            "description": "Separate prefill and decode pools (continuous scheduler; default: co-located): TTFT = "
            "prefill queue + prefill + KV transfer, TPOT from decode-only steps, throughput of the slower pool, "
            "cost of both; batch_size (or workload.requests_per_second) is the whole deployment's, hardware.count "
            "is not used"
        },
    )
    max_num_seqs = Integer(
        validate=validate.Range(1, 100_000),
        metadata={
            "description": "Most requests the engine runs at once (vLLM --max-num-seqs, TensorRT-LLM max_batch_size), "
            "1 to 100,000; beyond it (or beyond what the KV cache holds) requests wait in the engine's queue "
            "(load.queued_requests) and an arrival rate saturates (default on GPUs: vLLM 1024 on >= 70 GiB other "
            "than the A100, else 256; TensorRT-LLM 2048; elsewhere only the KV cache limits it)"
        },
    )
    cuda_graph_max_batch = Integer(
        validate=validate.Range(1, 100_000),
        metadata={
            "description": "Largest decode batch the engine replays as a CUDA graph; larger decode steps launch "
            "their kernels eagerly (SGLang --cuda-graph-max-bs, vLLM max_cudagraph_capture_size), 1 to 100,000 "
            "(default: the engine's for the device: vLLM min(2 x max_num_seqs, 512); SGLang by device memory and tensor degree below 4 / "
            "4 and more: 8 under 20 GiB, 24/80 under 35 GiB, 32/160 under 60 GiB, 256/512 under 160 GiB, 512 "
            "above; TensorRT-LLM not modelled)",
            "example": 512,
        },
    )
    max_num_batched_tokens = Integer(
        validate=validate.Range(16, 1_048_576),
        metadata={
            "description": "Tokens per engine step, decode and prefill together (16 to 1,048,576; default: the "
            "engine's for the device: vLLM 8192 on >= 70 GiB except A100, else 2048; SGLang 2048/8192/16384 by "
            "memory; TensorRT-LLM 8192)",
            "example": 8192,
        },
    )


class InferenceWorkloadRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    lengths = String(
        validate=validate.OneOf(engine.LENGTHS),
        metadata={
            "description": "varied (default): request lengths differ (real traffic, ShareGPT), so a fixed "
            "concurrency's arrivals spread over time; fixed: every request has exactly prompt_tokens and "
            "output_tokens (synthetic benchmarks: vllm bench serve random with --ignore-eos, GenAI-Perf / AIPerf "
            "with stddev 0), so at a fixed concurrency the requests that prefilled in one step come back together "
            "and each prompt waits for its group's prefill step (groups of up to the step's room ÷ prompt_tokens). "
            "Continuous scheduler at a batch_size, prefill and decode co-located; fixed with an arrival rate (Poisson), "
            "the static scheduler or serving.disaggregation is a 422",
            "example": "fixed",
        },
    )

    prefix_hit_rate = Float(
        validate=validate.Range(min=0, max=0.99),
        metadata={
            "description": "Share of each prompt found in the engine's prefix cache (shared system prompts, "
            "multi-turn chats), 0 to 0.99 (default 0; continuous scheduler): only the rest is prefilled. KV memory "
            "is not reduced (each request is counted with its whole context)",
            "example": 0.5,
        },
    )

    requests_per_second = Float(
        validate=validate.Range(min=1e-9, max=1e7, min_inclusive=False),
        metadata={
            "description": "Poisson arrival rate, requests/s (above 0, at most 1e7; continuous scheduler): the "
            "answer gives the concurrency it implies, or saturated with the sustainable rate (batch_size is not "
            "used; the sustainable rate is that of the most requests the engine runs at once: the largest batch that "
            "fits, or serving.max_num_seqs / the engine's default where smaller)",
            "example": 2.5,
        },
    )


def front_end_latency_field() -> Float:
    """slo.front_end_latency_s of the estimate and the serving planner: bounds and default from the engine."""
    low, high = engine.FRONT_END_LATENCY_RANGE
    default = engine.DEFAULT_FRONT_END_LATENCY_S
    return Float(
        validate=validate.Range(min=low, max=high),
        metadata={
            "description": "Latency before the engine in every time to first token: HTTP, gateway, tokenization, "
            f"streaming the first token, seconds ({low:g} to {high:g}; default {default:g}, the median over public "
            "benchmarks at low load; continuous-batching engines)",
            "example": default,
        },
    )


class InferenceSloSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    percentile = String(
        validate=validate.OneOf(PERCENTILES),
        metadata={"description": "Latency percentile the targets hold at (default p90)", "example": "p90"},
    )
    front_end_latency_s = front_end_latency_field()


class InferenceRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    model = ModelSpecField(required=True)
    weights = ma.fields.Nested(WeightsSchema)
    kv_cache_precision = String(
        validate=validate.OneOf(KV_PRECISIONS), metadata={"description": "Default: the activation precision"}
    )
    batch_size = Integer(
        validate=validate.Range(1, 100_000), metadata={"description": "Concurrent sequences", "example": 1}
    )
    prompt_tokens = Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 512})
    output_tokens = Integer(validate=validate.Range(1, 10_000_000), metadata={"example": 256})
    engine = String(validate=validate.OneOf(ENGINES), metadata={"example": "vllm"})
    hardware = ma.fields.Nested(InferenceHardwareSchema, required=True)
    targets = ma.fields.Nested(TargetsSchema)
    serving = ma.fields.Nested(ServingSchema)
    workload = ma.fields.Nested(InferenceWorkloadRequestSchema)
    slo = ma.fields.Nested(InferenceSloSchema)
    cost = ma.fields.Nested(CostSchema)
    output = ma.fields.Nested(OutputSchema)
    calibration = calibration_field()
    prices = PRICE_OVERRIDES
