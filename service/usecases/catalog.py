"""Use case: the catalog as the engine's pure dataclasses, cached until the catalog changes.

The cache is keyed by the catalog's fingerprint (counts and version sums, one query). The fingerprint
itself is re-read at most every CATALOG_CACHE_TTL_S seconds (default 1 s): a change made through this
process is seen at once (the admin views invalidate), a change made by another worker within that time."""

from __future__ import annotations

import datetime as dt
import threading
import time

from sqlalchemy.orm import Session

from ..engine import Accelerator as EngineAccelerator
from ..engine import Catalog
from ..engine import Price as EnginePrice
from ..store.catalog import CatalogRepository, prices_on
from ..store.models import PRECISION_COLUMNS, Accelerator, AcceleratorPrice

# A price older than this many days is stale (config PRICE_STALE_AFTER_DAYS; the api passes its setting).
DEFAULT_STALE_AFTER_DAYS = 90


class CatalogCache:
    """One per app (the api keeps it in `app.extensions`); thread-safe."""

    def __init__(self, ttl_s: float, stale_after_days: int | None = DEFAULT_STALE_AFTER_DAYS):
        self.ttl_s = ttl_s
        self.stale_after_days = stale_after_days
        self._lock = threading.Lock()
        self._catalogs: dict[tuple, Catalog] = {}
        self._fingerprint: tuple | None = None
        self._checked_at = 0.0

    def invalidate(self) -> None:
        self._fingerprint = None

    def get(self, session: Session, as_of: dt.date | None) -> Catalog:
        repo = CatalogRepository(session)
        fingerprint = self._fingerprint
        if fingerprint is None or time.monotonic() - self._checked_at >= self.ttl_s:
            fingerprint = repo.fingerprint()
            self._fingerprint, self._checked_at = fingerprint, time.monotonic()
        today = as_of or dt.datetime.now(dt.UTC).date()  # prices are aged on the day priced (freshness)
        key = (fingerprint, as_of, today)
        cached = self._catalogs.get(key)
        if cached is not None:
            return cached
        accelerators = repo.all()
        catalog = Catalog(
            accelerators={a.id: to_engine(a) for a in accelerators},
            prices={a.id: tuple(to_engine_price(p) for p in prices_on(a, as_of)) for a in accelerators},
            today=today,
            stale_after_days=self.stale_after_days,
        )
        with self._lock:
            if len(self._catalogs) > 32:
                self._catalogs.clear()
            self._catalogs[key] = catalog
        return catalog


def engine_catalog(
    session: Session, as_of: dt.date | None = None, cache: CatalogCache | None = None
) -> Catalog:
    """Specs and the prices in force today (or on `as_of`); through `cache` when one is given."""
    if cache is None:
        cache = CatalogCache(ttl_s=0.0)
    return cache.get(session, as_of)


def to_engine(acc: Accelerator) -> EngineAccelerator:
    return EngineAccelerator(
        id=acc.id,
        name=acc.name,
        vendor=acc.vendor,
        kind=acc.kind,
        memory_bytes=acc.memory_bytes,
        memory_bandwidth_bytes_per_s=acc.memory_bandwidth_bytes_per_s,
        peak_flops_per_s={p: acc.peak(p) for p in PRECISION_COLUMNS},
        interconnect_bandwidth_bytes_per_s=acc.interconnect_bandwidth_bytes_per_s,
        tdp_watts=acc.tdp_watts,
        scale_up_domain=acc.scale_up_domain,
        scale_out_bandwidth_bytes_per_s=acc.scale_out_bandwidth_bytes_per_s,
        release_year=acc.release_year,
    )


def to_engine_price(p: AcceleratorPrice) -> EnginePrice:
    return EnginePrice(
        provider=p.provider,
        usd_per_hour=float(p.usd_per_hour),
        instance_type=p.instance_type,
        region=p.region,
        pricing_model=p.pricing_model,
        as_of=p.as_of,
        source=p.source,
        effective_from=p.effective_from,
        accelerators_per_instance=p.accelerators_per_instance or 1,
        max_accelerators=p.max_accelerators,
        billing_increment_seconds=p.billing_increment_seconds,
        minimum_billed_seconds=p.minimum_billed_seconds,
        startup_seconds=p.startup_seconds,
        slice_sizes=tuple(int(v) for v in p.slice_sizes or ()),
        covers=p.covers or "instance",
        interruptions_per_hour=p.interruptions_per_hour,
        scale_out=p.scale_out,
    )
