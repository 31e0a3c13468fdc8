"""A serving-plan request (dict, already schema-checked) → a typed ServingSearch, every impossible field at once.

The search space is accelerators × engines × weight formats × KV precisions × devices per replica (each a
"deployment group"), times the providers pricing each accelerator, times every batch size 1..max_batch_size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidRequest
from ...hardware import Accelerator, Catalog
from ...i18n import _
from ...models import ModelSpec, resolve_model
from ...offers import NEUTRAL, Terms, eviction_down_share
from ...pricing import MAX_PRICE_OVERRIDE, PRICING_MODELS, resolve_offer, valid_override
from ..model.formats import ENGINES, FORMAT_PRECISION
from ..model.schedule import DEFAULT_FRONT_END_LATENCY_S
from ..request import DEFAULT_OUTPUT, DEFAULT_PROMPT
from ..schedule_request import front_end_latency

DEFAULT_DEVICES = (1, 2, 4, 8)
# Plain precisions tried when neither `weights` nor `search.formats` is given; a bare int8/int4 means each
# engine's usual format (formats.py: W8A16/W4A16 on vLLM/TRT-LLM, GGUF on llama.cpp, bitsandbytes on transformers).
DEFAULT_FORMATS: tuple[tuple[str | None, str | None], ...] = (
    ("bf16", None),
    ("fp8", None),
    ("int8", None),
    ("int4", None),
)
# Largest batch searched per replica by default: vLLM's max_num_seqs default on GPUs under 70 GiB and the A100
# (1024 on larger ones); schedule.max_num_seqs caps the search where an engine runs fewer.
DEFAULT_MAX_BATCH = 256
# KV-cache precisions searched when the request names none (issue 30): each engine's default for the weights, and
# an FP8 cache (vLLM --kv-cache-dtype fp8, SGLang --kv-cache-dtype fp8_e5m2/fp8_e4m3, TensorRT-LLM FP8 KV).
DEFAULT_KV_PRECISIONS: tuple[str | None, ...] = (None, "fp8")
MAX_BATCH = 4096
DEFAULT_MAX_REPLICAS = 10_000
# Deployment groups (accelerators × engines × formats × KV precisions × device counts) one request may ask for:
# each group costs ~0.1-0.3 ms of server time (bench/plan_inference_bench.py), so the bound keeps a search
# under ~2 s.
MAX_GROUPS = 20_000
DEFAULT_FRONTIER_POINTS = 20


@dataclass(frozen=True)
class PriceOption:
    provider: str
    usd_per_hour: float
    source: Any  # the catalog row (pricing.resolve_price's dict), or "override" (the request's `prices`)
    terms: Terms = NEUTRAL  # what the offer sells (engine/offers.py)

    def up_share(self, devices: int) -> float:
        """Share of the time a replica of `devices` serves: a spot fleet is sized on the capacity evictions leave up
        (extra replicas, not lower availability: docs/formulas.md, Spot interruptions)."""
        return 1.0 - eviction_down_share(devices, self.terms)

    def sells(self, devices: int) -> bool:
        """Whether replicas of `devices` pack into whole instances of this offer (a replica fills a share of an
        instance, or whole instances), one replica within one node where no scale-out network joins instances, and,
        for sliced parts, a replica is a valid slice."""
        t = self.terms
        per, slices = t.accelerators_per_instance, t.slice_sizes
        whole = devices % per == 0 or per % devices == 0
        within = t.max_accelerators is None or devices <= t.max_accelerators
        within &= t.single_job_limit is None or devices <= t.single_job_limit
        # a sliced part: a valid slice, or whole multiples of the largest (offers.buyable's rule)
        sliced = not slices or devices in slices or devices % max(slices) == 0
        return whole and within and sliced


@dataclass(frozen=True)
class ServingSearch:
    model: ModelSpec
    model_request: Mapping[str, Any]  # the request's `model` object, copied into the estimate bodies
    formats: tuple[tuple[str | None, str | None], ...]  # (weights.precision, weights.format) options
    engines: tuple[str, ...]
    kv_precisions: tuple[str | None, ...]  # None: the engine's default for the weights
    devices: tuple[int, ...]
    accelerators: tuple[Accelerator, ...]
    prices: Mapping[str, tuple[PriceOption, ...]]  # accelerator id → priced providers, cheapest first
    quotas: Mapping[str, int]  # provider (lower case) → most accelerators the caller may get there
    prompt_tokens: int
    output_tokens: int
    requests_per_second: float
    ttft_s: float
    tpot_s: float
    max_utilization: float
    max_batch: int
    max_replicas: int
    infrastructure_overhead: float
    frontier_points: int
    as_of: str | None  # cost.as_of, echoed into the estimate bodies
    percentile: str = "p90"  # slo.percentile: the latency percentile the objectives hold at
    front_end_latency_s: float = DEFAULT_FRONT_END_LATENCY_S  # slo.front_end_latency_s: in every TTFT
    prefix_hit_rate: float = 0.0  # workload.prefix_hit_rate (continuous-batching engines)
    # no search.kv_cache_precisions: the engine's default and an FP8 cache where engine and part support one,
    # the FP8 option skipped silently (not an exclusion) where they do not or where it is the default already
    kv_searched_by_default: bool = False
    disaggregation: bool = False  # search.disaggregation: also search separate prefill/decode pools

    @property
    def groups(self) -> int:
        return (
            len(self.accelerators)
            * len(self.engines)
            * len(self.formats)
            * len(self.kv_precisions)
            * len(self.devices)
        )


def parse_plan_request(request: Mapping[str, Any], catalog: Catalog) -> ServingSearch:
    errors: dict[str, list[str]] = {}

    def bad(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    model = _model(request, errors, bad)
    workload = request.get("workload") or {}
    prompt = int(workload.get("prompt_tokens", DEFAULT_PROMPT))
    output = int(workload.get("output_tokens", DEFAULT_OUTPUT))
    if model is not None:
        _check_context(model, prompt, output, bad)
    rps = _demand(workload, output, bad)
    slo = request.get("slo") or {}
    search = request.get("search") or {}
    providers = tuple(search.get("providers") or ())
    models = _pricing_models(search, bad)
    overrides = _overrides(request, catalog, bad)
    accelerators, prices = _accelerators(search, (providers, models), catalog, bad, overrides)
    cost = request.get("cost") or {}
    space = ServingSearch(
        model=model,  # type: ignore[arg-type]  # None only when errors are raised below
        model_request=request.get("model") or {},
        formats=_formats(request, search),
        engines=tuple(dict.fromkeys(search.get("engines") or ENGINES)),
        kv_precisions=tuple(dict.fromkeys(search.get("kv_cache_precisions") or DEFAULT_KV_PRECISIONS)),
        kv_searched_by_default=not search.get("kv_cache_precisions"),
        devices=tuple(sorted(set(search.get("devices_per_replica") or DEFAULT_DEVICES))),
        accelerators=accelerators,
        prices=prices,
        quotas=_quotas(request, bad),
        prompt_tokens=prompt,
        output_tokens=output,
        requests_per_second=rps,
        ttft_s=float(slo["time_to_first_token_s"]),
        tpot_s=float(slo["time_per_output_token_s"]),
        max_utilization=float(slo.get("max_utilization", 1.0)),
        max_batch=int(search.get("max_batch_size", DEFAULT_MAX_BATCH)),
        max_replicas=int(search.get("max_replicas", DEFAULT_MAX_REPLICAS)),
        disaggregation=bool(search.get("disaggregation", False)),
        infrastructure_overhead=float(cost.get("infrastructure_overhead", 0.0) or 0.0),
        frontier_points=int((request.get("output") or {}).get("frontier_points", DEFAULT_FRONTIER_POINTS)),
        as_of=str(cost["as_of"]) if cost.get("as_of") else None,
        percentile=str(slo.get("percentile") or "p90"),
        front_end_latency_s=front_end_latency(slo, bad),
        prefix_hit_rate=float(workload.get("prefix_hit_rate") or 0.0),
    )
    _check_formats(space.formats, bool(search.get("formats")), bad)
    if not errors and space.groups > MAX_GROUPS:
        bad(
            "search",
            _(
                "The search space has {groups:,} deployment groups (accelerators × engines × formats × KV "
                "precisions × devices per replica); the bound is {MAX_GROUPS:,}: narrow one of the lists."
            ).format(groups=space.groups, MAX_GROUPS=MAX_GROUPS),
        )
    if errors:
        raise InvalidRequest(errors)
    return space


def _model(request: Mapping[str, Any], errors: dict[str, list[str]], bad) -> ModelSpec | None:
    try:
        model = resolve_model(request.get("model") or {})
    except InvalidRequest as exc:
        errors.update(exc.errors)
        return None
    s = model.shape
    token = model.architecture == "lstm" or (s is not None and s.causal)
    if not token:
        bad(
            "model",
            _(
                "The serving planner plans token-generating models (decoder transformers, LSTMs) against "
                "TTFT/TPOT objectives; this {architecture} model is served in samples/s: use POST "
                "/v1/estimates/inference with hardware.count for it."
            ).format(architecture=model.architecture),
        )
    return model


def _check_context(model: ModelSpec, prompt: int, output: int, bad) -> None:
    cap = model.shape.max_context_tokens if model.shape is not None else None
    if not cap or model.architecture != "transformer":
        return
    if prompt >= cap:
        bad(
            "workload.prompt_tokens",
            _("{prompt} prompt tokens leave no room in the model's {cap}-token context.").format(
                prompt=prompt, cap=cap
            ),
        )
    elif prompt + output > cap:
        bad(
            "workload.output_tokens",
            _(
                "prompt_tokens + output_tokens = {value} exceeds the model's {cap}-token context; at most "
                "{value2} output tokens."
            ).format(value=prompt + output, cap=cap, value2=cap - prompt),
        )


def _demand(workload: Mapping[str, Any], output: int, bad) -> float:
    """Requests per second the fleet must serve (output_tokens_per_second ÷ output_tokens when given so)."""
    rps, otps = workload.get("requests_per_second"), workload.get("output_tokens_per_second")
    if (rps is None) == (otps is None):
        bad(
            "workload.requests_per_second",
            _("Give exactly one of workload.requests_per_second or workload.output_tokens_per_second."),
        )
        return 1.0
    if rps is not None:
        return float(rps)
    return float(otps or 0.0) / output


def _check_formats(formats: tuple[tuple[str | None, str | None], ...], listed: bool, bad) -> None:
    """A (precision, format) pair that disagrees is the request's mistake whatever the engine."""
    for i, (precision, named) in enumerate(formats):
        implied = FORMAT_PRECISION.get(named or "")
        if precision is not None and implied is not None and precision != implied:
            bad(
                f"search.formats.{i}" if listed else "weights.format",
                _(
                    "Format {named} stores {implied} weights but precision is {precision}; set precision to "
                    "{implied2} or omit it."
                ).format(
                    named=repr(named), implied=implied, precision=repr(precision), implied2=repr(implied)
                ),
            )


