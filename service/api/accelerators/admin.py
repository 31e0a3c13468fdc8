"""Catalog administration: add and patch accelerators, set and remove prices (admin, If-Match), history."""

from __future__ import annotations

import datetime as dt
import unicodedata
from decimal import Decimal

import marshmallow as ma
from flask import g, request, url_for
from flask.views import MethodView
from flask_smorest import abort
from marshmallow import validate

from ...engine import COVERS, MAX_INTERRUPTIONS_PER_HOUR, SPEC_BOUNDS, InvalidRequest
from ...engine.i18n import N_, _
from ...store import catalog_admin
from ...store.catalog import CatalogRepository
from ...store.errors import Conflict
from ...usecases import price_bounds, price_moves
from ..extensions.auth import actor
from ..extensions.db import db_session, invalidate_catalog
from ..extensions.fields import Float, Integer, String
from ..extensions.smorest import Blueprint
from .routes import ETAG_SCHEMA, accelerator_to_dict
from .routes import blp as read_blp
from .schemas import KINDS, PRICING_MODELS, AcceleratorSchema, PriceSchema

MAX_OFFER_ACCELERATORS = 1_000_000  # one order's accelerators: above any cluster built (100k GPUs)

blp = Blueprint(
    "catalog-admin",
    __name__,
    url_prefix="/v1/accelerators",
    description="Catalog administration (admin key). Writes need If-Match with the accelerator's ETag.",
)


def _bounded(name: str, unit: str) -> validate.Range:
    low, high = SPEC_BOUNDS[name]
    return validate.Range(
        min=low,
        max=high,
        error=N_("Must be between {low:g} and {high:g} {unit} (physical bounds of a device).").format(
            low=low, high=high, unit=unit
        ),
    )


def _peak(description: str) -> Float:
    return Float(
        allow_none=True,
        validate=_bounded("peak_flops_per_s", "FLOP/s"),
        metadata={"description": f"{description}; null when unsupported"},
    )


class PeakFlopsInSchema(ma.Schema):
    """Dense peak FLOP/s per precision (no 2:4 sparsity); null (or absent) where unsupported."""

    class Meta:
        unknown = ma.RAISE

    fp32 = _peak("FP32 FLOP/s")
    tf32 = _peak("TF32 tensor FLOP/s")
    bf16 = _peak("BF16 tensor FLOP/s")
    fp16 = _peak("FP16 tensor FLOP/s")
    fp8 = _peak("FP8 tensor FLOP/s")
    int8 = _peak("INT8 tensor OP/s")
    int4 = _peak("INT4 tensor OP/s")
    fp4 = _peak("FP4 tensor FLOP/s (NVFP4 / MXFP4)")


def _physical(name: str, unit: str, required: bool = False):
    return Float(
        required=required,
        allow_none=not required,
        validate=_bounded(name, unit),
        metadata={"description": unit},
    )


class AcceleratorWriteSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    id = String(
        required=True,
        validate=[validate.Length(1, 64), validate.Regexp(r"^[a-z0-9][a-z0-9.-]*$")],
        metadata={"description": "Lower-case id (letters, digits, . -)", "example": "nvidia-b300"},
    )
    name = String(required=True, validate=validate.Length(1, 200))
    vendor = String(required=True, validate=validate.Length(1, 64))
    kind = String(required=True, validate=validate.OneOf(KINDS))
    memory_bytes = Integer(
        required=True,
        validate=validate.Range(
            int(SPEC_BOUNDS["memory_bytes"][0]),
            int(SPEC_BOUNDS["memory_bytes"][1]),
            error=N_("Must be between {min} and {max} bytes (1 MiB .. 8 TB)."),
        ),
        metadata={"description": "bytes"},
    )
    memory_bandwidth_bytes_per_s = _physical("memory_bandwidth_bytes_per_s", "bytes/s", required=True)
    peak_flops_per_s = ma.fields.Nested(
        PeakFlopsInSchema, metadata={"description": "Dense FLOP/s per precision"}
    )
    interconnect_bandwidth_bytes_per_s = _physical("interconnect_bandwidth_bytes_per_s", "bytes/s")
    tdp_watts = _physical("tdp_watts", "W")
    scale_up_domain = Integer(
        allow_none=True,
        validate=validate.Range(1, int(SPEC_BOUNDS["scale_up_domain"][1])),
        metadata={"description": "Devices per scale-up (NVLink/ICI) domain"},
    )
    scale_out_bandwidth_bytes_per_s = _physical("scale_out_bandwidth_bytes_per_s", "bytes/s")
    release_year = Integer(allow_none=True, validate=validate.Range(1990, 2100))
    source_specs = String(allow_none=True, validate=validate.Length(max=5000))
    notes = String(allow_none=True, validate=validate.Length(max=5000))


class AcceleratorPatchSchema(AcceleratorWriteSchema):
    class Meta:
        unknown = ma.RAISE
        exclude = ("id",)


class PriceWriteSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    usd_per_hour = ma.fields.Decimal(
        required=True,
        places=6,
        validate=validate.Range(min=Decimal("0.000001"), max=100_000),
        metadata={
            "description": "USD per accelerator-hour (stored as an exact decimal, 6 places)",
            "example": 2.49,
            "type": "number",
            "minimum": 0.000001,
            "maximum": 100_000,
        },
    )
    instance_type = String(validate=validate.Length(1, 128))
    accelerators_per_instance = Integer(validate=validate.Range(1, 1024))
    region = String(validate=validate.Length(1, 64))
    pricing_model = String(validate=validate.OneOf(PRICING_MODELS), metadata={"example": "on-demand"})
    effective_from = ma.fields.Date(metadata={"description": "First day of the new price (default today)"})
    source = String(validate=validate.Length(1, 2000))
    max_accelerators = Integer(
        allow_none=True,
        validate=validate.Range(1, MAX_OFFER_ACCELERATORS),
        metadata={"description": "Most accelerators one order can get there (capacity); null = not stated"},
    )
    billing_increment_seconds = Integer(
        allow_none=True,
        validate=validate.Range(1, 86_400),
        metadata={
            "description": "Billing increment, seconds (1 = per second, 3600 = per hour); null = default"
        },
    )
    minimum_billed_seconds = Integer(
        allow_none=True,
        validate=validate.Range(0, 31 * 86_400),
        metadata={"description": "Least seconds billed per start; null = the provider's default"},
    )
    startup_seconds = Integer(
        allow_none=True,
        validate=validate.Range(0, 86_400),
        metadata={
            "description": "Provisioning to first step, seconds (billed); null = the provider's default"
        },
    )
    slice_sizes = ma.fields.List(
        Integer(validate=validate.Range(1, MAX_OFFER_ACCELERATORS)),
        allow_none=True,
        validate=validate.Length(0, 64),
        metadata={"description": "Valid accelerator counts of a sliced part (TPU slices); null or [] = any"},
    )
    scale_out = ma.fields.Boolean(
        allow_none=True,
        metadata={
            "description": "true: a scale-out network (EFA, InfiniBand, GPUDirect-TCPX) joins the instances into "
            "one job; false: a job is one node; null = the provider's documented default"
        },
    )
    interruptions_per_hour = Float(
        allow_none=True,
        validate=validate.Range(0, MAX_INTERRUPTIONS_PER_HOUR),
        metadata={
            "description": "Evictions per instance-hour of spot capacity (0 to "
            f"{MAX_INTERRUPTIONS_PER_HOUR:g}); null = the provider's documented default for spot rows"
        },
    )
    covers = String(
        validate=validate.OneOf(list(COVERS)),
        metadata={"description": "What the price pays for: the whole instance, or the accelerator alone"},
    )


class PriceDeleteQuerySchema(ma.Schema):
    pricing_model = String(validate=validate.OneOf(PRICING_MODELS))


class HistoryQuerySchema(ma.Schema):
    provider = String(validate=validate.Length(1, 64))


@blp.after_request
def _invalidate_catalog_cache(response):
    """Estimates in this process see a catalog change at once (other workers within CATALOG_CACHE_TTL_S)."""
    if request.method != "GET":
        invalidate_catalog()
    return response


def _accelerator_or_404(accelerator_id: str):
    acc = CatalogRepository(db_session()).get(accelerator_id)
    if acc is None:
        abort(
            404,
            message=_("Unknown accelerator '{accelerator_id}'. GET /v1/accelerators lists the ids.").format(
                accelerator_id=accelerator_id
            ),
        )
    return acc


@blp.route("")
class AcceleratorCreate(MethodView):
    @blp.auth("admin")
    @blp.etag
    @blp.arguments(AcceleratorWriteSchema)
    @blp.response(201, AcceleratorSchema)
    @blp.problem(409, "An accelerator with this id exists.")
    @blp.doc(operationId="createAccelerator")
    def post(self, body):
        """Add an accelerator to the catalog (audited)."""
        session = db_session()
        try:
            acc = catalog_admin.add_accelerator(session, body, actor=actor(), request_id=g.request_id)
            session.commit()
        except Conflict:
            session.rollback()
            abort(409, message=_("An accelerator '{value}' exists.").format(value=body["id"]))
        blp.set_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        return (
            accelerator_to_dict(acc),
            201,
            {"Location": url_for("accelerators.AcceleratorItem", accelerator_id=acc.id)},
        )


@blp.route("/<string:accelerator_id>")
class AcceleratorPatch(MethodView):
    @blp.auth("admin")
    @blp.etag
    @blp.arguments(AcceleratorPatchSchema(partial=True))
    @blp.response(200, AcceleratorSchema)
    @blp.problem(404, "No accelerator has this id.")
    @blp.doc(operationId="updateAccelerator")
    def patch(self, body, accelerator_id: str):
        """Change specs (If-Match with the current ETag; audited)."""
        acc = _accelerator_or_404(accelerator_id)
        blp.check_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        catalog_admin.patch_accelerator(db_session(), acc, body, actor=actor(), request_id=g.request_id)
        db_session().commit()
        blp.set_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        return accelerator_to_dict(acc)


