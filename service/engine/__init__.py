"""Pure estimator engine: dataclasses and functions, no Flask, SQLAlchemy or I/O.

Two symmetric wings over a shared base:
- `training/` and `inference/`, each with the same roles: `request` (request dict → typed plan, every field error
  at once), `memory`, `step_time`/`speed`, `evaluate` (plan → frozen numbers), `response` (numbers → JSON with
  human strings), `advice` (rules over plan + evaluation that re-evaluate a patched plan) and `estimate` (the door).
- the base: `units`, `errors`, `hardware` (accelerators, catalog, bounds), `pricing`, `parallelism`,
  `architecture`/`models`/`presets` (model shapes shared by both wings), `patch` (RFC 7386 merge patch).

This module is the public surface: the api, use cases, tests of the contract and bench import from here.
"""

from .architecture import ARCHITECTURES, FFN_TYPES
from .errors import InvalidRequest
from .hardware import KINDS, PRECISIONS, SPEC_BOUNDS, Accelerator, Catalog, Price
from .inference.estimate import estimate_inference
from .inference.formats import ENGINES, FORMATS, KV_PRECISIONS, WEIGHT_PRECISIONS
from .inference.plan import plan_serving
from .models import PRESETS, list_presets, resolve_model
from .patch import merge_patch
from .pricing import PRICING_MODELS
from .training.estimate import estimate_training
from .training.plan import FRAMEWORKS, OPTIMIZERS, RECOMPUTATION, TRAINING_PRECISIONS, TrainingPlan
from .training.plan_request import DURATION_PATTERN, MAX_DURATION_S, duration_seconds
from .training.planner import OBJECTIVES as PLAN_OBJECTIVES
from .training.planning import plan_training
from .training.recompute_modules import RECOMPUTE_MODULES
from .units import parse_count

__all__ = [
    "ARCHITECTURES",
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
