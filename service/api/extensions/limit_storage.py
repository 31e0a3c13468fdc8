"""Rate-limit counters in SQLite, shared by every worker process of one instance.

`limits` (under flask-limiter) keeps counters in memory (one copy per process), Redis, Memcached or
MongoDB. gunicorn runs several worker processes, so `memory://` lets one client through N × workers
times; the other stores need a server that a bare machine does not run. These two storages close the gap:

- `sqlite:///relative/path.db` or `sqlite:////absolute/path.db`: counters in that SQLite file, which
  any number of processes on the machine share (WAL journal; writers queue on an flock of `<path>.lock`).
- `local://` (the default): under gunicorn, a SQLite file private to this gunicorn master, in
  `$TMPDIR/scalecost-ratelimit-<uid>/`, so all the workers of one instance count together and two
  instances on one machine do not share counters; files of masters that have exited are removed when a
  new one starts. Outside gunicorn (one process: the test client, `flask run`) an in-memory SQLite.

Only the fixed-window strategy (flask-limiter's default) is supported. Counters are not durable data:
`synchronous=OFF`, so a machine crash may forget the last few hits of a window.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from limits.errors import ConfigurationError
from limits.storage import Storage

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS counters ("
    " key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires_at REAL NOT NULL) WITHOUT ROWID"
)
# One statement, hence atomic across processes: a new or expired window starts at `amount`.
_INCR = """
INSERT INTO counters (key, value, expires_at) VALUES (:key, :amount, :expires_at)
ON CONFLICT (key) DO UPDATE SET
    value = CASE WHEN counters.expires_at <= :now THEN excluded.value
                 ELSE counters.value + excluded.value END,
    expires_at = CASE WHEN counters.expires_at <= :now THEN excluded.expires_at
                      ELSE counters.expires_at END
RETURNING value
"""
_SWEEP_EVERY = 1000  # increments between deletions of expired rows (per process)
MEMORY = ":memory:"


class SQLiteStorage(Storage):
    """Fixed-window counters in one SQLite file (`sqlite:///path`), safe across threads and processes."""

    STORAGE_SCHEME = ["sqlite"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._uri = uri or ""
        self._busy_timeout_s = float(options.get("busy_timeout_s", 5.0))
        self._lock = threading.Lock()  # one connection per process; gevent patches this lock too
        self._conn: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._pid: int | None = None
        self._incr_count = 0
        self.path: str | None = None

    @property
    def base_exceptions(self) -> type[Exception]:
        return sqlite3.Error

    def resolve_path(self) -> str:
        prefix = "sqlite:///"
        if not self._uri.startswith(prefix) or len(self._uri) == len(prefix):
            raise ConfigurationError(
                f"{self._uri!r}: write sqlite:///relative.db or sqlite:////absolute/path.db"
            )
        return self._uri[len(prefix) :]

    def _connection(self) -> sqlite3.Connection:
        """This process's connection, opened on first use (after gunicorn forks the worker)."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path = self.resolve_path()
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        if self.path != MEMORY:
            # Writers queue on an flock (the kernel wakes the next one at once) rather than on SQLite's
            # busy handler, which sleeps in steps of up to 100 ms: tail latency stays at a few ms.
            self._lock_fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute(_SCHEMA)
        self._conn, self._pid = conn, os.getpid()
        return conn

    @contextlib.contextmanager
    def _writer(self):
        if self._lock_fd is None:
            yield
            return
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        with self._lock:
            conn = self._connection()
            now = time.time()
            with self._writer():
                # fetchall: the statement runs to completion, so its write transaction ends here
                (value,) = conn.execute(
                    _INCR, {"key": key, "amount": amount, "expires_at": now + expiry, "now": now}
                ).fetchall()[0]
                self._incr_count += 1
                if self._incr_count % _SWEEP_EVERY == 0:
                    conn.execute("DELETE FROM counters WHERE expires_at <= ?", (now,))
        return int(value)

    def _live(self, column: str, key: str):
        now = time.time()
        with self._lock:
            rows = (
                self._connection()
                .execute(f"SELECT {column} FROM counters WHERE key = ? AND expires_at > ?", (key, now))
                .fetchall()
            )
        return rows[0][0] if rows else None

    def get(self, key: str) -> int:
        value = self._live("value", key)
        return 0 if value is None else int(value)

    def get_expiry(self, key: str) -> float:
        expires_at = self._live("expires_at", key)
        return time.time() if expires_at is None else float(expires_at)

    def check(self) -> bool:
        try:
            with self._lock:
                self._connection().execute("SELECT 1").fetchall()
            return True
        except sqlite3.Error:
            return False

    def reset(self) -> int | None:
        with self._lock:
            conn = self._connection()
            with self._writer():
                return conn.execute("DELETE FROM counters").rowcount

    def clear(self, key: str) -> None:
        with self._lock:
            conn = self._connection()
            with self._writer():
                conn.execute("DELETE FROM counters WHERE key = ?", (key,))


def under_gunicorn() -> bool:
    """gunicorn's arbiter sets SERVER_SOFTWARE in its environment before it forks the workers."""
    return os.environ.get("SERVER_SOFTWARE", "").startswith("gunicorn/")


def _process_start(pid: int) -> str:
    """The process's start time (Linux /proc), so that a reused pid does not inherit old counters."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "0"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def local_directory() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    directory = Path(tempfile.gettempdir()) / f"scalecost-ratelimit-{uid}"
    directory.mkdir(mode=0o700, exist_ok=True)
    info = directory.stat()
    if hasattr(os, "getuid") and (info.st_uid != uid or info.st_mode & 0o077):
        raise ConfigurationError(
            f"{directory} belongs to another user or is open to others; remove it, or set "
            "RATELIMIT_STORAGE_URI=sqlite:////a/private/path.db"
        )
    return directory


def _remove_files_of_exited_masters(directory: Path) -> None:
    for path in directory.glob("gunicorn-*.sqlite"):
        try:
            _, pid, started = path.name.removesuffix(".sqlite").split("-")
        except ValueError:
            continue
        if pid.isdigit() and _alive(int(pid)) and started in ("0", _process_start(int(pid))):
            continue  # its master still runs (a reused pid has another start time)
        for suffix in ("", "-wal", "-shm", ".lock"):
            stale = path.with_name(path.name + suffix)
            try:
                stale.unlink()
            except OSError:
                pass


class LocalStorage(SQLiteStorage):
    """`local://`: one SQLite file per gunicorn master (all its workers), else in-memory."""

    STORAGE_SCHEME = ["local"]

    def resolve_path(self) -> str:
        if not under_gunicorn():
            return MEMORY
        master = os.getppid()  # a worker's parent is the arbiter
        directory = local_directory()
        _remove_files_of_exited_masters(directory)
        return str(directory / f"gunicorn-{master}-{_process_start(master)}.sqlite")
