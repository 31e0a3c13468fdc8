"""POST /v1/plans/inference: the cheapest deployment that serves a workload within TTFT and TPOT objectives."""

from __future__ import annotations

from flask import g, jsonify
from flask.views import MethodView

from ...usecases import plans
from ..extensions import limits, work
from ..extensions.db import catalog_cache, db_session
from ..extensions.smorest import Blueprint
from .inference import InferencePlanRequestSchema
from .inference_responses import ServingPlanSchema

blp = Blueprint(
    "plans-inference",
    __name__,
    url_prefix="/v1/plans",
    description="Search the catalog for the cheapest way to serve a model under latency objectives.",
)


@blp.route("/inference")
class InferencePlan(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(
        InferencePlanRequestSchema,
        example={
            "model": {"preset": "llama-3-70b"},
            "workload": {"requests_per_second": 50, "prompt_tokens": 512, "output_tokens": 256},
            "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.04},
            "search": {"engines": ["vllm", "tensorrt-llm"], "devices_per_replica": [1, 2, 4, 8]},
        },
    )
    @blp.response(200, ServingPlanSchema)
    @blp.doc(operationId="planInference")
    def post(self, body):
        """Plan serving: the cheapest deployment (accelerator, devices per replica, replicas, batch, engine,
        format) meeting the TTFT and TPOT objectives, its $ per million input and output tokens, the
        cost-vs-latency frontier, exclusions by reason and a POST /v1/estimates/inference body reproducing it.
        Nothing feasible is a 200 with `plan: null` and the nearest misses."""
        with work.heavy():
            answer = plans.plan_serving(
                body,
                db_session(),
                cache=catalog_cache(),
                checkpoint=work.detached_checkpoint(),
                offload=work.offload,
            )
        g.work_units = limits.plan_cost(answer["search"]["configurations_evaluated"])
        return jsonify(answer)
