"""What price changes do to saved scenarios, without re-estimating them.

For a fixed plan (model, hardware, parallelism: none of it depends on the price) an estimate's headline cost
is linear in the price per accelerator-hour: training total USD = accelerator-hours × price × (1 + overhead),
serving USD per hour = devices × price × (1 + overhead). So a scenario's cost at today's prices is its saved
cost × today's price / saved price, and only the price needs finding again.

Which price an estimate uses depends on the request's accelerator and cost.provider only (engine/pricing.py:
the named provider's cheapest on-demand row, else the cheapest on-demand row over providers). The table
scenario_costs keeps, per saved scenario, that pair and both prices (store/scenario_costs.py). When prices
change — an import, an admin's PUT or DELETE — the same transaction resolves each pair's price again with the
engine's own rule and updates every row of a pair whose price moved in one statement: the work grows with the
pairs the changed accelerators have (a few dozen), not with the scenarios. GET /v1/scenarios?
cost_changed_by_more_than=… then reads an indexed column."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from ..engine import Accelerator as EngineAccelerator
from ..engine import Catalog
from ..engine import Price as EnginePrice
from ..engine.pricing import resolve_price
from ..store import price_imports as price_store
from ..store import scenario_costs
from ..store.models import Scenario
from . import estimates
from .catalog import to_engine_price

LARGEST = 50  # scenarios an import's answer names, largest move first


def resolved(prices: Sequence[EnginePrice], accelerator_id: str, provider: str) -> float | None:
    """The USD per accelerator-hour an estimate of `accelerator_id` with cost.provider=`provider` ('' = none)
    would use among `prices`, by the engine's rule; None when it would find none."""
    refused: list[str] = []
    catalog = Catalog(accelerators={}, prices={accelerator_id: tuple(prices)})
    device = EngineAccelerator(
        id=accelerator_id,
        name=accelerator_id,
        vendor="",
        kind="gpu",
        memory_bytes=1,
        memory_bandwidth_bytes_per_s=1.0,
    )  # resolve_price reads the id alone
    cost = {"provider": provider} if provider else {}
    usd, _source = resolve_price(cost, device, catalog, lambda field_, message: refused.append(message))
    return None if refused else usd


@dataclass
class PairMove:
    """One (accelerator, provider) whose price moved, and the saved scenarios that use it."""

    accelerator_id: str
    provider: str
    before: float | None
    after: float | None
    scenarios: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def percent(self) -> float | None:
        if self.before is None or self.after is None or not self.before:
            return None
        return (self.after - self.before) / self.before * 100.0


def open_engine_prices(session: Session, accelerator_ids: Iterable[str]) -> dict[str, list[EnginePrice]]:
    """Today's prices of these accelerators, as the engine sees them (what an estimate would choose from)."""
    out: dict[str, list[EnginePrice]] = {a: [] for a in accelerator_ids}
    for row in price_store.open_prices(session, accelerator_ids=list(out)):
        out[row.accelerator_id].append(to_engine_price(row))
    return out


def plan(
    session: Session,
    before: Mapping[str, Sequence[EnginePrice]],
    after: Mapping[str, Sequence[EnginePrice]],
) -> list[PairMove]:
    """The pairs whose price moves from `before` to `after`, with how many saved scenarios each moves."""
    moves = []
    for accelerator_id, provider in scenario_costs.selectors(session, sorted(after)):
        old = resolved(before.get(accelerator_id, ()), accelerator_id, provider)
        new = resolved(after.get(accelerator_id, ()), accelerator_id, provider)
        count, rows = scenario_costs.affected(session, accelerator_id, provider, new, LARGEST)
        if not count:
            continue
        move = PairMove(accelerator_id, provider, old, new, count)
        for scenario_id, name, kind, current, saved_price, saved_usd in rows:
            cost_after = saved_usd * new / saved_price if new is not None else None
            move.examples.append(
                {
                    "id": scenario_id,
                    "name": name,
                    "kind": kind,
                    "basis": basis(kind),
                    "usd_before": current,
                    "usd_after": cost_after,
                    "percent": _percent(current, cost_after),
                    "percent_since_saved": _percent(saved_usd, cost_after),
                }
            )
        moves.append(move)
    return moves