# Words of the /prices/... paths that name no provider: PUT or DELETE .../prices/history set or ended the price of a
# provider called "history" that no GET could show (GET .../prices/history is the price history). Imports refuse
# them too (usecases/price_bounds.py).
RESERVED_PROVIDERS = price_bounds.RESERVED_PROVIDERS


def _refuse_reserved(provider: str) -> None:
    if provider.strip().lower() in RESERVED_PROVIDERS:
        message = _("'{provider}' is a reserved word of this path, not a provider name.").format(
            provider=provider
        )
        raise InvalidRequest({"provider": [message]})


def _refuse_unstorable(provider: str, body: dict) -> None:
    """The bounds of every price row (usecases/price_bounds.py) that the path and body schema do not state: the
    provider's length once lower-cased and its control characters, and the first day's window."""
    limit = price_bounds.column_length("provider")
    if any(unicodedata.category(c) == "Cc" for c in provider):
        message = _("A provider name cannot contain control characters.")
        raise InvalidRequest({"provider": [message]})
    if len(provider.lower()) > limit:
        message = _("'{provider}' is {length} characters long once lower-cased; at most {limit}.").format(
            provider=provider, length=len(provider.lower()), limit=limit
        )
        raise InvalidRequest({"provider": [message]})
    per, most = body.get("accelerators_per_instance"), body.get("max_accelerators")
    if (
        per is not None and most is not None and per > most
    ):  # a combination: an impossible request, not a field
        message = _("Must not exceed max_accelerators ({value}).").format(value=most)
        raise InvalidRequest({"accelerators_per_instance": [message]})
    starts = body.get("effective_from")
    today = dt.date.today()
    if starts is not None and price_bounds.date_problem(starts, today):
        message = _("effective_from must be between {earliest} and {latest}.").format(
            earliest=price_bounds.EARLIEST.isoformat(), latest=price_bounds.latest_start(today).isoformat()
        )
        raise InvalidRequest({"effective_from": [message]})


@blp.route("/<string:accelerator_id>/prices/<string:provider>")
class ProviderPrice(MethodView):
    @blp.auth("admin")
    @blp.etag
    @blp.arguments(PriceWriteSchema)
    @blp.response(200, AcceleratorSchema)
    @blp.problem(404, "No accelerator has this id.")
    @blp.problem(
        422,
        "Invalid price, a provider named with a reserved word of this path (`history`), a provider longer than 64 "
        "characters once lower-cased or with a control character, an effective_from before 2000-01-01 or more "
        "than 366 days after today, or accelerators_per_instance above max_accelerators.",
    )
    @blp.doc(operationId="setAcceleratorPrice")
    def put(self, body, accelerator_id: str, provider: str):
        """Set the provider's price: closes the open row (effective_to) and opens a new one (audited)."""
        _refuse_reserved(provider)
        _refuse_unstorable(provider, body)
        acc = _accelerator_or_404(accelerator_id)
        blp.check_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        try:
            catalog_admin.set_price(db_session(), acc, provider, body, actor=actor(), request_id=g.request_id)
        except catalog_admin.PriceConflict as exc:
            abort(422, message=str(exc), errors={"effective_from": [str(exc)]})
        price_moves.refresh(db_session(), [acc.id])  # saved scenarios' costs, in the same transaction
        db_session().commit()
        blp.set_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        return accelerator_to_dict(acc)

    @blp.auth("admin")
    @blp.etag
    @blp.arguments(PriceDeleteQuerySchema, location="query")
    @blp.response(204)
    @blp.problem(404, "No accelerator has this id, or no current price from this provider.")
    @blp.doc(operationId="deleteAcceleratorPrice")
    def delete(self, query, accelerator_id: str, provider: str):
        """End the provider's current price(s) today; history keeps them (audited)."""
        _refuse_reserved(provider)
        acc = _accelerator_or_404(accelerator_id)
        blp.check_etag(accelerator_to_dict(acc), ETAG_SCHEMA)
        closed = catalog_admin.delete_price(
            db_session(),
            acc,
            provider,
            pricing_model=query.get("pricing_model"),
            actor=actor(),
            request_id=g.request_id,
        )
        if not closed:
            abort(
                404,
                message=_("'{accelerator_id}' has no current price from '{provider}'.").format(
                    accelerator_id=accelerator_id, provider=provider
                ),
            )
        price_moves.refresh(db_session(), [acc.id])  # saved scenarios' costs, in the same transaction
        db_session().commit()


@blp.route("/<string:accelerator_id>/prices/history")
class PriceHistory(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(HistoryQuerySchema, location="query")
    @blp.response(200, PriceSchema(many=True))
    @blp.problem(404, "No accelerator has this id.")
    @blp.doc(operationId="listAcceleratorPriceHistory")
    def get(self, query, accelerator_id: str):
        """Every price this accelerator has had, with its period (effective_from … effective_to)."""
        acc = _accelerator_or_404(accelerator_id)
        rows = catalog_admin.price_history(db_session(), acc)
        if query.get("provider"):
            rows = [r for r in rows if r.provider == query["provider"]]
        return rows


__all__ = ["blp", "read_blp"]
