"""SQLAlchemy 2 typed models. Money is Numeric/Decimal; sizes are integers in base units."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

# Constraint naming convention so alembic migrations name every constraint deterministically.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Ids of these tables are named after their row is gone (revisions of a deleted scenario, audit targets, price
# history), so they must never be handed out twice. PostgreSQL sequences never do; SQLite needs AUTOINCREMENT,
# otherwise it reuses max(id) + 1 after the newest row is deleted (migration 0004).
NEVER_REUSE_IDS = {"sqlite_autoincrement": True}

PRECISION_COLUMNS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them without an offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Accelerator(Base):
    __tablename__ = "accelerators"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    vendor: Mapped[str] = mapped_column(String(64), index=True)
    kind: Mapped[str] = mapped_column(String(16), index=True)
    memory_bytes: Mapped[int] = mapped_column(BigInteger, index=True)
    memory_bandwidth_bytes_per_s: Mapped[float] = mapped_column(Float)
    peak_fp32_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_tf32_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_bf16_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_fp16_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_fp8_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_int8_flops_per_s: Mapped[float | None] = mapped_column(Float)
    peak_int4_flops_per_s: Mapped[float | None] = mapped_column(Float)
    # dense FP4 tensor rate (NVFP4 on NVIDIA Blackwell, MXFP4 on AMD CDNA 4): seed/accelerator_fp4.csv (migration 0008)
    peak_fp4_flops_per_s: Mapped[float | None] = mapped_column(Float)
    interconnect_bandwidth_bytes_per_s: Mapped[float | None] = mapped_column(Float)
    tdp_watts: Mapped[float | None] = mapped_column(Float)
    # the system the part is built into (seed/accelerator_fabric.csv, with sources); null = engine default
    scale_up_domain: Mapped[int | None] = mapped_column(Integer)
    scale_out_bandwidth_bytes_per_s: Mapped[float | None] = mapped_column(Float)
    release_year: Mapped[int | None] = mapped_column(Integer)
    source_specs: Mapped[str | None] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)
    # Optimistic-concurrency version: bumped on every change to specs or prices.
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    prices: Mapped[list[AcceleratorPrice]] = relationship(
        back_populates="accelerator", order_by="AcceleratorPrice.id", lazy="selectin"
    )

    __mapper_args__ = {"version_id_col": version}

    def peak(self, precision: str) -> float | None:
        return getattr(self, f"peak_{precision}_flops_per_s")


class AcceleratorPrice(Base):
    """A price for a period. Never edited in place: a change closes this row and opens another."""

    __tablename__ = "accelerator_prices"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    accelerator_id: Mapped[str] = mapped_column(ForeignKey("accelerators.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(64))
    instance_type: Mapped[str | None] = mapped_column(String(128))
    accelerators_per_instance: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    region: Mapped[str | None] = mapped_column(String(64))
    pricing_model: Mapped[str] = mapped_column(String(32), default="on-demand", server_default="on-demand")
    usd_per_hour: Mapped[Decimal] = mapped_column(Numeric(14, 6))
    as_of: Mapped[str | None] = mapped_column(String(32))
    effective_from: Mapped[dt.date] = mapped_column(Date)
    effective_to: Mapped[dt.date | None] = mapped_column(Date)
    source: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(128), default="seed", server_default="seed")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)
    # the price import that opened the row (price_imports.id); null when an admin or the seed did
    import_id: Mapped[int | None] = mapped_column(Integer, index=True)
    # What the row sells (migration 0009; engine/offers.py fills a null from the provider's documented default)
    max_accelerators: Mapped[int | None] = mapped_column(
        Integer
    )  # one order's limit there; null = not stated
    billing_increment_seconds: Mapped[int | None] = mapped_column(Integer)
    minimum_billed_seconds: Mapped[int | None] = mapped_column(Integer)
    startup_seconds: Mapped[int | None] = mapped_column(Integer)  # provisioning to first step
    slice_sizes: Mapped[list | None] = mapped_column(JSON)  # valid counts of a sliced part (TPU slices)
    covers: Mapped[str] = mapped_column(String(16), default="instance", server_default="instance")
    # spot evictions per instance-hour (migration 0011); null = the provider's documented default for spot rows
    interruptions_per_hour: Mapped[float | None] = mapped_column(Float)
    # a scale-out network joins the instances into one job (EFA, InfiniBand, GPUDirect-TCPX); null = provider default
    scale_out: Mapped[bool | None] = mapped_column(Boolean)

    accelerator: Mapped[Accelerator] = relationship(back_populates="prices")

    __table_args__ = (
        Index("ix_accelerator_prices_lookup", "accelerator_id", "provider", "effective_to"),
        NEVER_REUSE_IDS,
    )

    @property
    def is_current(self) -> bool:
        return self.effective_to is None

    def active_on(self, day: dt.date) -> bool:
        return self.effective_from <= day and (self.effective_to is None or day < self.effective_to)


class ApiKey(Base):
    """An API key. Only a SHA-256 digest of the secret is stored; the key itself is shown once."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    prefix: Mapped[str] = mapped_column(String(16), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)
    created_by: Mapped[str | None] = mapped_column(String(128))
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (NEVER_REUSE_IDS,)


