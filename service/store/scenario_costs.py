"""Each saved scenario's headline cost at today's prices (table scenario_costs; see models.ScenarioCost).

Written with the scenario (store/scenarios calls `save` and `save_many`), from what the scenario keeps: the
request's accelerator and cost.provider, the price its estimate used (prices.usd_per_accelerator_hour) and its
headline cost (summary: total_usd for training, usd_per_hour for serving). Kept current by
usecases/price_moves.py in every price-change transaction; read by the listing's `cost_changed_by_more_than`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, delete, func, insert, select, update
from sqlalchemy.orm import Session

from .models import Scenario, ScenarioCost

PROVIDER_MAX: int = ScenarioCost.__table__.c.provider.type.length  # type: ignore[attr-defined]


def row_for(
    scenario_id: int, version: int, kind: str, request: dict, prices: dict, summary: dict
) -> dict[str, Any] | None:
    """The row a scenario gets, or None when its price cannot move: the request gives its own price
    (cost.usd_per_accelerator_hour, or `prices` for its accelerator) or prices as of a fixed day (cost.as_of), names
    a region, instance type or what the price covers (moves are tracked per accelerator and provider), or no
    catalog price was known."""
    cost = (request or {}).get("cost") or {}
    if cost.get("usd_per_accelerator_hour") is not None or cost.get("as_of"):
        return None
    if (prices or {}).get("price_source") == "override":  # priced by the request's `prices`
        return None
    if any(cost.get(k) for k in ("region", "instance_type", "covers")):
        return None  # price moves follow (accelerator, provider) pairs: a narrower offer is not tracked
    usd = (prices or {}).get("usd_per_accelerator_hour")
    headline = (summary or {}).get("total_usd" if kind == "training" else "usd_per_hour")
    accelerator = ((request or {}).get("hardware") or {}).get("accelerator")
    if not isinstance(accelerator, str) or not isinstance(usd, int | float) or usd <= 0 or headline is None:
        return None
    provider = str(cost.get("provider") or "").lower()
    if len(provider) > PROVIDER_MAX:
        # Lower-casing grew it past the column ('İ' × 40 → 80 characters): only a catalog row stored before the
        # price bounds (usecases/price_bounds.py) can have priced it; its cost is not tracked.
        return None
    return {
        "scenario_id": scenario_id,
        "scenario_version": version,
        "kind": kind,
        "accelerator_id": accelerator,
        "provider": provider,
        "saved_usd_per_hour": float(usd),
        "saved_usd": float(headline),
        "current_usd_per_hour": float(usd),
        "current_usd": float(headline),
        "change_percent": 0.0,
        "abs_change_percent": 0.0,
        "updated_at": dt.datetime.now(dt.UTC),
    }


def save(session: Session, scenario: Scenario) -> None:
    """(Re)write the scenario's row after a create or an update (the saved estimate is today's: no change)."""
    session.execute(delete(ScenarioCost).where(ScenarioCost.scenario_id == scenario.id))
    row = row_for(
        scenario.id, scenario.version, scenario.kind, scenario.request, scenario.prices, scenario.summary
    )
    if row is not None:
        session.execute(insert(ScenarioCost), [row])


def save_many(session: Session, ids: Sequence[int], heads: Sequence[dict[str, Any]]) -> None:
    rows = [
        row
        for i, h in zip(ids, heads, strict=True)
        if (row := row_for(i, h.get("version", 1), h["kind"], h["request"], h["prices"], h["summary"]))
        is not None
    ]
    if rows:
        session.execute(insert(ScenarioCost), rows)


def moved_ids(more_than_percent: float) -> Select[Any]:
    """Ids of scenarios whose cost at today's prices differs from the saved one by more than the given
    percent, either way (ix_scenario_costs_abs_change_percent)."""
    return select(ScenarioCost.scenario_id).where(ScenarioCost.abs_change_percent > more_than_percent)


def selectors(session: Session, accelerator_ids: Sequence[str]) -> list[tuple[str, str]]:
    """The (accelerator, provider) pairs that tracked scenarios use, for these accelerators."""
    stmt = (
        select(ScenarioCost.accelerator_id, ScenarioCost.provider)
        .where(ScenarioCost.accelerator_id.in_(list(accelerator_ids)))
        .distinct()
        .order_by(ScenarioCost.accelerator_id, ScenarioCost.provider)
    )
    return [(a, p) for a, p in session.execute(stmt)]


def _pair(accelerator_id: str, provider: str) -> list[Any]:
    return [ScenarioCost.accelerator_id == accelerator_id, ScenarioCost.provider == provider]


def affected(
    session: Session, accelerator_id: str, provider: str, new_usd: float | None, limit: int
) -> tuple[int, list[tuple[int, str, str, float, float, float]]]:
    """How many scenarios of the pair a new price moves, and the first `limit` of them, largest saved cost
    first: (id, name, kind, headline cost at today's prices, saved price, saved headline)."""
    moving = [*_pair(accelerator_id, provider), _differs(new_usd)]
    count = session.scalar(select(func.count()).select_from(ScenarioCost).where(*moving)) or 0
    rows = session.execute(
        select(
            ScenarioCost.scenario_id,
            Scenario.name,
            ScenarioCost.kind,
            func.coalesce(ScenarioCost.current_usd, ScenarioCost.saved_usd),
            ScenarioCost.saved_usd_per_hour,
            ScenarioCost.saved_usd,
        )
        .join(Scenario, Scenario.id == ScenarioCost.scenario_id)
        .where(*moving)
        .order_by(ScenarioCost.saved_usd.desc(), ScenarioCost.scenario_id)
        .limit(limit)
    )
    return int(count), [(i, n, k, c, p, u) for i, n, k, c, p, u in rows]


def _differs(new_usd: float | None) -> Any:
    if new_usd is None:
        return ScenarioCost.current_usd_per_hour.is_not(None)
    return (ScenarioCost.current_usd_per_hour.is_(None)) | (ScenarioCost.current_usd_per_hour != new_usd)


def reprice(session: Session, accelerator_id: str, provider: str, new_usd: float | None) -> int:
    """One UPDATE for every scenario of the pair: today's price, today's headline cost (saved × new price /
    saved price) and the change in percent. None: no price today (cost and change unknown)."""
    if new_usd is None:
        values: dict[str, Any] = {
            "current_usd_per_hour": None,
            "current_usd": None,
            "change_percent": None,
            "abs_change_percent": None,
        }
    else:
        change = (new_usd - ScenarioCost.saved_usd_per_hour) * 100.0 / ScenarioCost.saved_usd_per_hour
        values = {
            "current_usd_per_hour": new_usd,
            "current_usd": ScenarioCost.saved_usd * new_usd / ScenarioCost.saved_usd_per_hour,
            "change_percent": change,
            "abs_change_percent": func.abs(change),
        }
    values["updated_at"] = dt.datetime.now(dt.UTC)
    result = session.execute(
        update(ScenarioCost).where(*_pair(accelerator_id, provider), _differs(new_usd)).values(**values),
        execution_options={"synchronize_session": False},
    )
    return int(getattr(result, "rowcount", 0) or 0)


def changes(session: Session, scenario_ids: Sequence[int]) -> dict[int, ScenarioCost]:
    if not scenario_ids:
        return {}
    rows = session.scalars(select(ScenarioCost).where(ScenarioCost.scenario_id.in_(list(scenario_ids))))
    return {r.scenario_id: r for r in rows}


def unmatched(session: Session, after_id: int, limit: int) -> list[tuple[int, int, str, Any, Any, Any]]:
    """Scenarios (id > after_id, by id, at most `limit`) whose current version has no row: saved or updated
    by a replica that predates this table (a rolling upgrade), or whose price cannot move (no row is right).
    (id, version, kind, request, prices, summary)."""
    stmt = (
        select(
            Scenario.id, Scenario.version, Scenario.kind, Scenario.request, Scenario.prices, Scenario.summary
        )
        .outerjoin(ScenarioCost, ScenarioCost.scenario_id == Scenario.id)
        .where(
            Scenario.id > after_id,
            (ScenarioCost.scenario_id.is_(None)) | (ScenarioCost.scenario_version != Scenario.version),
        )
        .order_by(Scenario.id)
        .limit(limit)
    )
    return [(i, v, k, r, p, s) for i, v, k, r, p, s in session.execute(stmt)]


def rewrite(session: Session, scenario_ids: Sequence[int], rows: Sequence[dict[str, Any]]) -> None:
    """Replace these scenarios' rows by `rows` (those whose price can move)."""
    session.execute(delete(ScenarioCost).where(ScenarioCost.scenario_id.in_(list(scenario_ids))))
    if rows:
        session.execute(insert(ScenarioCost), list(rows))
