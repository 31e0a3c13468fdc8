"""Whether this process runs under gevent (gunicorn's gevent worker patched the standard library): the api yields
its event loop between units of heavy work, and the store runs SQLite calls that may wait for a lock off it."""

from __future__ import annotations

import sys


def gevent_running() -> bool:
    """True once gevent has monkey-patched sockets in this process (gunicorn's gevent worker does, first thing)."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey is not None and monkey.is_module_patched("socket"))
