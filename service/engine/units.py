"""Unit constants, count parsing and human-readable formatting (used only at the response edge)."""

from __future__ import annotations

import math
import re

from .i18n import ENGLISH, _, active, money, num

KIB = 1024  # binary kibibyte (IEC 80000-13)
MIB = 1024**2  # binary mebibyte (IEC 80000-13)
GIB = 1024**3  # binary gibibyte (IEC 80000-13)
TIB = 1024**4  # binary tebibyte (IEC 80000-13)
GB = 1e9  # decimal gigabyte, as vendors quote memory and bandwidth (SI)
PFLOP_DAY = 1e15 * 86400  # one petaFLOP/s sustained for a day (Brown et al. 2020, GPT-3 Table D.1)
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_YEAR = 365.25 * 86400.0  # Julian year (IAU)

# Count suffixes, in either case: k thousand, M million, B/G billion, T trillion, P quadrillion (ML-paper
# convention, "7B", "7b", "1.2T"). A point is the decimal mark; a comma is refused, never guessed at:
# "1,5B" (European decimal) and "1,500M" (thousands separator) would otherwise read alike.
_COUNT_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_COUNT_RE = re.compile(
    r"^\s*([0-9][0-9_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*([kKmMbBgGtTpP]?)\s*$"
)


def comma_message(text: str) -> str:
    """What to write instead of a count with a comma: "1,5B" -> "1.5B", "1,000,000" -> "1000000"."""
    stripped = text.strip()
    head, _comma, tail = stripped.partition(",")
    tail_digits = re.match(r"[0-9]*", tail).group(0)  # type: ignore[union-attr]  # [0-9]* always matches
    thousands = "," in tail or len(tail_digits) == 3
    suggestion = stripped.replace(",", "") if thousands else f"{head}.{tail}"
    return _(
        'A count has no comma: write "{suggestion}", not "{text}" (a point marks decimals, as in "1.5B"; '
        "no thousands separators)."
    ).format(suggestion=suggestion, text=stripped)


def parse_count(value: object) -> float:
    """Parse a count such as 7e9, "7B", "7b", "350M", "1.2T" or "25.6k" into a float.

    Raises ValueError for anything else (booleans, negatives, NaN/inf, unknown suffixes, commas: "1,5B" is
    refused with a message that says to write "1.5B").
    """
    if isinstance(value, bool):
        raise ValueError(_("not a count: {value}").format(value=repr(value)))
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        if "," in value:
            raise ValueError(comma_message(value))
        match = _COUNT_RE.match(value)
        if not match:
            raise ValueError(
                _("not a count: {value} (use a number or e.g. '7B', '350M', '1.2T', '25.6k')").format(
                    value=repr(value)
                )
            )
        mantissa, exponent, suffix = match.groups()
        number = float(mantissa.replace("_", ""))
        if exponent:
            number *= 10.0 ** int(exponent)
        number *= _COUNT_SUFFIX[suffix.lower()]
    else:
        raise ValueError(_("not a count: {value}").format(value=repr(value)))
    if not math.isfinite(number) or number < 0:
        raise ValueError(_("not a non-negative finite count: {value}").format(value=repr(value)))
    return number


# (1024**k, unit), largest first: dividing by a power of two is exact, so n / 1024**k is n divided k times by 1024
_BINARY_UNITS = tuple(
    (1024.0**k, unit) for k, unit in reversed(list(enumerate(("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"), 1)))
)


_FIXED_SPECS = {d: f".{d}f" for d in range(7)}  # format specs of the decimal places a response may ask for


def human_bytes(n: float, decimals: int = 1) -> str:
    """Binary units: 15032385536 -> "14.0 GiB" (the largest unit the magnitude reaches, up to EiB)."""
    value = float(n)
    magnitude = abs(value)
    if active() is not ENGLISH:  # the same units, the number in the caller's locale
        if not magnitude >= 1024:
            return f"{num(value, 0)} B"
        for scale, unit in _BINARY_UNITS:
            if magnitude >= scale:
                return f"{num(value / scale, decimals)} {unit}"
    if not magnitude >= 1024:  # also NaN
        return f"{value:.0f} B"
    spec = _FIXED_SPECS.get(decimals) or f".{decimals}f"
    for scale, unit in _BINARY_UNITS:
        if magnitude >= scale:
            return f"{format(value / scale, spec)} {unit}"
    raise AssertionError("unreachable: magnitude >= 1024")


def human_duration(seconds: float, decimals: int = 1) -> str:
    """Pick the largest sensible unit: "850.0 ms", "45.0 s", "12.5 min", "3.2 hours", "23.4 days", "1.3 years"."""
    s = float(seconds)
    if s < 1:
        return _("{value} ms").format(value=num(s * 1000, decimals))
    if s < 60:
        return _("{value} s").format(value=num(s, decimals))
    if s < SECONDS_PER_HOUR:
        return _("{value} min").format(value=num(s / 60, decimals))
    if s < SECONDS_PER_DAY:
        return _("{value} hours").format(value=num(s / SECONDS_PER_HOUR, decimals))
    if s < SECONDS_PER_YEAR:
        return _("{value} days").format(value=num(s / SECONDS_PER_DAY, decimals))
    return _("{value} years").format(value=num(s / SECONDS_PER_YEAR, decimals))


_SI = ((1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _si(value: float, decimals: int) -> str:
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{num(value / scale, decimals)} {prefix}"
    return f"{num(value, decimals)} "


def human_flops(n: float, decimals: int = 1) -> str:
    """SI-prefixed operation count: 3.14e23 -> "314.0 ZFLOP"."""
    return _si(float(n), decimals) + "FLOP"


def human_flops_per_s(n: float, decimals: int = 1) -> str:
    """SI-prefixed rate: 9.89e14 -> "989.0 TFLOP/s"."""
    return _si(float(n), decimals) + "FLOP/s"


def human_count(n: float, decimals: int = 2) -> str:
    """ML-paper count: 6738415616 -> "6.74B"; 25.6e6 -> "25.60M"."""
    value = float(n)
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{num(value / scale, decimals)}{suffix}"
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:.0f}"
    if active() is not ENGLISH:  # the same digits in the caller's locale
        return num(value, len(text.partition(".")[2]))
    return text


def human_usd(n: float, decimals: int = 2) -> str:
    """US dollars with thousands separators, `decimals` places and at least two significant digits:
    1234.561 -> "$1,234.56", 0.5 -> "$0.50", 0.0003 -> "$0.00030", 0.000314 -> "$0.00031" (a job that costs
    something never shows as "$0.00"); below a millionth of a dollar, scientific notation ("$3.1e-09")."""
    value = float(n)
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    places = decimals
    if 0 < magnitude < 1e-6 and active() is ENGLISH:
        return f"{sign}${magnitude:.1e}"
    if 0 < magnitude < 1:
        places = max(decimals, 1 - math.floor(math.log10(magnitude)))  # two significant digits
    return money(value, places)
