"""What a prompt waits for before its first token under continuous batching: its own prefill steps, the prompts
queued ahead of it (M/D/1 when arrivals spread) or, with fixed lengths, the groups of its burst ahead of it
(continuous.py's module docstring has the model; docs/formulas.md "Continuous batching")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .arrays import FloatArray
from .engine_step import StepParts, step_seconds

MAX_PREFILL_LOAD = 0.97  # the M/D/1 wait is capped here (it diverges at 1)


def rows_beside(p: StepParts, decoding: FloatArray) -> FloatArray:
    """The decode rows that share a step with prompt tokens: all of them where the engine mixes, none where it runs
    prompt-only steps (the common cases skip the mask: the planner stacks one engine's deployments together)."""
    return either(p, np.asarray, np.zeros_like, decoding)


def either(
    p: StepParts, mixed: Callable[..., FloatArray], alone: Callable[..., FloatArray], *args: Any
) -> FloatArray:
    """`mixed(*args)` where the engine mixes prompt chunks into decode steps, `alone(*args)` where it does not (each
    computed only when some deployment needs it)."""
    if np.all(p.mixed):
        return mixed(*args)
    if not np.any(p.mixed):
        return alone(*args)
    return np.where(p.mixed, mixed(*args), alone(*args))


def prefill_rate(p: StepParts, decoding: FloatArray) -> FloatArray:
    """Prompts/s the engine's prefill takes at most with `decoding` requests beside: every step full of prompt tokens
    (chunked: the budget less the decode rows; unchunked: as many whole prompts as the room holds, at least one).
    Prompts queue for it as for an M/D/1 server at utilisation X/prefill_rate (its share of time). Without mixed
    steps the decodes take none of the budget and none of the prompt steps' time."""
    beside = rows_beside(p, decoding)
    room = np.maximum(p.budget - beside * p.verify_rows, 1.0)
    whole = np.maximum(np.floor(room / p.prompt), 1.0) * p.prompt
    tokens = np.where(p.chunked, room, whole)
    return tokens / (p.prompt * step_seconds(p, beside, tokens))


def queue_wait(load: FloatArray, service: FloatArray | float) -> FloatArray:
    """Mean wait of a prompt behind others in an M/D/1 queue at utilisation `load` (< 1), deterministic `service`
    seconds each: load/(2(1 − load))·service (Pollaczek-Khinchine with zero service variance)."""
    return load / (2.0 * (1.0 - load)) * service


def queued_at(load: FloatArray, wait: FloatArray, q: float) -> FloatArray:
    """The wait at quantile q: a prompt waits with probability `load`, the wait of those who wait exponential with
    mean wait/load, so the q-quantile is (wait/load)·ln(load/(1 − q)) when load > 1 − q, else 0."""
    tail = np.where(load > 0, wait / np.maximum(load, 1e-12), 0.0)  # mean wait of those who wait
    return np.where(load > 1.0 - q, tail * np.log(np.maximum(load, 1e-12) / (1.0 - q)), 0.0)


def own_prefill(p: StepParts, others: FloatArray) -> FloatArray:
    """Seconds of the steps that carry one request's own prompt: chunks of at most budget − d_o tokens beside the
    other requests' decodes (without chunking, the whole prompt in one step; without mixed steps, no decode beside)."""
    beside = rows_beside(p, others)
    room = np.maximum(p.budget - beside * p.verify_rows, 1.0)
    chunks = np.maximum(p.prompt / room, 1.0) * step_seconds(p, beside, np.minimum(room, p.prompt))
    if np.all(p.chunked):
        return chunks
    whole = step_seconds(p, beside, p.prompt + np.zeros_like(others))
    return np.where(p.chunked, chunks, whole)


def burst_size(p: StepParts, conc: FloatArray, room: FloatArray) -> FloatArray | float:
    """Prompts prefilled together in a closed loop of fixed lengths (workload.lengths "fixed"): the C requests decode
    in step, finish together and come back together as one burst, which a step's room (budget less the decode rows
    beside) takes in groups of g = min(C, ⌊room/P⌋) prompts; 1 otherwise (varied lengths spread the arrivals). A
    prompt that fills half the room or more is prefilled alone, one after the other, and the requests fall out of
    step (NIM 1.8's 5,000-token prompts: the spread model fits them)."""
    if not np.any(p.together):
        return 1.0
    group = np.maximum(np.minimum(conc, np.floor(room / p.prompt)), 1.0)
    return np.where(p.together > 0, group, 1.0)


def groups_ahead(burst: FloatArray | float, conc: FloatArray, q: float | None = None) -> FloatArray | None:
    """Group steps before a prompt's own when a burst of C prompts is prefilled in k = ⌈C/g⌉ groups of g, one step
    after the other (the last group holds the rest): the mean over the C prompts, or at the q-quantile prompt
    (⌈qC/g⌉ − 1). None when no deployment has groups; 0 for groups of one, which spread as varied lengths do."""
    if np.all(np.asarray(burst) <= 1.0):
        return None
    c = np.maximum(conc, 1.0)
    g = np.maximum(burst, 1.0)
    k = np.ceil(c / g - 1e-9)
    if q is None:  # Σ j·n_j / C − 1 with n_j = g for j < k and C − (k − 1)g for the last
        ahead = (g * (k - 1.0) * k / 2.0 + k * (c - (k - 1.0) * g)) / c - 1.0
    else:
        ahead = np.ceil(q * c / g - 1e-9) - 1.0
    return np.where(np.asarray(burst) > 1.0, np.maximum(ahead, 0.0), 0.0)


def group_prefill(p: StepParts, others: FloatArray, burst: FloatArray | float) -> FloatArray:
    """Seconds of the step that carries a whole group's prompts (burst × P tokens, within the room by burst_size) beside
    the other requests' decodes: each prompt of the group waits for it; a group of one is own_prefill."""
    group = step_seconds(p, rows_beside(p, others), p.prompt * burst)
    return np.where(np.asarray(burst) > 1.0, group, own_prefill(p, others))
