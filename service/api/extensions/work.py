"""Bounded work per request: a time budget, cooperative yields, and a cap on heavy work in each process.

One client could take the instance down: a planner or batch request ran on the worker's event loop for up to a
minute (gevent workers run one loop per process), so /healthz waited behind it and gunicorn killed the worker.
- Every request has REQUEST_BUDGET_SECONDS of server time, counted from its arrival (`g.started`).
- Heavy work (the planners, batches) takes one of HEAVY_WORK_CONCURRENCY slots of its process; a request that
  cannot get one within its budget is a 503 with Retry-After, not a queue without end.
- The engine's part of heavy work (the planners' searches, each batch item's estimate) runs in a native thread of
  the process (`offload`, at a lower OS priority), so the event loop keeps serving probes and ordinary estimates
  meanwhile; the searches call a `detached_checkpoint()` between units of work (budget.py) that answers False
  once the budget is spent (the search stops and says `complete: false`). Batches `checkpoint()` between items
  on the loop (it yields it, too).
Under a worker without gevent (tests, sync workers) the yield is a no-op; the budget and the cap still hold.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import current_app, g
from flask_smorest import abort

from ...engine.i18n import _
from ...greenlets import gevent_running
from .metrics import HEAVY_IN_USE

_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_POOLS: dict[
    int, Any
] = {}  # HEAVY_WORK_CONCURRENCY -> this process's gevent ThreadPool for the planners' searches
_NICED = threading.local()


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


def detached_checkpoint() -> Callable[[], bool]:
    """A checkpoint for work run off the loop (`offload`): the budget's end, read now (the thread has no request
    context), and no yield (the loop runs on its own meanwhile)."""
    end = deadline()
    return lambda: time.perf_counter() < end


def offload(call: Callable[..., Any], *args: Any) -> Any:
    """`call(*args)` (pure engine work: no database, no request context) in a native thread of this process's
    heavy-work pool, at HEAVY_WORK_NICE lower OS priority, when gevent runs; else here. This greenlet waits; the
    event loop keeps answering: the search gives the GIL back every sys.getswitchinterval() (5 ms) and the OS
    runs the loop's thread first when the cores are busy (issue 28: cooperative yields left /healthz p99 at
    0.26-0.5 s behind the worst plans, a search's ranking being one block of seconds). The caller's context
    variables (the answer's language) go with it."""
    if not gevent_running():
        return call(*args)
    size = int(current_app.config["HEAVY_WORK_CONCURRENCY"])
    nice = int(current_app.config["HEAVY_WORK_NICE"])
    pool = _POOLS.get(size)
    if pool is None:  # made in the worker after the fork, as the slots are
        from gevent.threadpool import ThreadPool

        pool = _POOLS[size] = ThreadPool(size)
    context = contextvars.copy_context()

    def run() -> Any:
        _lower_priority(nice)
        return context.run(call, *args)

    return pool.apply(run)


def _lower_priority(nice: int) -> None:
    """Once per pool thread: `nice` more niceness for this thread alone (Linux applies PRIO_PROCESS 0 to the
    calling thread); where that is refused, the thread runs at the process's priority."""
    if getattr(_NICED, "done", False) or nice <= 0:
        return
    _NICED.done = True
    try:
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + nice))
    except (AttributeError, OSError):  # not Linux, or not allowed
        pass


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
