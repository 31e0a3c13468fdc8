"""JSON bodies are read as I-JSON (RFC 7493): numbers a double can hold, Unicode text without lone surrogates.

Python's json module reads `1` followed by 5,000 zeros (int() then refuses it: more than 4,300 digits),
`1e999` (→ inf), `NaN`/`Infinity` (not JSON at all) and `"\\ud800"` (a lone surrogate: not text, UTF-8
cannot encode it, so the database driver fails later). Each reached a 500. Every JSON body is checked here
first, before any schema sees it, and such a value is a 422 naming the field that holds it.

Integers get the same bound as other numbers, the magnitude of a double (I-JSON's own rule), not a digit
count tighter than the contract: free-form values the contract accepts (an hf_config key the estimate does
not read) may hold any integer a double can hold, and every documented field's schema judges its own range.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Collection
from typing import Any

from ...engine.i18n import N_

# The largest double is 1.797…e308 (309 digits): a longer integer literal is refused before int() reads it
# (int() of more than 4,300 digits raises, and reading one costs quadratic time). A free-form object
# (model.hf_config) may hold any integer a double can (30 digits, as this once was, refused schema-valid input).
MAX_INTEGER_DIGITS = len(str(int(sys.float_info.max)))
_SURROGATE = re.compile("[\ud800-\udfff]")

OUT_OF_RANGE = N_("Number out of range: JSON numbers must fit a 64-bit float (|x| < 1.8e308).")
NOT_A_NUMBER = N_("NaN and Infinity are not JSON numbers.")
SURROGATE = N_("Contains a lone UTF-16 surrogate (\\ud800–\\udfff): not Unicode text.")


class _Refused:
    """Stands where the decoder met a value it must not build; the walk reports its path."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _parse_int(text: str) -> int | _Refused:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        return _Refused(OUT_OF_RANGE)
    value = int(text)
    try:
        float(value)  # every integer a body holds converts to a finite float, as the schemas' fields assume
    except OverflowError:
        return _Refused(OUT_OF_RANGE)
    return value


def _parse_float(text: str) -> float | _Refused:
    value = float(text)  # float() has no digit limit: a long literal only overflows to inf
    return value if math.isfinite(value) else _Refused(OUT_OF_RANGE)


def _parse_constant(_text: str) -> _Refused:
    return _Refused(NOT_A_NUMBER)


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)


def problems(value: Any) -> dict[str, list[str]]:
    """Dotted path (as the 422 problems name fields) → message, for every refused value in `value`."""
    found: dict[str, list[str]] = {}
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _Refused):
            found.setdefault(path or "_schema", []).append(item.message)
        elif isinstance(item, str):
            if _SURROGATE.search(item):
                found.setdefault(path or "_schema", []).append(SURROGATE)
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{path}.{key}" if path else str(key)
                if _SURROGATE.search(key):
                    found.setdefault(child_path.encode("utf-8", "backslashreplace").decode(), []).append(
                        N_("The key contains a lone UTF-16 surrogate (\\ud800–\\udfff): not Unicode text.")
                    )
                    continue
                stack.append((child_path, child))
        elif isinstance(item, list):
            stack.extend((f"{path}.{i}" if path else str(i), child) for i, child in enumerate(item))
    return found


def check(text: str | bytes) -> dict[str, list[str]]:
    """The refused values of a JSON document; {} when there are none or when it is not JSON at all (the
    body parser then answers 400 as before)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = _DECODER.decode(text)
    except (ValueError, UnicodeDecodeError):
        return {}
    return problems(value)


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """json.loads that raises ValueError (→ 400 through Flask's request.get_json) on any refused value."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    value = json.JSONDecoder(
        parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant, **kwargs
    ).decode(text)
    found = problems(value)
    if found:
        path, messages = next(iter(found.items()))
        raise ValueError(f"{path}: {messages[0]}")
    return value


def init_app(app: Any, *, batch_endpoints: Collection[str], raw_body_endpoints: Collection[str]) -> None:
    """Bodies of POST, PUT and PATCH are I-JSON (415 otherwise, 422 naming the field), except the raw price files of
    `raw_body_endpoints`; batches and price files have their own size limits."""
    from flask import request
    from werkzeug.exceptions import UnsupportedMediaType

    from . import errors

    @app.before_request
    def _require_json_bodies():
        if request.endpoint in batch_endpoints:  # up to 1,000 estimate bodies
            request.max_content_length = app.config["BATCH_MAX_BYTES"]
        if request.endpoint in raw_body_endpoints:  # a price list, JSON or CSV: the view checks and reads it
            request.max_content_length = app.config["PRICE_IMPORT_MAX_BYTES"]
            return
        if request.method in {"POST", "PUT", "PATCH"} and (request.content_length or request.data):
            if not request.is_json:
                raise UnsupportedMediaType()
            refused = check(request.get_data(cache=True))
            if refused:  # a 5,000-digit integer, 1e999, NaN, a lone surrogate: 422 naming the field
                errors.abort_invalid_fields(refused)
