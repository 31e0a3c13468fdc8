"""Calibration profiles in the store: create, refit (a new revision, the old kept), delete (revisions stay, closed),
an audit event per change, lookups by name or id, and the version guard against lost updates."""

from __future__ import annotations

import pytest
from scalecost.store import calibrations as store
from scalecost.store.models import AuditEvent
from sqlalchemy import select
from sqlalchemy.orm.exc import StaleDataError


def _fit(name: str = "mi300x-vllm", compute: float = 0.8) -> dict:
    return {
        "name": name,
        "kind": "inference",
        "accelerator_id": "amd-mi300x",
        "stack": "rocm/vllm",
        "apply_to": "same",
        "points": [{"request": {"batch_size": 1}, "measured": {"time_per_output_token_s": 0.01}}],
        "factors": {"compute": {"value": compute, "standard_deviation": 0.1}},
        "point_errors": [{"index": 0, "status": "fitted", "error_before": {"time_per_output_token_s": 0.4}}],
        "residuals": [{"point": 0, "metric": "time_per_output_token_s", "log_ratio": 0.05}],
        "fit": {"iterations": 3},
        "notes": [],
    }


def test_create_refit_delete_keep_every_revision_and_audit_each_change(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        profile = store.create(session, _fit(), owner="alice", request_id="r1")
        profile_id = profile.id
    with database.transaction() as session:
        profile = store.find(session, "mi300x-vllm")
        assert profile is not None and profile.id == profile_id and profile.revision == 1
        assert store.find(session, str(profile_id)).id == profile_id
        store.refit(session, profile, _fit(compute=0.7), author="bob", request_id="r2")
    with database.transaction() as session:
        profile = store.get(session, profile_id)
        assert (
            profile.revision == 2 and profile.factors["compute"]["value"] == 0.7 and profile.owner == "alice"
        )
        assert profile.residuals[0]["log_ratio"] == 0.05
        store.delete(session, profile, author="bob", request_id="r3")
    with database.transaction() as session:
        assert store.get(session, profile_id) is None
        rows = store.revisions(session, profile_id)
        assert [(r.revision, r.action, r.author) for r in rows] == [
            (1, "create", "alice"),
            (2, "refit", "bob"),
            (3, "delete", "bob"),
        ]
        assert rows[0].factors["compute"]["value"] == 0.8 and rows[1].factors["compute"]["value"] == 0.7
        events = session.scalars(
            select(AuditEvent).where(AuditEvent.target == f"calibration:{profile_id}").order_by(AuditEvent.id)
        ).all()
        assert [e.action for e in events] == ["calibration.create", "calibration.refit", "calibration.delete"]
        assert events[1].before["factors"] == {"compute": 0.8} and events[1].after["factors"] == {
            "compute": 0.7
        }


def test_a_stale_copy_cannot_overwrite_a_newer_fit(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        profile_id = store.create(session, _fit(), owner="alice", request_id=None).id
    first, second = database.session(), database.session()
    try:
        a, b = store.get(first, profile_id), store.get(second, profile_id)
        store.refit(first, a, _fit(compute=0.6), author="a", request_id=None)
        first.commit()
        with pytest.raises(StaleDataError):
            store.refit(second, b, _fit(compute=0.5), author="b", request_id=None)
    finally:
        first.close()
        second.close()


def test_listing_filters_by_kind_and_accelerator(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        store.create(session, _fit("a"), owner="x", request_id=None)
        store.create(
            session,
            {**_fit("b"), "kind": "training", "accelerator_id": "nvidia-h100-sxm-80gb"},
            owner="x",
            request_id=None,
        )
    with database.transaction() as session:
        rows, total = store.page(session, store.listing(kind="training"), 0, 10)
        assert total == 1 and rows[0].name == "b"
        rows, total = store.page(session, store.listing(accelerator_id="amd-mi300x"), 0, 10)
        assert total == 1 and rows[0].name == "a"
        assert store.name_taken(session, "a") and not store.name_taken(session, "a", except_id=rows[0].id)
