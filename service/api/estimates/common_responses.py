"""Parts shared by the estimate response schemas (training_responses.py, inference_responses.py) and the plans'
and scenarios' ones: field builders, the price-source union, recommendations and calculation details.

Base units in every field name, human strings beside.

These schemas document the JSON the engine builds (engine/training/response.py, engine/inference/response.py,
the advice modules, engine/pricing.py); the endpoints send that JSON as it is (`jsonify`), so every field here
is documentation: tests/contract/test_response_schemas.py validates the golden answers against openapi.yaml
with no undocumented property allowed, so the two cannot drift apart.

Every property an answer always carries is `required` (an `Answer` schema's properties, but those its OPTIONAL
names: absent from some answers, as the golden corpus shows; tests/contract/test_response_schemas.py checks both
ways). A saved scenario keeps the answer of its day (GET /v1/scenarios/{id} `estimate`), and an older answer may
lack a nested field added since: the contract describes saved answers by `Saved…` copies of these components with
nothing required (service/api/saved_answers.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

import marshmallow as ma

F = ma.fields


def num(description: str, **kwargs) -> F.Float:
    """A number that is null when it does not apply (no price, another unit, …)."""
    return F.Float(allow_none=True, metadata={"description": description, **kwargs})


def number(description: str, **kwargs) -> F.Float:
    return F.Float(metadata={"description": description, **kwargs})


def integer(description: str, *, nullable: bool = False, **kwargs) -> F.Integer:
    return F.Integer(allow_none=nullable, metadata={"description": description, **kwargs})


def text(description: str | None = None, *, nullable: bool = False, **kwargs) -> F.String:
    metadata = {"description": description, **kwargs} if description else kwargs
    return F.String(allow_none=nullable, metadata=metadata)


def section(schema: type[ma.Schema], description: str, **kwargs) -> F.Nested:
    return F.Nested(schema, metadata={"description": description}, **kwargs)


class Documented(F.Raw):
    """A value dumped as it is and documented by its metadata alone: a union (oneOf/anyOf) that a marshmallow
    field cannot express. Give `nullable=True` for null (a `null` branch, the OpenAPI 3.0.3 way)."""

    def __init__(self, *, description: str, one_of: list[dict], nullable: bool = False, **kwargs):
        branches = [*one_of, NULL] if nullable else list(one_of)
        # allow_none stays False: apispec would add a type-less `nullable`, which OpenAPI 3.0.3 ignores
        super().__init__(metadata={"description": description, "oneOf": branches}, **kwargs)


class AsIs(F.Nested):
    """Documented as the nested schema (a `$ref`), dumped as it is: a stored JSON document that the schema
    describes but must neither filter nor convert (a document saved by an older version keeps its keys)."""

    # marshmallow's Field and Nested name this method's first parameter differently (hence the ignore)
    def _serialize(self, nested_obj: Any, attr: Any, obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return nested_obj


class Answer(ma.Schema):
    """An object of an answer: each property is always there (`required` in the contract), but those named in
    OPTIONAL. The schemas only document the engine's JSON (nothing is loaded with them)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    def on_bind_field(self, field_name: str, field_obj: ma.fields.Field) -> None:
        field_obj.required = field_name not in self.OPTIONAL


# OpenAPI 3.0.3 has no `type: "null"`: a branch that accepts null and nothing else (`nullable` needs a type).
NULL = {"type": "object", "nullable": True, "enum": [None]}


def ref(component: str) -> dict:
    return {"$ref": f"#/components/schemas/{component}"}


