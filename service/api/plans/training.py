"""POST /v1/plans/training: request and response schemas (units in every name, allowed values in the contract)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ..estimates.common import MAX_PRICE_AGE_DAYS, PRICE_OVERRIDES, QUOTAS, calibration_field
from ..estimates.common_responses import (
    Answer,
    AsIs,
    CalibrationUsedSchema,
    integer,
    num,
    number,
    price_source,
    text,
)
from ..estimates.interval_responses import IntervalBasisSchema, TrainingIntervalsSchema
from ..estimates.training import MAX_DEVICES, RECOMPUTATION, TrainingRequestSchema, TrainingRunSchema
from ..estimates.training_responses import ParallelismUsedSchema, TrainingEstimateSchema
from ..extensions.fields import Deadline, Float, Integer, String, fraction_range
from ..models.schemas import ModelSpecField

F = ma.fields
MAX_LIST = 64
OBJECTIVES = list(engine.PLAN_OBJECTIVES)


def _degrees(description: str, high: int) -> F.List:
    return F.List(
        Integer(validate=validate.Range(1, high)),
        validate=validate.Length(1, MAX_LIST),
        metadata={"description": description},
    )


class TrainingPlanSearchSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerators = F.List(
        String(validate=validate.Length(1, 64)),
        validate=validate.Length(1, 200),
        metadata={
            "description": "Catalog ids to consider. Default: every accelerator with a price in the search"
        },
    )
    providers = F.List(
        String(validate=validate.Length(1, 64)),
        validate=validate.Length(1, MAX_LIST),
        metadata={
            "description": "Providers whose catalog prices to consider (aws, gcp, lambda, …). Default: all"
        },
    )
    pricing_models = F.List(
        String(validate=validate.OneOf(list(engine.PRICING_MODELS))),
        validate=validate.Length(1, 4),
        metadata={
            "description": "Pricing models to consider. Default: on-demand only (spot can be reclaimed "
            "mid-run; reserved needs a commitment)"
        },
    )
    device_counts = _degrees(
        "Device counts to consider. Default: 1, 2, 4, every node of 8 up to 64, then 8 "
        "counts per doubling (≤ 12.5 % apart) up to max_devices",
        MAX_DEVICES,
    )
    min_devices = Integer(validate=validate.Range(1, MAX_DEVICES), metadata={"description": "Default 1"})
    max_devices = Integer(
        validate=validate.Range(1, MAX_DEVICES),
        metadata={
            "description": "Largest device count searched. Default 8192 (constraints.max_devices wins)"
        },
    )
    tensor = _degrees("Tensor-parallel degrees. Default 1, 2, 4, 8", 1024)
    pipeline = _degrees("Pipeline-parallel degrees. Default 1, 2, 4, 8, 16, 32", 4096)
    virtual_pipeline = _degrees(
        "Interleaved 1F1B chunks per stage. Default 1, 2, 4, 8 (pipeline × chunks ≤ layers + 2)", 128
    )
    context = _degrees("Context-parallel degrees. Default 1 (1, 2, 4, 8 from 16K-token sequences)", 1024)
    expert = _degrees("Expert-parallel degrees. Default 1 (MoE: powers of 2 up to min(experts, 64))", 4096)
    zero_stages = F.List(
        Integer(validate=validate.Range(0, 3)),
        validate=validate.Length(1, 4),
        metadata={"description": "ZeRO stages (0–3). Default all four"},
    )
    micro_batch_sizes = _degrees(
        "Micro-batch sizes. Default powers of 2 up to 16K tokens (256 samples)", 1_000_000
    )
    recomputation = F.List(
        String(validate=validate.OneOf(RECOMPUTATION)),
        validate=validate.Length(1, len(RECOMPUTATION)),
        metadata={
            "description": "Activation recomputation modes. Default: training.activation_recomputation "
            "if given, else none, selective, selective_op and full (dots, JAX's policy, only when listed)"
        },
    )


class TrainingPlanConstraintsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    deadline = Deadline(
        metadata={
            "description": "Finish within: seconds, or an ISO 8601 duration (P45D, PT36H; "
            "a year is 365 days, a month 30)"
        }
    )
    budget_usd = Float(
        validate=validate.Range(min=0.01, max=1e12),
        metadata={"description": "Most total USD (compute + infrastructure overhead)"},
    )
    max_devices = Integer(validate=validate.Range(1, MAX_DEVICES), metadata={"description": "Most devices"})
    max_accelerators_per_provider = QUOTAS
    max_price_age_days = MAX_PRICE_AGE_DAYS
    max_startup_share = Float(
        validate=validate.Range(min=0, max=1, min_inclusive=False),
        metadata={
            "description": "Most of a plan's billed time its start-up may take when it spans more than one "
            "instance (fraction; default 0.1: docs/formulas.md, Start-up share). One instance is always allowed"
        },
    )
    min_optimizer_steps = Integer(
        validate=validate.Range(1, 10_000_000),
        metadata={
            "description": "Refuse a run with fewer optimizer steps (tokens / global batch): no default, the "
            "planner keeps the global batch as given (docs/formulas.md, Batch and step sanity)"
        },
    )


class TrainingPlanCostSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    infrastructure_overhead = Float(
        validate=fraction_range(0, 3),
        metadata={
            "description": "Fraction added for storage, network, CPUs (0.15 = +15 %), at most 3; default 0"
        },
    )


class TrainingPlanRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    model = ModelSpecField(required=True)
    training = F.Nested(
        TrainingRunSchema,
        required=True,
        metadata={
            "description": "As in a training estimate. micro_batch_size and activation_recomputation, "
            "when given, are fixed; otherwise searched"
        },
    )
    search = F.Nested(TrainingPlanSearchSchema)
    constraints = F.Nested(TrainingPlanConstraintsSchema)
    objective = String(
        validate=validate.OneOf(OBJECTIVES),
        metadata={
            "description": "cheapest: least total USD; cheapest_p90: least total USD at the p90 of the time "
            "(the plans' intervals; constraints hold the estimate), for a budget that must hold; fastest: least "
            "time; pareto (default): the frontier, results ranked cheapest first"
        },
    )
    results = Integer(validate=validate.Range(1, 100), metadata={"description": "Plans to return. Default 5"})
    cost = F.Nested(TrainingPlanCostSchema)
    prices = PRICE_OVERRIDES
    calibration = calibration_field()


class TrainingPlanInterruptionsSchema(Answer):
    expected = number("Expected interruptions over the run (failures, maintenance and spot evictions)")
    evictions = number("Of which spot capacity reclaimed by the provider (0 off spot)")
    per_hour = number("The job's expected interruptions per hour of wall time, 1/h")
    per_instance_hour = number("The offer's evictions per instance-hour (0 off spot), 1/h")
    lost_seconds = number("Seconds they lose: restarts and re-done work since the last checkpoint")


class TrainingPlanPointSchema(Answer):
    """A plan (best, results, frontier, nearest misses): every property always there (engine/training/planner.py
    `_point`), null where it does not apply; tests/golden/plans.json.gz is the recorded evidence."""

    accelerator = text("Catalog id")
    provider = text("Null when searched without a price (objective fastest)", nullable=True)
    pricing_model = text(nullable=True)
    usd_per_accelerator_hour = num("Catalog price used, USD per accelerator-hour")
    count = integer("Devices")
    instances = integer("Whole instances bought (count / accelerators_per_instance)")
    instance_type = text("The offer's instance type", nullable=True)
    accelerators_per_instance = integer("Accelerators in one instance of the offer")
    startup_seconds = number("Provisioning to first step, billed (the offer's, or its provider's default)")
    interruptions = F.Nested(
        TrainingPlanInterruptionsSchema,
        metadata={"description": "Expected interruptions over the run: failures and, on spot, evictions"},
    )
    billed_seconds = number(
        "Start-up + run, rounded up to the billing increment, at least the minimum billed"
    )
    price_source = price_source("The catalog row priced (its terms, age and stale flag), or override")
    price_stale = F.Boolean(
        allow_none=True,
        metadata={
            "description": "true: the price is older than PRICE_STALE_AFTER_DAYS (may no longer be current)"
        },
    )
    startup_exceeds_run = F.Boolean(
        metadata={
            "description": "true: the offer's start-up is longer than the run (fewer devices cost the same)"
        }
    )
    parallelism = F.Nested(ParallelismUsedSchema)
    micro_batch_size = integer("Sequences (or samples) per device per forward pass")
    activation_recomputation = text(enum=RECOMPUTATION)
    precision = text()
    seconds = number("Wall-clock seconds of the run")
    time = text("Human duration")
    total_usd = num("Total USD (billed compute + infrastructure overhead); null without a price")
    cost = text("Human USD")
    accelerator_hours = number("Devices × hours")
    memory_per_device_bytes = number("Peak bytes per device")
    memory_per_device = text("Human bytes")
    memory_capacity_bytes = number("Usable bytes of one device")
    utilization = number("Predicted model-FLOPs utilization (fraction)")
    intervals = F.Nested(
        TrainingIntervalsSchema,
        allow_none=True,
        metadata={
            "description": "p10/p90 of seconds, accelerator-hours and total USD, as an estimate of the plan has"
        },
    )
    interval_basis = F.Nested(
        IntervalBasisSchema,
        allow_none=True,
        metadata={"description": "The residual class behind `intervals`"},
    )
    estimate_request = AsIs(
        TrainingRequestSchema,
        metadata={"description": "A POST /v1/estimates/training body reproducing this plan"},
    )


class TrainingBestPlanSchema(TrainingPlanPointSchema):
    estimate = F.Nested(
        TrainingEstimateSchema, metadata={"description": "The full training estimate of the plan"}
    )


class TrainingNearestMissSchema(Answer):
    reason = text(
        enum=[
            "does_not_fit",
            "misses_deadline",
            "over_budget",
            "misses_deadline_within_budget",
            "cheapest",
            "no_candidates",
        ]
    )
    message = text()
    plan = F.Nested(TrainingPlanPointSchema, allow_none=True)


class TrainingExcludedAcceleratorSchema(Answer):
    accelerator = text()
    reason = text(enum=["no_price", "precision_unsupported"])
    detail = text()


class TrainingExclusionsSchema(Answer):
    invalid_layout = integer(
        "Layouts the estimate would refuse (degrees not dividing the count, heads, batch…)"
    )
    not_sold = integer(
        "Configurations whose device count the offer does not sell: not whole instances, above its "
        "max_accelerators or the caller's quota, or no valid slice"
    )
    startup_dominates = integer(
        "Configurations on more than one instance whose start-up would take more than "
        "constraints.max_startup_share of their billed time"
    )
    does_not_fit = integer("Configurations whose memory per device exceeds the device")
    misses_deadline = integer("Configurations that fit but take longer than the deadline")
    over_budget = integer("Configurations that fit, meet the deadline, cost more than the budget")
    accelerators = F.List(F.Nested(TrainingExcludedAcceleratorSchema))


class TrainingSearchStatsSchema(Answer):
    configurations_considered = integer("Layouts × offers in the search space")
    configurations_evaluated = integer("Valid layouts × offers evaluated")
    layouts_evaluated = integer("Valid layouts evaluated (time does not depend on the offer)")
    pruned_invalid = integer("Layouts × offers refused before evaluation")
    feasible = integer("Configurations meeting every constraint")
    candidates = integer("Accelerator × recomputation modes searched")
    server_seconds = number("Seconds the search took on the server")
    complete = F.Boolean(
        metadata={
            "description": "false when the request's time budget (REQUEST_BUDGET_SECONDS) ended the search "
            "before every candidate: the answer ranks what was evaluated"
        }
    )


class TrainingPlanConstraintsUsedSchema(Answer):
    deadline_s = num("Deadline in seconds")
    deadline = text(nullable=True)
    budget_usd = num("Budget, USD")
    max_accelerators_per_provider = F.Dict(
        keys=F.String(),
        values=F.Integer(),
        metadata={"description": "The quotas used (provider -> accelerators)"},
    )
    max_price_age_days = num("Oldest price accepted, days")
    min_optimizer_steps = num("Fewest optimizer steps accepted")
    max_startup_share = number("Most of a multi-instance plan's billed time its start-up may take, fraction")


class TrainingPlanSchema(Answer):
    OPTIONAL = frozenset({"calibration"})  # only when the request names a profile

    objective = text(enum=OBJECTIVES)
    calibration = F.Nested(
        CalibrationUsedSchema,
        metadata={"description": "The calibration profile the search used (only when the request names one)"},
    )
    constraints = F.Nested(TrainingPlanConstraintsUsedSchema)
    best = F.Nested(
        TrainingBestPlanSchema, allow_none=True, metadata={"description": "Null when nothing qualifies"}
    )
    results = F.List(
        F.Nested(TrainingPlanPointSchema), metadata={"description": "Best first, for the objective"}
    )
    frontier = F.List(
        F.Nested(TrainingPlanPointSchema),
        metadata={
            "description": "Time-vs-USD Pareto frontier, fastest first (thinned to 40 points, ends kept)"
        },
    )
    excluded = F.Nested(TrainingExclusionsSchema)
    nearest_misses = F.List(
        F.Nested(TrainingNearestMissSchema), metadata={"description": "When nothing qualifies"}
    )
    search = F.Nested(TrainingSearchStatsSchema)
    notes = F.List(F.String())
