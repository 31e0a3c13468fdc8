"""Schemas of calibration profiles: the write body (points and files), the stored profile, its revisions."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import validate

from ...engine import CALIBRATION_FACTORS as FACTORS
from ...engine import CALIBRATION_MEASURED as MEASURED
from ...engine import InvalidRequest
from ...engine.i18n import _
from ...usecases.calibration_files import FORMATS, FileProblem, points_from_file
from ...usecases.calibrations import MAX_POINTS
from ..estimates.inference import InferenceRequestSchema
from ..estimates.training import TrainingRequestSchema
from ..extensions.errors import flatten_messages
from ..extensions.fields import Float, String

KINDS = ["training", "inference"]
REQUEST_SCHEMAS = {"training": TrainingRequestSchema, "inference": InferenceRequestSchema}
MAX_FILES = 100
MAX_FILE_CHARS = 4 * 1024 * 1024


def _figure(description: str) -> Float:
    return Float(
        validate=validate.Range(min=0, min_inclusive=False),
        allow_nan=False,
        metadata={"description": f"{description}; a finite number above 0"},
    )


class MeasuredSchema(ma.Schema):
    """What was measured on the point's request (figures of the profile's kind; at least one speed figure)."""

    class Meta:
        unknown = ma.RAISE

    tokens_per_second = _figure("Training: tokens per second of the whole run")
    step_seconds = _figure("Training: seconds per optimizer step")
    peak_memory_bytes = _figure("Training: peak memory per device, bytes")
    output_tokens_per_second = _figure("Inference: output tokens per second of the deployment")
    time_to_first_token_s = _figure("Inference: time to first token, seconds (median)")
    time_per_output_token_s = _figure("Inference: time per output token after the first, seconds (median)")


def _measured_field() -> ma.fields.Nested:
    return ma.fields.Nested(
        MeasuredSchema,
        required=True,
        metadata={
            "description": "What was measured. Training: tokens_per_second or step_seconds, optionally "
            "peak_memory_bytes; inference: output_tokens_per_second, time_to_first_token_s, time_per_output_token_s. "
            "A point without a speed figure is refused on its own",
            "example": {"output_tokens_per_second": 1850.0, "time_per_output_token_s": 0.021},
        },
    )


class CalibrationPointSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    request = ma.fields.Raw(
        required=True,
        metadata={
            "description": "The estimate request body the measurement ran (as POST /v1/estimates/{kind}); an invalid "
            "one refuses this point only",
            "oneOf": [
                {"$ref": "#/components/schemas/TrainingRequest"},
                {"$ref": "#/components/schemas/InferenceRequest"},
            ],
        },
    )
    measured = _measured_field()


class CalibrationFileSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    format = String(
        required=True,
        validate=validate.OneOf(list(FORMATS)),
        metadata={
            "description": "vllm-benchmark-serving: vLLM benchmark_serving.py --save-result JSON; sglang-bench-serving: "
            "SGLang bench_serving.py --output-file JSON lines (a point per line); csv: header row of measured names and "
            "request columns (docs/guide/calibration.md)"
        },
    )
    request = ma.fields.Dict(
        required=True,
        metadata={
            "description": "The estimate request the file measured (model, engine, accelerator, count); the file's "
            "lengths, concurrency or rate fill what it leaves out"
        },
    )
    content = ma.fields.Raw(
        required=True,
        allow_none=True,  # any JSON value is this field's type: what the format cannot read is refused by name
        metadata={
            "description": "The file: its text (JSON, JSON lines or CSV; at most 4 MiB), or for the JSON formats the "
            "parsed object or list of objects. Data only: never executed or rendered. Anything else (null "
            "included) is refused as an unreadable file"
        },
    )


class CalibrationWriteSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    name = String(
        required=True,
        validate=validate.Length(1, 200),
        metadata={"description": "Unique name", "example": "mi300x-vllm-prod"},
    )
    kind = String(required=True, validate=validate.OneOf(KINDS))
    apply_to = String(
        load_default="same",
        validate=validate.OneOf(["same", "any"]),
        metadata={
            "description": "same (default): estimates may use the profile only on the accelerator and stack it was "
            "fitted on (422 otherwise); any: on every part"
        },
    )
    points = ma.fields.List(
        ma.fields.Nested(CalibrationPointSchema),
        validate=validate.Length(max=MAX_POINTS),
        metadata={"description": f"Measured points (with `files`, 1 to {MAX_POINTS:,} in all)"},
    )
    files = ma.fields.List(
        ma.fields.Nested(CalibrationFileSchema),
        validate=validate.Length(max=MAX_FILES),
        metadata={"description": "Benchmark result files, each with the estimate request it measured"},
    )


def load_points(kind: str, points: list[dict], files: list[dict]) -> dict[str, Any]:
    """Every point (the files' after the listed ones) with its request loaded by the estimate schema, and the
    problems of the points whose request is refused, by index. Raises InvalidRequest (422 impossible-request: each
    field is valid, the combination is not) for the profile's own problems: no point, more than MAX_POINTS in all,
    a file that cannot be read, a figure of the other kind."""
    raw = [dict(p) for p in points]
    for i, file in enumerate(files):
        if isinstance(file["content"], str) and len(file["content"]) > MAX_FILE_CHARS:
            raise InvalidRequest.single(f"files.{i}.content", _("At most 4 MiB per file."))
        try:
            raw += points_from_file(kind, file)
        except FileProblem as exc:
            raise InvalidRequest.single(f"files.{i}.content", str(exc)) from None
    if not raw:
        raise InvalidRequest.single("points", _("Give at least one point (points or files)."))
    if len(raw) > MAX_POINTS:
        raise InvalidRequest.single(
            "points",
            _("At most {count} points in one profile (got {got}).").format(count=MAX_POINTS, got=len(raw)),
        )
    loaded, refused = [], {}
    for i, point in enumerate(raw):
        other = [m for m in point.get("measured") or {} if m not in MEASURED[kind]]
        if other:
            message = _("Not a {kind} figure: {names}; valid: {valid}.").format(
                kind=kind, names=", ".join(other), valid=", ".join(MEASURED[kind])
            )
            raise InvalidRequest.single(f"points.{i}.measured", message)
        try:
            request = REQUEST_SCHEMAS[kind]().load(point.get("request") or {})
        except ma.ValidationError as err:
            refused[i] = {f"points.{i}.request.{k}": v for k, v in flatten_messages(err.messages).items()}
            request = {}
        loaded.append(
            {"request": request, "measured": point.get("measured") or {}, "sent": point.get("request")}
        )
    return {"points": loaded, "refused": refused}


class FactorSchema(ma.Schema):
    value = ma.fields.Float(metadata={"description": "Fitted factor (1 = the defaults)"})
    standard_deviation = ma.fields.Float(
        metadata={"description": "Posterior standard deviation of the factor"}
    )
    log_standard_deviation = ma.fields.Float(
        metadata={"description": "Posterior standard deviation of ln(factor)"}
    )
    low = ma.fields.Float(metadata={"description": "Lower bound"})
    high = ma.fields.Float(metadata={"description": "Upper (physical) bound"})
    bound = String(metadata={"description": "Why the upper bound"})
    clamped = ma.fields.Boolean(metadata={"description": "The data would move the factor past a bound"})
    unclamped_value = ma.fields.Float(metadata={"description": "Where one unbounded step would take it"})
    data_share = ma.fields.Float(
        metadata={"description": "Share of the posterior precision from the data (0 to 1)"}
    )
    informed = ma.fields.Boolean(
        metadata={"description": "Some point informs the factor (data_share ≥ 0.05)"}
    )


def _figures(description: str) -> ma.fields.Dict:
    """Figures by metric name (tokens_per_second, time_to_first_token_s, ...): numbers in each metric's unit."""
    return ma.fields.Dict(
        keys=String(), values=ma.fields.Float(allow_none=True), metadata={"description": description}
    )


class ResidualSchema(ma.Schema):
    point = ma.fields.Integer(metadata={"description": "Position of the point"})
    metric = String(metadata={"description": "The metric (a `measured` name)"})
    log_ratio = ma.fields.Float(metadata={"description": "ln(predicted / measured) after the fit"})


class FitSummarySchema(ma.Schema):
    points_fitted = ma.fields.Integer()
    points_refused = ma.fields.Integer()
    metrics_fitted = ma.fields.Integer(metadata={"description": "Measured figures the fit used"})
    iterations = ma.fields.Integer()
    evaluations = ma.fields.Integer(metadata={"description": "Estimates the fit ran"})
    converged = ma.fields.Boolean()
    complete = ma.fields.Boolean(metadata={"description": "False: the request's time budget ended the fit"})
    prior_log_sigma = ma.fields.Float(metadata={"description": "The prior's sd of each ln factor"})
    noise_log_sigma = ma.fields.Float(metadata={"description": "The assumed sd of ln(predicted / measured)"})
    median_abs_error_before = ma.fields.Float(
        allow_none=True, metadata={"description": "With the defaults, fraction"}
    )
    median_abs_error_after = ma.fields.Float(
        allow_none=True, metadata={"description": "With the profile, fraction"}
    )


class PointInputSchema(ma.Schema):
    request = ma.fields.Raw(
        metadata={
            "description": "The estimate request body as sent",
            "oneOf": [
                {"$ref": "#/components/schemas/TrainingRequest"},
                {"$ref": "#/components/schemas/InferenceRequest"},
            ],
        }
    )
    measured = _figures("The measured figures as sent")


class PointResultSchema(ma.Schema):
    index = ma.fields.Integer(
        metadata={"description": "Position of the point (listed points, then the files')"}
    )
    status = String(metadata={"enum": ["fitted", "refused"]})
    problems = ma.fields.Dict(
        keys=String(),
        values=ma.fields.List(String()),
        metadata={"description": "Why the point was refused: messages by field path"},
    )
    measured = _figures("The measured figures (units as in `measured`)")
    predicted_before = _figures("The defaults' figures")
    predicted_after = _figures("The fitted profile's figures")
    error_before = _figures("predicted / measured − 1 with the defaults")
    error_after = _figures("predicted / measured − 1 with the profile")


def _fit_fields() -> dict[str, ma.fields.Field]:
    return {
        "id": ma.fields.Integer(),
        "name": String(),
        "kind": String(metadata={"enum": KINDS}),
        "accelerator": String(
            attribute="accelerator_id", metadata={"description": "The part the points ran on"}
        ),
        "stack": String(allow_none=True, metadata={"description": "The software stack, e.g. rocm/vllm"}),
        "apply_to": String(metadata={"enum": ["same", "any"]}),
        "revision": ma.fields.Integer(metadata={"description": "The fit's revision (1 = creation)"}),
        "factors": ma.fields.Dict(
            keys=String(validate=validate.OneOf(list(FACTORS))),
            values=ma.fields.Nested(FactorSchema),
            metadata={"description": "compute, memory_bandwidth, network: achieved rate ÷ the defaults'"},
        ),
        "points": ma.fields.List(
            ma.fields.Nested(PointResultSchema),
            attribute="point_errors",
            metadata={"description": "Each point"},
        ),
        "residuals": ma.fields.List(
            ma.fields.Nested(ResidualSchema),
            metadata={
                "description": "After the fit, per point and metric: {point, metric, log_ratio} (ln(predicted "
                "/ measured)), for prediction intervals"
            },
        ),
        "fit": ma.fields.Nested(FitSummarySchema, metadata={"description": "How the fit went"}),
        "notes": ma.fields.List(String()),
    }


CalibrationSchema = ma.Schema.from_dict(
    {
        **_fit_fields(),
        "inputs": ma.fields.List(
            ma.fields.Nested(PointInputSchema),
            attribute="points",
            metadata={"description": "The points as sent: {request, measured}"},
        ),
        "owner": String(),
        "version": ma.fields.Integer(metadata={"description": "ETag version (every change bumps it)"}),
        "created_at": ma.fields.DateTime(),
        "updated_at": ma.fields.DateTime(),
    },
    name="CalibrationSchema",
)
CalibrationListItemSchema = ma.Schema.from_dict(
    {
        **{k: v for k, v in _fit_fields().items() if k not in ("points", "residuals")},
        "updated_at": ma.fields.DateTime(),
    },
    name="CalibrationListItemSchema",
)
CalibrationRevisionSchema = ma.Schema.from_dict(
    {
        **{k: v for k, v in _fit_fields().items() if k != "id"},
        "profile_id": ma.fields.Integer(),
        "action": String(metadata={"enum": ["create", "refit", "delete"]}),
        "author": String(),
        "request_id": String(allow_none=True),
        "created_at": ma.fields.DateTime(),
        "inputs": ma.fields.List(ma.fields.Nested(PointInputSchema), attribute="points"),
    },
    name="CalibrationRevisionSchema",
)


class CalibrationQuerySchema(ma.Schema):
    kind = String(validate=validate.OneOf(KINDS))
    accelerator = String(
        validate=validate.Length(1, 64), metadata={"description": "Profiles fitted on this part"}
    )


class RefitSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    points = ma.fields.List(
        ma.fields.Nested(CalibrationPointSchema), validate=validate.Length(max=MAX_POINTS)
    )
    files = ma.fields.List(ma.fields.Nested(CalibrationFileSchema), validate=validate.Length(max=MAX_FILES))