class Scenario(Base):
    """The head of a saved budget scenario; every version lives in scenario_revisions."""

    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))
    tags: Mapped[list] = mapped_column(JSON, default=list)
    request: Mapped[dict] = mapped_column(JSON)
    estimate: Mapped[dict] = mapped_column(JSON)
    prices: Mapped[dict] = mapped_column(JSON, default=dict)
    summary: Mapped[dict] = mapped_column(JSON, default=dict)  # small figures for listings
    owner: Mapped[str] = mapped_column(String(128))
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    tag_rows: Mapped[list[ScenarioTag]] = relationship(cascade="all, delete-orphan", passive_deletes=True)

    # (…, updated_at, id) matches the listing's ORDER BY updated_at, id exactly, so a page is an index scan.
    __table_args__ = (
        Index("ix_scenarios_updated_at_id", "updated_at", "id"),
        Index("ix_scenarios_kind_updated_at_id", "kind", "updated_at", "id"),
        Index("ix_scenarios_owner_updated_at_id", "owner", "updated_at", "id"),
        NEVER_REUSE_IDS,
    )
    __mapper_args__ = {"version_id_col": version}


# GET /v1/scenarios?name=…: lower(name) LIKE '%…%' through pg_trgm's GIN operator class (PostgreSQL only;
# migration 0005, which skips it where the extension cannot be created — see there). SQLite has no such
# index (ddl_if); alembic's autogenerate cannot reflect expression indexes on SQLite and leaves it out there.
Index(
    "ix_scenarios_name_trgm",
    func.lower(Scenario.name).label("name_lower"),
    postgresql_using="gin",
    postgresql_ops={"name_lower": "gin_trgm_ops"},
).ddl_if(dialect="postgresql")


class ScenarioTotal(Base):
    """Scenarios per kind, kept in the same transaction as every create and delete, so that a listing's
    total needs no count over the whole table (an O(n) scan: 10 ms per 100,000 rows on PostgreSQL)."""

    __tablename__ = "scenario_totals"

    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    scenarios: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class ScenarioTag(Base):
    """One row per (scenario, tag) so that filtering by tag uses an index."""

    __tablename__ = "scenario_tags"

    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(64), primary_key=True)

    # a tag's scenarios in id order from the index alone (the listing's tag filter and its count)
    __table_args__ = (Index("ix_scenario_tags_tag_scenario_id", "tag", "scenario_id"),)


class ScenarioRevision(Base):
    """An immutable copy of a scenario as saved (revision 1 = creation)."""

    __tablename__ = "scenario_revisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    scenario_id: Mapped[int] = mapped_column(Integer, index=True)  # kept after the scenario is deleted
    revision: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(16))  # create | update | delete
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))
    tags: Mapped[list] = mapped_column(JSON, default=list)
    request: Mapped[dict] = mapped_column(JSON)
    estimate: Mapped[dict] = mapped_column(JSON)
    prices: Mapped[dict] = mapped_column(JSON, default=dict)
    author: Mapped[str] = mapped_column(String(128))
    request_id: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    __table_args__ = (UniqueConstraint("scenario_id", "revision"), NEVER_REUSE_IDS)


