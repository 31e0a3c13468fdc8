"""POST /v1/plans/inference: request schema. Every list is bounded and non-empty, every number is bounded to
a physical range; the engine (inference/plan_request.py) checks what needs the catalog or the model."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ...engine import PRICING_MODELS
from ...engine import SERVING_MAX_BATCH as MAX_BATCH
from ...engine import SERVING_MAX_GROUPS as MAX_GROUPS
from ..estimates.common import PRICE_OVERRIDES, QUOTAS, calibration_field
from ..estimates.inference import ENGINES, KV_PRECISIONS, PERCENTILES, WeightsSchema, front_end_latency_field
from ..extensions.fields import Float, Integer, String, fraction_range
from ..models.schemas import ModelSpecField

MAX_DEVICES_PER_REPLICA = (
    64  # inference/memory.py MAX_DEVICES: the largest tensor-parallel degree or layer split
)


def _unique_list(inner: ma.fields.Field, most: int, description: str, **kwargs) -> ma.fields.List:
    return ma.fields.List(
        inner,
        validate=validate.Length(min=1, max=most),
        metadata={"description": f"{description} (1 to {most} entries)", **kwargs},
    )


class PlanWorkloadSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    requests_per_second = Float(
        validate=validate.Range(min=1e-6, max=1e7),
        metadata={
            "description": "Demand in requests/s (1e-6 to 1e7); or give output_tokens_per_second",
            "example": 50,
        },
    )
    output_tokens_per_second = Float(
        validate=validate.Range(min=1e-6, max=1e10),
        metadata={"description": "Demand in generated tokens/s (1e-6 to 1e10); or give requests_per_second"},
    )
    prompt_tokens = Integer(
        validate=validate.Range(1, 10_000_000),
        metadata={"description": "Per request (default 512)", "example": 512},
    )
    output_tokens = Integer(
        validate=validate.Range(1, 10_000_000),
        metadata={"description": "Per request (default 256)", "example": 256},
    )
    prefix_hit_rate = Float(
        validate=validate.Range(min=0, max=0.99),
        metadata={
            "description": "Share of each prompt found in the prefix cache, 0 to 0.99 (default 0): continuous-"
            "batching engines prefill only the rest",
            "example": 0.5,
        },
    )


class SloSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    time_to_first_token_s = Float(
        required=True,
        validate=validate.Range(min=1e-4, max=3600),
        metadata={"description": "Time to first token objective, seconds (1e-4 to 3,600)", "example": 1.0},
    )
    time_per_output_token_s = Float(
        required=True,
        validate=validate.Range(min=1e-5, max=60),
        metadata={"description": "Time per output token objective, seconds (1e-5 to 60)", "example": 0.04},
    )
    percentile = String(
        validate=validate.OneOf(list(PERCENTILES)),
        metadata={
            "description": "Latency percentile both objectives hold at, under continuous batching (default p90)",
            "example": "p90",
        },
    )
    front_end_latency_s = front_end_latency_field()
    max_utilization = Float(
        validate=fraction_range(0.05, 1),
        metadata={
            "description": "Busiest share of its capacity a replica may run at (0.05 to 1, default 1): headroom "
            "for queueing, which the batching model does not include"
        },
    )


class PlanSearchSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerators = _unique_list(
        String(validate=validate.Length(1, 64)),
        64,
        "Catalog ids to consider (default: every accelerator; each named one must have a price)",
        example=["nvidia-h100-sxm-80gb", "nvidia-l40s"],
    )
    providers = _unique_list(
        String(validate=validate.Length(1, 64)),
        16,
        "Providers whose prices count (default: all)",
        example=["aws"],
    )
    pricing_models = _unique_list(
        String(validate=validate.OneOf(list(PRICING_MODELS))),
        len(PRICING_MODELS),
        "Pricing models to price each provider on (default: its on-demand price, else the first model it lists); "
        "spot fleets add the replicas evictions take down",
        example=["on-demand", "spot"],
    )
    engines = _unique_list(String(validate=validate.OneOf(ENGINES)), len(ENGINES), "Engines (default: all)")
    devices_per_replica = _unique_list(
        Integer(validate=validate.Range(1, MAX_DEVICES_PER_REPLICA)),
        16,
        f"Devices per replica: tensor-parallel degrees or layer splits, 1 to {MAX_DEVICES_PER_REPLICA} "
        "(default 1, 2, 4, 8)",
    )
    formats = _unique_list(
        ma.fields.Nested(WeightsSchema),
        12,
        "Weight formats to consider, each as an estimate's `weights` (default: the request's `weights`, else "
        "bf16, fp8, int8 and int4 in each engine's usual format)",
    )
    kv_cache_precisions = _unique_list(
        String(validate=validate.OneOf(KV_PRECISIONS)),
        len(KV_PRECISIONS),
        "KV-cache precisions (default: each engine's default for the weights)",
    )
    max_batch_size = Integer(
        validate=validate.Range(1, MAX_BATCH),
        metadata={
            "description": f"Largest batch per replica searched, 1 to {MAX_BATCH} (default 256); an engine's default "
            "max_num_seqs caps it where smaller (vLLM 256 on GPUs under 70 GiB and the A100: exclusions."
            "above_max_num_seqs)"
        },
    )
    max_replicas = Integer(
        validate=validate.Range(1, 1_000_000),
        metadata={"description": "Most replicas a plan may use (default 10,000)"},
    )
    disaggregation = ma.fields.Boolean(
        metadata={
            "description": "Also search separate prefill and decode pools of each accelerator, engine and format "
            "at any two of the searched tensor degrees (default false: the search is about twice as long)"
        }
    )


class PlanCostSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    infrastructure_overhead = Float(
        validate=fraction_range(0, 3),
        metadata={
            "description": "Fraction added for storage, network, CPUs (0.15 = +15 %), at most 3; default 0"
        },
    )
    as_of = ma.fields.Date(
        metadata={"description": "Price with the catalog prices in force on this day (ISO date)"}
    )


class ServingConstraintsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    max_accelerators_per_provider = QUOTAS


class PlanOutputSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    frontier_points = Integer(
        validate=validate.Range(1, 100),
        metadata={"description": "Most frontier points returned (1 to 100, default 20)"},
    )


class InferencePlanRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    model = ModelSpecField(required=True)
    weights = ma.fields.Nested(
        WeightsSchema, metadata={"description": "The one format to plan, unless search.formats"}
    )
    workload = ma.fields.Nested(PlanWorkloadSchema, required=True)
    slo = ma.fields.Nested(SloSchema, required=True)
    search = ma.fields.Nested(
        PlanSearchSchema,
        metadata={
            "description": f"The space searched; at most {MAX_GROUPS:,} deployment groups (accelerators × engines × "
            "formats × KV precisions × devices per replica), else 422 with the bound"
        },
    )
    cost = ma.fields.Nested(PlanCostSchema)
    output = ma.fields.Nested(PlanOutputSchema)
    constraints = ma.fields.Nested(ServingConstraintsSchema)
    prices = PRICE_OVERRIDES
    calibration = calibration_field()
