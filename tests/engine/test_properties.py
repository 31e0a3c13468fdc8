"""Physics as properties (hypothesis): memory, cost and time respond to the layout the way they must."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from scalecost.engine.hardware import Catalog
from scalecost.engine.training.estimate import estimate_training

from .conftest import load_catalog

CATALOG: Catalog = load_catalog()  # hypothesis does not mix with function-scoped fixtures
PRESETS = [  # head counts divisible by every tensor degree drawn below
    "llama-2-7b",
    "llama-2-13b",
    "llama-3-8b",
    "mistral-7b",
    "mixtral-8x7b",
    "bert-large",
]
ACCELERATORS = ["nvidia-a100-sxm-80gb", "nvidia-h100-sxm-80gb", "nvidia-l40s", "amd-mi300x"]


def _request(preset: str, accelerator: str, data: int, tensor: int, pipeline: int, zero: int, micro: int,
             recompute: str, per_replica: int) -> dict:  # fmt: skip
    return {
        "model": {"preset": preset},
        "training": {
            "tokens": 1e10,
            "global_batch_size": 64 * micro * per_replica,  # divisible by micro × data for data | 64
            "micro_batch_size": micro,
            "sequence_length": 512,
            "activation_recomputation": recompute,
        },
        "hardware": {
            "accelerator": accelerator,
            "count": data * tensor * pipeline,
            "parallelism": {"data": data, "tensor": tensor, "pipeline": pipeline, "zero_stage": zero},
        },
    }


layouts = st.fixed_dictionaries(
    {
        "preset": st.sampled_from(PRESETS),
        "accelerator": st.sampled_from(ACCELERATORS),
        "data": st.sampled_from([1, 2, 4, 8, 16, 32]),
        "tensor": st.sampled_from([1, 2, 4, 8]),
        "pipeline": st.sampled_from([1, 2, 4]),
        "zero": st.integers(0, 3),
        "micro": st.sampled_from([1, 2, 4]),
        "recompute": st.sampled_from(["none", "selective", "full"]),
        "per_replica": st.sampled_from([1, 2]),
    }
)


def _memory(layout: dict) -> float:
    return estimate_training(_request(**layout), CATALOG)["memory"]["per_device_bytes"]


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_adding_data_parallel_devices_never_raises_memory_with_zero(layout: dict) -> None:
    layout = {**layout, "zero": max(layout["zero"], 1)}
    more = {**layout, "data": layout["data"] * 2}
    assert _memory(more) <= _memory(layout) * (1 + 1e-12)


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_raising_the_zero_stage_never_raises_memory(layout: dict) -> None:
    for stage in range(3):
        lower, higher = {**layout, "zero": stage}, {**layout, "zero": stage + 1}
        assert _memory(higher) <= _memory(lower) * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(layouts, st.floats(0.05, 50.0), st.floats(1.1, 10.0))
def test_cost_is_linear_in_price(layout: dict, price: float, factor: float) -> None:
    request = _request(**layout)
    request["cost"] = {"usd_per_accelerator_hour": price}
    cheap = estimate_training(request, CATALOG)
    request["cost"] = {"usd_per_accelerator_hour": price * factor}
    dear = estimate_training(request, CATALOG)
    assert (
        dear["cost"]["total_usd"] == cheap["cost"]["total_usd"] * factor
        or abs(dear["cost"]["total_usd"] / (cheap["cost"]["total_usd"] * factor) - 1) < 1e-12
    )
    assert dear["time"]["seconds"] == cheap["time"]["seconds"]


@settings(max_examples=100, deadline=None)
@given(layouts, st.floats(0.1, 0.7))
def test_time_falls_as_devices_rise_at_fixed_utilization(layout: dict, utilization: float) -> None:
    request = _request(**layout)
    request["hardware"]["utilization"] = utilization
    request["training"]["checkpoint_interval_steps"] = 100
    more = _request(**{**layout, "data": layout["data"] * 2})
    more["hardware"]["utilization"] = utilization
    more["training"]["checkpoint_interval_steps"] = 100
    assert (
        estimate_training(more, CATALOG)["time"]["seconds"]
        < estimate_training(request, CATALOG)["time"]["seconds"]
    )
