"""workload.lengths "fixed" (issue 30): a closed loop whose requests all have the same prompt and output lengths comes
back as one burst, prefilled in groups of g = ⌊step room / P⌋ one step after the other (prefill_wait.py `burst_size`).

The check is NVIDIA's DLI NIM data (tests/engine/nim_dli.py): GenAI-Perf at fixed lengths, 1-50 users. Each sweep's
front end is read off its own one-user point (measured TTFT − the model's TTFT with no front end), as a team would
calibrate it; what is tested is how TTFT grows with the users, which the front end does not set.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from scalecost.engine import InvalidRequest, estimate_inference

from .nim_dli import load, sweeps
from .reference_catalog import load_catalog
from .serving_calibration import request
from .serving_sweeps import ServingPoint
from .test_continuous_batching import NIM

CATALOG = load_catalog()


def _mean_ttft(point: ServingPoint, lengths: str, front_end_s: float) -> float:
    body = request(point)
    body["workload"] = {"lengths": lengths}
    body["slo"] = {"front_end_latency_s": front_end_s}
    lat = estimate_inference(body, CATALOG)["latency"]  # GenAI-Perf prints means: E2E − (O − 1)·TPOT
    return float(lat["end_to_end_s"] - ((point.output_tokens or 1) - 1) * lat["time_per_output_token_s"])


def _errors(prompt_tokens: float) -> dict[str, list[float]]:
    """|error| of the mean TTFT at 2-50 users of every DLI sweep with these prompts, fixed and varied lengths."""
    found: dict[str, list[float]] = {"fixed": [], "varied": []}
    for key, sweep in sweeps(load()).items():
        if key[4] != prompt_tokens:
            continue
        one = next(p for p in sweep if p.concurrency == 1)
        front_end = max(0.0, (one.ttft_s_mean or 0.0) - _mean_ttft(one, "varied", 0.0))
        for p in sweep:
            if p.label.endswith("-run2") or not 2 <= (p.concurrency or 0) <= 50:
                continue
            for lengths, errors in found.items():
                errors.append(abs(_mean_ttft(p, lengths, front_end) / (p.ttft_s_mean or 1.0) - 1.0))
    return found


@pytest.mark.parametrize(("prompt_tokens", "fixed_bound"), [(200.0, 0.15), (2000.0, 0.25)])
def test_a_fixed_length_burst_follows_the_measured_ttft_growth(
    prompt_tokens: float, fixed_bound: float
) -> None:
    """200-token prompts (groups of up to 40 per TensorRT-LLM step of 8,192 tokens): 180 points, median |error|
    10.7 % with fixed lengths against 67.7 % with the spread model; 2,000-token prompts (groups of 4): 120 points,
    18.4 % against 84.4 %."""
    found = _errors(prompt_tokens)
    fixed, varied = (statistics.median(found[k]) for k in ("fixed", "varied"))
    print(
        f"{prompt_tokens:.0f}-token prompts, {len(found['fixed'])} points: fixed {fixed:.1%}, varied {varied:.1%}"
    )
    assert len(found["fixed"]) >= 100
    assert fixed <= fixed_bound and varied >= 0.5


def test_prompts_prefilled_one_at_a_time_keep_the_spread_model() -> None:
    """NIM 1.8's 5,000-token prompts fill more than half of the 8,192-token step: groups of one, the same answer."""
    for users in (5, 25, 50):
        fixed = estimate_inference({**NIM, "batch_size": users, "workload": {"lengths": "fixed"}}, CATALOG)
        varied = estimate_inference({**NIM, "batch_size": users}, CATALOG)
        assert fixed["latency"] == varied["latency"] and fixed["throughput"] == varied["throughput"]
        assert fixed["load"]["lengths"] == "fixed" and varied["load"]["lengths"] == "varied"


def test_a_burst_of_short_prompts_waits_for_its_group_steps() -> None:
    short = {**NIM, "prompt_tokens": 200, "output_tokens": 200}
    one, burst = (
        estimate_inference({**short, "batch_size": 1, "workload": {"lengths": "fixed"}}, CATALOG),
        estimate_inference({**short, "batch_size": 30, "workload": {"lengths": "fixed"}}, CATALOG),
    )
    spread = estimate_inference({**short, "batch_size": 30}, CATALOG)
    ttft = [a["latency"]["time_to_first_token_s"] for a in (one, burst, spread)]
    assert ttft[1] > 2 * ttft[2] and ttft[2] < 2 * ttft[0]  # 30 prompts share a 6,000-token step
    pct = burst["latency"]["percentiles"]["time_to_first_token_s"]
    assert pct["p50"] <= pct["p90"] <= pct["p99"]


def test_the_group_steps_ahead_are_counted_at_the_concurrency_asked() -> None:
    """200-token prompts on 2 × H100 (TensorRT-LLM, 8,192-token steps): 40 prompts fill one step, the 41st waits for a
    second one; the percentiles step there exactly, not between the curve's grid points."""
    short = {**NIM, "prompt_tokens": 200, "output_tokens": 200, "workload": {"lengths": "fixed"}}
    pct = {
        users: estimate_inference({**short, "batch_size": users}, CATALOG)["latency"]["percentiles"][
            "time_to_first_token_s"
        ]
        for users in (40, 41, 80, 82)
    }
    step = pct[41]["p99"] - pct[41]["p50"]  # one group step
    assert step > 0.5 * pct[40]["p50"]
    assert pct[40]["p99"] == pytest.approx(pct[40]["p50"], rel=0.05)  # one group: nobody waits for another
    assert pct[80]["p50"] == pytest.approx(pct[80]["p99"] - step, rel=0.05)  # two groups: p50 in the first
    assert pct[82]["p50"] == pytest.approx(pct[82]["p99"] - step, rel=0.05)  # three: p50 in the second


@pytest.mark.parametrize(
    "extra",
    [
        {"workload": {"lengths": "uniform"}},
        {"workload": {"lengths": False}},
        {"workload": {"lengths": "fixed", "requests_per_second": 2.0}},
        {"workload": {"lengths": "fixed"}, "serving": {"scheduler": "static"}},
    ],
)
def test_lengths_it_cannot_apply_are_refused_by_name(extra: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequest) as exc:
        estimate_inference({**NIM, **extra}, CATALOG)
    assert "workload.lengths" in exc.value.errors
