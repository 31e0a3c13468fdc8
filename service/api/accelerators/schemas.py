"""Marshmallow schemas of the accelerator catalog."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ..extensions.fields import String
from . import freshness

KINDS = list(engine.KINDS)  # one source: the engine's tuple
PRICING_MODELS = list(engine.PRICING_MODELS)


class PeakFlopsSchema(ma.Schema):
    """Dense peak FLOP/s (no 2:4 sparsity) per precision; null where unsupported or unknown."""

    fp32 = ma.fields.Float(
        allow_none=True, metadata={"description": "FP32 (CUDA-core) FLOP/s", "example": 6.7e13}
    )
    tf32 = ma.fields.Float(
        allow_none=True, metadata={"description": "TF32 tensor FLOP/s", "example": 4.945e14}
    )
    bf16 = ma.fields.Float(
        allow_none=True, metadata={"description": "BF16 tensor FLOP/s", "example": 9.89e14}
    )
    fp16 = ma.fields.Float(
        allow_none=True, metadata={"description": "FP16 tensor FLOP/s", "example": 9.89e14}
    )
    fp8 = ma.fields.Float(allow_none=True, metadata={"description": "FP8 tensor FLOP/s", "example": 1.979e15})
    int8 = ma.fields.Float(allow_none=True, metadata={"description": "INT8 tensor OP/s", "example": 1.979e15})
    int4 = ma.fields.Float(allow_none=True, metadata={"description": "INT4 tensor OP/s", "example": None})
    fp4 = ma.fields.Float(
        allow_none=True,
        metadata={
            "description": "FP4 tensor FLOP/s (NVFP4 on NVIDIA Blackwell, MXFP4 on AMD CDNA 4)",
            "example": None,
        },
    )


class PriceSchema(ma.Schema):
    id = ma.fields.Integer(metadata={"description": "Price row id"})
    provider = String(metadata={"description": "Cloud or seller", "example": "aws"})
    instance_type = String(allow_none=True, metadata={"example": "p5.48xlarge"})
    accelerators_per_instance = ma.fields.Integer(metadata={"example": 8})
    region = String(allow_none=True, metadata={"example": "us-east-1"})
    pricing_model = String(metadata={"enum": PRICING_MODELS, "example": "on-demand"})
    usd_per_hour = ma.fields.Decimal(
        as_string=True,
        metadata={
            "description": "USD per accelerator-hour (decimal string)",
            "example": "6.880000",
            "type": "string",
            "format": "decimal",
        },
    )
    as_of = String(
        allow_none=True, metadata={"description": "Period the price was listed", "example": "2025-H2"}
    )
    effective_from = ma.fields.Date(metadata={"description": "First day this price applies"})
    effective_to = ma.fields.Date(
        allow_none=True, metadata={"description": "Day this price stopped applying; null while current"}
    )
    source = String(allow_none=True, metadata={"description": "Where the price comes from"})
    max_accelerators = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Most accelerators one order can get there; null = not stated",
            "example": None,
        },
    )
    billing_increment_seconds = ma.fields.Integer(
        allow_none=True,
        metadata={"description": "Billing increment, seconds; null = the provider's default", "example": 1},
    )
    minimum_billed_seconds = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Least seconds billed per start; null = the provider's default",
            "example": 60,
        },
    )
    startup_seconds = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Provisioning to first step, seconds (billed); null = the provider's default",
            "example": 600,
        },
    )
    slice_sizes = ma.fields.List(
        ma.fields.Integer(),
        allow_none=True,
        metadata={"description": "Valid accelerator counts of a sliced part (TPU slices); null = any"},
    )
    scale_out = ma.fields.Boolean(
        allow_none=True,
        metadata={
            "description": "A scale-out network joins the instances into one job; false: a job is one node; "
            "null = the provider's documented default",
            "example": None,
        },
    )
    interruptions_per_hour = ma.fields.Float(
        allow_none=True,
        metadata={
            "description": "Evictions per instance-hour of spot capacity; null = the provider's documented "
            "default for spot rows, none for others",
            "example": None,
        },
    )
    covers = String(
        metadata={
            "enum": list(engine.COVERS),
            "description": "What the price pays for: the whole instance, or the accelerator alone (VM billed "
            "apart); estimates use accelerator-only rows only when cost.covers asks",
            "example": "instance",
        }
    )
    age_days = ma.fields.Method(
        "_age_days",
        metadata={"type": "integer", "description": "Days since effective_from (today, UTC)", "example": 153},
    )
    stale = ma.fields.Method(
        "_stale",
        metadata={
            "type": "boolean",
            "description": "A current price older than PRICE_STALE_AFTER_DAYS (GET /v1/prices/stale lists them); "
            "estimates that use it say so in cost.price_source",
        },
    )

    def _age_days(self, price) -> int:
        return freshness.age_days(price)

    def _stale(self, price) -> bool:
        return freshness.is_stale(price)


class AcceleratorSourcesSchema(ma.Schema):
    specs = String(allow_none=True, metadata={"description": "Where the specs come from (datasheets, …)"})
    notes = String(allow_none=True, metadata={"description": "Caveats about the figures"})


class AcceleratorSchema(ma.Schema):
    id = String(metadata={"example": "nvidia-h100-sxm-80gb"})
    name = String(metadata={"example": "H100 SXM5 80GB"})
    vendor = String(metadata={"example": "NVIDIA"})
    kind = String(metadata={"enum": KINDS, "example": "gpu"})
    memory_bytes = ma.fields.Integer(
        metadata={"description": "Device memory in bytes", "example": 80_000_000_000}
    )
    memory_bandwidth_bytes_per_s = ma.fields.Float(
        metadata={"description": "Memory bandwidth, bytes/s", "example": 3.35e12}
    )
    peak_flops_per_s = ma.fields.Nested(PeakFlopsSchema)
    interconnect_bandwidth_bytes_per_s = ma.fields.Float(
        allow_none=True,
        metadata={
            "description": "Aggregate bidirectional scale-up bandwidth per device, bytes/s",
            "example": 9e11,
        },
    )
    tdp_watts = ma.fields.Float(allow_none=True, metadata={"description": "Board power, W", "example": 700})
    scale_up_domain = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Devices per NVLink / Infinity Fabric / ICI domain in the systems this part is built "
            "into (72 for GB200 NVL72); null = 8, a node",
            "example": 8,
        },
    )
    scale_out_bandwidth_bytes_per_s = ma.fields.Float(
        allow_none=True,
        metadata={
            "description": "Network rate per device between domains, one direction, bytes/s (400 Gb/s = 5e10); "
            "null = a default by generation, or a PCIe server's network for parts without a scale-up fabric",
            "example": 5e10,
        },
    )
    release_year = ma.fields.Integer(allow_none=True, metadata={"example": 2022})
    default_usd_per_hour = ma.fields.Decimal(
        as_string=True,
        allow_none=True,
        metadata={
            "description": "Lowest current on-demand USD per accelerator-hour; null if unpriced",
            "example": "2.990000",
            "type": "string",
            "format": "decimal",
        },
    )
    prices = ma.fields.List(
        ma.fields.Nested(PriceSchema),
        metadata={
            "description": "Current prices. GET /v1/accelerators/{id}: every current row. In a listing: the "
            "cheapest current row per provider, pricing model and `covers`, cheapest first, at most 64 "
            "(prices_total counts every row)"
        },
    )
    prices_total = ma.fields.Integer(
        metadata={
            "description": "How many current price rows the accelerator has (regions and instance types "
            "included)",
            "example": 3,
        }
    )
    sources = ma.fields.Nested(
        AcceleratorSourcesSchema, metadata={"description": "Where the specs come from, and notes"}
    )


class AcceleratorQuerySchema(ma.Schema):
    vendor = String(metadata={"description": "Vendor, case-insensitive", "example": "NVIDIA"})
    kind = String(validate=validate.OneOf(KINDS), metadata={"description": "Device class"})
    min_memory_bytes = ma.fields.Integer(
        validate=validate.Range(min=0, max=10**15),
        metadata={
            "description": "Only devices with at least this much memory, bytes",
            "example": 80_000_000_000,
        },
    )
