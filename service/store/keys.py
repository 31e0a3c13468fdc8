"""API keys: random secrets shown once, stored as SHA-256 digests, with a role and a revocation time."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from . import audit
from .models import ApiKey

ROLES = ("viewer", "editor", "admin")
KEY_PREFIX = "sc_"
# The audit trail's own actors (the command line, a request without a key, the seeded catalog): a key with one
# of these names would make its changes look like theirs. Refused in any case ("CLI" too).
RESERVED_NAMES = ("cli", "anonymous", "seed")


class KeyError_(LookupError):
    """No live key of that name."""


class LastAdminKey(RuntimeError):
    """Revoking this key would leave no live admin key (nobody could manage keys or the catalog)."""


def reserved_name_message(name: str) -> str | None:
    """Why `name` cannot name a key, or None when it can."""
    if name.lower() in RESERVED_NAMES:
        return (
            f"'{name}' is one of the audit trail's own actors ({', '.join(RESERVED_NAMES)}, in any case): "
            "choose another name."
        )
    return None


def digest(secret: str) -> str:
    # A fast hash suffices for 256-bit random secrets (no dictionary to attack); OWASP Secrets Management
    # Cheat Sheet, and the practice of GitHub/Stripe token storage.
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def as_dict(key: ApiKey) -> dict:
    return {
        "name": key.name,
        "role": key.role,
        "prefix": key.prefix,
        "created_at": key.created_at,
        "created_by": key.created_by,
        "revoked_at": key.revoked_at,
    }


def create(
    session: Session, name: str, role: str, *, actor: str, request_id: str | None = None
) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the secret (the only time it exists in clear)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    reserved = reserved_name_message(name)
    if reserved:
        raise ValueError(reserved)
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(name=name, role=role, prefix=secret[:10], key_hash=digest(secret), created_by=actor)
    with audit.change(
        session, actor=actor, action="key.create", target=f"key:{name}", request_id=request_id
    ) as c:
        session.add(key)
        session.flush()
        c.after = _jsonable(as_dict(key))
    return key, secret


def list_keys(session: Session) -> Sequence[ApiKey]:
    return session.scalars(select(ApiKey).order_by(ApiKey.name)).all()


def get(session: Session, name: str) -> ApiKey | None:
    return session.scalars(select(ApiKey).where(ApiKey.name == name)).one_or_none()


def revoke(
    session: Session, name: str, *, actor: str, request_id: str | None = None, last_admin: bool = False
) -> ApiKey:
    """Revoke the live key `name`. Raises KeyError_ when there is none, LastAdminKey when it is the last live
    admin key (unless `last_admin`: the command line's --yes, which can create another); the caller then rolls
    the transaction back.

    Two admins revoking each other's keys at once must not both succeed. On PostgreSQL the live admin rows are
    locked (SELECT … FOR UPDATE, in id order) before the count, so the second revocation waits for the first
    and then counts without it. On SQLite, which has no row locks, the UPDATE comes first: it takes the
    database's single write lock (waiting for the other writer), and the count after it sees every committed
    revocation."""
    key = get(session, name)
    if key is None or key.revoked_at is not None:
        raise KeyError_(name)
    if key.role == "admin":
        live_admins = (
            select(ApiKey.id)
            .where(ApiKey.role == "admin", ApiKey.revoked_at.is_(None))
            .order_by(ApiKey.id)
            .with_for_update()
        )
        if key.id not in session.scalars(live_admins).all():
            raise KeyError_(name)  # revoked meanwhile by a concurrent request
    before = _jsonable(as_dict(key))
    revoked = session.execute(
        update(ApiKey)
        .where(ApiKey.id == key.id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=dt.datetime.now(dt.UTC))
    )
    if revoked.rowcount != 1:  # type: ignore[attr-defined]  # an UPDATE returns a CursorResult
        raise KeyError_(name)  # revoked meanwhile (SQLite: between the read and the write lock)
    if key.role == "admin":
        left = session.scalar(
            select(func.count())
            .select_from(ApiKey)
            .where(ApiKey.role == "admin", ApiKey.revoked_at.is_(None))
        )
        if not left and not last_admin:
            raise LastAdminKey(name)
    session.refresh(key)
    audit.record(
        session,
        actor=actor,
        action="key.revoke",
        target=f"key:{name}",
        before=before,
        after=_jsonable(as_dict(key)),
        request_id=request_id,
    )  # the revocation is an UPDATE statement checked row by row above, not an ORM change: recorded directly
    return key


def authenticate(session: Session, secret: str) -> ApiKey | None:
    """The live key whose digest matches, or None (unknown, malformed or revoked)."""
    if not secret.startswith(KEY_PREFIX) or len(secret) > 200:
        return None
    key = session.scalars(select(ApiKey).where(ApiKey.key_hash == digest(secret))).one_or_none()
    if key is None or key.revoked_at is not None:
        return None
    return key


def _jsonable(data: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, dt.datetime | dt.date) else v) for k, v in data.items()}
