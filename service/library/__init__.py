"""scalecost as a library: the API's estimates and plans in-process, on a catalog without any database.

    import scalecost
    estimate = scalecost.estimate_training({
        "model": {"preset": "llama-2-70b"},
        "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 512},
    })
    estimate.days, estimate.total_usd, estimate.fits, estimate.to_dict()  # to_dict(): the API's JSON

Requests are the API's JSON bodies (dicts, or objects with `to_dict()`), loaded by the API's own schemas. The
catalog is the seed shipped in the package (`catalog_from_seed()`, the default) or a database's
(`catalog_from_database(url)`). A refused field raises `InvalidFields`, an impossible request the engine's
`InvalidRequest` (InvalidFields is one): `.errors` maps each field to the API's 422 messages. `language` ("es",
"pt-BR", "fr"; English by default) is the language of the human strings and the messages.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from ..engine import Catalog, InvalidRequest
from .catalog import catalog_from_database, catalog_from_seed
from .loading import InvalidFields, load, speaking
from .results import Batch, BatchItem, InferenceEstimate, ServingPlan, TrainingEstimate, TrainingPlans

__all__ = [
    "Batch",
    "BatchItem",
    "Catalog",
    "InferenceEstimate",
    "InvalidFields",
    "InvalidRequest",
    "ServingPlan",
    "TrainingEstimate",
    "TrainingPlans",
    "catalog_from_database",
    "catalog_from_seed",
    "estimate_inference",
    "estimate_inference_batch",
    "estimate_training",
    "estimate_training_batch",
    "plan_serving",
    "plan_training",
]


def _catalog_on(catalog: Catalog | None):
    """The catalog for a day: the given one (priced as it was built), else the seed's priced that day."""

    def on(day: dt.date | None) -> Catalog:
        if catalog is not None:
            return catalog
        return catalog_from_seed(day)

    return on


def _estimate(kind: str, request: Any, catalog: Catalog | None) -> dict[str, Any]:
    from ..usecases.estimates import estimate_on

    return estimate_on(kind, load(kind, request), _catalog_on(catalog))


def estimate_training(
    request: Any, catalog: Catalog | None = None, *, language: str | None = None
) -> TrainingEstimate:
    """POST /v1/estimates/training in-process. Raises InvalidRequest (InvalidFields for a refused field)."""
    with speaking(language):
        return TrainingEstimate(_estimate("training", request, catalog))


def estimate_inference(
    request: Any, catalog: Catalog | None = None, *, language: str | None = None
) -> InferenceEstimate:
    """POST /v1/estimates/inference in-process. Raises InvalidRequest (InvalidFields for a refused field)."""
    with speaking(language):
        return InferenceEstimate(_estimate("inference", request, catalog))


def plan_training(
    request: Any, catalog: Catalog | None = None, *, language: str | None = None
) -> TrainingPlans:
    """POST /v1/plans/training in-process."""
    from .. import engine
    from ..usecases.calibrations import refuse_without_store

    with speaking(language):
        body = load("training-plan", request)
        refuse_without_store(body)
        return TrainingPlans(engine.plan_training(body, _catalog_on(catalog)(None)))


def plan_serving(request: Any, catalog: Catalog | None = None, *, language: str | None = None) -> ServingPlan:
    """POST /v1/plans/inference in-process (`search.server_seconds` is this process's time)."""
    from ..usecases.plans import plan_serving_on

    with speaking(language):
        return ServingPlan(plan_serving_on(load("serving-plan", request), _catalog_on(catalog)))


def _batch(kind: str, answer: type, requests: Iterable[Any], catalog: Catalog | None) -> Batch:
    from ..api.estimates.batches import _problem
    from ..api.extensions.errors import IMPOSSIBLE_REQUEST, INVALID_FIELD
    from ..engine.i18n import _

    items = []
    for index, request in enumerate(requests):
        try:
            with speaking(None):
                items.append(BatchItem(index, answer(_estimate(kind, request, catalog)), None, None))
        except InvalidFields as error:
            problem = _problem(422, INVALID_FIELD, _("Unprocessable Entity"), error.errors)
            items.append(BatchItem(index, None, error, problem))
        except InvalidRequest as error:
            problem = _problem(422, IMPOSSIBLE_REQUEST, _("Impossible request"), error.errors)
            items.append(BatchItem(index, None, error, problem))
    return Batch(items)


def estimate_training_batch(
    requests: Iterable[Any], catalog: Catalog | None = None, *, language: str | None = None
) -> Batch:
    """POST /v1/estimates/training/batch in-process: each item answered on its own, in order (no size limit)."""
    with speaking(language):
        return _batch("training", TrainingEstimate, requests, catalog)


def estimate_inference_batch(
    requests: Iterable[Any], catalog: Catalog | None = None, *, language: str | None = None
) -> Batch:
    """POST /v1/estimates/inference/batch in-process."""
    with speaking(language):
        return _batch("inference", InferenceEstimate, requests, catalog)
