"""Pure estimator engine: dataclasses and functions, no Flask, SQLAlchemy or I/O.

Two symmetric wings over a shared base, `training/` and `inference/`, each with one room per role:
- at the wing's root, the doors and the I/O: `estimate.py` (POST /v1/estimates/...), `planner.py` (POST
  /v1/plans/...), `request.py` (request dict → typed plan, every field error at once), `response.py` (numbers →
  JSON with human strings);
- `model/`: the physics. A typed plan (`model/plan.py`) goes in, frozen numbers come out (`model/evaluate.py`);
- `advice/`: rules over (plan, numbers) that re-evaluate a patched plan;
- `search/`: the planner's request, space, ranking and response; it calls `model/`.
- the base: `units`, `errors`, `hardware` (accelerators, catalog, bounds), `pricing`, `parallelism`,
  `architecture`/`models`/`presets` (model shapes shared by both wings), `patch` (RFC 7386 merge patch).

This module is the public surface: the api, use cases, tests of the contract and bench import from here.
"""

from .architecture import ARCHITECTURES, FFN_TYPES
from .calibration import FACTORS as CALIBRATION_FACTORS
from .calibration import MEASURED as CALIBRATION_MEASURED
from .errors import InvalidRequest
from .hardware import KINDS, PRECISIONS, SPEC_BOUNDS, Accelerator, Catalog, Price
from .inference.estimate import estimate_inference
from .inference.model.formats import ENGINES, FORMATS, KV_PRECISIONS, WEIGHT_PRECISIONS
from .inference.model.schedule import (
    DEFAULT_FRONT_END_LATENCY_S,
    FRONT_END_LATENCY_RANGE,
    LENGTHS,
    PERCENTILES,
    SCHEDULERS,
    SPECULATIVE_METHODS,
)
from .inference.planner import plan_serving
from .inference.search.rank import REASONS as SERVING_PLAN_REASONS
from .inference.search.request import MAX_BATCH as SERVING_MAX_BATCH
from .inference.search.request import MAX_GROUPS as SERVING_MAX_GROUPS
from .models import PRESETS, list_presets, resolve_model
from .offers import COVERS, MAX_INTERRUPTIONS_PER_HOUR
from .parallelism import PIPELINE_SCHEDULES
from .patch import merge_patch
from .pricing import MAX_PRICE_OVERRIDE, PRICING_MODELS
from .training.estimate import estimate_training
from .training.model.goodput import MAX_STRAGGLER_SHARE
from .training.model.plan import FRAMEWORKS, OPTIMIZERS, RECOMPUTATION, TRAINING_PRECISIONS, TrainingPlan
from .training.model.recompute import RECOMPUTE_MODULES
from .training.planner import plan_training
from .training.search.rank import OBJECTIVES as PLAN_OBJECTIVES
from .training.search.request import DURATION_PATTERN, MAX_DURATION_S, duration_seconds
from .units import parse_count

__all__ = [
    "CALIBRATION_FACTORS",
    "CALIBRATION_MEASURED",
    "MAX_STRAGGLER_SHARE",
    "PIPELINE_SCHEDULES",
    "PERCENTILES",
    "DEFAULT_FRONT_END_LATENCY_S",
    "FRONT_END_LATENCY_RANGE",
    "LENGTHS",
    "SCHEDULERS",
    "SPECULATIVE_METHODS",
    "SERVING_MAX_BATCH",
    "SERVING_MAX_GROUPS",
    "SERVING_PLAN_REASONS",
    "ARCHITECTURES",
    "COVERS",
    "MAX_INTERRUPTIONS_PER_HOUR",
    "MAX_PRICE_OVERRIDE",
    "DURATION_PATTERN",
    "ENGINES",
    "FFN_TYPES",
    "FORMATS",
    "KINDS",
    "KV_PRECISIONS",
    "MAX_DURATION_S",
    "OPTIMIZERS",
    "PRECISIONS",
    "PLAN_OBJECTIVES",
    "PRESETS",
    "PRICING_MODELS",
    "FRAMEWORKS",
    "RECOMPUTATION",
    "RECOMPUTE_MODULES",
    "SPEC_BOUNDS",
    "TRAINING_PRECISIONS",
    "WEIGHT_PRECISIONS",
    "Accelerator",
    "Catalog",
    "InvalidRequest",
    "Price",
    "TrainingPlan",
    "estimate_inference",
    "estimate_training",
    "list_presets",
    "duration_seconds",
    "merge_patch",
    "plan_serving",
    "parse_count",
    "plan_training",
    "resolve_model",
]
