"""Count parsing and human formatting (units.py)."""

from __future__ import annotations

import pytest
from scalecost.engine.units import (
    GIB,
    PFLOP_DAY,
    human_bytes,
    human_count,
    human_duration,
    human_flops,
    human_usd,
    parse_count,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7B", 7e9),
        ("350M", 350e6),
        ("1.2T", 1.2e12),
        ("25.6k", 25.6e3),
        ("25.6K", 25.6e3),
        (7e9, 7e9),
        (12, 12.0),
        ("7e9", 7e9),
        ("7b", 7e9),
        (" 13 B ", 13e9),
    ],
)
def test_parse_count_accepts_numbers_and_ml_suffixes(text: object, value: float) -> None:
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "junk",
    ["", "seven", "7X", "7BB", "-7B", None, True, float("nan"), float("inf"), "1e", "1,000,000", "1,5B"],
)
def test_parse_count_rejects_junk(junk: object) -> None:
    with pytest.raises(ValueError):
        parse_count(junk)


def test_human_strings_use_binary_bytes_and_sensible_units() -> None:
    assert GIB == 1024**3
    assert PFLOP_DAY == 8.64e19
    assert human_bytes(14 * GIB) == "14.0 GiB"
    assert human_bytes(512) == "512 B"
    assert human_bytes(1.5 * 1024**4, decimals=2) == "1.50 TiB"
    assert human_duration(23.4 * 86400) == "23.4 days"
    assert human_duration(3.2 * 3600) == "3.2 hours"
    assert human_duration(45) == "45.0 s"
    assert human_duration(0.25) == "250.0 ms"
    assert human_duration(750) == "12.5 min"
    assert human_duration(2 * 365.25 * 86400) == "2.0 years"
    assert human_flops(3.14e23) == "314.0 ZFLOP"
    assert human_count(6_738_415_616) == "6.74B"
    assert human_count(25.6e6, 1) == "25.6M"
    assert human_usd(1234.561) == "$1,234.56"
    assert human_usd(0.5) == "$0.50"
