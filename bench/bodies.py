"""Request bodies as the endpoints hand them to the engine, without importing the api (bench never imports it:
tests/contract/test_layers.py). The schemas only turn count strings ("1B", "2T", "7b") into numbers for the bench's
bodies; the engine's own `parse_count` does the same here. tests/contract/test_bench_bodies.py checks, for every
body the benches send, that `as_loaded(body)` equals what the api's schema loads."""

from __future__ import annotations

import copy
from typing import Any

from scalecost.engine import parse_count

# (section, key) of the count fields (the api's Count fields: training tokens/samples/pretraining_tokens, the
# model's parameters and flops_per_sample)
COUNT_FIELDS = {
    ("training", "tokens"),
    ("training", "samples"),
    ("training", "pretraining_tokens"),
    ("model", "parameters"),
    ("model", "flops_per_sample"),
}


def as_loaded(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its count strings as the numbers the endpoint's schema loads them to."""
    out = copy.deepcopy(body)
    for section, key in COUNT_FIELDS:
        part = out.get(section)
        if isinstance(part, dict) and isinstance(part.get(key), str):
            part[key] = parse_count(part[key])
    return out
