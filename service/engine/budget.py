"""Cooperative time budgets for the long computations (the planners' searches).

The engine does no I/O and keeps no clock of its own for this: the caller hands a search a `Checkpoint`, which the
search calls between units of work (one candidate enumerated, one candidate's layouts evaluated, one serving group
checked). The checkpoint may let other work run meanwhile (the api yields its event loop there) and answers whether
to go on; when it answers False the search stops and reports what it found, with `complete: false`.
"""

from __future__ import annotations

from collections.abc import Callable

Checkpoint = Callable[[], bool]


def unlimited() -> bool:
    """The checkpoint of a caller without a budget: always go on."""
    return True
