"""Use cases of calibration profiles: fit one on the catalog, load one for an estimate or a planner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from ..engine import Catalog, InvalidRequest
from ..engine.budget import Checkpoint, unlimited
from ..engine.calibration import Point, fit_profile
from ..engine.i18n import _
from ..store import calibrations as store
from ..store.models import CalibrationProfile
from .catalog import CatalogCache, engine_catalog

MAX_POINTS = 10_000


def fit(
    kind: str,
    points: Sequence[Mapping[str, Any]],
    refused: Mapping[int, Mapping[str, list[str]]],
    session: Session,
    *,
    cache: CatalogCache | None = None,
    checkpoint: Checkpoint = unlimited,
) -> dict[str, Any]:
    """Fit `points` ([{request (loaded), measured}]; `refused`: the caller's own problems by index) on today's
    catalog. Raises InvalidRequest when no point can be fitted."""
    catalog = engine_catalog(session, None, cache)
    session.rollback()  # read-only until the write: no connection held during the fit
    engine_points = [Point(p.get("request") or {}, p.get("measured") or {}) for p in points]
    return fit_profile(kind, engine_points, catalog, refused=refused, checkpoint=checkpoint)


def content(
    name: str, kind: str, apply_to: str, points: Sequence[Mapping[str, Any]], fitted: Mapping[str, Any]
) -> dict[str, Any]:
    """What the store keeps of a fit (store.calibrations.FIT_FIELDS)."""
    return {
        "name": name,
        "kind": kind,
        "accelerator_id": fitted["accelerator"],
        "stack": fitted.get("stack"),
        "apply_to": apply_to,
        "points": [{"request": p.get("request"), "measured": p.get("measured")} for p in points],
        "factors": fitted["factors"],
        "point_errors": fitted["points"],
        "residuals": fitted["residuals"],
        "fit": fitted["fit"],
        "notes": fitted["notes"],
    }


def as_profile(row: CalibrationProfile) -> dict[str, Any]:
    """The plain data the engine applies (engine/calibration/apply.py)."""
    return {
        "id": row.id,
        "name": row.name,
        "revision": row.revision,
        "kind": row.kind,
        "accelerator": row.accelerator_id,
        "stack": row.stack,
        "apply_to": row.apply_to,
        "factors": row.factors,
        "residuals": row.residuals,  # ln(predicted / measured) after the fit: the answers' intervals
    }


def profile_for(session: Session, ref: str) -> dict[str, Any]:
    """The profile a request names (by name or id); InvalidRequest naming `calibration` when none has it."""
    row = store.find(session, str(ref))
    if row is None:
        raise InvalidRequest.single(
            "calibration",
            _("No calibration profile named {ref} (GET /v1/calibrations lists them).").format(ref=repr(ref)),
        )
    return as_profile(row)


def planner_catalog(kind: str, catalog: Catalog, profile: Mapping[str, Any]) -> Catalog:
    """The catalog a planner searches with a profile: its part scaled (every part with apply_to "any")."""
    from ..engine.calibration import calibrated_catalog

    return calibrated_catalog(kind, profile, catalog, tuple(catalog.accelerators))


def refuse_without_store(request: Mapping[str, Any]) -> None:
    """A request naming a profile where no store is at hand (the library's in-process estimates): 422 rather than
    an answer silently without the profile."""
    if request.get("calibration"):
        raise InvalidRequest.single(
            "calibration",
            _("Calibration profiles are kept by the service: send this request to its API to use one."),
        )
