"""Price imports and freshness (admin): POST /v1/price-imports (a cloud price list: dry run or apply),
GET /v1/price-imports[/{id}] (applied imports), GET /v1/prices/stale (current prices past their age)."""

from __future__ import annotations

import datetime as dt

from flask import current_app, g, request, url_for
from flask.views import MethodView
from flask_smorest import abort

from ...engine.i18n import _
from ...greenlets import off_the_loop
from ...store import price_imports as import_store
from ...store.errors import ConcurrentChange
from ...usecases import price_imports
from ...usecases.price_formats import PriceFileError
from ..extensions import errors, work
from ..extensions.auth import actor
from ..extensions.db import db_session, invalidate_catalog
from ..extensions.smorest import Blueprint
from .schemas import (
    ImportListItemSchema,
    ImportQuerySchema,
    ImportRecordSchema,
    ImportResultSchema,
    StaleQuerySchema,
    StaleSchema,
)

blp = Blueprint(
    "price-imports",
    __name__,
    url_prefix="/v1",
    description=(
        "Import cloud price lists (admin key): see the diff before applying it; applied imports are one "
        "transaction with one audit event per change. Stale prices (older than PRICE_STALE_AFTER_DAYS)."
    ),
)

# The one endpoint whose body is a price list, JSON or CSV, read by the view (create_app lets it through).
RAW_BODY_ENDPOINTS = {"price-imports.PriceImports"}
CONTENT_TYPES = {
    "aws-price-list": {"application/json", "text/csv"},
    "azure-retail": {"application/json"},
    "gcp-billing": {"application/json"},
    "skypilot": {"text/csv"},
    "csv": {"text/csv"},
}
OCTET_STREAM = "application/octet-stream"  # any source: the file's bytes, read in the source's format
BODY_DOC = {
    "required": True,
    "description": "The price list file as published: JSON (aws-price-list, azure-retail, gcp-billing) or CSV "
    "(aws-price-list, skypilot, csv). At most PRICE_IMPORT_MAX_BYTES (32 MiB by default); the CLI reads any size.",
    "content": {
        "application/json": {
            "schema": {
                "description": "An offer file, API page or SKU list (an object); azure-retail and gcp-billing "
                "also read the bare array of items or SKUs some exports save",
                "oneOf": [{"type": "object"}, {"type": "array", "items": {}}],
            }
        },
        "text/csv": {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "An AWS CSV offer file, or the catalog's columns",
            }
        },
        OCTET_STREAM: {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "The file's bytes, whatever its format, read as the source's: what generated "
                "clients send for a file upload (openapi-python-client reads no text/csv body)",
            }
        },
    },
}


def _instance_map():
    extra = current_app.config.get("PRICE_INSTANCE_MAP")
    return price_imports.instance_map([extra] if extra else [])


