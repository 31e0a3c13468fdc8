"""Saved budget scenarios: CRUD with revisions, re-pricing against today's catalog, comparison."""

from __future__ import annotations

from flask import g, url_for
from flask.views import MethodView
from flask_smorest import abort

from service.engine.errors import InvalidRequest
from service.store import scenarios as store
from service.store.models import Scenario
from service.usecases import estimates

from .auth import actor
from .deps import db_session, run_estimate
from .scenario_schemas import (
    CompareResultSchema,
    CompareSchema,
    RepricedSchema,
    RevisionSchema,
    ScenarioListItemSchema,
    ScenarioQuerySchema,
    ScenarioSchema,
    ScenarioWriteSchema,
)
from .smorest import Blueprint

blp = Blueprint(
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
        abort(404, message=f"No scenario {scenario_id}.")
    return scenario


def _name_free(name: str, except_id: int | None = None) -> None:
    if store.name_taken(db_session(), name, except_id=except_id):
        abort(409, message=f"A scenario named '{name}' exists.")


@blp.route("")
class Scenarios(MethodView):
    @blp.auth("viewer", read=False)
    @blp.arguments(ScenarioQuerySchema, location="query")
    @blp.response(200, ScenarioListItemSchema(many=True))
    @blp.paginate()
    def get(self, query, pagination_parameters):
        """List scenarios: filter by name substring, tag, kind, owner; sort by updated_at or name."""
        session, ids = db_session(), store.query(**query)
        filters = {k for k in ("name", "tag", "kind", "owner") if query.get(k)}
        total = store.total(session, ids, kind_only=query.get("kind") if filters == {"kind"} else None,
                            unfiltered=not filters)  # fmt: skip
        items, total = store.page(
            session, ids, pagination_parameters.first_item, pagination_parameters.page_size, total_count=total
        )
        pagination_parameters.item_count = total
        return items

    @blp.auth("editor")
    @blp.etag
    @blp.arguments(ScenarioWriteSchema)
    @blp.response(
        201,
        ScenarioSchema,
        headers={"Location": {"description": "URL of the new scenario", "schema": {"type": "string"}}},
    )
    @blp.problem(409, "A scenario with this name exists.")
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
    def get(self, scenario_id: int):
        """Every revision, oldest first, with who and when (kept after deletion)."""
        rows = store.revisions(db_session(), scenario_id)
        if not rows:
            abort(404, message=f"No scenario {scenario_id}.")
        return rows


@blp.route("/<int(min=1, max=2147483647):scenario_id>/estimate")
class ScenarioRepriced(MethodView):
    @blp.auth("viewer", read=False)
    @blp.response(200, RepricedSchema)
    @blp.problem(404, "No scenario has this id.")
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
            "basis": "total_usd" if scenario.kind == "training" else "usd_per_hour",
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
    def post(self, body):
        """Scenarios side by side (cost, time, memory fit, accelerator) for a budget review."""
        found = store.get_many(db_session(), body["ids"])
        missing = sorted(set(body["ids"]) - {s.id for s in found})
        if missing:
            abort(404, message=f"Unknown scenario ids: {', '.join(map(str, missing))}.")
        rows = [{"id": s.id, "name": s.name, "kind": s.kind, **(s.summary or {})} for s in found]
        priced = [r for r in rows if r["kind"] == "training" and r.get("total_usd") is not None]
        cheapest = min(priced, key=lambda r: r["total_usd"])["id"] if priced else None
        return {"scenarios": rows, "cheapest_id": cheapest}