def _formats(
    request: Mapping[str, Any], search: Mapping[str, Any]
) -> tuple[tuple[str | None, str | None], ...]:
    options: Sequence[Mapping[str, Any]] | None = search.get("formats")
    if not options and request.get("weights"):
        options = [request["weights"]]
    if not options:
        return DEFAULT_FORMATS
    return tuple(dict.fromkeys((o.get("precision"), o.get("format")) for o in options))


def _accelerators(
    search: Mapping[str, Any],
    offers: tuple[tuple[str, ...], tuple[str, ...]],
    catalog: Catalog,
    bad,
    overrides: Mapping[str, tuple[PriceOption, ...]],
) -> tuple[tuple[Accelerator, ...], dict[str, tuple[PriceOption, ...]]]:
    """The accelerators searched (default: every usable one) and each one's priced providers, cheapest first.
    A named accelerator without a price among the providers is refused: a cost search cannot rank it. `offers`:
    (search.providers, search.pricing_models)."""
    providers, models = offers
    known = {p.lower() for rows in catalog.prices.values() for p in (r.provider for r in rows)}
    for i, provider in enumerate(providers):
        if provider.lower() not in known:
            bad(
                f"search.providers.{i}",
                _("No price of {provider} in the catalog; providers: {known}.").format(
                    provider=repr(provider), known=", ".join(sorted(known))
                ),
            )
    named = search.get("accelerators")
    accs: list[Accelerator] = []
    prices: dict[str, tuple[PriceOption, ...]] = {}
    for i, acc_id in enumerate(named or sorted(catalog.accelerators)):
        acc = catalog.accelerators.get(acc_id)
        if acc is not None and acc.id in prices:
            continue  # named twice
        if acc is None:
            bad(f"search.accelerators.{i}", catalog.missing_message(acc_id))
            continue
        options = overrides.get(acc.id) or _prices(acc, providers, models, catalog)
        if named and not options:
            where = _(" from {providers}").format(providers=", ".join(providers)) if providers else ""
            bad(
                f"search.accelerators.{i}",
                _("{acc_id} has no price{where} in the catalog: the planner ranks by cost.").format(
                    acc_id=acc_id, where=where
                ),
            )
        accs.append(acc)
        prices[acc.id] = options
    return tuple(accs), prices


