"""POST /v1/estimates/training/batch and /v1/estimates/inference/batch: up to 1,000 estimates in one call.

Tooling that sweeps configurations sends one request instead of a thousand. Items are answered in order, each
an estimate or a problem object of its own: one bad item never fails the others. Each item counts against
the client's estimate budget (RATELIMIT_ESTIMATES), so a batch buys no extra computations. A batch is heavy work
(api/extensions/work.py): it runs in one of its process's slots and stops at the request's time budget; the items
not reached then get a problem of their own (status 503, type NOT_REACHED) to send again.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import g, jsonify
from flask.views import MethodView
from marshmallow import validate

from ...engine import InvalidRequest
from ...engine.i18n import _, active
from ...i18n import translate_message
from ..extensions import work
from ..extensions.db import db_session
from ..extensions.errors import IMPOSSIBLE_REQUEST, INVALID_FIELD, flatten_messages
from ..extensions.smorest import Blueprint
from .common_responses import Documented, ref
from .inference import InferenceRequestSchema
from .training import TrainingRequestSchema

MAX_ITEMS = 1_000
NOT_REACHED = "urn:scalecost:problem:not-reached"
BATCH_ENDPOINTS = frozenset({"estimate-batches.TrainingBatch", "estimate-batches.InferenceBatch"})

blp = Blueprint(
    "estimate-batches",
    __name__,
    url_prefix="/v1/estimates",
    description="Many estimates in one call, each answered on its own (result or problem), in order.",
)


class _Unvalidated(ma.fields.Nested):
    """Documented as the nested request schema; loaded as the object it is (validated per item later)."""

    def _deserialize(self, value, attr, data, partial=None, **kwargs):
        if not isinstance(value, dict):
            raise ma.ValidationError(_("Must be an object (an estimate request body)."))
        return value


def _batch_schema(kind: str, schema: type[ma.Schema]) -> type[ma.Schema]:
    """Items documented as the single endpoint's request (so clients and fuzzers send estimate bodies), loaded
    as plain objects: each is validated on its own, and one bad item answers a problem without failing the rest."""

    class BatchRequestSchema(ma.Schema):
        class Meta:
            unknown = ma.RAISE

        items = ma.fields.List(
            _Unvalidated(schema),
            required=True,
            validate=validate.Length(min=1, max=MAX_ITEMS),
            metadata={
                "description": f"Estimate request bodies (1 to {MAX_ITEMS}), each as POST /v1/estimates/{kind}"
            },
        )

    BatchRequestSchema.__name__ = f"{kind.title()}BatchRequestSchema"
    return BatchRequestSchema


TrainingBatchRequestSchema = _batch_schema("training", TrainingRequestSchema)
InferenceBatchRequestSchema = _batch_schema("inference", InferenceRequestSchema)


class BatchProblemSchema(ma.Schema):
    """An item's RFC 9457 problem: the problem+json body of the single endpoint without its request_id (the
    batch's X-Request-ID covers every item)."""

    type = ma.fields.String(required=True, metadata={"description": "URI naming the problem type"})
    title = ma.fields.String(required=True, metadata={"description": "Short summary"})
    status = ma.fields.Integer(required=True, metadata={"description": "HTTP status code of the item"})
    detail = ma.fields.String(required=True, metadata={"description": "Explanation of this item's problem"})
    errors = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.List(ma.fields.String()),
        metadata={"description": "Field path → messages (a 422); absent when the item was not reached"},
    )


class BatchItemSchema(ma.Schema):
    index = ma.fields.Integer(required=True, metadata={"description": "Position of the item in `items`"})
    status = ma.fields.Integer(required=True, metadata={"description": "200, or the problem's status (422)"})
    estimate = Documented(
        description="The estimate, exactly as the single endpoint answers it (a training estimate in a "
        "training batch, an inference estimate in an inference batch); null on a problem",
        one_of=[ref("TrainingEstimate"), ref("InferenceEstimate")],
        nullable=True,
        required=True,
    )
    problem = ma.fields.Nested(
        BatchProblemSchema,
        allow_none=True,
        required=True,
        metadata={"description": "RFC 9457 problem of this item; null on success"},
    )


