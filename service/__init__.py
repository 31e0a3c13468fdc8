"""scalecost: estimate what training or serving an ML model will cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import config as config_module

if TYPE_CHECKING:  # the engine imports this package: keep Flask out of its import graph
    from flask import Flask


def _version() -> str:
    """The version, written in one place: pyproject.toml's `version`. Installed (`pip install -e .` included), it is
    the distribution's metadata; a checkout that was never installed reads pyproject.toml itself."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scalecost")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


API_VERSION = _version()  # reported by GET /healthz, `scalecost --version` and the contract's info.version


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


# The library (service/library): `scalecost.estimate_training(...)` etc., imported on first use so that
# `import scalecost` stays light for the web workers and the engine.
LIBRARY = frozenset(
    {
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
    }
)


def __getattr__(name: str) -> Any:
    if name in LIBRARY:
        from . import library

        return getattr(library, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | LIBRARY)
