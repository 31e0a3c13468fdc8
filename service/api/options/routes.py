"""GET /v1/options: the values the enumerated request fields accept, for clients that offer them as choices."""

from __future__ import annotations

from flask.views import MethodView

from ..extensions.smorest import Blueprint
from .schemas import OptionsSchema, options

blp = Blueprint(
    "options",
    __name__,
    url_prefix="/v1/options",
    description="The values each enumerated request field accepts (engines, formats, precisions, …).",
)

# The answer changes only with a release: clients revalidate (If-None-Match → 304) instead of trusting a copy.
CACHE_CONTROL = "no-cache"


@blp.after_request
def _revalidate(response):
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response


@blp.route("")
class Options(MethodView):
    @blp.auth("viewer", read=True)
    @blp.etag
    @blp.response(
        200,
        OptionsSchema,
        headers={
            "Cache-Control": {
                "description": f"`{CACHE_CONTROL}`: keep a copy, but revalidate it (If-None-Match answers 304)",
                "schema": {"type": "string"},
            }
        },
    )
    @blp.doc(operationId="getOptions")
    def get(self):
        """By request, then by the field's path in its body: every value it accepts, in the engine's order.

        The page builds its selects from this answer, so a value the engine adds is offered without a change
        to the page."""
        return options()
