"""Where a use case runs its CPU-heavy, database-free steps: `offload(call, *args)`, chosen by the caller (the api
passes a function that runs them off the event loop); `here` runs them in place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Offload = Callable[..., Any]  # offload(call, *args) -> call(*args), run wherever the caller chooses


def here(call: Callable[..., Any], *args: Any) -> Any:
    return call(*args)
