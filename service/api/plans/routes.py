"""POST /v1/plans/training: the cheapest, the fastest, or the time-vs-cost frontier of ways to train a model."""

from __future__ import annotations

from flask import g, jsonify
from flask.views import MethodView

from ...usecases import plans
from ..extensions import limits, work
from ..extensions.db import catalog_cache, db_session
from ..extensions.smorest import Blueprint
from .training import TrainingPlanRequestSchema, TrainingPlanSchema

blp = Blueprint(
    "training-plans",
    __name__,
    url_prefix="/v1/plans",
    description="Search accelerators, providers, device counts and parallel layouts for a training run.",
)


@blp.route("/training")
class TrainingPlan(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(
        TrainingPlanRequestSchema,
        example={
            "model": {"preset": "llama-2-70b"},
            "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
            "constraints": {"deadline": "P45D"},
            "objective": "cheapest",
        },
    )
    @blp.response(200, TrainingPlanSchema)
    @blp.doc(operationId="planTraining")
    def post(self, body):
        """Plan a training run under a deadline and/or budget.

        Every accelerator with a price (or those named), each provider and pricing model, device counts and
        parallel layouts (data, tensor, pipeline, virtual pipeline, context, expert, ZeRO stage), micro-batch
        sizes and recomputation modes are evaluated with the estimator's model. Answers the best plans for the
        objective, the time-vs-USD frontier, why the rest was excluded, and, when nothing qualifies, the nearest
        misses (200, empty results). Each plan carries `estimate_request`, a body for POST /v1/estimates/training
        that reproduces it."""
        with work.heavy():
            answer = plans.plan_training(
                body,
                db_session(),
                cache=catalog_cache(),
                checkpoint=work.detached_checkpoint(),
                offload=work.offload,
            )
        g.work_units = limits.plan_cost(answer["search"]["configurations_evaluated"])
        return jsonify(answer)