PRICE_SOURCE_ROW = {
    "type": "object",
    "additionalProperties": False,
    "description": "The catalog price row used (engine/pricing.py): the named provider's cheapest on-demand row, "
    "or the cheapest on-demand row over providers",
    "properties": {
        "provider": {"type": "string", "description": "Cloud or seller", "example": "aws"},
        "instance_type": {"type": "string", "nullable": True, "example": "p5.48xlarge"},
        "region": {"type": "string", "nullable": True, "example": "us-east-1"},
        "pricing_model": {
            "type": "string",
            "description": "on-demand, spot, reserved-1y or reserved-3y",
            "example": "on-demand",
        },
        "as_of": {"type": "string", "nullable": True, "description": "Period the price was listed"},
        "source": {"type": "string", "nullable": True, "description": "Where the price comes from"},
        "effective_from": {
            "type": "string",
            "format": "date",
            "nullable": True,
            "description": "First day of this price (its age counts from it)",
        },
        "age_days": {
            "type": "integer",
            "nullable": True,
            "description": "Days from effective_from to the day priced (today, or cost.as_of)",
        },
        "stale": {
            "type": "boolean",
            "nullable": True,
            "description": "Older than PRICE_STALE_AFTER_DAYS (default 90): the price may no longer be current",
        },
        "note": {"type": "string", "description": "Present when stale: what that means and what to do"},
        "covers": {
            "type": "string",
            "enum": ["instance", "accelerator"],
            "description": "What the price pays for: the whole instance, or the accelerator alone (VM billed apart)",
        },
        "accelerators_per_instance": {"type": "integer", "description": "Accelerators in one instance"},
        "max_accelerators": {
            "type": "integer",
            "nullable": True,
            "description": "Most accelerators one order can get there; null = not stated",
        },
        "billing_increment_seconds": {"type": "number", "description": "Billing increment, seconds"},
        "minimum_billed_seconds": {"type": "number", "description": "Least seconds billed per start"},
        "startup_seconds": {"type": "number", "description": "Provisioning to first step, seconds (billed)"},
        "scale_out": {
            "type": "boolean",
            "description": "A scale-out network joins the offer's instances into one job; false: one node at most",
        },
        "interruptions_per_hour": {
            "type": "number",
            "description": "Evictions per instance-hour of the offer (spot capacity reclaimed; 0 off spot)",
        },
    },
}
OVERRIDE = {
    "type": "string",
    "enum": ["override"],
    "description": "The request's cost.usd_per_accelerator_hour was used",
}


def price_source(description: str) -> Documented:
    return Documented(description=description, one_of=[OVERRIDE, PRICE_SOURCE_ROW], nullable=True)


class RecommendationExpectedSchema(Answer):
    field = text("Dotted path of the answer field the claim is about", example="memory.fits")
    op = text("Comparison: ==, <, <=, > or >=", example="==")
    value = Documented(
        description="What the field compares against once `change` is applied",
        one_of=[{"type": "number"}, {"type": "boolean"}],
    )


class RecommendationSchema(Answer):
    code = F.String(metadata={"example": "zero_stage"})
    severity = F.String(metadata={"enum": ["info", "warning", "critical"]})
    message = F.String()
    change = F.Dict(
        metadata={
            "description": "JSON Merge Patch (RFC 7386) of the request that applies the advice: any part of "
            "the request body, null deleting a field (a patch, so deliberately an open object)",
            "additionalProperties": True,
        }
    )
    expected = section(
        RecommendationExpectedSchema, "What re-estimating with `change` applied shows (field, op, value)"
    )


class DetailSchema(Answer):
    name = F.String()
    formula = F.String()
    value = Documented(
        description="Number (or text) the step produced", one_of=[{"type": "number"}, {"type": "string"}]
    )
    unit = F.String(allow_none=True)
    source = F.String(allow_none=True)


class CalibrationFactorsUsedSchema(Answer):
    """The factor values an answer applied: achieved rate ÷ the defaults' (1 = the defaults)."""

    compute = ma.fields.Float(metadata={"description": "× every precision's dense peak FLOP/s"})
    memory_bandwidth = ma.fields.Float(metadata={"description": "× the memory bandwidth, bytes/s"})
    network = ma.fields.Float(metadata={"description": "× the scale-up fabric and NIC bandwidths, bytes/s"})


class CalibrationUsedSchema(Answer):
    """The calibration profile an answer used (engine/calibration/apply.py used_profile)."""

    id = ma.fields.Integer()
    name = ma.fields.String()
    revision = ma.fields.Integer()
    accelerator = ma.fields.String()
    stack = ma.fields.String(allow_none=True)
    apply_to = ma.fields.String(metadata={"enum": ["same", "any"]})
    factors = ma.fields.Nested(
        CalibrationFactorsUsedSchema, metadata={"description": "The factor values applied (1 = the defaults)"}
    )
