"""Calibration profiles: fit a team's measured points, keep every fit as a revision, estimate with a profile."""

from __future__ import annotations

from typing import Any

from flask import g, request, url_for
from flask.views import MethodView
from flask_smorest import abort

from ...engine.i18n import _
from ...store import calibrations as store
from ...store.models import CalibrationProfile
from ...usecases import calibrations
from ..extensions import work
from ..extensions.auth import actor
from ..extensions.db import catalog_cache, db_session
from ..extensions.smorest import Blueprint
from .schemas import (
    CalibrationListItemSchema,
    CalibrationQuerySchema,
    CalibrationRevisionSchema,
    CalibrationSchema,
    CalibrationWriteSchema,
    RefitSchema,
    load_points,
)

blp = Blueprint(
    "calibrations",
    __name__,
    url_prefix="/v1/calibrations",
    description=(
        "Calibration profiles: a team's own measurements (estimate requests with what was measured, or vLLM / "
        "SGLang benchmark-serving results and CSV files) fitted into compute, memory-bandwidth and network factors "
        "with their uncertainty. Estimates, batches, scenarios and both planners take `calibration: <name or id>`. "
        "Any `viewer` key reads profiles; `editor` and `admin` keys create, refit and delete them. Every fit is a "
        "revision (GET /v1/calibrations/{id}/revisions, kept after deletion)."
    ),
)
LARGE_BODY_ENDPOINTS = frozenset({"calibrations.Calibrations", "calibrations.CalibrationItem"})
LARGE_BODY_ENDPOINTS |= {"calibrations.CalibrationRefit"}


IF_MATCH = {
    "in": "header",
    "name": "If-Match",
    "required": True,
    "description": "The profile's ETag (GET /v1/calibrations/{id})",
    "schema": {"type": "string"},
}


def _etag_data(profile: CalibrationProfile) -> dict:
    return {"calibration": profile.id, "version": profile.version}


def _get_or_404(profile_id: int) -> CalibrationProfile:
    profile = store.get(db_session(), profile_id)
    if profile is None:
        abort(404, message=_("No calibration profile {id}.").format(id=profile_id))
    assert profile is not None  # abort raised
    return profile


def _name_free(name: str, except_id: int | None = None) -> None:
    if store.name_taken(db_session(), name, except_id=except_id):
        abort(409, message=_("A calibration profile named '{name}' exists.").format(name=name))


def _fitted(name: str, kind: str, apply_to: str, loaded: dict[str, Any]) -> dict[str, Any]:
    """Fit the points within the request's time budget (heavy work) and return what the store keeps."""
    with work.heavy():
        fitted = calibrations.fit(
            kind,
            loaded["points"],
            loaded["refused"],
            db_session(),
            cache=catalog_cache(),
            checkpoint=work.checkpoint,
        )
    sent = [{"request": p["sent"], "measured": p["measured"]} for p in loaded["points"]]
    return calibrations.content(name, kind, apply_to, sent, fitted)


@blp.route("")
class Calibrations(MethodView):
    @blp.auth("viewer", read=False)
    @blp.arguments(CalibrationQuerySchema, location="query")
    @blp.response(200, CalibrationListItemSchema(many=True))
    @blp.paginate()
    @blp.doc(operationId="listCalibrations")
    def get(self, query, pagination_parameters):
        """List profiles, newest change first; filter by kind or accelerator."""
        rows, total = store.page(
            db_session(),
            store.listing(query.get("kind"), query.get("accelerator")),
            pagination_parameters.first_item,
            pagination_parameters.page_size,
        )
        pagination_parameters.item_count = total
        return rows

    @blp.auth("editor")
    @blp.etag
    @blp.arguments(CalibrationWriteSchema)
    @blp.response(
        201,
        CalibrationSchema,
        headers={"Location": {"description": "URL of the new profile", "schema": {"type": "string"}}},
    )
    @blp.problem(409, "A profile with this name exists.")
    @blp.doc(operationId="createCalibration")
    def post(self, data):
        """Fit a profile on measured points and files (1 to 10,000 points).

        Answers the fitted factors with their standard deviation and bounds (clamping said), each point's error
        before and after the fit, and the points refused with their problems (the rest still fit). No point that
        can be fitted, a figure ≤ 0 or not finite, more than 10,000 points, an unknown file format: 422."""
        _name_free(data["name"])
        content = _fitted(data["name"], data["kind"], data["apply_to"], _loaded(data))
        session = db_session()
        profile = store.create(session, content, owner=actor(), request_id=g.request_id)
        session.commit()
        blp.set_etag(_etag_data(profile))
        return profile, 201, {"Location": url_for("calibrations.CalibrationItem", profile_id=profile.id)}


