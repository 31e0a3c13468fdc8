"""How a continuous-batching engine admits requests to its KV cache: how many tokens of KV a running request holds
on average, and so how many run at once when the cache is the limit (docs/formulas.md "KV admission").

- vLLM (V1 scheduler, vllm/v1/core/sched/scheduler.py): blocks are allocated as tokens are computed. A waiting
  request is admitted when the blocks of its prompt (chunk) are free; nothing is set aside for its output. When a
  running request needs a block and none is free, the scheduler preempts the newest running request ("Preempt the
  lowest-priority request": `self.running.pop()`, its blocks freed, recomputed later). In the steady state the cache
  holds what the running requests have computed so far: spread over their generation, the prompt and half the output
  on average, P + O/2.
- SGLang (python/sglang/srt/managers/scheduler.py and schedule_policy.py): admission reserves the prompt and
  `new_token_ratio` × each request's remaining output. The ratio starts at SGLANG_INIT_NEW_TOKEN_RATIO 0.7 and decays
  over SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600 to 0.7 × SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.1 = 0.07, and is raised
  again after a retraction (a decode step out of memory). At the floor a request holds P + O/2 and reserves
  0.07 × O/2 on average: P + 0.535·O.
- TensorRT-LLM: the capacity scheduler's default policy GUARANTEED_NO_EVICT admits a request only when the blocks
  of its prompt and all its output are free: P + O (NVIDIA's NIM plateaus agree: tests/engine/test_kv_queue.py).
- Static batches and the other engines hold the whole context of every sequence: P + O.

Only the running limit uses this (load.running_limit, the decode pool's slots). The memory a plan is sized for, the
device count that fits and the serving planner's batches keep the whole context: a plan that relies on preemption
is not planned.
"""

from __future__ import annotations

from typing import Protocol

from .schedule import Schedule


class Workload(Protocol):
    """What the admission rule reads of memory.Workload (a protocol: memory.py imports this module)."""

    @property
    def engine(self) -> str: ...
    @property
    def schedule(self) -> Schedule: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def mode(self) -> str: ...


SGLANG_MIN_NEW_TOKEN_RATIO = 0.7 * 0.1  # SGLANG_INIT_NEW_TOKEN_RATIO × SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
# share of its output a running request holds in the KV cache on average under each engine's admission
_OUTPUT_HELD = {
    "vllm": 0.5,
    "sglang": 0.5 + SGLANG_MIN_NEW_TOKEN_RATIO / 2.0,
}
ON_DEMAND, RESERVED = "on_demand", "reserved"
SOURCES = {
    "vllm": "vLLM V1 scheduler: blocks allocated as tokens are computed, the newest request preempted when none is "
    "free (vllm/v1/core/sched/scheduler.py): prompt + output/2 on average",
    "sglang": "SGLang: prompt + new_token_ratio x remaining output reserved, the ratio decaying to 0.07 "
    "(SGLANG_INIT_NEW_TOKEN_RATIO 0.7 x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.1): prompt + 0.535 x output on average",
    "tensorrt-llm": "TensorRT-LLM capacity scheduler GUARANTEED_NO_EVICT (default): prompt + output reserved",
}
_WHOLE_CONTEXT = "the whole context of every sequence: prompt + output"


def kv_admission(w: Workload) -> str:
    """`on_demand` (the engine allocates KV as tokens are computed and preempts when it runs out) or `reserved`
    (room for the whole output is set aside when a request is admitted; static batches hold it throughout)."""
    on_demand = w.mode == "token" and w.schedule.continuous and w.engine in _OUTPUT_HELD
    return ON_DEMAND if on_demand else RESERVED


def held_tokens(w: Workload) -> int:
    """Tokens of KV one running request holds on average under the engine's admission (rounded up). Identical
    requests in a closed loop (workload.lengths "fixed") advance in step and reach their whole context together,
    so they are counted at it."""
    if kv_admission(w) == RESERVED or w.schedule.fixed_lengths:
        return w.context_tokens
    held = w.prompt_tokens + _OUTPUT_HELD[w.engine] * w.output_tokens
    return min(w.context_tokens, max(1, -int(-held // 1)))


_IN_STEP = (
    "identical requests in step (workload.lengths fixed) reach their whole context together: prompt + output"
)


def admission_source(w: Workload) -> str:
    if not w.schedule.continuous:
        return _WHOLE_CONTEXT
    if kv_admission(w) == ON_DEMAND and w.schedule.fixed_lengths:
        return _IN_STEP
    return SOURCES.get(w.engine, _WHOLE_CONTEXT)
