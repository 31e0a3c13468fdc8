"""Bounded work per request: a time budget, cooperative yields, and a cap on heavy work in each process.

One client could take the instance down: a planner or batch request ran on the worker's event loop for up to a
minute (gevent workers run one loop per process), so /healthz waited behind it and gunicorn killed the worker.
- Every request has REQUEST_BUDGET_SECONDS of server time, counted from its arrival (`g.started`).
- Heavy work (the planners, batches) takes one of HEAVY_WORK_CONCURRENCY slots of its process; a request that
  cannot get one within its budget is a 503 with Retry-After, not a queue without end.
- The engine's searches call `checkpoint()` between units of work (budget.py): it yields the event loop, so
  probes and ordinary estimates are served meanwhile, and answers False once the budget is spent (the search
  stops and says `complete: false`). Batches check it between items.
Under a worker without gevent (tests, sync workers) the yield is a no-op; the budget and the cap still hold.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import current_app, g
from flask_smorest import abort

from ...engine.i18n import _
from ...greenlets import gevent_running
from .metrics import HEAVY_IN_USE

_SLOTS: dict[int, threading.BoundedSemaphore] = {}


def yield_loop() -> None:
    """Let the event loop run other requests (a no-op outside gevent). gevent.idle(), not sleep(0): sleep(0)
    switches back before the loop polls its sockets at times (a probe waited up to 776 ms behind 10 ms CPU slices
    yielding with sleep(0), 21 ms with idle(); measured with a gevent StreamServer and a client in another process)."""
    if gevent_running():
        import gevent

        gevent.idle()


def deadline() -> float:
    """The perf_counter() at which this request's budget ends."""
    started = g.get("started") or time.perf_counter()
    return started + float(current_app.config["REQUEST_BUDGET_SECONDS"])


def remaining_s() -> float:
    return deadline() - time.perf_counter()


def checkpoint() -> bool:
    """For the engine's searches and the batch loop: yield, then go on while the budget lasts."""
    yield_loop()
    return time.perf_counter() < deadline()


def _slots() -> threading.BoundedSemaphore:
    size = int(current_app.config["HEAVY_WORK_CONCURRENCY"])
    slots = _SLOTS.get(size)
    if slots is None:  # made in the worker, after gevent patched threading: a cooperative semaphore there
        slots = _SLOTS[size] = threading.BoundedSemaphore(size)
    return slots


@contextmanager
def heavy() -> Iterator[None]:
    """Hold one of this process's heavy-work slots for the block; 503 when none frees up within the budget."""
    slots = _slots()
    if not slots.acquire(timeout=max(0.0, remaining_s())):
        g.work_refused = True
        abort(
            503,
            message=_("The service is busy with other long requests; retry shortly."),
            headers={"Retry-After": str(max(1, round(float(current_app.config["REQUEST_BUDGET_SECONDS"]))))},
        )
    HEAVY_IN_USE.inc()
    try:
        yield
    finally:
        HEAVY_IN_USE.dec()
        slots.release()
