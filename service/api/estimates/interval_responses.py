"""Response schemas of the estimates' prediction intervals (engine/training/intervals.py,
engine/inference/intervals.py): p10/p90 of what will be measured given the prediction, from the measured residuals
of the request's class (docs/formulas.md, "Prediction intervals")."""

from __future__ import annotations

import marshmallow as ma

from .common_responses import Answer, integer, number, section, text

F = ma.fields

P10 = "10th percentile of the measured value given this prediction, in the unit of the field it bounds"
P90 = "90th percentile of the measured value given this prediction, in the unit of the field it bounds"


class BoundsSchema(Answer):
    p10 = number(P10)
    p90 = number(P90)


def bounds(description: str) -> F.Nested:
    """p10/p90 of one figure, null when the answer has no interval for it."""
    return F.Nested(BoundsSchema, allow_none=True, metadata={"description": description})


class IntervalProfileSchema(Answer):
    id = integer("The calibration profile's id", example=1)
    name = text("The calibration profile's name")
    revision = integer("The profile's revision whose residuals were used", example=1)
    points = integer("The profile's fitted points with a residual of this metric", example=6)
    prior_points = integer(
        "How many points the default class counts for when pooled with the profile's (docs/formulas.md, "
        "'Prediction intervals')",
        example=8,
    )


class IntervalBasisSchema(Answer):
    OPTIONAL = frozenset({"source", "profile"})

    class_ = F.String(
        data_key="class",
        metadata={
            "description": "The residual class whose measured errors set the width: kind/metric/…/stack, or a "
            "parent class when the request's own has fewer than 8 points",
            "example": "training/time/complete_run/cuda",
        },
    )
    points = integer("Public measurements in that class", example=37)
    source = text(
        "Only with a calibration profile: `profile` when the profile's residuals after the fit set this interval "
        "(pooled with the class above as a prior worth `profile.prior_points` points), `defaults` when the "
        "profile has fewer than 2 residuals of this metric and the class alone sets it",
        enum=["profile", "defaults"],
    )
    profile = section(
        IntervalProfileSchema,
        "Only with a calibration profile: the profile, its revision and its points behind it",
    )


class TrainingTimeIntervalsSchema(Answer):
    seconds = bounds("Wall-clock time of the run at p10 and p90, s")


class TrainingCostIntervalsSchema(Answer):
    accelerator_hours = bounds("Accelerator-hours (devices × wall-clock hours) at p10 and p90")
    total_usd = bounds(
        "Total cost at the time's p10 and p90, USD (the cost formula: billing and overhead); null "
        "without a price"
    )


class TrainingIntervalsHumanSchema(Answer):
    time = text(example="8.3 days – 17.2 days")
    total = text("null without a price", nullable=True, example="$153,284.04 – $315,832.03")


class TrainingIntervalsSchema(Answer):
    time = section(TrainingTimeIntervalsSchema, "time.seconds at p10 and p90")
    cost = section(TrainingCostIntervalsSchema, "cost.accelerator_hours and cost.total_usd at p10 and p90")
    human = section(TrainingIntervalsHumanSchema, "Human-readable strings")


class InferenceThroughputIntervalsSchema(Answer):
    output_tokens_per_second = bounds("Output tokens per second of the deployment at p10 and p90")


class InferenceLatencyIntervalsSchema(Answer):
    time_to_first_token_s = bounds("Time to first token at p10 and p90, s")
    time_per_output_token_s = bounds("Time per output token at p10 and p90, s")


class InferenceCostIntervalsSchema(Answer):
    usd_per_million_output_tokens = bounds(
        "USD per million output tokens at p10 and p90 (the price at the throughput's p90 and p10); null without a "
        "price"
    )


class InferenceIntervalsSchema(Answer):
    throughput = section(
        InferenceThroughputIntervalsSchema, "throughput.output_tokens_per_second at p10 and p90"
    )
    latency = section(
        InferenceLatencyIntervalsSchema, "latency.time_to_first_token_s and time_per_output_token_s"
    )
    cost = section(InferenceCostIntervalsSchema, "cost.usd_per_million_output_tokens at p10 and p90")


class PlanLatencyIntervalsSchema(Answer):
    time_to_first_token_s = bounds("One replica's time to first token at p10 and p90, s")
    time_per_output_token_s = bounds("One replica's time per output token at p10 and p90, s")


class PlanThroughputIntervalsSchema(Answer):
    output_tokens_per_second_per_replica = bounds("One replica's output tokens per second at p10 and p90")


class PlanDeploymentIntervalsSchema(Answer):
    latency = section(PlanLatencyIntervalsSchema, "latency.time_to_first_token_s and time_per_output_token_s")
    throughput = section(PlanThroughputIntervalsSchema, "throughput.output_tokens_per_second_per_replica")


def basis(description: str) -> F.Nested:
    return F.Nested(IntervalBasisSchema, allow_none=True, metadata={"description": description})


class InferenceIntervalBasisSchema(Answer):
    output_tokens_per_second = basis(
        "Class behind intervals.throughput.output_tokens_per_second (and the cost)"
    )
    time_to_first_token_s = basis("Class behind intervals.latency.time_to_first_token_s")
    time_per_output_token_s = basis("Class behind intervals.latency.time_per_output_token_s")


TRAINING_INTERVALS = (
    "p10/p90 of the time, accelerator-hours and cost a run measures given this estimate, from the measured "
    "residuals of the request's class, or of the calibration profile the request names pooled with that class "
    "(assumptions.intervals); null when the plan does not fit or the request gives hardware.utilization"
)
INFERENCE_INTERVALS = (
    "p10/p90 of the throughput, TTFT, TPOT and USD per million output tokens measured given this estimate, from the "
    "measured residuals of each metric's class, or of the calibration profile the request names pooled with that "
    "class (assumptions.intervals); null when it does not fit or a rate saturates it"
)
