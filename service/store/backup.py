"""Backup and restore of a SQLite database with sqlite3's online backup API (`scalecost db backup|restore`).

The backup API copies a consistent snapshot page by page while the service keeps running: readers go on, a
writer waits at most one step (BACKUP_PAGES_PER_STEP pages), and a write made during the copy restarts it so the
copy is never torn. A restore copies a backup into the live file the same way; the service's connections see
the restored data at their next transaction. PostgreSQL is backed up with pg_dump / pg_restore
(docs/operations.md).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

BACKUP_PAGES_PER_STEP = 1024  # 4 MiB at the default page size: writers wait at most one step


class BackupError(Exception):
    """A file that is not a usable scalecost SQLite backup, or a copy that failed its check."""


@dataclass(frozen=True)
class Snapshot:
    path: Path
    revision: str | None
    bytes: int


def _copy(source: sqlite3.Connection, target: sqlite3.Connection) -> None:
    source.backup(target, pages=BACKUP_PAGES_PER_STEP)


def describe(path: Path) -> Snapshot:
    """The alembic revision of the SQLite database at `path`, after an integrity check; BackupError if it is not
    an intact SQLite database of this service."""
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            (check,) = connection.execute("PRAGMA quick_check").fetchone()
            if check != "ok":
                raise BackupError(f"{path} fails SQLite's integrity check: {check}")
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:  # not a database, or no alembic_version table
        raise BackupError(f"{path} is not a scalecost SQLite database ({error})") from None
    return Snapshot(path, row[0] if row else None, path.stat().st_size)


def backup(database: Path, destination: Path) -> Snapshot:
    """Copy the live SQLite database to `destination` (a new file), then check the copy."""
    if destination.exists():
        raise BackupError(f"{destination} exists: choose a new file (a backup never overwrites one)")
    partial = destination.with_name(destination.name + ".partial")
    partial.unlink(missing_ok=True)
    source = sqlite3.connect(database)
    try:
        target = sqlite3.connect(partial)
        try:
            _copy(source, target)
        finally:
            target.close()
    finally:
        source.close()
    try:
        snapshot = describe(partial)
    except BackupError:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, destination)
    return Snapshot(destination, snapshot.revision, snapshot.bytes)


def restore(source: Path, database: Path) -> Snapshot:
    """Replace the content of the SQLite database at `database` (created if missing) with the backup `source`."""
    snapshot = describe(source)
    origin = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(database, timeout=30)  # waits for a writer of the live service to finish
        try:
            _copy(origin, target)
        finally:
            target.close()
    finally:
        origin.close()
    return snapshot
