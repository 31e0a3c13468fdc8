"""When no deployment meets every objective: what came closest (the lowest TTFT and TPOT reachable, the cheapest plan
meeting each objective alone, the replicas both need), or why nothing could be evaluated."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...i18n import N_, _, num
from .request import ServingSearch

Deploy = Callable[[int, int], Any]  # (group index, batch) -> the rank.Deployment there

# each reason in words, for messages (the reason itself is an enum value: exclusions.<reason>)
REASON_PHRASES = {
    "unsupported_engine": N_("unsupported engine"),
    "unsupported_format": N_("unsupported format"),
    "unsupported_kv_precision": N_("unsupported kv precision"),
    "invalid_devices": N_("invalid devices"),
    "no_price": N_("no price"),
    "does_not_fit": N_("does not fit"),
    "above_max_num_seqs": N_("above the engine's max_num_seqs"),
    "misses_ttft": N_("misses ttft"),
    "misses_tpot": N_("misses tpot"),
    "too_many_replicas": N_("too many replicas"),
    "not_sold": N_("not sold"),
}


@dataclass
class Misses:
    """Per-objective closest points seen (value, group, batch), for the nearest-miss report."""

    lowest_ttft: tuple[float, int, int] | None = None
    lowest_tpot: tuple[float, int, int] | None = None
    cheapest_ttft_ok: tuple[float, int, int] | None = None  # (usd/h, …) among TTFT-meeting points
    cheapest_tpot_ok: tuple[float, int, int] | None = None
    fewest_replicas: tuple[float, int, int] | None = None  # latency met, replicas over the bound

    def offer(self, name: str, values: np.ndarray, mask: np.ndarray, group: int) -> None:
        if not mask.any():
            return
        i = int(np.argmin(np.where(mask, values, np.inf)))
        current = getattr(self, name)
        if current is None or values[i] < current[0]:
            setattr(self, name, (float(values[i]), group, i + 1))


def nearest_misses(
    space: ServingSearch, m: Misses, exclusions: dict[str, int], deploy: Deploy
) -> list[dict[str, Any]]:
    """What came closest when nothing met every objective, each with the deployment that reached it."""
    if m.lowest_ttft is not None:
        return _closest(space, m, deploy)
    if not exclusions["does_not_fit"]:
        counted = ", ".join(
            f"{num(n, 0, grouping=True)} {_(REASON_PHRASES[r])}" for r, n in exclusions.items() if n
        )
        message = _("Every configuration was excluded before it could be evaluated: {counted}.").format(
            counted=counted
        )
        return [{"objective": "search_space", "message": message, "value": None, "deployment": None}]
    message = _(
        "No searched deployment holds the model and one sequence of {value} tokens (up to "
        "{devices} devices per replica, {value2:,} configurations do not fit): allow more devices "
        "per replica, lower-bit formats or an fp8 KV cache."
    ).format(
        value=space.prompt_tokens + space.output_tokens,
        devices=max(space.devices),
        value2=exclusions["does_not_fit"],
    )
    return [{"objective": "memory", "message": message, "value": None, "deployment": None}]


def _closest(space: ServingSearch, m: Misses, deploy: Deploy) -> list[dict[str, Any]]:
    """The lowest TTFT and TPOT reachable (where they miss), the cheapest plan meeting each objective alone, and
    the replicas both objectives need when that is over search.max_replicas."""
    rows = []
    if m.lowest_ttft is not None and m.lowest_ttft[0] > space.ttft_s:
        template = _("The lowest TTFT reachable is {{v:.3g}} s on {{where}} (SLO {ttft_s:g} s).").format(
            ttft_s=space.ttft_s
        )
        rows.append(_closest_row(deploy, "time_to_first_token_s", m.lowest_ttft, template))
    if m.lowest_tpot is not None and m.lowest_tpot[0] > space.tpot_s:
        template = _("The lowest TPOT reachable is {{v:.3g}} s on {{where}} (SLO {tpot_s:g} s).").format(
            tpot_s=space.tpot_s
        )
        rows.append(_closest_row(deploy, "time_per_output_token_s", m.lowest_tpot, template))
    if m.cheapest_ttft_ok is not None:
        template = _("The cheapest plan meeting the TTFT, ${usd:,.2f}/h on {where}, has a TPOT of {v:.3g} s.")
        rows.append(_closest_row(deploy, "cheapest_meeting_ttft", m.cheapest_ttft_ok, template, "tpot"))
    if m.cheapest_tpot_ok is not None:
        template = _("The cheapest plan meeting the TPOT, ${usd:,.2f}/h on {where}, has a TTFT of {v:.3g} s.")
        rows.append(_closest_row(deploy, "cheapest_meeting_tpot", m.cheapest_tpot_ok, template, "ttft"))
    if m.fewest_replicas is not None:
        template = _(
            "Meeting both objectives needs {{v:,.0f}} replicas of {{where}}; search.max_replicas is "
            "{max_replicas:,}."
        ).format(max_replicas=space.max_replicas)
        rows.append(_closest_row(deploy, "replicas", m.fewest_replicas, template))
    return rows


def _closest_row(
    deploy: Deploy,
    objective: str,
    found: tuple[float, int, int],
    template: str,
    value: str | None = None,
) -> dict[str, Any]:
    """One closest point: the deployment at `found` (value, group, batch) and its message; `value` names the
    figure to report instead of found's own (`ttft` or `tpot`)."""
    dep = deploy(found[1], found[2])
    g = dep.group
    where = _("{devices} × {id}, {engine} {name}, batch {batch}").format(
        devices=g.devices,
        id=g.accelerator.id,
        engine=g.workload.engine,
        name=g.workload.fmt.name,
        batch=dep.plan.workload.batch,
    )
    speed = dep.evaluation.speed
    reported = {"ttft": speed.time_to_first_token_s, "tpot": speed.time_per_output_token_s}.get(
        value or "", found[0]
    )
    message = template.format(v=reported, usd=dep.usd_per_hour, replicas=dep.replicas, where=where)
    return {"objective": objective, "message": message, "value": reported, "deployment": dep}