@blp.route("/price-imports")
class PriceImports(MethodView):
    @blp.auth("admin")
    @blp.arguments(ImportQuerySchema, location="query")
    @blp.doc(requestBody=BODY_DOC)
    @blp.response(200, ImportResultSchema, description="A dry run, or an import with nothing to change")
    @blp.alt_response(
        201,
        schema=ImportResultSchema,
        description="Applied: the prices changed (Location: the import's record)",
        headers={"Location": {"description": "URL of the import", "schema": {"type": "string"}}},
    )
    @blp.problem(
        409,
        "Another change to the same accelerators committed first, or another write (a second import) held the "
        "lock longer than DB_LOCK_TIMEOUT_MS / SQLITE_BUSY_TIMEOUT_MS; nothing was written: retry (Retry-After).",
    )
    @blp.problem(
        413,
        "The file is larger than PRICE_IMPORT_MAX_BYTES, or applying it would change more than "
        "PRICE_IMPORT_API_MAX_CHANGES prices, or it holds more than PRICE_IMPORT_API_MAX_OFFERS offers (what fits "
        "the request budget): use scalecost prices import.",
    )
    @blp.problem(415, "The body is not JSON or CSV as the source requires.")
    @blp.doc(operationId="importPrices")
    def post(self, query):
        """Import a cloud price list: the diff (added, changed, unchanged, kept, not in the file, unmapped,
        refused) and the saved scenarios it moves; with dry_run=false, apply it in one transaction.

        Each instance type maps to an accelerator and a count (service/store/seed/instance_map.csv, extended by
        PRICE_INSTANCE_MAP); prices are stored per accelerator-hour with their region and pricing model. A price an
        admin set by hand after the file's date is kept unless force=true. Importing the same file again changes
        nothing. A malformed file is a 422 naming the line or JSON path; nothing is written."""
        source = query["source"]
        wanted = CONTENT_TYPES[source]
        if request.mimetype not in set().union(*CONTENT_TYPES.values(), {OCTET_STREAM}):
            return errors.problem(
                415,
                f"Send the {source} file with Content-Type: {' or '.join(sorted(wanted | {OCTET_STREAM}))} "
                f"(got {request.mimetype or 'none'}).",
            )
        # A body of the operation's other media type (a JSON price list labelled text/csv) is read as the source's
        # format all the same: it is either readable, or a 422 naming where it is not.
        data = request.get_data(cache=False)
        session = db_session()
        try:
            answer = price_imports.run(
                session,
                source,
                [price_imports.PriceFile(query["name"], data)],
                dry_run=query["dry_run"],
                force=query["force"],
                actor=actor(),
                request_id=g.request_id,
                table=_instance_map(),
                max_changes=current_app.config["PRICE_IMPORT_API_MAX_CHANGES"],
                pause=work.yield_loop,
                max_offers=current_app.config["PRICE_IMPORT_API_MAX_OFFERS"],
                listed_max=current_app.config["PRICE_IMPORT_API_LISTED_MAX"],
                offload=off_the_loop,
            )
            if answer["applied"]:
                session.commit()
                invalidate_catalog()
        except PriceFileError as error:
            session.rollback()
            return errors.problem(
                422,
                f"The {source} file cannot be read: {error}. Nothing was imported.",
                errors={"body": [str(error)]},
                title="Unreadable price file",
                type_=errors.UNREADABLE_FILE,
            )
        except price_imports.TooManyChanges as error:
            session.rollback()
            return errors.problem(
                413,
                _(
                    "Applying this file would change {changes} prices; one request applies at most {limit} "
                    "(PRICE_IMPORT_API_MAX_CHANGES). Nothing was written: apply it with `scalecost prices "
                    "import`, which commits in batches, or split the file."
                ).format(changes=error.changes, limit=error.limit),
            )
        except price_imports.TooManyOffers as error:
            session.rollback()
            return errors.problem(
                413,
                _(
                    "This file holds {offers} price offers; one request reads at most {limit} "
                    "(PRICE_IMPORT_API_MAX_OFFERS). Nothing was written: import it with `scalecost prices "
                    "import`, or split the file."
                ).format(offers=error.offers, limit=error.limit),
            )
        except ConcurrentChange:
            session.rollback()
            abort(
                409,
                message=_(
                    "Another change to these accelerators' prices committed first; nothing was written. Retry."
                ),
            )
        if answer["applied"]:
            location = url_for("price-imports.PriceImportItem", import_id=answer["import_id"])
            return answer, 201, {"Location": location}
        return answer

    @blp.auth("admin")
    @blp.response(200, ImportListItemSchema(many=True))
    @blp.doc(operationId="listPriceImports")
    def get(self):
        """The 50 latest applied imports, newest first (GET /v1/price-imports/{id} has each one's diff)."""
        return import_store.recent(db_session())


@blp.route("/price-imports/<int(min=1, max=2147483647):import_id>")
class PriceImportItem(MethodView):
    @blp.auth("admin")
    @blp.response(200, ImportRecordSchema)
    @blp.problem(404, "No import has this id.")
    @blp.doc(operationId="getPriceImport")
    def get(self, import_id: int):
        """An applied import: its files, when and by whom, and the diff it applied."""
        record = import_store.get(db_session(), import_id)
        if record is None:
            abort(404, message=_("No price import {import_id}.").format(import_id=import_id))
        return record


@blp.route("/prices/stale")
class StalePrices(MethodView):
    @blp.auth("admin")
    @blp.arguments(StaleQuerySchema, location="query")
    @blp.response(200, StaleSchema)
    @blp.doc(operationId="listStalePrices")
    def get(self, query):
        """Current prices older than PRICE_STALE_AFTER_DAYS (or older_than_days), oldest first: estimates that use
        them say so (cost.price_source.stale)."""
        days = query.get("older_than_days", current_app.config["PRICE_STALE_AFTER_DAYS"])
        today = dt.datetime.now(dt.UTC).date()
        prices = price_imports.stale(db_session(), today=today, older_than_days=days)
        return {"today": today, "older_than_days": days, "count": len(prices), "prices": prices}
