"""The request's scheduling fields: `serving` (scheduler, chunked_prefill, max_num_batched_tokens),
`workload.requests_per_second` and `slo.percentile`, checked with every bad field named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidRequest
from ..hardware import Accelerator
from ..i18n import N_, _
from ..models import ModelSpec, resolve_model
from .model.memory import Workload, tensor_degree_error
from .model.schedule import (
    ACCEPTANCE_RANGE,
    DEFAULT_FRONT_END_LATENCY_S,
    DRAFT_TOKENS_RANGE,
    FRONT_END_LATENCY_RANGE,
    LENGTHS,
    MAX_BATCHED_TOKENS,
    MIN_BATCHED_TOKENS,
    MTP_ACCEPTANCE,
    PERCENTILES,
    SCHEDULERS,
    SPECULATIVE_METHODS,
    Schedule,
    Speculative,
    batched_tokens,
    chunked,
    default_scheduler,
)

MAX_RATE = 1e7  # requests/s: the planner's demand bound
# Prefix hit rates: a fraction of each prompt. The SGLang paper (Zheng et al., NeurIPS 2024, arXiv:2312.07104,
# RadixAttention) reports cache hit rates of 50-99 % on its workloads (recalled, not re-read this session), so the
# validity range stops at 0.99: beyond it the prompt is effectively all cached and the model is untested
MAX_PREFIX_HIT = 0.990000001
MAX_PREFIX_HIT_SHOWN = "0.99"


def parse_schedule(request: Mapping[str, Any], engine: str, bad: Any) -> Schedule:
    serving = request.get("serving") or {}
    workload = request.get("workload") or {}
    scheduler = serving.get("scheduler") or default_scheduler(engine)
    if scheduler not in SCHEDULERS:
        bad(
            "serving.scheduler",
            _("Unknown scheduler {value}; valid: {valid}.").format(
                value=repr(scheduler), valid=", ".join(SCHEDULERS)
            ),
        )
        scheduler = default_scheduler(engine)
    chunk = _flag(serving, "chunked_prefill", bad)
    budget = serving.get("max_num_batched_tokens")
    if budget is not None and (
        isinstance(budget, bool)
        or not isinstance(budget, int)
        or not MIN_BATCHED_TOKENS <= budget <= MAX_BATCHED_TOKENS
    ):
        bad(
            "serving.max_num_batched_tokens",
            _("Must be an integer {low}-{high} (tokens per engine step).").format(
                low=MIN_BATCHED_TOKENS, high=MAX_BATCHED_TOKENS
            ),
        )
        budget = None
    rate = workload.get("requests_per_second")
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= MAX_RATE
    ):
        bad(
            "workload.requests_per_second",
            _("Must be a number above 0 and at most {high} (requests/s).").format(high=f"{MAX_RATE:g}"),
        )
        rate = None
    if rate is not None and scheduler != "continuous":
        bad(
            "workload.requests_per_second",
            _("Arrival rates need the continuous scheduler (serving.scheduler)."),
        )
        rate = None
    hit = workload.get("prefix_hit_rate", 0.0)
    if hit is None:
        hit = 0.0
    if isinstance(hit, bool) or not isinstance(hit, int | float) or not 0 <= hit < MAX_PREFIX_HIT:
        bad(
            "workload.prefix_hit_rate",
            _(
                "Must be a fraction in [0, {high}] (share of each prompt served from the prefix cache)."
            ).format(high=MAX_PREFIX_HIT_SHOWN),
        )
        hit = 0.0
    if hit and scheduler != "continuous":
        bad("workload.prefix_hit_rate", _("Prefix caching is modelled for the continuous scheduler only."))
        hit = 0.0
    given = workload.get("lengths")
    lengths = _one_of(
        "varied" if given is None else given,
        LENGTHS,
        "workload.lengths",
        N_("Unknown lengths {value}; valid: {valid}."),
        bad,
    )
    if lengths == "fixed" and (
        scheduler != "continuous" or rate is not None or serving.get("disaggregation")
    ):
        bad(
            "workload.lengths",
            _(
                "Fixed lengths are modelled for a closed loop (batch_size) under the continuous scheduler with "
                "prefill and decode on the same devices; an arrival rate is Poisson."
            ),
        )
        lengths = "varied"
    percentile = _one_of(
        (request.get("slo") or {}).get("percentile") or "p90",
        PERCENTILES,
        "slo.percentile",
        N_("Unknown percentile {value}; valid: {valid}."),
        bad,
    )
    speculative = _speculative(serving.get("speculative"), scheduler, bad)
    return Schedule(
        front_end_latency_s=front_end_latency(request.get("slo") or {}, bad),
        scheduler=scheduler,
        cuda_graph_max_batch=_count(serving, "cuda_graph_max_batch", bad),
        mixed_chunk=_flag(serving, "mixed_chunk", bad),
        overlap_schedule=_flag(serving, "overlap_schedule", bad),
        chunked_prefill=chunk,
        max_num_batched_tokens=budget,
        requests_per_second=float(rate) if rate is not None else None,
        max_concurrency=_count(serving, "max_num_seqs", bad),
        percentile=percentile,
        prefix_hit_rate=float(hit),
        speculative=speculative,
        fixed_lengths=lengths == "fixed",
    )


def front_end_latency(slo: Mapping[str, Any], bad: Any) -> float:
    """slo.front_end_latency_s: seconds before the engine in every TTFT, 0-10 (default: the public benchmarks')."""
    value = slo.get("front_end_latency_s")
    if value is None:
        return DEFAULT_FRONT_END_LATENCY_S
    low, high = FRONT_END_LATENCY_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        bad(
            "slo.front_end_latency_s",
            _(
                "Must be a number {low}-{high} (seconds of HTTP, gateway and tokenization in every TTFT)."
            ).format(low=f"{low:g}", high=f"{high:g}"),
        )
        return DEFAULT_FRONT_END_LATENCY_S
    return float(value)


def _one_of(value: Any, valid: tuple[str, ...], field: str, message: str, bad: Any) -> str:
    """`value` when it is one of `valid`; else the error on `field` (message: "... {value} ...; valid: {valid}.",
    translated here) and the first of `valid` (the request fails with the error: the value only lets the other
    fields be checked)."""
    if value in valid:
        return str(value)
    bad(field, _(message).format(value=repr(value), valid=", ".join(valid)))
    return valid[0]


def _flag(serving: Mapping[str, Any], key: str, bad: Any) -> bool | None:
    """serving.<key>: true, false, or absent (None: the engine's default)."""
    value = serving.get(key)
    if value is not None and not isinstance(value, bool):
        bad(f"serving.{key}", _("Must be true or false."))
        return None
    return value


def _count(serving: Mapping[str, Any], key: str, bad: Any, low: int = 1, high: int = 100_000) -> int | None:
    """serving.<key>: an integer in [low, high], or absent (None: the engine's default)."""
    value = serving.get(key)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
    ):
        bad(f"serving.{key}", _("Must be an integer {low}-{high}.").format(low=low, high=high))
        return None
    return value


