"""Use case: plan a training run (POST /v1/plans/training) on the catalog priced today."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from service.engine import plan_training

from .catalog import CatalogCache, engine_catalog


def training_plan(
    request: dict[str, Any], session: Session, *, cache: CatalogCache | None = None
) -> dict[str, Any]:
    """`request` is the validated body. Raises the engine's InvalidRequest for impossible input."""
    return plan_training(request, engine_catalog(session, None, cache))
