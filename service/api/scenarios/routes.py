"""Saved budget scenarios: CRUD with revisions, re-pricing against today's catalog, comparison."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from flask import g, request, url_for
from flask.views import MethodView
from flask_smorest import abort

from ...engine import InvalidRequest
from ...engine.i18n import _
from ...store import scenario_listing
from ...store import scenarios as store
from ...store.models import Scenario
from ...usecases import estimates, price_moves
from ..extensions.auth import actor
from ..extensions.db import db_session, run_estimate
from ..extensions.smorest import Blueprint
from .schemas import (
    CompareResultSchema,
    CompareSchema,
    RepricedSchema,
    RevisionSchema,
    ScenarioListItemSchema,
    ScenarioQuerySchema,
    ScenarioSchema,
    ScenarioWriteSchema,
)


class ListingBlueprint(Blueprint):
    """X-Pagination of the listing: flask-smorest's fields, plus `total_is_lower_bound` and `next_cursor`
    (and a `Link: <…>; rel="next"` header); a cursor page leaves out the page numbers, which do not apply."""

    def _set_pagination_metadata(self, page_params, result, headers):
        result, headers = super()._set_pagination_metadata(page_params, result, headers)
        extra = getattr(page_params, "listing", None)
        if extra is None:
            return result, headers
        metadata = json.loads(headers[self.PAGINATION_HEADER_NAME])
        if extra["keyset"]:
            for field in ("page", "previous_page", "next_page"):
                metadata.pop(field, None)
        metadata["total_is_lower_bound"] = extra["total_is_lower_bound"]
        if extra["next_cursor"]:
            metadata["next_cursor"] = extra["next_cursor"]
            args = [(k, v) for k, v in request.args.items(multi=True) if k not in ("page", "cursor")]
            target = (
                f"{request.script_root}{request.path}?{urlencode([*args, ('cursor', extra['next_cursor'])])}"
            )
            headers["Link"] = f'<{target}>; rel="next"'
        headers[self.PAGINATION_HEADER_NAME] = json.dumps(metadata)
        return result, headers

    def _document_pagination_metadata(self, spec, resp_doc):
        if PAGINATION_COMPONENT not in spec.components.headers:
            spec.components.header(PAGINATION_COMPONENT, PAGINATION_DOC)
        resp_doc.setdefault("headers", {}).update(
            {self.PAGINATION_HEADER_NAME: PAGINATION_COMPONENT, "Link": LINK_DOC}
        )


PAGINATION_COMPONENT = "SCENARIO_PAGINATION"
PAGINATION_DOC = {
    "description": (
        "Pagination metadata as JSON: total, total_pages, first_page, last_page, page, previous_page, "
        "next_page (the page numbers are absent on a cursor page), total_is_lower_bound, next_cursor. "
        "total_is_lower_bound true: a name, tag or owner filter matched at least `total` scenarios (counting "
        f"stops at {scenario_listing.COUNT_CAP:,} matches, or one page past the requested one), so total_pages and "
        "last_page are lower bounds too; without a filter, or with kind alone, the total is exact. "
        "next_cursor: absent on the last page; pass it as `cursor` for the next page."
    ),
    "schema": {
        "type": "string",
        "example": '{"total": 100, "total_pages": 5, "first_page": 1, "last_page": 5, "page": 1, '
        '"next_page": 2, "total_is_lower_bound": true, "next_cursor": "eyJ2IjoxLCJzIjoi..."}',
    },
}
LINK_DOC = {
    "description": 'RFC 8288 link to the next page by cursor, `</v1/scenarios?…&cursor=…>; rel="next"`; absent '
    "on the last page",
    "schema": {"type": "string"},
}

blp = ListingBlueprint(
    "scenarios",
    __name__,
    url_prefix="/v1/scenarios",
    description=(
        "Named budget scenarios: saved requests with their estimate and the prices used. Who may change a "
        "scenario: scenarios are shared by the team, not private. Any key with the `viewer` role reads every "
        "scenario; any `editor` or `admin` key may create one and may replace or delete any scenario, "
        "whoever created it. `owner` is the key that created the scenario and never changes; every change "
        "is a revision whose `author` is the key that made it (GET /v1/scenarios/{id}/revisions, kept after "
        "deletion)."
    ),
)


def _estimate(data: dict) -> dict:
    """Run the estimate for a scenario body; engine errors are reported under `request.`."""
    try:
        return run_estimate(data["kind"], data["loaded_request"])
    except InvalidRequest as exc:
        raise InvalidRequest({f"request.{k}": v for k, v in exc.errors.items()}) from None


def _content(data: dict) -> dict:
    estimate = _estimate(data)
    loaded = data["loaded_request"]
    return {
        "name": data["name"],
        "description": data.get("description"),
        "kind": data["kind"],
        "tags": data.get("tags") or [],
        "request": data["request"],
        "estimate": estimate,
        "prices": estimates.price_snapshot(data["kind"], loaded, estimate),
        "summary": estimates.summary(data["kind"], loaded, estimate),
    }


def _etag_data(scenario: Scenario) -> dict:
    """The ETag follows the version column, which every change bumps."""
    return {"scenario": scenario.id, "version": scenario.version}


def _get_or_404(scenario_id: int) -> Scenario:
    scenario = store.get(db_session(), scenario_id)
    if scenario is None:
        abort(404, message=_("No scenario {scenario_id}.").format(scenario_id=scenario_id))
    assert scenario is not None  # abort raised
    return scenario


def _name_free(name: str, except_id: int | None = None) -> None:
    if store.name_taken(db_session(), name, except_id=except_id):
        abort(409, message=_("A scenario named '{name}' exists.").format(name=name))


@blp.route("")
class Scenarios(MethodView):
    @blp.auth("viewer", read=False)
    @blp.arguments(ScenarioQuerySchema, location="query")
    @blp.response(200, ScenarioListItemSchema(many=True))
    @blp.paginate()
    @blp.doc(operationId="listScenarios")
    def get(self, query, pagination_parameters):
        """List scenarios: filter by name substring, tag, kind, owner; sort by updated_at or name.

        Pages by number (`page`, `page_size`) or by cursor: every page's X-Pagination carries `next_cursor`
        (and `Link: <…>; rel="next"`) while more rows follow; `?cursor=…` continues right after that page
        at the same cost however deep. Without a filter, or with `kind` alone, the total is exact; a name, tag
        or owner filter's matches are counted up to a cap, past which `total_is_lower_bound` is true (see the
        X-Pagination header)."""
        after = query.pop("cursor", None)
        if after is not None and "page" in request.args:
            abort(422, errors={"query.page": [_("Give either page or cursor, not both.")]})
        result = scenario_listing.listing(
            db_session(),
            **query,
            offset=pagination_parameters.first_item,
            limit=pagination_parameters.page_size,
            after=after,
        )
        if query.get("cost_changed_by_more_than") is not None:
            price_moves.attach(db_session(), result.items)
        pagination_parameters.item_count = result.total
        pagination_parameters.listing = {
            "keyset": after is not None,
            "total_is_lower_bound": result.total_is_lower_bound,
            "next_cursor": result.next_cursor,
        }
        return result.items

    @blp.auth("editor")
    @blp.etag
    @blp.arguments(ScenarioWriteSchema)
    @blp.response(
        201,
        ScenarioSchema,
        headers={"Location": {"description": "URL of the new scenario", "schema": {"type": "string"}}},
    )
    @blp.problem(409, "A scenario with this name exists.")
    @blp.doc(operationId="createScenario")
    def post(self, data):
        """Save a scenario (also imports the export format of GET /v1/scenarios/{id})."""
        _name_free(data["name"])
        content = _content(data)
        session = db_session()
        scenario = store.create(session, content, owner=actor(), request_id=g.request_id)
        session.commit()
        blp.set_etag(_etag_data(scenario))
        return scenario, 201, {"Location": url_for("scenarios.ScenarioItem", scenario_id=scenario.id)}


@blp.route("/<int(min=1, max=2147483647):scenario_id>")
class ScenarioItem(MethodView):
    @blp.auth("viewer", read=False)
    @blp.etag
    @blp.response(200, ScenarioSchema)
    @blp.problem(404, "No scenario has this id.")
    @blp.doc(operationId="getScenario")
    def get(self, scenario_id: int):
        """One scenario: request, saved estimate, price snapshot (the export format). ETag / If-None-Match."""
        scenario = _get_or_404(scenario_id)
        blp.set_etag(_etag_data(scenario))
        return scenario

    @blp.auth("editor")
    @blp.etag
    @blp.arguments(ScenarioWriteSchema)
    @blp.response(200, ScenarioSchema)
    @blp.problem(404, "No scenario has this id.")
    @blp.problem(409, "Another scenario has this name.")
    @blp.doc(operationId="replaceScenario")
    def put(self, data, scenario_id: int):
        """Replace a scenario (If-Match required); re-estimates and records a new revision.

        Any `editor` or `admin` key may replace any scenario, not only its owner's: `owner` stays the
        creator, and the new revision's `author` is the key that made this change."""
        scenario = _get_or_404(scenario_id)
        blp.check_etag(_etag_data(scenario))
        _name_free(data["name"], except_id=scenario_id)
        content = _content(data)
        session = db_session()
        store.update(session, scenario, content, author=actor(), request_id=g.request_id)
        session.commit()
        blp.set_etag(_etag_data(scenario))
        return scenario

    @blp.auth("editor")
    @blp.etag
    @blp.response(204)
    @blp.problem(404, "No scenario has this id.")
    @blp.doc(operationId="deleteScenario")
    def delete(self, scenario_id: int):
        """Delete a scenario (If-Match required); its revisions stay readable.

        Any `editor` or `admin` key may delete any scenario, not only its owner's; the closing `delete`
        revision records which key did."""
        scenario = _get_or_404(scenario_id)
        blp.check_etag(_etag_data(scenario))
        session = db_session()
        store.delete(session, scenario, author=actor(), request_id=g.request_id)
        session.commit()