def apply(session: Session, moves: Iterable[PairMove]) -> int:
    """Write the moves (inside the price change's transaction). Returns the scenarios updated."""
    return sum(scenario_costs.reprice(session, m.accelerator_id, m.provider, m.after) for m in moves)


def refresh(session: Session, accelerator_ids: Iterable[str]) -> int:
    """After a price change already flushed (an admin's PUT or DELETE): bring the scenarios of these
    accelerators to today's prices. Returns the scenarios updated."""
    after = open_engine_prices(session, accelerator_ids)
    updated = 0
    for accelerator_id, provider in scenario_costs.selectors(session, sorted(after)):
        new = resolved(after[accelerator_id], accelerator_id, provider)
        updated += scenario_costs.reprice(session, accelerator_id, provider, new)
    return updated


def report(moves: Sequence[PairMove]) -> dict[str, Any]:
    """An import's answer about saved scenarios: how many it moves, by price, and the largest moves first."""
    examples = [e for m in moves for e in m.examples]
    examples.sort(key=lambda e: (-abs((e["usd_after"] or 0.0) - (e["usd_before"] or 0.0)), e["id"]))
    by_price: list[dict[str, Any]] = [
        {
            "accelerator_id": m.accelerator_id,
            "provider": m.provider or None,
            "usd_per_accelerator_hour_before": m.before,
            "usd_per_accelerator_hour_after": m.after,
            "percent": m.percent,
            "scenarios": m.scenarios,
        }
        for m in moves
    ]
    by_price.sort(key=lambda p: (-abs(p["percent"] or 0.0), p["accelerator_id"], p["provider"] or ""))
    return {"moved": sum(m.scenarios for m in moves), "by_price": by_price, "largest": examples[:LARGEST]}


def basis(kind: str) -> str:
    return estimates.headline_field(kind)


def _percent(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or not before:
        return None
    return (after - before) / before * 100.0


def attach(session: Session, scenarios: Sequence[Scenario]) -> None:
    """Give each listed scenario its `cost_change` (saved vs today's prices), when it has one."""
    rows = scenario_costs.changes(session, [s.id for s in scenarios])
    for scenario in scenarios:
        row = rows.get(scenario.id)
        if row is None:
            continue
        scenario.cost_change = {  # type: ignore[attr-defined]  # a listing-only attribute, not a column
            "basis": basis(row.kind),
            "saved_usd": row.saved_usd,
            "current_usd": row.current_usd,
            "percent": row.change_percent,
            "usd_per_accelerator_hour_saved": row.saved_usd_per_hour,
            "usd_per_accelerator_hour_current": row.current_usd_per_hour,
            "provider": row.provider or None,
            "updated_at": row.updated_at,
        }


def reconcile(session: Session, batch: int = 1000) -> tuple[int, int]:
    """Give every scenario whose current version has no scenario_costs row the row its save would have
    written, then bring the rows to today's prices (the saved price was the price of the day it was saved).
    For a rolling upgrade: replicas of a version before this table save scenarios without a row, and the
    listing's cost_changed_by_more_than cannot see them until this runs (`scalecost db reconcile-costs`).
    Returns (scenarios checked, rows written)."""
    checked = written = 0
    after = 0
    accelerators: set[str] = set()
    while batch_rows := scenario_costs.unmatched(session, after, batch):
        rows = [
            row
            for i, v, kind, request, prices, summary in batch_rows
            if (row := scenario_costs.row_for(i, v, kind, request, prices, summary)) is not None
        ]
        scenario_costs.rewrite(session, [r[0] for r in batch_rows], rows)
        accelerators.update(r["accelerator_id"] for r in rows)
        checked += len(batch_rows)
        written += len(rows)
        after = batch_rows[-1][0]
    if accelerators:
        refresh(session, sorted(accelerators))
    return checked, written