def _speculative(spec: Any, scheduler: str, bad: Any) -> Speculative | None:
    """serving.speculative: {method, draft_tokens, acceptance_rate, draft_cost_ratio}, inside the sourced ranges."""
    if not spec:
        return None
    if not isinstance(spec, Mapping):
        bad("serving.speculative", _("Must be an object: method, draft_tokens, acceptance_rate."))
        return None
    method = spec.get("method")
    if method not in SPECULATIVE_METHODS:
        bad(
            "serving.speculative.method",
            _("Unknown method {value}; valid: {valid}.").format(
                value=repr(method), valid=", ".join(SPECULATIVE_METHODS)
            ),
        )
        return None
    k = spec.get("draft_tokens", 1 if method == "mtp" else 4)
    low_k, high_k = DRAFT_TOKENS_RANGE
    if isinstance(k, bool) or not isinstance(k, int) or not low_k <= k <= high_k:
        bad(
            "serving.speculative.draft_tokens",
            _("Must be an integer {low}-{high}.").format(low=low_k, high=high_k),
        )
        return None
    alpha = spec.get("acceptance_rate", MTP_ACCEPTANCE if method == "mtp" else None)
    low, high = ACCEPTANCE_RANGE
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not low <= alpha <= high:
        bad(
            "serving.speculative.acceptance_rate",
            _("Give the per-token acceptance rate, {low}-{high} (the range the sources measured).").format(
                low=low, high=high
            ),
        )
        return None
    ratio = spec.get("draft_cost_ratio")
    if ratio is not None and (
        isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1
    ):
        bad(
            "serving.speculative.draft_cost_ratio",
            _("Must be a fraction in (0, 1] (a draft pass per target step)."),
        )
        return None
    if scheduler != "continuous":
        bad("serving.speculative", _("Speculative decoding is modelled for the continuous scheduler only."))
        return None
    ok, draft = _draft_model(spec, method, bad)
    if not ok:
        return None
    return Speculative(
        method, k, float(alpha), float(ratio) if ratio is not None else None, draft=draft or None
    )


