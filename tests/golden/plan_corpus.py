"""A small fixed corpus of plan requests (training and serving planners), for the contract's `required` lists.

Its answers are recorded in `plans.json.gz` (`python -m tests.golden.record_plans`);
tests/contract/test_response_schemas.py validates them against openapi.yaml with no undocumented property and
checks that every property present in every recorded object is `required` (and the reverse, by the strict
validation). The requests are varied on purpose: a best plan and a frontier, spot and on-demand prices, a
price-free search (objective fastest, no provider), budgets and deadlines nothing meets (nearest misses), a
mixture of experts, a serving plan with a fleet, one with no feasible deployment and one whose model fits
nowhere. Small search spaces keep the recording to seconds.
"""

from __future__ import annotations

from typing import Any

Request = tuple[str, dict[str, Any]]  # ("training" | "inference", body)

LLAMA_7B = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "200B", "global_batch_size": 1024, "sequence_length": 4096},
}
SMALL = {"accelerators": ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb"], "device_counts": [8, 16, 32, 64]}
# a GPU of the seed catalog without a price: searched for time alone (objective fastest)
UNPRICED_GPU = "nvidia-gb200"

SERVING = {
    "model": {"preset": "llama-3-8b"},
    "workload": {"requests_per_second": 20, "prompt_tokens": 512, "output_tokens": 256},
    "slo": {"time_to_first_token_s": 0.5, "time_per_output_token_s": 0.03},
    "search": {
        "accelerators": [
            "nvidia-l4",
            "nvidia-a10g",
            "nvidia-h100-sxm-80gb",
            "nvidia-rtx-4090",
            "nvidia-l40s",
        ],
        "engines": ["vllm", "llama.cpp"],
        "devices_per_replica": [1, 2, 4],
        "formats": [{"precision": "bf16"}, {"precision": "int4"}, {"format": "awq"}],
        "max_batch_size": 64,
    },
}


def training_plans() -> list[dict[str, Any]]:
    return [
        {**LLAMA_7B, "search": SMALL, "constraints": {"deadline": "P30D"}, "objective": "cheapest"},
        {**LLAMA_7B, "search": {**SMALL, "pricing_models": ["on-demand", "spot"]}, "results": 3},
        {
            **LLAMA_7B,
            "search": {**SMALL, "pricing_models": ["on-demand"]},
            "constraints": {"deadline": "P20D", "budget_usd": 400000, "min_optimizer_steps": 1000},
            "objective": "cheapest_p90",
            "cost": {"infrastructure_overhead": 0.15},
        },
        {**LLAMA_7B, "search": SMALL, "constraints": {"deadline": "PT1H", "budget_usd": 10}},
        {**LLAMA_7B, "search": SMALL, "constraints": {"deadline": "P60D", "budget_usd": 1}},
        {
            **LLAMA_7B,
            "search": {"accelerators": [UNPRICED_GPU], "device_counts": [8, 64]},
            "objective": "fastest",
        },
        {
            "model": {"preset": "mixtral-8x7b"},
            "training": {"tokens": "100B", "global_batch_size": 512, "sequence_length": 4096},
            "search": {
                "accelerators": ["nvidia-h100-sxm-80gb"],
                "device_counts": [32, 64],
                "expert": [1, 8],
                "tensor": [1, 2],
                "pipeline": [1, 2],
            },
            "constraints": {"max_accelerators_per_provider": {"aws": 64}},
            "objective": "fastest",
        },
    ]


def serving_plans() -> list[dict[str, Any]]:
    tight = {"time_to_first_token_s": 0.001, "time_per_output_token_s": 0.03}
    search = SERVING["search"]
    return [
        SERVING,
        {**SERVING, "slo": tight},
        {
            **SERVING,
            "model": {"preset": "llama-2-70b"},
            "search": {**search, "accelerators": ["nvidia-l4"], "devices_per_replica": [1]},
        },
        {
            **SERVING,
            "workload": {**SERVING["workload"], "prefix_hit_rate": 0.5},
            "slo": {**SERVING["slo"], "percentile": "p50", "max_utilization": 0.8},
            "search": {**search, "kv_cache_precisions": ["fp8", "bf16"]},
            "cost": {"infrastructure_overhead": 0.1, "as_of": "2025-06-01"},
            "output": {"frontier_points": 3},
            "constraints": {"max_accelerators_per_provider": {"aws": 16}},
        },
        {
            "model": {"preset": "llama-3-70b"},
            "workload": {"output_tokens_per_second": 5000, "prompt_tokens": 2048, "output_tokens": 512},
            "slo": {"time_to_first_token_s": 2.0, "time_per_output_token_s": 0.05},
            "search": {
                "accelerators": ["nvidia-h100-sxm-80gb", "amd-mi300x"],
                "engines": ["vllm", "tensorrt-llm"],
                "devices_per_replica": [2, 4, 8],
            },
        },
    ]


def corpus() -> list[Request]:
    return [("training", b) for b in training_plans()] + [("inference", b) for b in serving_plans()]
