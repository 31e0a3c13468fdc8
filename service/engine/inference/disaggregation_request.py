"""The request's `serving.disaggregation`: separate prefill and decode pools, every bad field named.

{"prefill": {"accelerator"?, "tensor_parallel", "replicas"}, "decode": {...}, "layerwise_kv_transfer"?}; a pool's
accelerator defaults to hardware.accelerator. Checked once the workload is known: the continuous scheduler, each
pool's tensor degree against the model's heads, the engine on each pool's part, one request's context in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hardware import Accelerator, Catalog
from ..i18n import _
from ..pricing import priced_cost, resolve_price
from .model.memory import Workload, max_batch_size, tensor_degree_error, valid_counts
from .model.schedule import Disaggregation, Pool

POOLS = ("prefill", "decode")
MAX_POOL_REPLICAS = 10_000  # the serving planner's replica bound (search/request.py DEFAULT_MAX_REPLICAS)
MAX_POOL_DEGREE = 1024  # hardware.count's bound (request.py MAX_COUNT)

Prices = dict[str, tuple[float | None, Any]]  # pool → (USD per accelerator-hour, price source)


def parse_disaggregation(
    request: Mapping[str, Any], catalog: Catalog, default: Accelerator | None, bad: Any
) -> tuple[Disaggregation | None, dict[str, Pool]]:
    """The pools as given (None when the request has none or a pool is unreadable: the errors say why), and each
    readable pool by name (check_disaggregation checks those even when the other is not)."""
    spec = (request.get("serving") or {}).get("disaggregation")
    if not spec:
        return None, {}
    if not isinstance(spec, Mapping):
        bad("serving.disaggregation", _("Must be an object: prefill, decode."))
        return None, {}
    pools = {name: _pool(spec.get(name), name, catalog, default, bad) for name in POOLS}
    readable = {name: pool for name, pool in pools.items() if pool is not None}
    layerwise = spec.get("layerwise_kv_transfer", False)
    if not isinstance(layerwise, bool):
        bad("serving.disaggregation.layerwise_kv_transfer", _("Must be true or false."))
        layerwise = False
    if len(readable) < len(POOLS):
        return None, readable
    return Disaggregation(readable["prefill"], readable["decode"], layerwise), readable


def _pool(spec: Any, name: str, catalog: Catalog, default: Accelerator | None, bad: Any) -> Pool | None:
    path = f"serving.disaggregation.{name}"
    if not isinstance(spec, Mapping):
        bad(path, _("Must be an object: accelerator, tensor_parallel, replicas."))
        return None
    acc = default
    if spec.get("accelerator") is not None:
        acc = catalog.accelerators.get(str(spec["accelerator"]))
        if acc is None:
            bad(f"{path}.accelerator", catalog.missing_message(spec["accelerator"]))
    degree = _integer(spec.get("tensor_parallel", 1), f"{path}.tensor_parallel", MAX_POOL_DEGREE, bad)
    replicas = _integer(spec.get("replicas"), f"{path}.replicas", MAX_POOL_REPLICAS, bad)
    if acc is None or degree is None:
        return None
    return Pool(acc, degree, replicas or 1)  # an unreadable count is named above; the degree is still checked


def _integer(value: Any, path: str, high: int, bad: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        bad(path, _("Must be an integer {low}-{high}.").format(low=1, high=high))
        return None
    return value


def check_disaggregation(w: Workload, pools: Mapping[str, Pool], problems: Any, bad: Any) -> None:
    """What the readable `pools` cannot do with this workload: the scheduler, each degree, the engine on each part,
    memory. `problems(w, acc)` is request.hardware_problems without the format (the engine's parts)."""
    if not pools:
        return
    if not w.schedule.continuous or w.mode != "token":
        bad(
            "serving.disaggregation",
            _("Disaggregated prefill/decode is modelled for the continuous scheduler only."),
        )
        return
    s = w.model.shape
    for name, pool in pools.items():
        path = f"serving.disaggregation.{name}"
        reason = tensor_degree_error(s.attention_heads, s.kv_heads, pool.tensor_parallel) if s else None
        if reason:
            valid = ", ".join(str(t) for t in valid_counts(w))
            bad(
                f"{path}.tensor_parallel",
                _("Tensor-parallel degree {count} {reason}; valid degrees: {valid}.").format(
                    count=pool.tensor_parallel, reason=reason, valid=valid
                ),
            )
            continue
        for field, message in problems(w, pool.accelerator).items():
            bad(f"{path}.accelerator", f"{field}: {message}")
        if not problems(w, pool.accelerator) and not max_batch_size(
            w, pool.accelerator, pool.tensor_parallel, 1
        ):
            bad(
                f"{path}.tensor_parallel",
                _("One request's weights and KV cache do not fit {count} × {id}.").format(
                    count=pool.tensor_parallel, id=pool.accelerator.id
                ),
            )


def pool_prices(
    request: Mapping[str, Any],
    d: Disaggregation | None,
    catalog: Catalog,
    main: tuple[float | None, Any],
    bad: Any,
) -> Prices | None:
    """Each pool's price: the estimate's own for hardware.accelerator, else the same cost rule for the pool's part."""
    if d is None:
        return None
    out: Prices = {}
    for name, pool in zip(POOLS, (d.prefill, d.decode), strict=True):
        acc_id = (request.get("hardware") or {}).get("accelerator")
        if pool.accelerator.id == acc_id:
            out[name] = main
        else:
            cost = priced_cost(request, pool.accelerator, catalog, lambda *_: None)
            out[name] = resolve_price(cost, pool.accelerator, catalog, bad)
    return out