def _overrides(request: Mapping[str, Any], catalog: Catalog, bad) -> dict[str, tuple[PriceOption, ...]]:
    """`prices`: the request's USD per accelerator-hour by catalog id (replacing the catalog's offers there)."""
    out: dict[str, tuple[PriceOption, ...]] = {}
    for acc_id, usd in (request.get("prices") or {}).items():
        if str(acc_id) not in catalog.accelerators:
            bad(f"prices.{acc_id}", catalog.missing_message(acc_id))
        elif not valid_override(usd):
            bad(
                f"prices.{acc_id}",
                _("Must be a number of USD per accelerator-hour, more than 0 and at most {most:g}.").format(
                    most=MAX_PRICE_OVERRIDE
                ),
            )
        else:
            out[str(acc_id)] = (PriceOption("override", float(usd), "override"),)
    return out


def _quotas(request: Mapping[str, Any], bad) -> dict[str, int]:
    """constraints.max_accelerators_per_provider: the caller's quota at each provider named (0: none there)."""
    out: dict[str, int] = {}
    for provider, most in (
        (request.get("constraints") or {}).get("max_accelerators_per_provider") or {}
    ).items():
        if isinstance(most, bool) or not isinstance(most, int) or most < 0:
            bad(
                f"constraints.max_accelerators_per_provider.{provider}",
                _("Must be a whole number of accelerators, 0 or more."),
            )
            continue
        out[str(provider).lower()] = most
    return out


