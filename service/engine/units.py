"""Unit constants, count parsing and human-readable formatting (used only at the response edge)."""

from __future__ import annotations

import math
import re

KIB = 1024  # binary kibibyte (IEC 80000-13)
MIB = 1024**2  # binary mebibyte (IEC 80000-13)
GIB = 1024**3  # binary gibibyte (IEC 80000-13)
TIB = 1024**4  # binary tebibyte (IEC 80000-13)
GB = 1e9  # decimal gigabyte, as vendors quote memory and bandwidth (SI)
PFLOP_DAY = 1e15 * 86400  # one petaFLOP/s sustained for a day (Brown et al. 2020, GPT-3 Table D.1)
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_YEAR = 365.25 * 86400.0  # Julian year (IAU)

# Count suffixes: k/K thousand, M million, B/G billion, T trillion (ML-paper convention, "7B", "1.2T").
_COUNT_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}
_COUNT_RE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*([kKMBGTP]?)\s*$")


def parse_count(value: object) -> float:
    """Parse a count such as 7e9, "7B", "350M", "1.2T", "25.6k" or "7,000" into a float.

    Raises ValueError for anything else (booleans, negatives, NaN/inf, unknown suffixes).
    """
    if isinstance(value, bool):
        raise ValueError(f"not a count: {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        match = _COUNT_RE.match(value)
        if not match:
            raise ValueError(f"not a count: {value!r} (use a number or e.g. '7B', '350M', '1.2T', '25.6k')")
        mantissa, exponent, suffix = match.groups()
        number = float(mantissa.replace(",", "").replace("_", ""))
        if exponent:
            number *= 10.0 ** int(exponent)
        number *= _COUNT_SUFFIX[suffix]
    else:
        raise ValueError(f"not a count: {value!r}")
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"not a non-negative finite count: {value!r}")
    return number


def human_bytes(n: float, decimals: int = 1) -> str:
    """Binary units: 15032385536 -> "14.0 GiB"."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value = float(n)
    index = 0
    while abs(value) >= 1024 and index < len(units) - 1:
        value /= 1024
        index += 1
    if index == 0:
        return f"{value:.0f} B"
    return f"{value:.{decimals}f} {units[index]}"


def human_duration(seconds: float, decimals: int = 1) -> str:
    """Pick the largest sensible unit: "850.0 ms", "45.0 s", "12.5 min", "3.2 hours", "23.4 days", "1.3 years"."""
    s = float(seconds)
    if s < 1:
        return f"{s * 1000:.{decimals}f} ms"
    if s < 60:
        return f"{s:.{decimals}f} s"
    if s < SECONDS_PER_HOUR:
        return f"{s / 60:.{decimals}f} min"
    if s < SECONDS_PER_DAY:
        return f"{s / SECONDS_PER_HOUR:.{decimals}f} hours"
    if s < SECONDS_PER_YEAR:
        return f"{s / SECONDS_PER_DAY:.{decimals}f} days"
    return f"{s / SECONDS_PER_YEAR:.{decimals}f} years"


_SI = ((1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _si(value: float, decimals: int) -> str:
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.{decimals}f} {prefix}"
    return f"{value:.{decimals}f} "


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
            return f"{value / scale:.{decimals}f}{suffix}"
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:.0f}"


def human_usd(n: float, decimals: int = 2) -> str:
    """US dollars with thousands separators: 1234.561 -> "$1,234.56"."""
    value = float(n)
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{decimals}f}"
