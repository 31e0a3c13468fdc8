"""Small things a user trips over, engine side (issue 9): counts with a comma, unknown accelerator ids, the
precision used when none is given, money below a cent."""

from __future__ import annotations

import math
import re

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.hardware import closest_accelerators, unknown_accelerator_message
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.request import build_plan
from scalecost.engine.units import human_usd, parse_count

A100S = {"nvidia-a100-sxm-80gb", "nvidia-a100-sxm-40gb", "nvidia-a100-pcie-80gb", "nvidia-a100-pcie-40gb"}
H100S = {"nvidia-h100-sxm-80gb", "nvidia-h100-pcie-80gb", "nvidia-h100-nvl-94gb"}


@pytest.mark.parametrize(("text", "write"), [("1,5B", "1.5B"), ("7,5", "7.5"), ("1,000,000", "1000000")])
def test_a_comma_in_a_count_is_refused_with_what_to_write(text: str, write: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f'write "{write}"')):
        parse_count(text)


@pytest.mark.parametrize(
    ("lower", "upper", "value"),
    [("7b", "7B", 7e9), ("350m", "350M", 350e6), ("1.2t", "1.2T", 1.2e12), ("25.6k", "25.6K", 25.6e3),
     ("2p", "2P", 2e15), ("7g", "7G", 7e9)],
)  # fmt: skip
def test_count_suffixes_read_alike_in_either_case(lower: str, upper: str, value: float) -> None:
    assert parse_count(lower) == parse_count(upper) == pytest.approx(value)


def _significant_digits(text: str) -> int:
    digits = re.sub(r"[^0-9]", "", text.split("e")[0]).lstrip("0")
    return len(digits)


@pytest.mark.parametrize("usd", [0.0003, 0.000314, 0.004999, 0.05, 0.5, 0.0999, 3.1e-7, 2e-9])
def test_money_below_a_cent_keeps_two_significant_digits(usd: float) -> None:
    text = human_usd(usd)
    assert text != "$0.00" and _significant_digits(text) >= 2, text
    assert float(text.lstrip("$").replace(",", "")) == pytest.approx(usd, rel=0.05), text


def test_money_keeps_its_usual_shape_above_a_dollar() -> None:
    assert human_usd(1234.561) == "$1,234.56"
    assert human_usd(0) == "$0.00"
    assert human_usd(-0.0003) == "-$0.00030"


@pytest.mark.parametrize(
    ("given", "family"), [("A100", A100S), ("a100", A100S), ("h100", H100S), ("H100", H100S)]
)
def test_unknown_accelerator_names_the_closest_ids_first(catalog, given: str, family: set[str]) -> None:
    closest = closest_accelerators(given, catalog.accelerators)
    assert set(closest[: len(family)]) == family, closest
    message = unknown_accelerator_message(given, catalog.accelerators)
    suggested, _, rest = message.partition("All ids:")
    assert "did you mean" in suggested and all(i in suggested for i in family), message
    assert all(i in rest for i in catalog.accelerators), "the full list follows the suggestions"


def test_a100_suggestions_start_with_the_sxm_parts_largest_first(catalog) -> None:
    assert closest_accelerators("A100", catalog.accelerators)[:2] == [
        "nvidia-a100-sxm-80gb",
        "nvidia-a100-sxm-40gb",
    ]


def test_a_near_miss_id_is_suggested_and_nonsense_gets_the_plain_list(catalog) -> None:
    assert closest_accelerators("nvidia-h10-sxm-80gb", catalog.accelerators)[0] == "nvidia-h100-sxm-80gb"
    assert closest_accelerators("mi300", catalog.accelerators)[0] == "amd-mi300x"
    message = unknown_accelerator_message("zzz", catalog.accelerators)
    assert "did you mean" not in message and "nvidia-t4" in message


def _training(accelerator: str, **training) -> dict:
    return {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 1e8, "global_batch_size": 64, "sequence_length": 2048, **training},
        "hardware": {"accelerator": accelerator, "count": 8},
        "output": {"recommendations": False},
    }


@pytest.mark.parametrize("accelerator", ["nvidia-v100-sxm-32gb", "nvidia-t4"])
def test_without_a_precision_a_device_without_bf16_trains_in_fp16_and_says_so(
    catalog, accelerator: str
) -> None:
    response = estimate_training(_training(accelerator), catalog)
    assert response["assumptions"]["precision"] == "fp16"
    notes = " ".join(response["assumptions"]["notes"])
    assert "training.precision not given" in notes and "fp16" in notes and "no bf16" in notes
    assert math.isfinite(response["time"]["seconds"])


def test_without_a_precision_bf16_is_used_where_supported_and_said(catalog) -> None:
    plan = build_plan(_training("nvidia-h100-sxm-80gb"), catalog)
    assert plan.precision == "bf16"
    assert any("training.precision not given: bf16" in note for note in plan.notes)


def test_a_precision_given_is_kept_and_checked(catalog) -> None:
    plan = build_plan(_training("nvidia-h100-sxm-80gb", precision="fp16"), catalog)
    assert plan.precision == "fp16" and not any("precision not given" in n for n in plan.notes)
    with pytest.raises(InvalidRequest) as refused:
        build_plan(_training("nvidia-v100-sxm-32gb", precision="bf16"), catalog)
    assert "training.precision" in refused.value.errors
