"""POST /v1/estimates/training and /v1/estimates/inference."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView

from ..extensions.db import run_estimate
from ..extensions.smorest import Blueprint
from .inference import InferenceRequestSchema
from .inference_responses import InferenceEstimateSchema
from .training import TrainingRequestSchema
from .training_responses import TrainingEstimateSchema

blp = Blueprint(
    "estimates",
    __name__,
    url_prefix="/v1/estimates",
    description="What a training run or an inference deployment will take: compute, memory, time, cost.",
)


@blp.route("/training")
class TrainingEstimate(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(
        TrainingRequestSchema,
        example={
            "model": {"preset": "llama-2-7b"},
            "training": {
                "tokens": "1B",
                "global_batch_size": 64,
                "sequence_length": 4096,
                "precision": "bf16",
            },
            "hardware": {
                "accelerator": "nvidia-a100-sxm-80gb",
                "count": 8,
                "parallelism": {"data": 8, "zero_stage": 3},
            },
            "cost": {"provider": "aws"},
        },
    )
    @blp.response(200, TrainingEstimateSchema)
    @blp.doc(operationId="estimateTraining")
    def post(self, body):
        """Estimate a training run: FLOPs, memory per device, time, cost, scaling, recommendations.

        Impossible requests (parallel degrees whose product ≠ count, tensor degree not dividing the heads,
        precision the accelerator lacks, unknown ids…) are 422 problems naming each field."""
        return jsonify(
            run_estimate("training", body)
        )  # already JSON-ready: no second pass through the schema


@blp.route("/inference")
class InferenceEstimate(MethodView):
    @blp.auth("viewer", read=True)
    @blp.arguments(
        InferenceRequestSchema,
        example={
            "model": {"preset": "llama-3-8b"},
            "weights": {"precision": "int4", "format": "awq"},
            "batch_size": 1,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
        },
    )
    @blp.response(200, InferenceEstimateSchema)
    @blp.doc(operationId="estimateInference")
    def post(self, body):
        """Estimate serving: memory, latency, throughput, cost per million tokens, fitting hardware."""
        return jsonify(run_estimate("inference", body))