@blp.route("/<int(min=1, max=2147483647):scenario_id>/revisions")
class ScenarioRevisions(MethodView):
    @blp.auth("viewer", read=False)
    @blp.response(200, RevisionSchema(many=True))
    @blp.problem(404, "No scenario has (or had) this id.")
    @blp.doc(operationId="listScenarioRevisions")
    def get(self, scenario_id: int):
        """Every revision, oldest first, with who and when (kept after deletion)."""
        rows = store.revisions(db_session(), scenario_id)
        if not rows:
            abort(404, message=_("No scenario {scenario_id}.").format(scenario_id=scenario_id))
        return rows


@blp.route("/<int(min=1, max=2147483647):scenario_id>/estimate")
class ScenarioRepriced(MethodView):
    @blp.auth("viewer", read=False)
    @blp.response(200, RepricedSchema)
    @blp.problem(404, "No scenario has this id.")
    @blp.doc(operationId="repriceScenario")
    def get(self, scenario_id: int):
        """Re-run the saved request against today's catalog and show what prices did to the budget."""
        scenario = _get_or_404(scenario_id)
        loaded = ScenarioWriteSchema().load(
            {"name": scenario.name, "kind": scenario.kind, "request": scenario.request}
        )["loaded_request"]
        try:
            current = run_estimate(scenario.kind, loaded)
        except InvalidRequest as exc:  # e.g. the saved accelerator has left the catalog
            raise InvalidRequest({f"request.{k}": v for k, v in exc.errors.items()}) from None
        now = estimates.headline_usd(scenario.kind, current)
        then = estimates.headline_usd(scenario.kind, scenario.estimate)
        delta = {
            "basis": estimates.headline_field(scenario.kind),
            "total_usd": None if now is None or then is None else now - then,
            "percent": None if not then or now is None else (now - then) / then * 100,
        }
        return {"current": current, "saved": scenario.estimate, "delta": delta}


@blp.route("/compare")
class ScenarioCompare(MethodView):
    @blp.auth("viewer", read=False)
    @blp.arguments(CompareSchema)
    @blp.response(200, CompareResultSchema)
    @blp.problem(404, "Some ids are unknown.")
    @blp.doc(operationId="compareScenarios")
    def post(self, body):
        """Scenarios side by side (cost, time, memory fit, accelerator) for a budget review."""
        found = store.get_many(db_session(), body["ids"])
        missing = sorted(set(body["ids"]) - {s.id for s in found})
        if missing:
            abort(404, message=_("Unknown scenario ids: {ids}.").format(ids=", ".join(map(str, missing))))
        rows = [{"id": s.id, "name": s.name, "kind": s.kind, **(s.summary or {})} for s in found]
        priced = [r for r in rows if r["kind"] == "training" and r.get("total_usd") is not None]
        cheapest = min(priced, key=lambda r: r["total_usd"])["id"] if priced else None
        return {"scenarios": rows, "cheapest_id": cheapest}