@blp.route("/<int(min=1, max=2147483647):profile_id>")
class CalibrationItem(MethodView):
    @blp.auth("viewer", read=False)
    @blp.etag
    @blp.response(200, CalibrationSchema)
    @blp.problem(404, "No profile has this id.")
    @blp.doc(operationId="getCalibration")
    def get(self, profile_id: int):
        """One profile: its current fit, the points as sent (`inputs`) and the residuals. ETag / If-None-Match."""
        profile = _get_or_404(profile_id)
        blp.set_etag(_etag_data(profile))
        return profile

    @blp.auth("editor")
    @blp.etag
    @blp.arguments(CalibrationWriteSchema)
    @blp.response(200, CalibrationSchema)
    @blp.problem(404, "No profile has this id.")
    @blp.problem(409, "Another profile has this name.")
    @blp.doc(operationId="replaceCalibration")
    def put(self, data, profile_id: int):
        """Refit the profile on new points (If-Match required): a new revision; the old ones stay readable."""
        profile = _get_or_404(profile_id)
        blp.check_etag(_etag_data(profile))
        _name_free(data["name"], except_id=profile_id)
        content = _fitted(data["name"], data["kind"], data["apply_to"], _loaded(data))
        session = db_session()
        store.refit(session, profile, content, author=actor(), request_id=g.request_id)
        session.commit()
        blp.set_etag(_etag_data(profile))
        return profile

    @blp.auth("editor")
    @blp.etag
    @blp.response(204)
    @blp.problem(404, "No profile has this id.")
    @blp.doc(operationId="deleteCalibration")
    def delete(self, profile_id: int):
        """Delete a profile (If-Match required); its revisions stay readable. Estimates naming it then get 422."""
        profile = _get_or_404(profile_id)
        blp.check_etag(_etag_data(profile))
        session = db_session()
        store.delete(session, profile, author=actor(), request_id=g.request_id)
        session.commit()


@blp.route("/<int(min=1, max=2147483647):profile_id>/refit")
class CalibrationRefit(MethodView):
    @blp.auth("editor")
    @blp.etag
    @blp.arguments(RefitSchema)
    @blp.response(200, CalibrationSchema)
    @blp.problem(404, "No profile has this id.")
    @blp.problem(412, "The profile changed since the ETag given in If-Match.")
    @blp.problem(428, "If-Match is required.")
    @blp.doc(operationId="refitCalibration", parameters=[IF_MATCH])
    def post(self, data, profile_id: int):
        """Add points (or none) to the profile's and refit them all on today's catalog (If-Match required): a new
        revision; the old ones stay readable."""
        profile = _get_or_404(profile_id)
        _check_if_match(profile)
        points = [*(profile.points or []), *(data.get("points") or [])]
        loaded = load_points(profile.kind, points, data.get("files") or [])
        content = _fitted(profile.name, profile.kind, profile.apply_to, loaded)
        session = db_session()
        store.refit(session, profile, content, author=actor(), request_id=g.request_id)
        session.commit()
        blp.set_etag(_etag_data(profile))
        return profile


def _check_if_match(profile: CalibrationProfile) -> None:
    """If-Match on a POST (flask-smorest checks it on PUT, PATCH and DELETE only): 428 without, 412 when stale."""
    if not request.if_match:
        abort(428)  # as flask-smorest answers a PUT without it
    if blp._generate_etag(_etag_data(profile)) not in request.if_match:
        abort(
            412,
            message=_("The resource was modified concurrently; GET it again and retry with its new ETag."),
        )


def _loaded(data: dict[str, Any]) -> dict[str, Any]:
    return load_points(data["kind"], data.get("points") or [], data.get("files") or [])


@blp.route("/<int(min=1, max=2147483647):profile_id>/revisions")
class CalibrationRevisions(MethodView):
    @blp.auth("viewer", read=False)
    @blp.response(200, CalibrationRevisionSchema(many=True))
    @blp.problem(404, "No profile has (or had) this id.")
    @blp.doc(operationId="listCalibrationRevisions")
    def get(self, profile_id: int):
        """Every fit of the profile, oldest first, with who and when (kept after deletion)."""
        rows = store.revisions(db_session(), profile_id)
        if not rows:
            abort(404, message=_("No calibration profile {id}.").format(id=profile_id))
        return rows
