"""Calibration profiles: the head row, an immutable revision per fit (create, refit) and one closing a deletion,
and an audit event for every change, all in the caller's transaction."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from . import audit, paging
from .models import CalibrationProfile, CalibrationRevision

FIT_FIELDS = (
    "name",
    "kind",
    "accelerator_id",
    "stack",
    "apply_to",
    "points",
    "factors",
    "point_errors",
    "residuals",
    "fit",
    "notes",
)


def get(session: Session, profile_id: int) -> CalibrationProfile | None:
    return session.get(CalibrationProfile, profile_id)


def find(session: Session, ref: str) -> CalibrationProfile | None:
    """A profile by name, or by id when `ref` is 1-9 ASCII digits and no profile has that name (str.isdigit also
    accepts digits int() refuses, such as '¹')."""
    profile = session.scalar(select(CalibrationProfile).where(CalibrationProfile.name == ref))
    if profile is None and re.fullmatch(r"[0-9]{1,9}", ref):
        profile = session.get(CalibrationProfile, int(ref))
    return profile


def name_taken(session: Session, name: str, *, except_id: int | None = None) -> bool:
    stmt = select(CalibrationProfile.id).where(CalibrationProfile.name == name)
    if except_id is not None:
        stmt = stmt.where(CalibrationProfile.id != except_id)
    return session.scalar(stmt) is not None


def listing(kind: str | None = None, accelerator_id: str | None = None) -> Select[Any]:
    stmt = select(CalibrationProfile)
    if kind:
        stmt = stmt.where(CalibrationProfile.kind == kind)
    if accelerator_id:
        stmt = stmt.where(CalibrationProfile.accelerator_id == accelerator_id)
    return stmt.order_by(CalibrationProfile.updated_at.desc(), CalibrationProfile.id.desc())


def page(session: Session, stmt: Select, offset: int, limit: int) -> tuple[Sequence[CalibrationProfile], int]:
    return paging.page(session, stmt, offset, limit)


def _summary(profile: CalibrationProfile) -> dict[str, Any]:
    """What the audit trail keeps of a fit: who it applies to and the factor values (the points are in revisions)."""
    return {
        "name": profile.name,
        "kind": profile.kind,
        "accelerator_id": profile.accelerator_id,
        "stack": profile.stack,
        "apply_to": profile.apply_to,
        "revision": profile.revision,
        "factors": {k: (v or {}).get("value") for k, v in (profile.factors or {}).items()},
        "points": len(profile.points or []),
    }


def _revision(
    profile: CalibrationProfile, action: str, author: str, request_id: str | None
) -> CalibrationRevision:
    return CalibrationRevision(
        profile_id=profile.id,
        revision=profile.revision,
        action=action,
        author=author,
        request_id=request_id,
        **{f: getattr(profile, f) for f in FIT_FIELDS},
    )


def create(
    session: Session, data: dict[str, Any], *, owner: str, request_id: str | None
) -> CalibrationProfile:
    profile = CalibrationProfile(**{f: data[f] for f in FIT_FIELDS}, owner=owner, revision=1)
    session.add(profile)
    session.flush()  # the id, for the revision and the audit target; a taken name fails here
    session.add(_revision(profile, "create", owner, request_id))
    session.flush()
    audit.record(
        session,
        actor=owner,
        action="calibration.create",
        target=f"calibration:{profile.id}",
        before=None,
        after=_summary(profile),
        request_id=request_id,
    )
    return profile


def refit(
    session: Session,
    profile: CalibrationProfile,
    data: dict[str, Any],
    *,
    author: str,
    request_id: str | None,
) -> CalibrationProfile:
    """Replace the fit with a new revision; the old revisions stay. The version column guards lost updates."""
    target = f"calibration:{profile.id}"
    before = _summary(profile)
    with audit.change(
        session, actor=author, action="calibration.refit", target=target, request_id=request_id, before=before
    ) as ch:
        for field in FIT_FIELDS:
            setattr(profile, field, data[field])
        profile.revision += 1
        profile.updated_at = dt.datetime.now(dt.UTC)
        session.flush()
        session.add(_revision(profile, "refit", author, request_id))
        ch.after = _summary(profile)
    return profile


def delete(session: Session, profile: CalibrationProfile, *, author: str, request_id: str | None) -> None:
    """Remove the profile; its revisions stay, closed by a 'delete' revision."""
    target = f"calibration:{profile.id}"
    with audit.change(
        session,
        actor=author,
        action="calibration.delete",
        target=target,
        request_id=request_id,
        before=_summary(profile),
    ):
        profile.revision += 1  # the closing revision has its own number
        profile.updated_at = dt.datetime.now(dt.UTC)
        session.flush()  # version bump: a concurrent writer fails with StaleDataError
        session.add(_revision(profile, "delete", author, request_id))
        session.delete(profile)


def revisions(session: Session, profile_id: int) -> list[CalibrationRevision]:
    return list(
        session.scalars(
            select(CalibrationRevision)
            .where(CalibrationRevision.profile_id == profile_id)
            .order_by(CalibrationRevision.revision)
        )
    )
