"""Request parts shared by the training and inference estimates: cost and output options."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ..extensions.fields import Boolean, Float, Integer, String, fraction_range

PROVIDER_EXAMPLE = "aws"


class CostSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    provider = String(
        validate=validate.Length(1, 64),
        metadata={
            "description": "Use this provider's catalog price (aws, gcp, azure, lambda, runpod, …)",
            "example": "aws",
        },
    )
    pricing_model = String(
        validate=validate.OneOf(list(engine.PRICING_MODELS)),
        metadata={
            "description": "Use only catalog prices of this pricing model (on-demand, spot, reserved-1y, "
            "reserved-3y); with "
            "`provider`, that provider's cheapest row of it. Default: on-demand where listed",
            "example": "spot",
        },
    )
    region = String(
        validate=validate.Length(1, 64),
        metadata={
            "description": "Use only catalog prices of this region (us-east-1, …)",
            "example": "us-east-1",
        },
    )
    instance_type = String(
        validate=validate.Length(1, 128),
        metadata={"description": "Use only catalog prices of this instance type", "example": "p5.48xlarge"},
    )
    covers = String(
        validate=validate.OneOf(list(engine.COVERS)),
        metadata={
            "description": "instance (default): prices of whole instances; accelerator: GPU-only rows (the VM "
            "billed apart, e.g. GCP's GPU SKUs), used only when asked",
            "example": "instance",
        },
    )
    usd_per_accelerator_hour = Float(
        validate=validate.Range(min=0.0001, max=engine.MAX_PRICE_OVERRIDE),
        metadata={
            "description": "Override the catalog: USD per accelerator-hour (0.0001 to 10,000)",
            "example": 2.49,
        },
    )
    infrastructure_overhead = Float(
        validate=fraction_range(0, 3),
        metadata={
            "description": "Fraction added for storage, network, CPUs (0.15 = +15 %), at most 3; default 0",
            "example": 0.1,
        },
    )
    as_of = ma.fields.Date(
        metadata={"description": "Price the estimate with the catalog prices in force on this day (ISO date)"}
    )


MAX_QUOTA = 10_000_000  # accelerators at one provider: above any cluster built

# A plan's own prices for parts the catalog does not price, or at the caller's rate (engine: prices).
PRICE_OVERRIDES = ma.fields.Dict(
    keys=ma.fields.String(),  # any text: the engine refuses an id not in the catalog (422 naming prices.<id>)
    values=Float(validate=validate.Range(min=0.0001, max=engine.MAX_PRICE_OVERRIDE)),
    validate=validate.Length(max=200),
    metadata={
        "description": "USD per accelerator-hour by catalog id, replacing the catalog's offers for that part "
        "(0.0001 to 10,000; an unknown id is refused)",
        "example": {"nvidia-h800": 2.0},
    },
)
QUOTAS = ma.fields.Dict(
    keys=ma.fields.String(),  # any text: a provider without offers is limited by nothing
    values=Integer(validate=validate.Range(0, MAX_QUOTA)),
    validate=validate.Length(max=64),
    metadata={
        "description": "Most accelerators you may get at each provider named (your quota); 0 = none there. "
        "Providers not named are limited only by their offers",
        "example": {"aws": 512, "lambda": 0},
    },
)
MAX_PRICE_AGE_DAYS = Integer(
    validate=validate.Range(0, 36_500),
    metadata={"description": "Plan only on prices at most this many days old (stale prices left out)"},
)


class OutputSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    details = Boolean(metadata={"description": "Include the step-by-step calculation"})
    decimal_places = Integer(
        validate=validate.Range(0, 6),
        metadata={"description": "Decimals in the human-readable strings (default 1)"},
    )
    recommendations = Boolean(
        metadata={
            "description": "Include recommendations (default true; false skips their re-estimates, for sweeps)"
        }
    )
    suggestions = Boolean(
        metadata={
            "description": "Inference only: rank the catalog's accelerators for this request (default true)"
        }
    )


def calibration_field() -> String:
    """`calibration`: a profile's name or id (POST /v1/calibrations)."""
    return String(
        validate=validate.Length(1, 200),
        metadata={
            "description": "Estimate with this calibration profile (its name or id, GET /v1/calibrations): the "
            "profile's fitted compute, memory-bandwidth and network factors scale the accelerator it was fitted on. "
            "The answer names the profile and revision (`calibration`); another accelerator or stack is a 422 unless "
            'the profile was created with apply_to "any"',
            "example": "mi300x-vllm-prod",
        },
    )
