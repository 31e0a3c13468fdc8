"""The catalog as the engine's pure dataclasses, cached per process until the catalog changes."""

from __future__ import annotations

import datetime as dt
import threading

from sqlalchemy.orm import Session

from service.engine import hardware
from service.store.catalog import CatalogRepository, prices_on
from service.store.models import PRECISION_COLUMNS, Accelerator, AcceleratorPrice

_lock = threading.Lock()
_cache: dict[tuple, hardware.Catalog] = {}


def engine_catalog(session: Session, as_of: dt.date | None = None) -> hardware.Catalog:
    """Specs and the prices in force today (or on `as_of`). Rebuilt only when the catalog fingerprint moves."""
    repo = CatalogRepository(session)
    key = (repo.fingerprint(), as_of)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    accelerators = repo.all()
    catalog = hardware.Catalog(
        accelerators={a.id: to_engine(a) for a in accelerators},
        prices={a.id: tuple(to_engine_price(p) for p in prices_on(a, as_of)) for a in accelerators},
    )
    with _lock:
        if len(_cache) > 32:
            _cache.clear()
        _cache[key] = catalog
    return catalog


def to_engine(acc: Accelerator) -> hardware.Accelerator:
    return hardware.Accelerator(
        id=acc.id,
        name=acc.name,
        vendor=acc.vendor,
        kind=acc.kind,
        memory_bytes=acc.memory_bytes,
        memory_bandwidth_bytes_per_s=acc.memory_bandwidth_bytes_per_s,
        peak_flops_per_s={p: acc.peak(p) for p in PRECISION_COLUMNS},
        interconnect_bandwidth_bytes_per_s=acc.interconnect_bandwidth_bytes_per_s,
        tdp_watts=acc.tdp_watts,
        release_year=acc.release_year,
    )


def to_engine_price(p: AcceleratorPrice) -> hardware.Price:
    return hardware.Price(
        provider=p.provider,
        usd_per_hour=float(p.usd_per_hour),
        instance_type=p.instance_type,
        region=p.region,
        pricing_model=p.pricing_model,
        as_of=p.as_of,
        source=p.source,
    )
