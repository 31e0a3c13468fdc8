"""Alembic, driven from code: upgrade/downgrade and the head-vs-current check used by /healthz."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from .session import normalise_url

ROOT = Path(__file__).resolve().parents[2]
# An installed wheel carries the scripts as scalecost/migrations (setup.py); a checkout has them at the top.
PACKAGED = Path(__file__).resolve().parents[1] / "migrations"


def script_location() -> Path:
    """The alembic scripts: the wheel's copy when installed, else the checkout's `migrations/`."""
    return PACKAGED if (PACKAGED / "env.py").is_file() else ROOT / "migrations"


def alembic_config(url: str) -> Config:
    ini = ROOT / "alembic.ini"
    cfg = Config(str(ini)) if ini.is_file() else Config()  # an installed wheel has no alembic.ini
    cfg.set_main_option("script_location", str(script_location()))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


@lru_cache(maxsize=1)
def head_revision() -> str | None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return script.get_current_head()


def known_revision(revision: str) -> bool:
    """Whether `revision` is one of this code's migrations (a backup from a newer version is not)."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    try:
        return script.get_revision(revision) is not None
    except Exception:  # noqa: BLE001  # alembic raises its own errors for an unknown or malformed id
        return False


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def database_status(engine) -> tuple[str, str]:
    """("ok" | "unavailable", "current" | "pending" | "unknown") for /healthz."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            return "ok", "current" if current_revision(conn) == head_revision() else "pending"
    except SQLAlchemyError:
        return "unavailable", "unknown"
