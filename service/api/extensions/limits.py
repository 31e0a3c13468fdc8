"""Rate limits (flask-limiter, fixed window): one budget for writes and key administration, a much larger
one for estimates. Storage from RATELIMIT_STORAGE_URI (`local://` by default: see limit_storage).

A client is the API key that authenticates, else the address the request came from: a header that does
not authenticate (unknown key, `Basic …`, garbage) is not a new identity, so varying it buys nothing.
"""

from __future__ import annotations

import logging
import os

from flask import Flask, current_app, g, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from ...store.errors import DatabaseError
from . import auth, limit_storage
from .db import db_session

log = logging.getLogger(__name__)

WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"]
# POSTs that compute an answer and change nothing: they count against the estimates budget, not writes.
COMPUTATIONS = {("POST", "/v1/scenarios/compare")}


def client_key() -> str:
    """`key:<id>` for a live API key (however auth accepts it spelled), else `ip:<address>`."""
    try:
        key = auth.current_key()
    except DatabaseError:  # database unreachable: auth will answer for it; count by address meanwhile
        log.warning("rate limiter could not look up the API key; counting by address", exc_info=True)
        try:
            db_session().rollback()
        except DatabaseError:
            pass
        key = None
    if key is not None:
        return f"key:{key.id}"
    return "ip:" + (get_remote_address() or "unknown")


def _is_computation() -> bool:
    rule = request.url_rule
    return rule is not None and (request.method, rule.rule) in COMPUTATIONS


def _write_limit() -> str:
    return current_app.config["RATELIMIT_WRITES"]


def _estimate_limit() -> str:
    return current_app.config["RATELIMIT_ESTIMATES"]


def _warn_if_counted_per_worker(uri: str) -> None:
    workers = os.environ.get("WEB_CONCURRENCY", "")
    if uri.startswith("memory://") and limit_storage.under_gunicorn() and workers not in ("", "1"):
        log.warning(
            "RATELIMIT_STORAGE_URI=memory:// counts in each of the %s workers alone: a client gets up to "
            "%s times each limit. Use local:// (the default) or redis://.",
            workers,
            workers,
        )


def _batch_cost() -> int:
    """A batch counts one estimate per item against the estimates budget (at least 1)."""
    body = request.get_json(silent=True)
    items = body.get("items") if isinstance(body, dict) else None
    return max(1, len(items)) if isinstance(items, list) else 1


# A planner request counts one estimate per this many configurations it evaluated (at least one): the array model
# evaluates about 1.5M configurations/s on one core (bench/planner_bench.py), so a unit is ~7 ms of search, a few
# single estimates' worth. The worst default plan (Kimi K2 to 65,536 devices, 4.7M configurations) counts 469.
CONFIGURATIONS_PER_ESTIMATE = 10_000


def plan_cost(configurations_evaluated: int) -> int:
    """Estimate-budget units of a search that evaluated this many configurations."""
    return max(1, -(-int(configurations_evaluated) // CONFIGURATIONS_PER_ESTIMATE))


def _plan_cost() -> int:
    """The view sets g.work_units once the search has run; 1 before it (the check that it may start)."""
    return int(g.get("work_units") or 1)


def _charged(response) -> bool:
    """Whether a limited request counts against its budget once answered: not when it was refused (429)."""
    return response.status_code != 429


def init_app(
    app: Flask,
    *,
    write_blueprints,
    all_method_blueprints,
    estimate_blueprints,
    batch_blueprints=(),
    plan_blueprints=(),
) -> Limiter:
    """Writes of `write_blueprints` and every method of `all_method_blueprints` share the client's
    RATELIMIT_WRITES budget; POSTs of `estimate_blueprints` (and COMPUTATIONS) share RATELIMIT_ESTIMATES."""
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    if app.config.get("RATELIMIT_FAIL_OPEN", True):
        # storage down (Redis unreachable): count in this worker's memory meanwhile, never answer 500
        app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
        app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", True)
    uri = app.config["RATELIMIT_STORAGE_URI"]
    if uri.startswith(("redis://", "rediss://", "redis+unix://")):
        timeout = app.config.get("RATELIMIT_STORAGE_TIMEOUT_S", 0.25)
        options = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
        app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", options)
    _warn_if_counted_per_worker(uri)
    limiter = Limiter(client_key, app=app, storage_uri=uri)
    for blp in write_blueprints:
        limiter.shared_limit(_write_limit, "writes", methods=WRITE_METHODS, exempt_when=_is_computation)(blp)
        limiter.shared_limit(
            _estimate_limit, "estimates", methods=["POST"], exempt_when=lambda: not _is_computation()
        )(blp)
    for blp in all_method_blueprints:  # key administration: every method counts
        limiter.shared_limit(_write_limit, "writes")(blp)
    for blp in estimate_blueprints:
        limiter.shared_limit(_estimate_limit, "estimates", methods=["POST"])(blp)
    for (
        blp
    ) in plan_blueprints:  # charged after the search by what it evaluated (plan_cost); a 429 charges nothing
        limiter.shared_limit(
            _estimate_limit, "estimates", methods=["POST"], cost=_plan_cost, deduct_when=_charged
        )(blp)
    for blp in batch_blueprints:
        # Checked before the batch runs (the cost must fit what is left), charged after it: a batch refused for
        # the budget left (429) charges nothing (with a plain hit, 5 items refused at 8 of 10 spent made it 13).
        limiter.shared_limit(
            _estimate_limit, "estimates", methods=["POST"], cost=_batch_cost, deduct_when=_charged
        )(blp)
    return limiter
