"""Whether this process runs under gevent (gunicorn's gevent worker patched the standard library): the api yields
its event loop between units of heavy work, and the store runs SQLite calls that may wait for a lock off it."""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable
from typing import Any


def gevent_running() -> bool:
    """True once gevent has monkey-patched sockets in this process (gunicorn's gevent worker does, first thing)."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey is not None and monkey.is_module_patched("socket"))


def off_the_loop(call: Callable[..., Any], *args: Any) -> Any:
    """`call(*args)` in gevent's native thread pool when gevent runs: this greenlet waits while the others run
    (a lock wait releases the GIL; CPU-bound Python gives it back every sys.getswitchinterval(), 5 ms, so the
    loop keeps answering probes); else here. The caller's context variables (the answer's language) go along."""
    if not gevent_running():
        return call(*args)
    import gevent

    return gevent.get_hub().threadpool.apply(contextvars.copy_context().run, (call, *args))
