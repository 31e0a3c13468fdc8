"""Use cases around an estimate: run it on the catalog priced today (or on `cost.as_of`), and the figures a
saved scenario keeps of it (its prices and its summary)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from sqlalchemy.orm import Session

from ..engine import Catalog, estimate_inference, estimate_training
from ..engine.calibration import estimate_calibrated
from . import calibrations
from .catalog import CatalogCache, engine_catalog

ESTIMATORS = {"training": estimate_training, "inference": estimate_inference}


def estimate(
    kind: str,
    request: dict[str, Any],
    session: Session,
    *,
    cache: CatalogCache | None = None,
    as_of: dt.date | None = None,
    offload: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    """`request` is the validated body. Raises the engine's InvalidRequest for impossible input. A body naming a
    `calibration` profile is estimated on that profile's factors (engine/calibration/apply.py). With
    `offload(call, *args)` (a batch in the api: off the event loop), the catalog and the profile are read here
    and the engine's work runs through it."""
    ref = request.get("calibration")
    profile = calibrations.profile_for(session, ref) if ref else None
    if offload is None:
        return estimate_on(
            kind, request, lambda day: engine_catalog(session, day, cache), as_of=as_of, profile=profile
        )
    catalog = engine_catalog(session, (request.get("cost") or {}).get("as_of") or as_of, cache)
    return offload(partial(estimate_on, as_of=as_of, profile=profile), kind, request, lambda _day: catalog)


def estimate_on(
    kind: str,
    request: dict[str, Any],
    catalog_on: Callable[[dt.date | None], Catalog],
    *,
    as_of: dt.date | None = None,
    profile: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`estimate` on the catalog `catalog_on(day)` answers (the library's catalogs need no session), with the
    calibration `profile` when given."""
    if profile is None:
        calibrations.refuse_without_store(request)
    # the engine never mutates its input; `cost.as_of` and `calibration` are taken out here
    body = {k: v for k, v in request.items() if k != "calibration"}
    cost = dict(body.get("cost") or {})
    day = cost.pop("as_of", None) or as_of
    body["cost"] = cost
    if profile is not None:
        estimate = estimate_calibrated(kind, body, catalog_on(day), profile)
    else:
        estimate = ESTIMATORS[kind](body, catalog_on(day))
    if day is not None:
        estimate.setdefault("cost", {})["priced_as_of"] = day.isoformat()
    return estimate


def price_snapshot(kind: str, request: dict[str, Any], estimate: dict[str, Any]) -> dict[str, Any]:
    """The prices an estimate used, kept with a saved scenario."""
    cost = estimate.get("cost") or {}
    return {
        "taken_at": dt.datetime.now(dt.UTC).isoformat(),
        "accelerator": request["hardware"]["accelerator"],
        "usd_per_accelerator_hour": cost.get("usd_per_accelerator_hour", cost.get("usd_per_hour")),
        "price_source": cost.get("price_source"),
    }


def summary(kind: str, request: dict[str, Any], estimate: dict[str, Any]) -> dict[str, Any]:
    """The figures a budget review compares."""
    cost = estimate.get("cost") or {}
    memory = estimate.get("memory") or {}
    out: dict[str, Any] = {
        "accelerator": request["hardware"]["accelerator"],
        "count": (estimate.get("hardware") or {}).get("count", request["hardware"].get("count")),
        "fits": memory.get("fits"),
    }
    if kind == "training":
        out.update(
            total_usd=cost.get("total_usd"),
            seconds=(estimate.get("time") or {}).get("seconds"),
            accelerator_hours=cost.get("accelerator_hours"),
        )
    else:
        latency = estimate.get("latency") or {}
        out.update(
            usd_per_hour=cost.get("usd_per_hour"),
            usd_per_million_output_tokens=cost.get("usd_per_million_output_tokens"),
            output_tokens_per_second=(estimate.get("throughput") or {}).get("output_tokens_per_second"),
            seconds=latency.get("end_to_end_s"),
        )
    return out


def headline_field(kind: str) -> str:
    """The cost field a price change moves (the headline number): total USD of a training run, USD per hour of
    serving. The one place that says so; the api's scenario delta and the price moves ask here."""
    return "total_usd" if kind == "training" else "usd_per_hour"


def headline_usd(kind: str, estimate: dict[str, Any]) -> float | None:
    """The headline number of an estimate's `cost` section (headline_field)."""
    cost = estimate.get("cost") or {}
    return cost.get(headline_field(kind))
