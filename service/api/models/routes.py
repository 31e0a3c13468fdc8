"""GET /v1/models: the built-in model presets with their full shapes and sources."""

from __future__ import annotations

import dataclasses

from flask.views import MethodView
from flask_smorest import abort

from ...engine import PRESETS
from ...engine.i18n import _
from ..extensions.smorest import Blueprint
from .schemas import PresetSchema

blp = Blueprint(
    "models", __name__, url_prefix="/v1/models", description='Model presets usable as `{"preset": id}`.'
)


def preset_to_dict(preset_id: str) -> dict:
    spec = PRESETS[preset_id]
    shape = dataclasses.asdict(spec.shape) if spec.shape else None
    if shape is not None and spec.shape is not None:
        shape["head_dim"] = spec.shape.head_dim
    return {
        "id": preset_id,
        "name": spec.name,
        "architecture": spec.architecture,
        "total_parameters": spec.total_parameters,
        "active_parameters": spec.active_parameters,
        "default_sequence_length": spec.default_sequence_length,
        "max_context_tokens": spec.shape.max_context_tokens if spec.shape else None,
        "flops_per_sample": spec.flops_per_sample,
        "shape": shape,
        "source": spec.source,
        "notes": [_(note) for note in spec.notes],
    }


@blp.route("")
class Models(MethodView):
    @blp.auth("viewer", read=True)
    @blp.response(200, PresetSchema(many=True))
    @blp.doc(operationId="listModels")
    def get(self):
        """Every preset with its shape, exact parameter counts and source."""
        return [preset_to_dict(k) for k in sorted(PRESETS)]


@blp.route("/<string:preset_id>")
class ModelItem(MethodView):
    @blp.auth("viewer", read=True)
    @blp.response(200, PresetSchema)
    @blp.problem(404, "No preset has this id.")
    @blp.doc(operationId="getModel")
    def get(self, preset_id: str):
        """One preset."""
        if preset_id not in PRESETS:
            abort(
                404,
                message=_("Unknown preset '{preset_id}'; valid: {PRESETS}.").format(
                    preset_id=preset_id, PRESETS=", ".join(sorted(PRESETS))
                ),
            )
        return preset_to_dict(preset_id)