DRAFT_PATH = "serving.speculative.draft_model"


def _draft_model(spec: Mapping[str, Any], method: str, bad: Any) -> tuple[bool, ModelSpec | None]:
    """(valid, serving.speculative.draft_model resolved like `model`: None when not given)."""
    given = spec.get("draft_model")
    if given is None:
        return True, None
    if method != "draft_model":
        bad(DRAFT_PATH, _("Only for method draft_model: an MTP module is part of the target's checkpoint."))
        return False, None
    if not isinstance(given, Mapping):
        bad(
            DRAFT_PATH,
            _("Must be a model object like `model`: a preset, a shape, a parameter count or an hf_config."),
        )
        return False, None
    try:
        draft = resolve_model(given)
    except InvalidRequest as exc:
        for path, messages in exc.errors.items():
            where = DRAFT_PATH + path[len("model") :] if path.startswith("model") else DRAFT_PATH
            for message in messages:
                bad(where, message)
        return False, None
    if draft.architecture != "transformer" or draft.shape is None or not draft.shape.causal:
        bad(DRAFT_PATH, _("A draft must be a decoder-only transformer (a causal language model)."))
        return False, None
    return True, draft


def check_draft(w: Workload, count: int | None, bad: Any) -> None:
    """A named draft must be smaller than the target and shard over the target's tensor-parallel degree."""
    spec = w.schedule.speculative
    if spec is None or spec.draft is None or spec.draft.shape is None:
        return
    if spec.draft_weight_ratio is not None and spec.draft_weight_ratio >= 1.0:
        bad(
            DRAFT_PATH,
            _(
                "The draft must be smaller than the target (its weights are {ratio:.0%} of the target's)."
            ).format(ratio=spec.draft_weight_ratio),
        )
    s = spec.draft.shape
    if count is not None and w.layout == "tensor":
        reason = tensor_degree_error(s.attention_heads, s.kv_heads, count)
        if reason:
            bad(
                DRAFT_PATH,
                _("The draft shards like the target: tensor-parallel degree {count} {reason}.").format(
                    count=count, reason=reason
                ),
            )


def check_schedule(w: Workload, acc: Accelerator, bad: Any) -> None:
    """A prompt that cannot be prefilled in one step without chunking; a sample model with a scheduler; a CUDA-graph
    batch on a part that is not a GPU (its builds capture graphs of their own: schedule.cuda_graph_max_batch)."""
    if w.schedule.cuda_graph_max_batch is not None and acc.kind != "gpu":
        bad(
            "serving.cuda_graph_max_batch",
            _("CUDA graphs are captured on GPUs only; {accelerator} is not a GPU.").format(
                accelerator=acc.id
            ),
        )
    if not w.schedule.continuous:
        return
    if w.mode != "token":
        return
    budget, _source = batched_tokens(w.schedule, w.engine, acc)
    if not chunked(w.schedule, w.engine) and w.prompt_tokens > budget:
        bad(
            "serving.max_num_batched_tokens",
            _(
                "Without chunked prefill a {prompt}-token prompt needs a budget of at least {prompt} tokens per "
                "step (this one: {budget}); raise it or set serving.chunked_prefill true."
            ).format(prompt=w.prompt_tokens, budget=budget),
        )
