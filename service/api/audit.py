"""GET /v1/audit-events (admin): every catalog and key change, newest first."""

from __future__ import annotations

import marshmallow as ma
from flask.views import MethodView
from marshmallow import validate

from ..store import audit
from .extensions.db import db_session
from .extensions.fields import String
from .extensions.smorest import Blueprint

blp = Blueprint(
    "audit", __name__, url_prefix="/v1/audit-events", description="Append-only audit trail (admin)."
)


class AuditQuerySchema(ma.Schema):
    target = String(
        validate=validate.Length(1, 200), metadata={"example": "accelerator:nvidia-h100-sxm-80gb"}
    )
    actor = String(validate=validate.Length(1, 128), metadata={"example": "ops-admin"})


class AuditEventSchema(ma.Schema):
    id = ma.fields.Integer()
    at = ma.fields.DateTime()
    actor = String(metadata={"description": "Key name (or `cli`)"})
    action = String(metadata={"example": "price.set"})
    target = String(metadata={"example": "accelerator:nvidia-h100-sxm-80gb"})
    before = ma.fields.Dict(allow_none=True)
    after = ma.fields.Dict(allow_none=True)
    request_id = String(allow_none=True)


@blp.route("")
class AuditEvents(MethodView):
    @blp.auth("admin")
    @blp.arguments(AuditQuerySchema, location="query")
    @blp.response(200, AuditEventSchema(many=True))
    @blp.paginate()
    @blp.doc(operationId="listAuditEvents")
    def get(self, query, pagination_parameters):
        """Audit events, newest first, filtered by target and actor; paginated."""
        items, total = audit.page(
            db_session(),
            audit.query(**query),
            pagination_parameters.first_item,
            pagination_parameters.page_size,
        )
        pagination_parameters.item_count = total
        return items
