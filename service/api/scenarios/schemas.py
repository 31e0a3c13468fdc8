"""Schemas of saved scenarios. GET /v1/scenarios/{id} is the export format; POST accepts it back."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ...engine.i18n import _
from ...store import scenario_listing
from ..estimates import common_responses
from ..estimates.inference import InferenceRequestSchema
from ..estimates.training import TrainingRequestSchema
from ..extensions.fields import String
from ..price_imports.schemas import CostChangeSchema

KINDS = ["training", "inference"]
REQUEST_SCHEMAS = {"training": TrainingRequestSchema, "inference": InferenceRequestSchema}
# Fields of the export format that the server owns: accepted on import and ignored.
SERVER_FIELDS = (
    "id",
    "owner",
    "version",
    "estimate",
    "prices",
    "summary",
    "created_at",
    "updated_at",
    "links",
)


class ScenarioWriteSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    name = String(
        required=True,
        validate=validate.Length(1, 200),
        metadata={"description": "Unique name", "example": "llama-70b-q3"},
    )
    description = String(allow_none=True, validate=validate.Length(max=5000))
    tags = ma.fields.List(
        String(validate=validate.Length(1, 64)),
        validate=validate.Length(max=32),
        metadata={"example": ["q3-budget", "pretraining"]},
    )
    kind = String(required=True, validate=validate.OneOf(KINDS))
    request = ma.fields.Dict(
        required=True,
        metadata={
            "description": "The estimate request body (validated exactly like the estimate endpoint)",
            "oneOf": [
                {"$ref": "#/components/schemas/TrainingRequest"},
                {"$ref": "#/components/schemas/InferenceRequest"},
            ],
        },
    )

    @ma.pre_load
    def _drop_server_fields(self, data, **kwargs):
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in SERVER_FIELDS}
        return data

    @ma.post_load
    def _validate_request(self, data, **kwargs):
        try:
            data["loaded_request"] = REQUEST_SCHEMAS[data["kind"]]().load(data["request"])
        except ma.ValidationError as err:
            raise ma.ValidationError({"request": err.messages}) from None
        return data


class _ScenarioDocBase(ma.Schema):
    """Documentation of the two shapes a scenario body takes (the `kind` picks the request schema)."""

    class Meta:
        unknown = ma.RAISE

    name = String(required=True, validate=validate.Length(1, 200), metadata={"example": "llama-70b-q3"})
    description = String(allow_none=True, validate=validate.Length(max=5000))
    tags = ma.fields.List(String(validate=validate.Length(1, 64)), validate=validate.Length(max=32))


class TrainingScenarioWriteSchema(_ScenarioDocBase):
    kind = String(required=True, validate=validate.OneOf(["training"]))
    request = ma.fields.Nested(TrainingRequestSchema, required=True)


class InferenceScenarioWriteSchema(_ScenarioDocBase):
    kind = String(required=True, validate=validate.OneOf(["inference"]))
    request = ma.fields.Nested(InferenceRequestSchema, required=True)


SCENARIO_BODY_DOC = {
    "oneOf": [
        {"$ref": "#/components/schemas/TrainingScenarioWrite"},
        {"$ref": "#/components/schemas/InferenceScenarioWrite"},
    ]
}


class ScenarioSummarySchema(ma.Schema):
    accelerator = String()
    count = ma.fields.Raw(allow_none=True, metadata={"description": "Devices", "type": "integer"})
    fits = ma.fields.Boolean(allow_none=True)
    total_usd = ma.fields.Float(allow_none=True, metadata={"description": "Training: total USD"})
    accelerator_hours = ma.fields.Float(allow_none=True)
    seconds = ma.fields.Float(
        allow_none=True, metadata={"description": "Training wall-clock / request end-to-end, s"}
    )
    usd_per_hour = ma.fields.Float(allow_none=True, metadata={"description": "Inference: USD per hour"})
    usd_per_million_output_tokens = ma.fields.Float(allow_none=True)
    output_tokens_per_second = ma.fields.Float(allow_none=True)


class ScenarioListItemSchema(ma.Schema):
    id = ma.fields.Integer()
    name = String()
    description = String(allow_none=True)
    kind = String(metadata={"enum": KINDS})
    tags = ma.fields.List(String())
    owner = String(metadata={"description": "Name of the key that created it"})
    version = ma.fields.Integer(metadata={"description": "Revision number"})
    summary = ma.fields.Nested(ScenarioSummarySchema)
    created_at = ma.fields.DateTime()
    updated_at = ma.fields.DateTime()
    cost_change = ma.fields.Nested(
        CostChangeSchema,
        metadata={
            "description": "Listings with cost_changed_by_more_than: the cost at today's prices vs the saved one"
        },
    )


class PriceSnapshotSchema(ma.Schema):
    """usecases/estimates.price_snapshot: the price an estimate used, kept with the scenario."""

    taken_at = ma.fields.String(
        metadata={"description": "When the snapshot was taken", "format": "date-time"}
    )
    accelerator = ma.fields.String(
        metadata={"description": "Accelerator id", "example": "nvidia-h100-sxm-80gb"}
    )
    usd_per_accelerator_hour = ma.fields.Float(
        allow_none=True, metadata={"description": "USD per device-hour used; null when no price was known"}
    )
    price_source = common_responses.price_source(
        "`override` (the request's price), the catalog row used, or null when no price was known"
    )


SAVED_REQUEST = [common_responses.ref("TrainingRequest"), common_responses.ref("InferenceRequest")]
ESTIMATE = [common_responses.ref("TrainingEstimate"), common_responses.ref("InferenceEstimate")]
# a saved answer may lack a nested property added since it was saved: nothing below the top is required
SAVED_ESTIMATE = [
    common_responses.ref("SavedTrainingEstimate"),
    common_responses.ref("SavedInferenceEstimate"),
]
SAVED = (
    " (`kind` tells which; sent as it was saved, so a scenario saved by an older version may lack a field added "
    "since)"
)


def saved_request(description: str) -> common_responses.Documented:
    return common_responses.Documented(description=description + SAVED, one_of=SAVED_REQUEST)


def saved_estimate(description: str) -> common_responses.Documented:
    return common_responses.Documented(description=description + SAVED, one_of=SAVED_ESTIMATE)


def price_snapshot(description: str) -> common_responses.AsIs:
    return common_responses.AsIs(PriceSnapshotSchema, metadata={"description": description})


class ScenarioSchema(ScenarioListItemSchema):
    request = saved_request("The estimate request as saved")
    estimate = saved_estimate("The estimate computed at save time")
    prices = price_snapshot("Snapshot of the prices the estimate used")


class CursorField(String):
    """An opaque keyset cursor (X-Pagination `next_cursor`), loaded as the position it names."""

    MAX_LENGTH = 1000

    def __init__(self, **kwargs):
        metadata = {"minLength": 1, "maxLength": self.MAX_LENGTH, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> scenario_listing.Cursor:  # type: ignore[override]
        text = super()._deserialize(value, attr, data, **kwargs)
        if not 1 <= len(text) <= self.MAX_LENGTH:
            raise ma.ValidationError(
                _("Length must be between 1 and {MAX_LENGTH}.").format(MAX_LENGTH=self.MAX_LENGTH)
            )
        try:
            return scenario_listing.decode_cursor(text)
        except ValueError as error:
            raise ma.ValidationError(str(error)) from None


class ScenarioQuerySchema(ma.Schema):
    name = String(
        validate=validate.Length(1, 200),
        metadata={
            "description": "Substring of the name, any case (a trigram index on PostgreSQL; give 3 or more "
            "characters for it to apply)"
        },
    )
    tag = String(validate=validate.Length(1, 64))
    kind = String(validate=validate.OneOf(KINDS))
    owner = String(validate=validate.Length(1, 128))
    cost_changed_by_more_than = ma.fields.Float(
        validate=validate.Range(0, 1e6),
        metadata={
            "description": "Only scenarios whose headline cost (training total USD, serving USD per hour) at today's "
            "prices differs from the saved estimate's by more than this percent, either way; each item then has "
            "`cost_change`. Kept current in every price change, not re-estimated per request (README, Prices)",
            "example": 10,
        },
    )
    sort = String(
        load_default="-updated_at",
        validate=validate.OneOf(["updated_at", "-updated_at", "name", "-name"]),
        metadata={"description": "Sort key; '-' for descending"},
    )
    cursor = CursorField(
        metadata={
            "description": "Keyset pagination: the `next_cursor` of the previous page's X-Pagination (also in "
            'its `Link: <…>; rel="next"`). The page starts right after that page\'s last row, at the same '
            "cost however deep; give the same filters and sort, and no `page`."
        },
    )

    @ma.validates_schema
    def _cursor_matches_sort(self, data, **kwargs):
        cursor = data.get("cursor")
        if cursor is not None and cursor.sort != data.get("sort", "-updated_at"):
            raise ma.ValidationError(
                _("This cursor belongs to sort={sort}.").format(sort=cursor.sort), field_name="cursor"
            )


class RevisionSchema(ma.Schema):
    revision = ma.fields.Integer()
    action = String(metadata={"enum": ["create", "update", "delete"]})
    author = String()
    created_at = ma.fields.DateTime()
    request_id = String(allow_none=True)
    name = String()
    description = String(allow_none=True)
    kind = String()
    tags = ma.fields.List(String())
    request = saved_request("The estimate request of this revision")
    estimate = saved_estimate("The estimate of this revision")
    prices = price_snapshot("Snapshot of the prices this revision's estimate used")


class DeltaSchema(ma.Schema):
    total_usd = ma.fields.Float(
        allow_none=True,
        metadata={"description": "current − saved: total USD (training) or USD per hour (inference)"},
    )
    percent = ma.fields.Float(
        allow_none=True, metadata={"description": "Change in percent of the saved figure"}
    )
    basis = String(metadata={"enum": ["total_usd", "usd_per_hour"]})


class RepricedSchema(ma.Schema):
    current = common_responses.Documented(
        description="The estimate re-run with today's catalog prices (the scenario's `kind`)",
        one_of=ESTIMATE,
    )
    saved = saved_estimate("The estimate stored at save time")
    delta = ma.fields.Nested(DeltaSchema)


class CompareSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    ids = ma.fields.List(
        ma.fields.Integer(validate=validate.Range(1, 2**31 - 1)),
        required=True,
        validate=validate.Length(1, 50),
    )


class CompareItemSchema(ScenarioSummarySchema):
    id = ma.fields.Integer()
    name = String()
    kind = String(metadata={"enum": KINDS})


class CompareResultSchema(ma.Schema):
    scenarios = ma.fields.List(ma.fields.Nested(CompareItemSchema))
    cheapest_id = ma.fields.Integer(
        allow_none=True, metadata={"description": "Lowest total_usd among training scenarios"}
    )
