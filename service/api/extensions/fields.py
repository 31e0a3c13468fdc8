"""Custom marshmallow fields."""

from __future__ import annotations

import math
import re

import marshmallow as ma

from ...engine import DURATION_PATTERN, MAX_DURATION_S, parse_count
from ...engine.i18n import N_

# Count suffixes as regex classes: either case, as parse_count reads them ("7b" = "7B"; G = B, billion).
SUFFIXES = {"": 1.0, "[kK]": 1e3, "[mM]": 1e6, "[bBgG]": 1e9, "[tT]": 1e12, "[pP]": 1e15}


def count_pattern(max_value: float) -> str:
    """A regex admitting exactly the suffixed strings below `max_value` (so the contract states the bound):
    with suffix multiplier m, at most floor(log10(max/m)) integer digits, no leading zero."""
    options = []
    for suffix, multiplier in SUFFIXES.items():
        digits = math.floor(math.log10(max_value / multiplier) + 1e-9)
        if digits >= 1:
            options.append(f"[1-9][0-9]{{0,{digits - 1}}}(\\.[0-9]{{1,6}})?{suffix}")
    return "^(" + "|".join(options) + ")$"


class Count(ma.fields.Field):
    """A positive count given as a number (7e9) or a string with a suffix in either case ("7B", "7b", "350M",
    "1.2T"). A comma is refused with what to write instead ("1,5B": write "1.5B")."""

    default_error_messages = {
        "invalid": N_('Not a count: give a number or a string such as "7B", "350M", "1.2T".'),
        "range": N_("Must be between {min:g} and {max:g}."),
    }

    def __init__(self, *, min_value: float = 1, max_value: float = 1e14, **kwargs):
        self.min_value, self.max_value = min_value, max_value
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault(
            "oneOf",
            [
                {"type": "number", "minimum": min_value, "maximum": max_value},
                {"type": "string", "pattern": count_pattern(max_value)},
            ],
        )
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> float:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        try:
            number = float(value) if isinstance(value, int | float) else parse_count(value)
        except (ValueError, TypeError) as error:
            if isinstance(value, str) and "," in value:  # parse_count says what to write instead
                raise ma.ValidationError(str(error)) from None
            raise self.make_error("invalid") from None
        except OverflowError:  # an integer beyond a float's range
            raise self.make_error("range", min=self.min_value, max=self.max_value) from None
        if not math.isfinite(number) or not self.min_value <= number <= self.max_value:
            raise self.make_error("range", min=self.min_value, max=self.max_value)
        return number

    def _serialize(self, value, attr, obj, **kwargs):
        return value


class Float(ma.fields.Float):
    """A JSON number: strings and booleans are refused (marshmallow would coerce "0.4")."""

    def _validated(self, value):
        if isinstance(value, str | bool):
            raise self.make_error("invalid")
        return super()._validated(value)


FRACTION_MESSAGE = N_("Must be between {min:g} and {max:g}: a fraction, 0.05 means 5 %.")


def fraction_range(low: float, high: float) -> ma.validate.Range:
    """A Range whose message says the value is a fraction (80 where 0.8 was meant is refused with a hint)."""
    return ma.validate.Range(min=low, max=high, error=FRACTION_MESSAGE)


class Boolean(ma.fields.Boolean):
    """A JSON true or false. marshmallow also reads 0, 1, "yes", "on"…; the contract says boolean, so only
    the two JSON literals are accepted."""

    def _deserialize(self, value, attr, data, **kwargs) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class Integer(ma.fields.Integer):
    """A JSON integer: strings, floats and booleans are refused."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)

    def _validated(self, value):
        if isinstance(value, str | bool):
            raise self.make_error("invalid")
        return super()._validated(value)


NO_NUL_PATTERN = "^[^\\u0000]*$"
_SURROGATE = re.compile("[\ud800-\udfff]")


class String(ma.fields.String):
    """Text without NUL characters: PostgreSQL text cannot hold them, so the contract says so. Lone UTF-16
    surrogates (JSON "\\ud800") are no text either (UTF-8 cannot encode them): refused too."""

    default_error_messages = {
        "nul": N_("Must not contain NUL (\\u0000) characters."),
        "surrogate": N_("Must not contain a lone UTF-16 surrogate (\\ud800–\\udfff): not Unicode text."),
    }

    def __init__(self, **kwargs):
        metadata = kwargs.pop("metadata", {})
        validators = kwargs.get("validate") or []
        validators = validators if isinstance(validators, list | tuple) else [validators]
        if not any(isinstance(v, ma.validate.Regexp | ma.validate.OneOf) for v in validators):
            metadata.setdefault("pattern", NO_NUL_PATTERN)  # a Regexp or enum of its own says more
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if "\x00" in text:
            raise self.make_error("nul")
        if _SURROGATE.search(text):
            raise self.make_error("surrogate")
        return text


class AutoOr(ma.fields.Field):
    """The string "auto" or what `inner` accepts (a device count, a parallelism object): the planner chooses when
    "auto". Documented as oneOf the inner field's schema (`inner_doc`) and the enum ["auto"]."""

    default_error_messages = {"invalid": N_('Give "auto" or {what}.')}

    def __init__(self, inner: ma.fields.Field, *, inner_doc: dict, what: str, **kwargs):
        self.inner, self.what = inner, what
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault("oneOf", [inner_doc, {"type": "string", "enum": ["auto"]}])
        super().__init__(metadata=metadata, **kwargs)

    def _bind_to_schema(self, field_name, parent):
        super()._bind_to_schema(field_name, parent)
        self.inner._bind_to_schema(field_name, parent)

    def _deserialize(self, value, attr, data, **kwargs):
        if value == "auto":
            return "auto"
        if isinstance(value, str):
            raise self.make_error("invalid", what=self.what)
        return self.inner.deserialize(value, attr, data, **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return value if value == "auto" else self.inner._serialize(value, attr, obj, **kwargs)


class Deadline(ma.fields.Field):
    """Seconds (a positive number) or an ISO 8601 duration string ("P45D", "PT36H", "P1W2D"). A string is kept as
    given and read by the engine (a zero or a century-long duration is an impossible request there: the pattern
    cannot bound the value)."""

    default_error_messages = {
        "invalid": N_(
            'A deadline is seconds (a positive number) or an ISO 8601 duration such as "P45D" or "PT36H".'
        ),
        "range": N_("Must be at least 1 s and at most 100 years ({max:g} s)."),
    }

    def __init__(self, **kwargs):
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault(
            "oneOf",
            [
                {"type": "number", "minimum": 1, "maximum": MAX_DURATION_S},
                {"type": "string", "pattern": DURATION_PATTERN, "maxLength": 64},
            ],
        )
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> float | str:
        if isinstance(value, str):
            if len(value) > 64 or not re.match(DURATION_PATTERN, value):
                raise self.make_error("invalid")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.make_error("invalid")
        if not (math.isfinite(value) and 1 <= value <= MAX_DURATION_S):
            raise self.make_error("range", max=MAX_DURATION_S)
        return float(value)
