"""Use cases of the planners: search on the catalog priced today (or, for serving, on `cost.as_of`)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from .. import engine
from ..engine.budget import Checkpoint, unlimited
from .catalog import CatalogCache, engine_catalog

Offload = Callable[..., Any]  # offload(call, *args) -> call(*args), run wherever the caller chooses


def _here(call: Callable[..., Any], *args: Any) -> Any:
    return call(*args)


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
    catalog = engine_catalog(session, None, cache)
    session.rollback()  # read-only: end the transaction before the long search (no connection held meanwhile)
    return (offload or _here)(engine.plan_training, request, catalog, checkpoint)


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

    def catalog_on(day: dt.date | None) -> engine.Catalog:
        catalog = engine_catalog(session, day, cache)
        session.rollback()  # read-only: end the transaction before the long search (no connection held meanwhile)
        return catalog

    return plan_serving_on(request, catalog_on, checkpoint=checkpoint, offload=offload)


def plan_serving_on(
    request: dict[str, Any],
    catalog_on: Callable[[dt.date | None], engine.Catalog],
    *,
    checkpoint: Checkpoint = unlimited,
    offload: Offload | None = None,
) -> dict[str, Any]:
    """`plan_serving` on the catalog `catalog_on(day)` answers (the library's catalogs need no session)."""
    body = dict(request)
    cost = dict(body.get("cost") or {})
    day: dt.date | None = cost.get("as_of")
    if day is not None:
        cost["as_of"] = day.isoformat()  # echoed into the estimate bodies, which take it as a string
    body["cost"] = cost
    catalog = catalog_on(day)
    started = time.perf_counter()
    answer = (offload or _here)(engine.plan_serving, body, catalog, checkpoint)
    answer["search"]["server_seconds"] = time.perf_counter() - started
    if day is not None:
        answer["priced_as_of"] = day.isoformat()
    return answer
