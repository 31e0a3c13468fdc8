"""Worked example (issue 31 §2, docs/guide/calibration.md): a profile fitted on one public benchmark-serving file
predicts another file it never saw better than the defaults do.

The files are SGLang `bench_serving` results (the JSON lines its --output-file appends, the same field names as
vLLM's benchmark_serving.py --save-result) that DataCrunch published for 4× and 8× H200 under Poisson arrivals:
datacrunch-research/h200-benchmarks @ c091ef530a525d2e788bc41c39a4450b09c9f2ad, sglang/outputs/
llama_3_3_70b_online_output.jsonl and llama_405b_online_output.jsonl, copied byte for byte into data/. The defaults
are optimistic on this deployment as the load grows (TTFT and TPOT up to 2-3× short at 4-8 req/s). The profile is
fitted on the Llama 3.3 70B file only (TP4) and judged on the Llama 3.1 405B file (TP8): another model, another
tensor-parallel degree, the same part and stack (H200, cuda/sglang).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from scalecost.engine.calibration import Point, fit_profile, scaled_catalog
from scalecost.engine.calibration.fit import quiet, run
from scalecost.engine.calibration.metrics import predicted
from scalecost.usecases.calibration_files import points_from_file

DATA = Path(__file__).with_name("data")
ACC = "nvidia-h200-sxm-141gb"
FIT_FILE = DATA / "datacrunch_h200_sglang_llama_3_3_70b_online_output.jsonl"
HELD_OUT_FILE = DATA / "datacrunch_h200_sglang_llama_405b_online_output.jsonl"


def _points(path: Path, preset: str, count: int) -> list[dict]:
    request = {
        "model": {"preset": preset},
        "engine": "sglang",
        "weights": {"precision": "bf16"},
        "kv_cache_precision": "bf16",
        "hardware": {"accelerator": ACC, "count": count},
    }
    file = {"format": "sglang-bench-serving", "request": request, "content": path.read_text(encoding="utf-8")}
    return points_from_file("inference", file)


def _errors(point: dict, catalog) -> dict[str, float]:
    """predicted / measured − 1 per measured figure (NaN where the estimate has no figure: a saturated rate)."""
    got = predicted("inference", point["request"], run("inference", quiet(point["request"]), catalog))
    return {m: got[m] / v - 1.0 if got[m] > 0 else math.nan for m, v in point["measured"].items()}


def test_a_profile_fitted_on_the_70b_file_predicts_the_405b_file_better(catalog):
    fit_points = _points(FIT_FILE, "llama-3.3-70b", 4)
    held_out = _points(HELD_OUT_FILE, "llama-3.1-405b", 8)
    assert len(fit_points) == 7 and len(held_out) == 6
    # each record fills its own copy of the request: its rate and its mean lengths
    assert [p["request"]["workload"]["requests_per_second"] for p in held_out] == [1, 2, 4, 8, 4, 8]
    assert [p["request"]["prompt_tokens"] for p in held_out][:2] == [509, 515]
    profile = fit_profile("inference", [Point(p["request"], p["measured"]) for p in fit_points], catalog)
    # the 16 req/s record is past what the defaults can serve: refused on its own, the other six fit
    assert profile["fit"]["points_fitted"] == 6 and profile["points"][4]["status"] == "refused"
    factors = {k: v["value"] for k, v in profile["factors"].items()}
    print(
        "\nfactors:",
        {k: f"{v['value']:.3f} ± {v['standard_deviation']:.3f}" for k, v in profile["factors"].items()},
    )
    print("fitted points:", profile["fit"]["points_fitted"], "refused:", profile["fit"]["points_refused"])
    calibrated = scaled_catalog(catalog, factors, (ACC,))
    before_all, after_all, saturated_after = [], [], 0
    print(f"{'held-out point':32} {'metric':24} {'before':>8} {'after':>8}")
    for point in held_out:
        rate = point["request"]["workload"]["requests_per_second"]
        label = f"405B {point['request']['prompt_tokens']} in, {rate:g} req/s"
        before, after = _errors(point, catalog), _errors(point, calibrated)
        for metric in point["measured"]:
            print(f"{label:32} {metric:24} {before[metric]:+8.1%} {after[metric]:+8.1%}")
        if any(math.isnan(e) for e in before.values()):
            continue  # the defaults already call this rate saturated (so does the measurement: TTFT 124 s)
        if any(math.isnan(e) for e in after.values()):
            saturated_after += 1  # the profile calls it saturated; the measurement is loaded, not saturated
            continue
        before_all += [abs(e) for e in before.values()]
        after_all += [abs(e) for e in after.values()]
    median_before, median_after = statistics.median(before_all), statistics.median(after_all)
    print(f"median |error| on the held-out points both answer: {median_before:.1%} → {median_after:.1%}")
    print(f"held-out points only the profile predicts saturated: {saturated_after}")
    assert factors["compute"] < 1.0  # this deployment reaches less than the defaults assume
    assert median_after < 0.75 * median_before  # measured: 23.2 % → 12.6 % (8 figures of 4 points)
    assert saturated_after <= 1
