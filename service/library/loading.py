"""Request bodies, loaded as the API loads them: the same marshmallow schemas ("2T" → 2e12, "auto", ISO
durations…), and a refused field raised as `InvalidFields`, an `InvalidRequest` with the API's 422 messages."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping
from typing import Any

from ..engine import InvalidRequest

KINDS = ("training", "inference", "training-plan", "serving-plan")


class InvalidFields(InvalidRequest):
    """A field breaks the contract (type, range, enum): the API's 422 `invalid-field` problem. `errors` maps each
    dotted field path to its messages, exactly as the problem's `errors`."""


@functools.cache
def schema(kind: str) -> Any:
    """The API's request schema for `kind` (imported on first use: the schemas pull in the web layer)."""
    if kind == "training":
        from ..api.estimates.training import TrainingRequestSchema as Schema
    elif kind == "inference":
        from ..api.estimates.inference import InferenceRequestSchema as Schema  # type: ignore[assignment]
    elif kind == "training-plan":
        from ..api.plans.training import TrainingPlanRequestSchema as Schema  # type: ignore[assignment]
    elif kind == "serving-plan":
        from ..api.plans.inference import InferencePlanRequestSchema as Schema  # type: ignore[assignment]
    else:
        raise ValueError(f"unknown request kind {kind!r}; one of {', '.join(KINDS)}")
    return Schema()


def as_body(request: Any) -> dict[str, Any]:
    """A JSON-shaped dict from a dict or a typed object (anything with `to_dict()`)."""
    if isinstance(request, Mapping):
        return dict(request)
    to_dict = getattr(request, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    raise TypeError(f"a request is a JSON-shaped dict or has to_dict(), not {type(request).__name__}")


def load(kind: str, request: Any) -> dict[str, Any]:
    """The validated body; InvalidFields (messages in the active language) when a field is refused."""
    import marshmallow as ma

    from ..api.extensions.errors import flatten_messages

    try:
        return schema(kind).load(as_body(request))
    except ma.ValidationError as error:
        raise InvalidFields(translated(flatten_messages(error.messages))) from None


def translated(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each message in the active language, as the API's problems say them."""
    from ..engine.i18n import active
    from ..i18n import translate_message

    language = active()
    return {path: [translate_message(m, language) for m in messages] for path, messages in errors.items()}


@contextlib.contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Human strings and messages in `language` (a tag: en, es, pt-BR, fr; None: the active one, English unless
    set). An engine InvalidRequest leaves with its messages translated, as the API's 422 says them."""
    from ..engine.i18n import using

    if language is None:
        with _translating_errors():
            yield
        return
    from .. import i18n

    with using(i18n.language(i18n.negotiate([(language, 1.0)]))), _translating_errors():
        yield


@contextlib.contextmanager
def _translating_errors() -> Iterator[None]:
    try:
        yield
    except InvalidFields:
        raise
    except InvalidRequest as error:
        raise type(error)(translated(error.errors)) from None
