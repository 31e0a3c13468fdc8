"""Configuration read from the environment, with defaults that work on a bare machine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_DATABASE_URL = "sqlite:///scalecost.db"
# Settings that may hold a password: each can also come from a file, NAME_FILE=/run/secrets/…, as Docker and
# Kubernetes mount secrets (docker-compose.yml passes DATABASE_URL that way), so it is in no environment listing.
SECRETS = ("DATABASE_URL", "RATELIMIT_STORAGE_URI")


class ConfigError(ValueError):
    """A setting that cannot be used as given (both NAME and NAME_FILE, an unreadable or empty file)."""


def secret(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """NAME, else the content of the file NAME_FILE names (surrounding whitespace dropped), else None."""
    env = os.environ if environ is None else environ
    value, path = env.get(name), env.get(f"{name}_FILE")
    if not path:
        return value or None
    if value:
        raise ConfigError(f"both {name} and {name}_FILE are set: set one of them")
    try:
        content = Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ConfigError(f"{name}_FILE={path}: cannot read it ({error.strerror})") from None
    if not content:
        raise ConfigError(f"{name}_FILE={path} is empty")
    return content


def database_url(environ: Mapping[str, str] | None = None) -> str:
    return secret("DATABASE_URL", environ) or DEFAULT_DATABASE_URL


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every setting the service reads, with its default. README's configuration table mirrors this."""
    env = os.environ if environ is None else environ
    return {
        "DATABASE_URL": database_url(env),  # or DATABASE_URL_FILE (see SECRETS)
        "PORT": int(env.get("PORT", "8000")),
        "LOG_LEVEL": env.get("LOG_LEVEL", "INFO").strip().upper(),  # `warning` and `WARNING` alike
        # Number of reverse proxies in front of the app whose X-Forwarded-For/-Proto to trust (werkzeug
        # ProxyFix); 0 = none. docker-compose.yml sets 1 for its nginx: without it, every anonymous client
        # behind the proxy shares the proxy's address and one rate-limit bucket.
        "TRUSTED_PROXIES": int(env.get("TRUSTED_PROXIES", "0")),
        "REQUIRE_AUTH_FOR_READS": _bool(env.get("REQUIRE_AUTH_FOR_READS"), False),
        "MAX_CONTENT_LENGTH": int(env.get("MAX_CONTENT_LENGTH", str(256 * 1024))),
        # batch estimates carry up to 1,000 bodies: their own, larger bound
        "BATCH_MAX_BYTES": int(env.get("BATCH_MAX_BYTES", str(4 * 1024 * 1024))),
        "RATELIMIT_STORAGE_URI": secret("RATELIMIT_STORAGE_URI", env) or "local://",  # or …_FILE
        "RATELIMIT_WRITES": env.get("RATELIMIT_WRITES", "120 per minute"),
        "RATELIMIT_ESTIMATES": env.get("RATELIMIT_ESTIMATES", "6000 per minute"),
        "RATELIMIT_KEY_PREFIX": env.get("RATELIMIT_KEY_PREFIX", ""),
        "RATELIMIT_ENABLED": _bool(env.get("RATELIMIT_ENABLED"), True),
        # A limiter store that cannot be reached (Redis down) lets requests through, logged, rather than
        # failing every request with a 500: the service stays up and the limit is back when the store is.
        "RATELIMIT_FAIL_OPEN": _bool(env.get("RATELIMIT_FAIL_OPEN"), True),
        # Connect and read timeout of a redis:// limiter store: a store that hangs costs a request at most this
        # much (then fail-open above), instead of the client library's default of waiting for ever.
        "RATELIMIT_STORAGE_TIMEOUT_S": float(env.get("RATELIMIT_STORAGE_TIMEOUT_S", "0.25")),
        # Server time one request may take (s): the planners and batches stop there and answer what they found
        # (search.complete false; batch items not reached get their own problem). api/extensions/work.py.
        "REQUEST_BUDGET_SECONDS": float(env.get("REQUEST_BUDGET_SECONDS", "10")),
        # Planner and batch requests one process runs at once; more wait (within their budget) for a slot.
        "HEAVY_WORK_CONCURRENCY": int(env.get("HEAVY_WORK_CONCURRENCY", "1")),
        # How much lower the OS priority (niceness) of the threads running the planners' searches is (0: the same)
        "HEAVY_WORK_NICE": int(env.get("HEAVY_WORK_NICE", "10")),
        "CATALOG_CACHE_TTL_S": float(env.get("CATALOG_CACHE_TTL_S", "1.0")),
        "DB_POOL_SIZE": int(env.get("DB_POOL_SIZE", "5")),
        "DB_STATEMENT_TIMEOUT_MS": int(env.get("DB_STATEMENT_TIMEOUT_MS", "5000")),
        # The longest a request waits for a lock another write holds (store/session.py): PostgreSQL's
        # lock_timeout, and SQLite's busy timeout (a write waits for the one writer SQLite allows). Then the
        # answer is a 409 (a write) or 503 (a read) with Retry-After saying a write is in progress.
        "DB_LOCK_TIMEOUT_MS": int(env.get("DB_LOCK_TIMEOUT_MS", "2000")),
        "SQLITE_BUSY_TIMEOUT_MS": int(env.get("SQLITE_BUSY_TIMEOUT_MS", "2000")),
        # Price freshness and imports (issue 14): a price older than this many days is marked stale; an extra
        # instance map (CSV, the columns of service/store/seed/instance_map.csv) extends the shipped one; the
        # largest file POST /v1/price-imports takes (the CLI reads any size).
        "PRICE_STALE_AFTER_DAYS": int(env.get("PRICE_STALE_AFTER_DAYS", "90")),
        "PRICE_INSTANCE_MAP": env.get("PRICE_INSTANCE_MAP") or None,
        "PRICE_IMPORT_MAX_BYTES": int(env.get("PRICE_IMPORT_MAX_BYTES", str(32 * 1024 * 1024))),
        # The most prices one POST /v1/price-imports applies: what fits REQUEST_BUDGET_SECONDS (bench/import_bench.py:
        # 20,000 changes in 5 s on a busy 2-core machine, SQLite). More is a 413 naming the CLI, which batches.
        "PRICE_IMPORT_API_MAX_CHANGES": int(env.get("PRICE_IMPORT_API_MAX_CHANGES", "20000")),
        # The most price offers one POST /v1/price-imports reads, dry run or not (issue 28: a 24 MiB file of 300,000
        # offers took 12 s to parse and diff); and the most rows each list of its answer names (the summary counts
        # every row; the CLI lists all).
        "PRICE_IMPORT_API_MAX_OFFERS": int(env.get("PRICE_IMPORT_API_MAX_OFFERS", "100000")),
        "PRICE_IMPORT_API_LISTED_MAX": int(env.get("PRICE_IMPORT_API_LISTED_MAX", "1000")),
    }