def _pricing_models(search: Mapping[str, Any], bad) -> tuple[str, ...]:
    """`search.pricing_models`: () = each provider's default (on-demand, else the first model it lists)."""
    models = tuple(dict.fromkeys(search.get("pricing_models") or ()))
    for i, model in enumerate(models):
        if model not in PRICING_MODELS:
            bad(
                f"search.pricing_models.{i}",
                _("Must be one of: {choices}.").format(choices=", ".join(PRICING_MODELS)),
            )
    return tuple(m for m in models if m in PRICING_MODELS)


def _prices(
    acc: Accelerator, providers: tuple[str, ...], models: tuple[str, ...], catalog: Catalog
) -> tuple[PriceOption, ...]:
    """What cost.provider = p (and cost.pricing_model = m, for each m of `models`) resolves to in an estimate, for
    each provider p listing this accelerator."""
    listed = sorted({r.provider for r in catalog.prices.get(acc.id, ())})
    wanted = {p.lower() for p in providers}
    options = []
    for provider in listed:
        if wanted and provider.lower() not in wanted:
            continue
        for ask in [{"provider": provider, "pricing_model": m} for m in models] or [{"provider": provider}]:
            usd, source, terms = resolve_offer(ask, acc, catalog, lambda *_: None)
            if usd is not None:
                options.append(PriceOption(provider, usd, source, terms))
    return tuple(sorted(options, key=lambda o: (o.usd_per_hour, o.provider)))