class AuditEvent(Base):
    """Append-only record of every catalog and key change, written in the change's own transaction."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(128), index=True)
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200), index=True)
    before: Mapped[dict | None] = mapped_column(JSON)
    after: Mapped[dict | None] = mapped_column(JSON)
    request_id: Mapped[str | None] = mapped_column(String(128))

    __table_args__ = (NEVER_REUSE_IDS,)


class PriceImport(Base):
    """One applied price import (scalecost prices import, POST /v1/price-imports): the files, what changed, and
    the saved scenarios it moved. Each price row it opened carries its id, and so does each audit event."""

    __tablename__ = "price_imports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(32))
    files: Mapped[list] = mapped_column(JSON, default=list)  # [{name, sha256, bytes}]
    digest: Mapped[str] = mapped_column(String(64), index=True)  # sha256 over the files' digests
    effective_from: Mapped[dt.date | None] = mapped_column(Date)  # the latest first day among its prices
    forced: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    changes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    result: Mapped[dict] = mapped_column(JSON, default=dict)  # the answer the import gave (the diff)
    actor: Mapped[str] = mapped_column(String(128))
    request_id: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    __table_args__ = (NEVER_REUSE_IDS,)


class ScenarioCost(Base):
    """What a saved scenario's headline cost is at today's prices, kept without re-estimating it.

    For a fixed plan the headline cost (training: total USD; serving: USD per hour) is linear in the price per
    accelerator-hour, so today's figure is saved × today's price / saved price. A row is written with the
    scenario (store/scenarios: create, update, bulk_insert); when prices change, the price-change transaction
    re-resolves the price of each (accelerator, provider) pair that scenarios use, the way the estimate would
    (usecases/price_moves.py), and updates the rows of that pair in one statement. No row: the scenario's price
    cannot move (given in the request, priced as of a fixed date, or no catalog price when it was saved)."""

    __tablename__ = "scenario_costs"

    scenario_id: Mapped[int] = mapped_column(
        ForeignKey("scenarios.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    scenario_version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    accelerator_id: Mapped[str] = mapped_column(String(64))
    provider: Mapped[str] = mapped_column(String(64))  # cost.provider as asked ('' = the catalog's default)
    saved_usd_per_hour: Mapped[float] = mapped_column(Float)  # per accelerator-hour, when saved
    saved_usd: Mapped[float] = mapped_column(Float)  # headline cost when saved
    current_usd_per_hour: Mapped[float | None] = mapped_column(Float)  # null: no price today
    current_usd: Mapped[float | None] = mapped_column(Float)
    change_percent: Mapped[float | None] = mapped_column(Float)  # (current − saved) / saved × 100
    abs_change_percent: Mapped[float | None] = mapped_column(Float)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    __table_args__ = (
        Index("ix_scenario_costs_accelerator_provider", "accelerator_id", "provider"),
        Index("ix_scenario_costs_abs_change_percent", "abs_change_percent"),
    )


class CalibrationProfile(Base):
    """A team's measured points and the factors fitted on them (the current fit; each fit is a revision)."""

    __tablename__ = "calibration_profiles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(16))  # training | inference
    accelerator_id: Mapped[str] = mapped_column(String(64))  # the part the points ran on
    stack: Mapped[str | None] = mapped_column(String(64))  # e.g. rocm/vllm, cuda/megatron
    apply_to: Mapped[str] = mapped_column(String(16), default="same", server_default="same")  # same | any
    revision: Mapped[int] = mapped_column(Integer, default=1, server_default="1")  # the current fit
    points: Mapped[list] = mapped_column(JSON, default=list)  # [{request, measured}] (files converted)
    factors: Mapped[dict] = mapped_column(JSON, default=dict)  # {name: {value, standard_deviation, ...}}
    point_errors: Mapped[list] = mapped_column(JSON, default=list)  # errors before/after, or problems
    residuals: Mapped[list] = mapped_column(JSON, default=list)  # [{point, metric, log_ratio}] after the fit
    fit: Mapped[dict] = mapped_column(JSON, default=dict)  # iterations, sigmas, median errors
    notes: Mapped[list] = mapped_column(JSON, default=list)
    owner: Mapped[str] = mapped_column(String(128))
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    __table_args__ = (Index("ix_calibration_profiles_updated_at_id", "updated_at", "id"), NEVER_REUSE_IDS)
    __mapper_args__ = {"version_id_col": version}


class CalibrationRevision(Base):
    """An immutable copy of one fit of a profile (revision 1 = creation; a refit adds one; deletion closes)."""

    __tablename__ = "calibration_revisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    profile_id: Mapped[int] = mapped_column(Integer, index=True)  # kept after the profile is deleted
    revision: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(16))  # create | refit | delete
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    accelerator_id: Mapped[str] = mapped_column(String(64))
    stack: Mapped[str | None] = mapped_column(String(64))
    apply_to: Mapped[str] = mapped_column(String(16), default="same", server_default="same")
    points: Mapped[list] = mapped_column(JSON, default=list)
    factors: Mapped[dict] = mapped_column(JSON, default=dict)
    point_errors: Mapped[list] = mapped_column(JSON, default=list)
    residuals: Mapped[list] = mapped_column(JSON, default=list)
    fit: Mapped[dict] = mapped_column(JSON, default=dict)
    notes: Mapped[list] = mapped_column(JSON, default=list)
    author: Mapped[str] = mapped_column(String(128))
    request_id: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=_utcnow)

    __table_args__ = (UniqueConstraint("profile_id", "revision"), NEVER_REUSE_IDS)


__all__ = [
    "PRECISION_COLUMNS",
    "Accelerator",
    "AcceleratorPrice",
    "ApiKey",
    "AuditEvent",
    "Base",
    "CalibrationProfile",
    "CalibrationRevision",
    "PriceImport",
    "Scenario",
    "ScenarioCost",
    "ScenarioRevision",
    "ScenarioTag",
    "ScenarioTotal",
    "func",
]
