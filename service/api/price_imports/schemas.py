"""Schemas of price imports (POST /v1/price-imports), stale prices (GET /v1/prices/stale) and the `cost_change` a
scenario listing shows with `cost_changed_by_more_than`."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ...usecases.price_formats import SOURCES
from ..accelerators.schemas import PRICING_MODELS
from ..extensions.fields import String

DECIMAL = {"type": "string", "format": "decimal"}


def _money(description: str, **kwargs) -> ma.fields.String:
    return ma.fields.String(
        metadata={"description": description, **DECIMAL, **kwargs.pop("metadata", {})}, **kwargs
    )


class ImportQuerySchema(ma.Schema):
    source = String(
        required=True,
        validate=validate.OneOf(SOURCES),
        metadata={
            "description": "The file's format: aws-price-list (EC2 offer file, JSON or CSV), azure-retail (Retail "
            "Prices API page), gcp-billing (Cloud Billing Catalog SKU list), skypilot (one cloud's vms.csv of "
            "SkyPilot's catalog; `name` states its cloud and date, e.g. aws-vms-2026-11-30.csv), csv (the "
            "catalog's own columns)"
        },
    )
    dry_run = ma.fields.Boolean(
        required=True,
        metadata={
            "description": "true: answer the diff and write nothing; false: apply it (one transaction)"
        },
    )
    force = ma.fields.Boolean(
        load_default=False,
        metadata={
            "description": "Replace prices an admin set by hand after the file's date, and prices newer than the "
            "file's (kept otherwise, and listed under `kept`)"
        },
    )
    name = String(
        load_default="body",
        validate=validate.Length(1, 200),
        metadata={"description": "The file's name, as the answer and the import's record show it"},
    )


class OfferRowSchema(ma.Schema):
    accelerator_id = String(metadata={"example": "nvidia-h100-sxm-80gb"})
    provider = String(metadata={"example": "aws"})
    instance_type = String(allow_none=True, metadata={"example": "p5.48xlarge"})
    region = String(allow_none=True, metadata={"example": "us-east-1"})
    pricing_model = String(metadata={"enum": PRICING_MODELS})
    usd_per_hour = _money("USD per accelerator-hour (the instance's price / accelerators_per_instance)")
    accelerators_per_instance = ma.fields.Integer()
    effective_from = ma.fields.String(metadata={"format": "date", "description": "First day of this price"})
    where = String(metadata={"description": "Line or JSON path of the row in the file"})


class CatalogRowSchema(ma.Schema):
    price_id = ma.fields.Integer()
    accelerator_id = String()
    provider = String()
    instance_type = String(allow_none=True)
    region = String(allow_none=True)
    pricing_model = String(metadata={"enum": PRICING_MODELS})
    usd_per_hour = _money("USD per accelerator-hour")
    effective_from = ma.fields.String(metadata={"format": "date"})
    set_by = String(metadata={"description": "Who opened the row: an API key's name, cli, or seed"})
    import_id = ma.fields.Integer(
        allow_none=True, metadata={"description": "The import that opened it, if any"}
    )


class ChangedRowSchema(OfferRowSchema):
    old_usd_per_hour = _money("The catalog's price until now")
    percent_change = ma.fields.Float(allow_none=True, metadata={"description": "(new − old) / old × 100"})
    replaces_price_id = ma.fields.Integer(metadata={"description": "The row the change closes"})


class UnchangedRowSchema(OfferRowSchema):
    price_id = ma.fields.Integer()


class KeptRowSchema(OfferRowSchema):
    catalog = ma.fields.Nested(CatalogRowSchema)
    reason = String()


class UnmappedSchema(ma.Schema):
    instance_type = String(
        metadata={"description": "Not in the instance map (service/store/seed/instance_map.csv)"}
    )
    offers = ma.fields.Integer()
    where = ma.fields.List(String(), metadata={"description": "The first three rows naming it"})


class RefusedSchema(ma.Schema):
    where = String()
    reason = String()
    instance_type = String(allow_none=True)


class FileSchema(ma.Schema):
    name = String()
    sha256 = String()
    bytes = ma.fields.Integer()
    published = ma.fields.String(allow_none=True, metadata={"format": "date"})
    ignored = ma.fields.Integer(
        metadata={"description": "Rows that are no accelerator price (storage, Windows, …)"}
    )


class SummarySchema(ma.Schema):
    added = ma.fields.Integer()
    changed = ma.fields.Integer()
    unchanged = ma.fields.Integer()
    kept = ma.fields.Integer()
    not_in_file = ma.fields.Integer()
    unmapped = ma.fields.Integer()
    refused = ma.fields.Integer()
    ignored = ma.fields.Integer()


class PriceMoveSchema(ma.Schema):
    accelerator_id = String()
    provider = String(
        allow_none=True, metadata={"description": "cost.provider of those scenarios; null: none"}
    )
    usd_per_accelerator_hour_before = ma.fields.Float(allow_none=True)
    usd_per_accelerator_hour_after = ma.fields.Float(allow_none=True)
    percent = ma.fields.Float(allow_none=True)
    scenarios = ma.fields.Integer()


class MovedScenarioSchema(ma.Schema):
    id = ma.fields.Integer()
    name = String()
    kind = String(metadata={"enum": ["training", "inference"]})
    basis = String(metadata={"enum": ["total_usd", "usd_per_hour"]})
    usd_before = ma.fields.Float(
        allow_none=True, metadata={"description": "Headline cost before this import"}
    )
    usd_after = ma.fields.Float(allow_none=True, metadata={"description": "Headline cost after it"})
    percent = ma.fields.Float(allow_none=True)
    percent_since_saved = ma.fields.Float(
        allow_none=True, metadata={"description": "After it, vs the saved cost"}
    )


class ScenarioMovesSchema(ma.Schema):
    moved = ma.fields.Integer(metadata={"description": "Saved scenarios whose cost the import moves"})
    by_price = ma.fields.List(ma.fields.Nested(PriceMoveSchema), metadata={"description": "Largest % first"})
    largest = ma.fields.List(
        ma.fields.Nested(MovedScenarioSchema), metadata={"description": "Largest USD move first (at most 50)"}
    )


class EarlierImportSchema(ma.Schema):
    import_id = ma.fields.Integer()
    at = ma.fields.String(metadata={"format": "date-time"})
    by = String()


class ImportResultSchema(ma.Schema):
    import_id = ma.fields.Integer(
        allow_none=True,
        metadata={"description": "The applied import (GET /v1/price-imports/{id}); null: nothing written"},
    )
    source = String(metadata={"enum": list(SOURCES)})
    dry_run = ma.fields.Boolean()
    applied = ma.fields.Boolean(metadata={"description": "Whether prices were written"})
    force = ma.fields.Boolean()
    files = ma.fields.List(ma.fields.Nested(FileSchema))
    already_imported = ma.fields.Nested(
        EarlierImportSchema,
        allow_none=True,
        metadata={"description": "An earlier applied import of the same files"},
    )
    summary = ma.fields.Nested(SummarySchema)
    listed_max = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "The most rows each list below names (PRICE_IMPORT_API_LISTED_MAX over the API; null: "
            "all); `summary` counts every row"
        },
    )
    truncated = ma.fields.List(
        String(
            metadata={"enum": ["added", "changed", "unchanged", "kept", "not_in_file", "unmapped", "refused"]}
        ),
        metadata={"description": "The lists cut at listed_max (their full counts are in summary)"},
    )
    added = ma.fields.List(ma.fields.Nested(OfferRowSchema))
    changed = ma.fields.List(
        ma.fields.Nested(ChangedRowSchema), metadata={"description": "Largest % change first"}
    )
    unchanged = ma.fields.List(ma.fields.Nested(UnchangedRowSchema))
    kept = ma.fields.List(
        ma.fields.Nested(KeptRowSchema), metadata={"description": "Changes not made, and why"}
    )
    not_in_file = ma.fields.List(
        ma.fields.Nested(CatalogRowSchema),
        metadata={
            "description": "Current prices of the file's providers and regions the file lacks: candidates to close"
        },
    )
    unmapped = ma.fields.List(ma.fields.Nested(UnmappedSchema))
    refused = ma.fields.List(ma.fields.Nested(RefusedSchema))
    scenarios = ma.fields.Nested(ScenarioMovesSchema)


class ImportListItemSchema(ma.Schema):
    id = ma.fields.Integer()
    source = String()
    files = ma.fields.List(ma.fields.Nested(FileSchema))
    effective_from = ma.fields.Date(allow_none=True)
    forced = ma.fields.Boolean()
    changes = ma.fields.Integer()
    actor = String()
    request_id = String(allow_none=True)
    created_at = ma.fields.DateTime()


class ImportRecordSchema(ImportListItemSchema):
    result = ma.fields.Nested(ImportResultSchema, metadata={"description": "The answer the import gave"})


class StaleQuerySchema(ma.Schema):
    older_than_days = ma.fields.Integer(
        validate=validate.Range(0, 36_500),
        metadata={"description": "Age in days past which a price is listed (default PRICE_STALE_AFTER_DAYS)"},
    )


class StalePriceSchema(CatalogRowSchema):
    as_of = String(allow_none=True)
    source = String(allow_none=True)
    age_days = ma.fields.Integer(metadata={"description": "Days since effective_from"})


class StaleSchema(ma.Schema):
    today = ma.fields.Date()
    older_than_days = ma.fields.Integer()
    count = ma.fields.Integer()
    prices = ma.fields.List(ma.fields.Nested(StalePriceSchema), metadata={"description": "Oldest first"})


class CostChangeSchema(ma.Schema):
    """A saved scenario's headline cost at today's prices (usecases/price_moves.py)."""

    basis = String(metadata={"enum": ["total_usd", "usd_per_hour"]})
    saved_usd = ma.fields.Float(metadata={"description": "Headline cost when saved"})
    current_usd = ma.fields.Float(
        allow_none=True, metadata={"description": "At today's prices; null: no price"}
    )
    percent = ma.fields.Float(allow_none=True, metadata={"description": "(current − saved) / saved × 100"})
    usd_per_accelerator_hour_saved = ma.fields.Float()
    usd_per_accelerator_hour_current = ma.fields.Float(allow_none=True)
    provider = String(allow_none=True, metadata={"description": "cost.provider of the request; null: none"})
    updated_at = ma.fields.DateTime(metadata={"description": "When prices last moved it"})