class BatchResponseSchema(ma.Schema):
    results = ma.fields.List(ma.fields.Nested(BatchItemSchema), required=True)
    succeeded = ma.fields.Integer(required=True, metadata={"description": "Items answered with an estimate"})
    failed = ma.fields.Integer(
        required=True, metadata={"description": "Items answered with a problem (not_reached included)"}
    )
    not_reached = ma.fields.Integer(
        required=True,
        metadata={
            "description": "Items the request's time budget (REQUEST_BUDGET_SECONDS) ended before: each has a "
            f"503 problem of type {NOT_REACHED}; send them again"
        },
    )
    complete = ma.fields.Boolean(
        required=True, metadata={"description": "Every item was answered (not_reached 0)"}
    )


def _problem(status: int, type_: str, title: str, errors: dict[str, list[str]]) -> dict[str, Any]:
    detail = (
        _("The item has invalid fields: ") if type_ == INVALID_FIELD else _("The item cannot be estimated: ")
    )
    return {
        "type": type_,
        "title": title,
        "status": status,
        "detail": detail + ", ".join(sorted(errors)) + ".",
        "errors": {
            path: [translate_message(m, active()) for m in messages] for path, messages in errors.items()
        },
    }


def _answer(kind: str, schema: ma.Schema, body: dict[str, Any], index: int) -> dict[str, Any]:
    from ..extensions.db import run_estimate

    try:
        loaded = schema.load(body)
    except ma.ValidationError as err:
        problem = _problem(422, INVALID_FIELD, _("Unprocessable Entity"), flatten_messages(err.messages))
        return {"index": index, "status": 422, "estimate": None, "problem": problem}
    try:
        estimate = run_estimate(kind, loaded, offload=work.offload)  # the engine's part off the event loop
    except InvalidRequest as err:
        problem = _problem(422, IMPOSSIBLE_REQUEST, _("Impossible request"), err.errors)
        return {"index": index, "status": 422, "estimate": None, "problem": problem}
    return {"index": index, "status": 200, "estimate": estimate, "problem": None}


def _not_reached(index: int) -> dict[str, Any]:
    problem = {
        "type": NOT_REACHED,
        "title": _("Not reached"),
        "status": 503,
        "detail": _("The request's time budget ended before this item; send it again."),
    }
    return {"index": index, "status": 503, "estimate": None, "problem": problem}


def _run(kind: str, schema: ma.Schema, items: list[dict[str, Any]]):
    results: list[dict[str, Any]] = []
    with work.heavy():
        for i, item in enumerate(items):
            if i and not work.checkpoint():
                break
            results.append(_answer(kind, schema, item, i))
        db_session().rollback()  # read-only: end the transaction the catalog lookups opened
    reached = len(results)
    results += [_not_reached(i) for i in range(reached, len(items))]
    succeeded = sum(1 for r in results if r["status"] == 200)
    g.batch_items = len(items)
    return jsonify(
        {
            "results": results,
            "succeeded": succeeded,
            "failed": len(results) - succeeded,
            "not_reached": len(items) - reached,
            "complete": reached == len(items),
        }
    )


@blp.route("/training/batch")
class TrainingBatch(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(TrainingBatchRequestSchema)
    @blp.response(200, BatchResponseSchema)
    @blp.doc(operationId="estimateTrainingBatch")
    def post(self, body):
        """Estimate up to 1,000 training runs; each item is a POST /v1/estimates/training body and is answered
        in order with its estimate or its own problem (one bad item does not fail the others)."""
        return _run("training", TrainingRequestSchema(), body["items"])


@blp.route("/inference/batch")
class InferenceBatch(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(InferenceBatchRequestSchema)
    @blp.response(200, BatchResponseSchema)
    @blp.doc(operationId="estimateInferenceBatch")
    def post(self, body):
        """Estimate up to 1,000 deployments; each item is a POST /v1/estimates/inference body."""
        return _run("inference", InferenceRequestSchema(), body["items"])
