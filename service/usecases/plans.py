"""Use cases of the planners: search on the catalog priced today (or, for serving, on `cost.as_of`)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from .. import engine
from ..engine.budget import Checkpoint, unlimited
from ..engine.calibration import used_profile
from . import calibrations
from .catalog import CatalogCache, engine_catalog
from .offloading import Offload, here


def plan_training(
    request: dict[str, Any],
    session: Session,
    *,
    cache: CatalogCache | None = None,
    checkpoint: Checkpoint = unlimited,
    offload: Offload | None = None,
) -> dict[str, Any]:
    """`request` is the validated body. Raises the engine's InvalidRequest for impossible input. The catalog is read
    first; `checkpoint` then bounds the search (the engine's budget.py), which runs through `offload(call, *args)`
    when given (the api: off the event loop)."""
    profile, request = _profile(request, session)
    catalog = engine_catalog(session, None, cache)
    session.rollback()  # read-only: end the transaction before the long search (no connection held meanwhile)
    if profile is not None:
        catalog = calibrations.planner_catalog("training", catalog, profile)
    return _named((offload or here)(engine.plan_training, request, catalog, checkpoint), profile)


def plan_serving(
    request: dict[str, Any],
    session: Session,
    *,
    cache: CatalogCache | None = None,
    checkpoint: Checkpoint = unlimited,
    offload: Offload | None = None,
) -> dict[str, Any]:
    """`request` is the validated body. Raises the engine's InvalidRequest for impossible input. The search runs
    through `offload` when given."""
    profile, request = _profile(request, session)

    def catalog_on(day: dt.date | None) -> engine.Catalog:
        catalog = engine_catalog(session, day, cache)
        session.rollback()  # read-only: end the transaction before the long search (no connection held meanwhile)
        return catalog if profile is None else calibrations.planner_catalog("inference", catalog, profile)

    return _named(plan_serving_on(request, catalog_on, checkpoint=checkpoint, offload=offload), profile)


def _profile(request: dict[str, Any], session: Session) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The calibration profile the request names (None without one) and the request without the name."""
    ref = request.get("calibration")
    if not ref:
        return None, request
    body = {k: v for k, v in request.items() if k != "calibration"}
    return calibrations.profile_for(session, ref), body


def _named(answer: dict[str, Any], profile: dict[str, Any] | None) -> dict[str, Any]:
    """A planner's answer names the profile it searched with: its part (every part with apply_to "any") was scaled,
    and each `estimate_request` on such a part names the profile too, so that it reproduces the plan."""
    if profile is not None:
        answer["calibration"] = used_profile(profile)
        _name_in_bodies(answer, profile)
    return answer


def _name_in_bodies(node: Any, profile: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _name_in_bodies(item, profile)
    elif isinstance(node, dict):
        body = node.get("estimate_request")
        if isinstance(body, dict):
            part = (body.get("hardware") or {}).get("accelerator")
            if profile.get("apply_to") == "any" or part == profile["accelerator"]:
                body["calibration"] = profile["name"]
        for key, value in node.items():
            if key != "estimate_request":
                _name_in_bodies(value, profile)


def plan_serving_on(
    request: dict[str, Any],
    catalog_on: Callable[[dt.date | None], engine.Catalog],
    *,
    checkpoint: Checkpoint = unlimited,
    offload: Offload | None = None,
) -> dict[str, Any]:
    """`plan_serving` on the catalog `catalog_on(day)` answers (the library's catalogs need no session)."""
    calibrations.refuse_without_store(request)  # plan_serving took the service's profile out already
    body = dict(request)
    cost = dict(body.get("cost") or {})
    day: dt.date | None = cost.get("as_of")
    if day is not None:
        cost["as_of"] = day.isoformat()  # echoed into the estimate bodies, which take it as a string
    body["cost"] = cost
    catalog = catalog_on(day)
    started = time.perf_counter()
    answer = (offload or here)(engine.plan_serving, body, catalog, checkpoint)
    answer["search"]["server_seconds"] = time.perf_counter() - started
    if day is not None:
        answer["priced_as_of"] = day.isoformat()
    return answer
