"""scalecost: estimate what training or serving an ML model will cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import config as config_module

if TYPE_CHECKING:  # the engine imports this package: keep Flask out of its import graph
    from flask import Flask

API_VERSION = "0.1.0"


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the WSGI app. Needs no database connection (the spec can be generated offline)."""
    from flask import Flask

    from . import api, web

    app = Flask(__name__)
    app.config.update(config_module.from_env())
    api.configure(app)
    if config:
        app.config.update(config)
    api.register(app)
    web.init_app(app)  # the page at `/`, outside the API contract
    return app
