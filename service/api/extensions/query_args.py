"""Unknown query parameters are a 422 naming the allowed ones (a typo like ?knd=gpu is not ignored)."""

from __future__ import annotations

import re

from flask import Flask, current_app, request
from flask_smorest import abort

from ...engine.i18n import _

_CONVERTER = re.compile(r"<(?:[a-z]+:)?([a-zA-Z_][a-zA-Z0-9_]*)>")
KEY = "scalecost.query_params"


def _allowed_map(app: Flask) -> dict[tuple[str, str], frozenset[str]]:
    """(OpenAPI path, method) → documented query parameter names, read once from the generated spec."""
    spec = app.extensions["scalecost.api"].spec.to_dict()
    allowed: dict[tuple[str, str], frozenset[str]] = {}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            names = {
                p["name"]
                for p in [*item.get("parameters", []), *operation.get("parameters", [])]
                if isinstance(p, dict) and p.get("in") == "query"
            }
            allowed[(path, method.upper())] = frozenset(names)
    return allowed


def init_app(app: Flask) -> None:
    @app.before_request
    def _reject_unknown_query_parameters() -> None:
        if not request.args or request.url_rule is None:
            return
        allowed_map = current_app.extensions.get(KEY)
        if allowed_map is None:
            allowed_map = current_app.extensions[KEY] = _allowed_map(current_app)
        path = _CONVERTER.sub(r"{\1}", request.url_rule.rule)
        allowed = allowed_map.get((path, request.method))
        if allowed is None:
            return  # undocumented routes (docs UI, static files)
        unknown = sorted(set(request.args) - allowed)
        if unknown:
            hint = (
                _("allowed: {allowed}").format(allowed=", ".join(sorted(allowed)))
                if allowed
                else _("this operation takes none")
            )
            abort(
                422,
                errors={
                    f"query.{name}": [_("Unknown query parameter; {hint}.").format(hint=hint)]
                    for name in unknown
                },
            )
