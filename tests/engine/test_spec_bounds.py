"""Catalog bounds in the engine: any device inside SPEC_BOUNDS gives finite numbers; one outside is set aside."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.hardware import SPEC_BOUNDS, Accelerator, Catalog
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.training.estimate import estimate_training

from .conftest import load_catalog

BASE = load_catalog()
H100 = BASE.accelerators["nvidia-h100-sxm-80gb"]


def _numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, float):
        yield value


def _bound(name: str):
    low, high = SPEC_BOUNDS[name]
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(
    memory=st.integers(
        min_value=int(SPEC_BOUNDS["memory_bytes"][0]), max_value=int(SPEC_BOUNDS["memory_bytes"][1])
    ),
    bandwidth=_bound("memory_bandwidth_bytes_per_s"),
    peak=_bound("peak_flops_per_s"),
    link=st.none() | _bound("interconnect_bandwidth_bytes_per_s"),
)
def test_any_device_inside_the_bounds_gives_finite_json(memory, bandwidth, peak, link):
    device = replace(
        H100,
        id="edge-device",
        memory_bytes=memory,
        memory_bandwidth_bytes_per_s=bandwidth,
        peak_flops_per_s={"bf16": peak, "fp16": peak, "fp32": peak},
        interconnect_bandwidth_bytes_per_s=link,
    )
    catalog = Catalog(accelerators={**BASE.accelerators, device.id: device}, prices=BASE.prices)
    assert device.id in catalog.accelerators
    training = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 2048},
        "hardware": {"accelerator": device.id, "count": 16},
        "cost": {"usd_per_hour": 2.0},
    }
    inference = {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": device.id, "count": 1}}
    for estimate, request in ((estimate_training, training), (estimate_inference, inference)):
        try:
            result = estimate(request, catalog)
        except InvalidRequest:
            continue  # e.g. does not fit at all: a clear 422, not a number
        assert all(math.isfinite(x) for x in _numbers(result))
        json.dumps(result, allow_nan=False)


@pytest.mark.parametrize(
    "broken",
    [
        {"interconnect_bandwidth_bytes_per_s": 5e-324},
        {"memory_bandwidth_bytes_per_s": 0.0},
        {"memory_bandwidth_bytes_per_s": float("nan")},
        {"memory_bytes": 0},
        {"peak_flops_per_s": {"bf16": float("inf")}},
    ],
)
def test_a_device_outside_the_bounds_is_set_aside_with_its_reason(broken):
    device: Accelerator = replace(H100, **broken)
    catalog = Catalog(accelerators={**BASE.accelerators, H100.id: device}, prices=BASE.prices)
    assert H100.id not in catalog.accelerators
    assert next(iter(broken)).split("_")[0] in catalog.unusable[H100.id]
    with pytest.raises(InvalidRequest) as err:
        estimate_training(
            {
                "model": {"preset": "llama-2-7b"},
                "training": {"tokens": 1e9, "global_batch_size": 64, "sequence_length": 2048},
                "hardware": {"accelerator": H100.id, "count": 8},
            },
            catalog,
        )
    assert "cannot be estimated" in err.value.errors["hardware.accelerator"][0]


def test_the_shipped_catalog_is_inside_the_bounds():
    assert BASE.unusable == {}


def test_every_shipped_catalog_row_is_inside_the_bounds():
    from scalecost.engine.hardware import spec_problems

    assert {"nvidia-h100-96gb-hbm2e", "nvidia-h100-nvl-94gb", "nvidia-h100-pcie-80gb"} <= set(
        BASE.accelerators
    )
    for acc in BASE.accelerators.values():
        assert spec_problems(acc) == [], acc.id


def test_the_grand_teton_h100_is_its_own_part():
    part = BASE.accelerators["nvidia-h100-96gb-hbm2e"]
    assert part.memory_bytes == 96 * 10**9 and part.tdp_watts == 500
    assert part.memory_bandwidth_bytes_per_s == 2.4e12  # HBM2e, not the SXM's 3.35 TB/s
    # between the NVL and SXM peaks, as the torchtitan authors say (the midpoint: an assumption)
    nvl = BASE.accelerators["nvidia-h100-nvl-94gb"].peak_flops_per_s["bf16"]
    assert nvl < part.peak_flops_per_s["bf16"] < H100.peak_flops_per_s["bf16"]
    assert (part.scale_up_domain, part.scale_out_bandwidth_bytes_per_s) == (8, 400e9 / 8)
    assert BASE.accelerators["nvidia-h100-nvl-94gb"].scale_up_domain == 2
