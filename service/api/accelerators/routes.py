"""Accelerator catalog (read side): GET /v1/accelerators and /v1/accelerators/{id}."""

from __future__ import annotations

from collections.abc import Sequence

from flask.views import MethodView
from flask_smorest import abort

from ...engine.i18n import _
from ...store.catalog import CatalogRepository, default_price, prices_on
from ...store.models import PRECISION_COLUMNS, Accelerator, AcceleratorPrice
from ..extensions.db import db_session
from ..extensions.smorest import Blueprint
from .schemas import AcceleratorQuerySchema, AcceleratorSchema

blp = Blueprint(
    "accelerators",
    __name__,
    url_prefix="/v1/accelerators",
    description="The accelerator catalog: specs and prices per provider, with sources.",
)


# An accelerator's ETag follows its rows, not the calendar: the prices' age (which moves every day) is left out.
ETAG_SCHEMA = AcceleratorSchema(exclude=("prices.age_days", "prices.stale"))


# A listing's accelerators each carry at most this many prices (issue 28: imported regions and instance types
# made 100-accelerator pages of 1.1 MB, whose serialisation held a worker's loop for a second).
LISTED_PRICES_MAX = 64


def accelerator_to_dict(
    acc: Accelerator, listed: Sequence[AcceleratorPrice] | None = None, total: int | None = None
) -> dict:
    """The answer for one accelerator: every current price row, or, in a listing, `listed` (the cheapest row
    per provider, pricing model and covers) of `total` rows."""
    current = prices_on(acc) if listed is None else list(listed)
    best = default_price(acc, current)
    return {
        "id": acc.id,
        "name": acc.name,
        "vendor": acc.vendor,
        "kind": acc.kind,
        "memory_bytes": acc.memory_bytes,
        "memory_bandwidth_bytes_per_s": acc.memory_bandwidth_bytes_per_s,
        "peak_flops_per_s": {p: acc.peak(p) for p in PRECISION_COLUMNS},
        "interconnect_bandwidth_bytes_per_s": acc.interconnect_bandwidth_bytes_per_s,
        "tdp_watts": acc.tdp_watts,
        "scale_up_domain": acc.scale_up_domain,
        "scale_out_bandwidth_bytes_per_s": acc.scale_out_bandwidth_bytes_per_s,
        "release_year": acc.release_year,
        "default_usd_per_hour": best.usd_per_hour if best else None,
        "prices": current[:LISTED_PRICES_MAX] if listed is not None else current,
        "prices_total": len(current) if total is None else total,
        "sources": {"specs": acc.source_specs, "notes": acc.notes},
    }


@blp.route("")
class Accelerators(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(AcceleratorQuerySchema, location="query")
    @blp.response(200, AcceleratorSchema(many=True))
    @blp.paginate()
    @blp.doc(operationId="listAccelerators")
    def get(self, query, pagination_parameters):
        """List accelerators, filtered by vendor, kind and minimum memory; paginated (X-Pagination header).

        Each accelerator lists the cheapest current price per provider, pricing model and what the price covers
        (at most 64; `prices_total` counts every current row): GET /v1/accelerators/{id} lists them all, with
        their regions and instance types."""
        repo = CatalogRepository(db_session())
        items, total = repo.listing_page(
            repo.query(**query),
            offset=pagination_parameters.first_item,
            limit=pagination_parameters.page_size,
        )
        pagination_parameters.item_count = total
        cheapest, totals = repo.cheapest_current([a.id for a in items])
        return [accelerator_to_dict(a, cheapest[a.id], totals.get(a.id, 0)) for a in items]


@blp.route("/<string:accelerator_id>")
class AcceleratorItem(MethodView):
    @blp.auth("viewer", read=True)
    @blp.etag
    @blp.response(200, AcceleratorSchema)
    @blp.problem(404, "No accelerator has this id.")
    @blp.doc(operationId="getAccelerator")
    def get(self, accelerator_id: str):
        """One accelerator with its current prices. The ETag changes whenever its specs or prices change."""
        acc = CatalogRepository(db_session()).get(accelerator_id)
        if acc is None:
            abort(
                404,
                message=_(
                    "Unknown accelerator '{accelerator_id}'. GET /v1/accelerators lists the ids."
                ).format(accelerator_id=accelerator_id),
            )
        assert acc is not None  # abort raised
        data = accelerator_to_dict(acc)
        blp.set_etag(data, ETAG_SCHEMA)
        return data
