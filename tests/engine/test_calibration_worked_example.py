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

from scalecost.engine.calibration import Point, calibrated_catalog, fit_profile, scaled_catalog
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


INTERVAL_OF = {
    "output_tokens_per_second": ("throughput", "output_tokens_per_second"),
    "time_to_first_token_s": ("latency", "time_to_first_token_s"),
    "time_per_output_token_s": ("latency", "time_per_output_token_s"),
}


def _bounds(point: dict, catalog) -> dict[str, dict[str, float]] | None:
    """The answer's [p10, p90] of each measured figure (None: no interval, e.g. a saturated rate)."""
    answer = run("inference", quiet(point["request"]), catalog)
    if answer["intervals"] is None:
        return None
    return {m: answer["intervals"][INTERVAL_OF[m][0]][INTERVAL_OF[m][1]] for m in point["measured"]}


def _coverage(points: list[dict], default, calibrated, label: str) -> tuple[float, float, float]:
    """Coverage of the default and the profile's [p10, p90] on the points both bound, and the median ratio of
    their widths (log p90/p10, profile over default); each figure printed."""
    inside = {"default": 0, "profile": 0}
    total, width_ratios = 0, []
    for point in points:
        both = _bounds(point, default), _bounds(point, calibrated)
        if both[0] is None or both[1] is None:
            continue
        for metric, value in point["measured"].items():
            total += 1
            marks = []
            for name, bounds in zip(("default", "profile"), both, strict=True):
                b = bounds[metric]
                inside[name] += b["p10"] <= value <= b["p90"]
                marks.append(f"[{b['p10']:.4g}, {b['p90']:.4g}]")
            width_ratios.append(
                math.log(both[1][metric]["p90"] / both[1][metric]["p10"])
                / math.log(both[0][metric]["p90"] / both[0][metric]["p10"])
            )
            rate = point["request"]["workload"]["requests_per_second"]
            print(
                f"{label} {rate:>4g} req/s {metric:24} measured {value:.4g} default {marks[0]} profile {marks[1]}"
            )
    print(
        f"{label}: {total} figures; inside [p10, p90]: default {inside['default']}, profile {inside['profile']}; "
        f"median width profile/default {statistics.median(width_ratios):.2f}"
    )
    return inside["default"] / total, inside["profile"] / total, statistics.median(width_ratios)


def test_the_profile_intervals_cover_the_held_out_file_as_well_as_the_defaults_and_are_narrower(catalog):
    """Issue 31 §3 with §2: the intervals of an estimate made with a profile come from the profile's residuals
    (engine/accuracy/profile.py). On the 405B file the profile never saw they must cover the measurements no
    worse than the default intervals do, and be narrower (else the profile's residuals add nothing); on the 70B
    file it was fitted on they must hold at least 70 % of the figures (the issue's goal is 70-90 %)."""
    fit_points = _points(FIT_FILE, "llama-3.3-70b", 4)
    held_out = _points(HELD_OUT_FILE, "llama-3.1-405b", 8)
    profile = fit_profile("inference", [Point(p["request"], p["measured"]) for p in fit_points], catalog)
    profile.update(id=1, name="datacrunch-70b", revision=1, kind="inference", apply_to="same")
    calibrated = calibrated_catalog("inference", profile, catalog, (ACC,))
    answer = run("inference", quiet(held_out[0]["request"]), calibrated)
    basis = answer["assumptions"]["intervals"]["time_per_output_token_s"]
    assert basis["source"] == "profile" and basis["profile"]["points"] == 6
    default_held, profile_held, width = _coverage(held_out, catalog, calibrated, "405B held out")
    _, profile_fitted, _ = _coverage(fit_points, catalog, calibrated, "70B fitted")
    assert profile_held >= default_held  # measured: 8/8 and 8/8 of the figures both bound
    assert width < 1.0  # measured: 0.81 (median ratio of log widths)
    assert profile_fitted >= 0.7  # measured: 11 of 12


def test_leave_one_point_out_the_profile_intervals_hold_at_least_70_percent(catalog):
    """Each file's points in turn held out of a profile fitted on the file's other points: the share of held-out
    figures inside the profile's [p10, p90] (the issue's goal 70-90 %), beside the defaults' (printed)."""
    inside = {"default": 0, "profile": 0}
    total = 0
    for path, preset, count in ((FIT_FILE, "llama-3.3-70b", 4), (HELD_OUT_FILE, "llama-3.1-405b", 8)):
        points = _points(path, preset, count)
        for i, held in enumerate(points):
            rest = [Point(p["request"], p["measured"]) for j, p in enumerate(points) if j != i]
            profile = fit_profile("inference", rest, catalog)
            profile.update(id=1, name=f"without {i}", revision=1, kind="inference", apply_to="same")
            calibrated = calibrated_catalog("inference", profile, catalog, (ACC,))
            both = _bounds(held, catalog), _bounds(held, calibrated)
            if both[0] is None or both[1] is None:
                continue  # a rate one of them calls saturated: no interval to check
            for metric, value in held["measured"].items():
                total += 1
                for name, bounds in zip(("default", "profile"), both, strict=True):
                    inside[name] += bounds[metric]["p10"] <= value <= bounds[metric]["p90"]
    print(
        f"\nleave one point out: {total} figures; inside default {inside['default']}, profile {inside['profile']}"
    )
    assert total >= 16
    assert inside["profile"] >= 0.7 * total  # measured: 19 of 20 (defaults 20 of 20)
