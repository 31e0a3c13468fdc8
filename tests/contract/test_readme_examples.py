"""The README's worked examples are the numbers a user reads first: each example request is sent to the service
(seeded catalog) and the figures the README quotes must be the ones it answers (rounded as the README writes them).
A change that moves an answer on purpose re-runs the examples and updates the README in the same commit."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")

TRAINING = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 2048,
        "parallelism": {"data": 64, "tensor": 8, "pipeline": 4, "zero_stage": 1, "sequence_parallel": True},
    },
    "cost": {"provider": "aws"},
}
INFERENCE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
}
PLAN = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "constraints": {"deadline": "P45D"},
    "objective": "cheapest",
}
META_GPU_HOURS = 1_720_320  # Llama 2 paper, Table 2 (quoted in the README)


def _quoted(text: str) -> None:
    # the README writes CLDR's no-break spaces as spaces
    text = text.replace("\xa0", " ").replace("\u202f", " ")
    assert text in README, f"README.md should say {text!r} (the service answers it now)"


def test_the_training_example(client):
    answer = client.post("/v1/estimates/training", json=TRAINING).json
    time, cost = answer["time"], answer["cost"]
    _quoted(f'"human": "{time["human"]}"')
    _quoted(f'"effective_utilization": {time["effective_utilization"]:.3f}')
    _quoted(f'"accelerator_hours": {round(cost["accelerator_hours"])}')
    _quoted(f'"total_usd": {round(cost["total_usd"])}')
    for name in ("interruptions_s", "stragglers_s", "compute_s", "pipeline_bubble_s", "communication_s"):
        _quoted(f'"{name}": {round(time["breakdown"][name])}')
    human = answer["intervals"]["human"]
    _quoted(f'"intervals": {{"human": {{"time": "{human["time"]}", "total": "{human["total"]}"}}')
    assert META_GPU_HOURS < answer["intervals"]["cost"]["accelerator_hours"]["p10"]  # "under the p10"
    _quoted(f"measured errors of {answer['assumptions']['intervals']['points']} complete runs")
    _quoted(f"the estimate is {round(100 * (cost['accelerator_hours'] / META_GPU_HOURS - 1))} % above")
    auto = {**TRAINING, "hardware": {**TRAINING["hardware"], "parallelism": "auto"}}
    hours = client.post("/v1/estimates/training", json=auto).json["cost"]["accelerator_hours"]
    _quoted(f"comes out {round(100 * (1 - hours / META_GPU_HOURS))} % below")


def test_the_inference_example(client):
    answer = client.post("/v1/estimates/inference", json=INFERENCE).json
    _quoted(f"up to {answer['memory']['max_batch_size']} sequences fit")
    _quoted(f"time to first token {round(answer['latency']['time_to_first_token_s'] * 1000)} ms")
    _quoted(f"{answer['latency']['time_per_output_token_s'] * 1000:.1f} ms per output token")
    _quoted(f"({round(answer['throughput']['output_tokens_per_second'])} tokens/s")
    _quoted(f"${answer['cost']['usd_per_million_output_tokens']:.2f} per")


def test_the_planning_example(client):
    best = client.post("/v1/plans/training", json=PLAN).json["best"]
    name = {"google-tpu-v6e": "TPU v6e", "nvidia-h100-sxm-80gb": "H100 SXM", "nvidia-b200": "B200"}
    _quoted(f"the best plan is {best['count']} × {name.get(best['accelerator'], best['accelerator'])}")
    _quoted(
        f"{best['seconds'] / 86400:.1f} days including the expected interruptions, ${best['total_usd'] / 1e6:.2f}M"
    )
    _quoted(f"{best['memory_per_device_bytes'] / 2**30:.1f} GiB per device, MFU {best['utilization']:.2f}")
    layout = best["parallelism"]
    assert re.search(
        rf"data {layout['data']} × tensor {layout['tensor']} × pipeline {layout['pipeline']}", README
    )


def test_the_spanish_example(client):
    body = {
        "model": {"preset": "llama-2-70b"},
        "training": {"tokens": "10B", "global_batch_size": 64},
        "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
    }
    answer = client.post("/v1/estimates/training", json=body, headers={"Accept-Language": "es"}).json
    _quoted(f'"{answer["time"]["human"]}"')
    _quoted(f'"accelerator_hours": "{answer["cost"]["human"]["accelerator_hours"]}"')
    _quoted(f'"total": "{answer["cost"]["human"]["total"]}"')
    _quoted(f'"{answer["recommendations"][0]["message"]}"')
