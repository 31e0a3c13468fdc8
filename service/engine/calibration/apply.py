"""Estimate with a calibration profile: the request's accelerator scaled by the profile's factors (factors.py) and
carrying the profile's residuals after the fit, which set the answer's prediction intervals (accuracy/profile.py).

A profile describes one accelerator and software stack. Applied to another it is refused (422 naming
`calibration`) unless it was created with `apply_to: "any"`; the answer names the profile and revision used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..accuracy.profile import ProfileResiduals, from_profile
from ..errors import InvalidRequest
from ..hardware import Catalog
from ..i18n import _
from ..inference.estimate import estimate_inference
from ..training.estimate import estimate_training
from . import factors as fx
from .metrics import stack_of

ESTIMATORS = {"training": estimate_training, "inference": estimate_inference}


def profile_factors(profile: Mapping[str, Any]) -> dict[str, float]:
    """The fitted value of each factor (1 where the profile has none)."""
    rows = profile.get("factors") or {}
    return {f: float((rows.get(f) or {}).get("value", 1.0)) for f in fx.FACTORS}


def calibrated_catalog(
    kind: str, profile: Mapping[str, Any], catalog: Catalog, accelerator_ids: tuple[str, ...]
) -> Catalog:
    """`catalog` with the profile applied to the parts it may be applied to among `accelerator_ids`: its own part,
    or every one named when the profile says apply_to "any". Raises InvalidRequest on a kind mismatch."""
    if profile["kind"] != kind:
        raise InvalidRequest.single(
            "calibration",
            _("Profile {name} was fitted on {kind} points; this is a {wanted} request.").format(
                name=repr(profile["name"]), kind=profile["kind"], wanted=kind
            ),
        )
    if profile.get("apply_to") != "any":
        accelerator_ids = tuple(i for i in accelerator_ids if i == profile["accelerator"])
    scaled = fx.scaled_catalog(catalog, profile_factors(profile), accelerator_ids)
    return with_residuals(scaled, from_profile(kind, profile), accelerator_ids)


def with_residuals(
    catalog: Catalog, residuals: ProfileResiduals | None, accelerator_ids: tuple[str, ...]
) -> Catalog:
    """`catalog` whose named parts carry the profile's residuals: every answer on them, the planners' included,
    takes its intervals from the profile (accuracy/profile.py)."""
    if residuals is None:
        return catalog
    parts = dict(catalog.accelerators)
    for acc_id in accelerator_ids:
        if acc_id in parts:
            parts[acc_id] = replace(parts[acc_id], residual_profile=residuals)
    return replace(catalog, accelerators=parts)


def estimate_calibrated(
    kind: str, request: Mapping[str, Any], catalog: Catalog, profile: Mapping[str, Any]
) -> dict[str, Any]:
    """The estimate on the profile's factors; 422 (`calibration`) when the request's accelerator or stack is not
    the profile's and the profile was not created with apply_to "any"."""
    acc_id = str((request.get("hardware") or {}).get("accelerator") or "")
    if profile.get("apply_to") != "any" and acc_id != profile["accelerator"]:
        raise InvalidRequest.single("calibration", _mismatch(profile, acc_id))
    answer = ESTIMATORS[kind](request, calibrated_catalog(kind, profile, catalog, (acc_id,)))
    stack = stack_of(kind, answer)
    if profile.get("apply_to") != "any" and stack != profile.get("stack"):
        raise InvalidRequest.single("calibration", _mismatch(profile, f"{acc_id} ({stack})"))
    return annotate(answer, profile)


def annotate(answer: dict[str, Any], profile: Mapping[str, Any]) -> dict[str, Any]:
    """Name the profile and revision in the answer: a top-level `calibration` and a line in the assumptions."""
    used = used_profile(profile)
    answer["calibration"] = used
    assumptions = answer.setdefault("assumptions", {})
    assumptions["calibration"] = used
    # training answers keep their notes in the assumptions, serving answers at the top
    notes = assumptions["notes"] if "notes" in assumptions else answer.setdefault("notes", [])
    notes.append(
        _(
            "Calibrated with profile {name} (id {id}, revision {revision}): compute × {compute:.3g}, memory "
            "bandwidth × {memory:.3g}, network × {network:.3g}."
        ).format(
            name=repr(profile["name"]),
            id=profile["id"],
            revision=profile["revision"],
            compute=used["factors"]["compute"],
            memory=used["factors"]["memory_bandwidth"],
            network=used["factors"]["network"],
        )
    )
    unmeasured = _default_interval_metrics(assumptions.get("intervals"))
    if unmeasured:
        notes.append(
            _(
                "Profile {name} has fewer than 2 residuals of {metrics}: the default class sets their intervals."
            ).format(name=repr(profile["name"]), metrics=", ".join(unmeasured))
        )
    return answer


def _default_interval_metrics(basis: Any) -> list[str]:
    """The metrics whose interval the profile could not set (accuracy/profile.interval_for: source "defaults"):
    a training answer's one basis is its time's, a serving answer's a basis per metric."""
    if not isinstance(basis, dict):
        return []
    if "source" in basis:
        return ["time.seconds"] if basis["source"] == "defaults" else []
    return [m for m, b in basis.items() if isinstance(b, dict) and b.get("source") == "defaults"]


def used_profile(profile: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": profile["id"],
        "name": profile["name"],
        "revision": profile["revision"],
        "accelerator": profile["accelerator"],
        "stack": profile.get("stack"),
        "apply_to": profile.get("apply_to") or "same",
        "factors": profile_factors(profile),
    }


def _mismatch(profile: Mapping[str, Any], got: str) -> str:
    return _(
        'Profile {name} was fitted on {want}, not {got}; create it with apply_to "any" to apply it elsewhere.'
    ).format(name=repr(profile["name"]), want=f"{profile['accelerator']} ({profile.get('stack')})", got=got)
