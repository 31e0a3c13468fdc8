"""The public serving sweeps (data/public_serving_sweeps.csv) as estimate requests, and the error table.

Each point becomes an inference estimate with the published engine, model, weights, devices, lengths and
concurrency (or Poisson rate); predicted TTFT, TPOT and output throughput are compared with the measurement
(median where the source gives it, else mean). Points the engine cannot express are reported as skipped with the
reason. Run `python -m tests.engine.serving_calibration` for the table; the medians follow for every row, for each
`batch` of rows (the addition a row came with) with and without the later ones, and for each source.
`--batch NAME` keeps one batch only.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from scalecost.engine import InvalidRequest, estimate_inference
from scalecost.engine.hardware import Catalog

from .serving_sweeps import ServingPoint, load

METRICS = ("ttft", "tpot", "throughput")
# The batches the test bounds and the residual table (tests/engine/residuals.py) read. A later batch is printed
# (alone, with the earlier ones, per source) and left out of both until the lead admits it: sweeps-2 (dstack's
# DeepSeek-R1 on 8 × H200 / 8 × MI300X, early-2025 engines) is far outside the bounds, and inferencex-2026
# (SemiAnalysis InferenceX's DeepSeek-R1 on NVIDIA and AMD, tests/engine/inferencex.py) is printed only
# (data/README.md).
CALIBRATED_BATCHES = frozenset({"issue-30"})


@dataclass(frozen=True)
class Compared:
    point: ServingPoint
    measured: dict[str, float | None]
    predicted: dict[str, float | None]
    skipped: str | None = None

    def error(self, metric: str) -> float | None:
        m, p = self.measured[metric], self.predicted[metric]
        return None if m is None or p is None else p / m - 1.0


def request(point: ServingPoint, scheduler: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": {"preset": point.model} if "/" not in point.model else {"hf": point.model},
        "engine": point.engine,
        "prompt_tokens": round(point.prompt_tokens or 0),
        "output_tokens": round(point.output_tokens or 0),
        "hardware": {"accelerator": point.accelerator, "count": int(point.devices or 1)},
        "output": {"suggestions": False, "recommendations": False},
    }
    if point.weights_precision:
        body["weights"] = (
            {"format": point.weights_precision}
            if point.weights_precision in ("mxfp4", "nvfp4")
            else {"precision": point.weights_precision}
        )
    if point.kv_cache_precision:
        body["kv_cache_precision"] = (
            "fp8" if point.kv_cache_precision.startswith("fp8") else point.kv_cache_precision
        )
    serving: dict[str, Any] = {"scheduler": scheduler} if scheduler else {}
    graphs = cuda_graph_max_batch(point)
    if graphs is not None:
        serving["cuda_graph_max_batch"] = graphs
    if serving:
        body["serving"] = serving
    if point.concurrency is not None:
        body["batch_size"] = int(point.concurrency)
        if fixed_lengths(point):
            body["workload"] = {"lengths": "fixed"}
    else:
        body["workload"] = {"requests_per_second": point.request_rate}
    return body


def fixed_lengths(point: ServingPoint) -> bool:
    """The benchmark gave every request the same prompt and output lengths (the row's notes say "fixed lengths":
    NIM's synthetic ISL/OSL, dstack's random dataset at range ratio 1; the DLI rows, nim_dli.py): workload.lengths
    "fixed". ShareGPT and the other datasets vary them."""
    return "fixed lengths" in point.notes.lower() or point.batch == "nim-dli-2024"


# SGLang releases of late 2024 (v0.4.x: the DataCrunch runs, `lmsysorg/sglang:latest` of 2024-12 and 0.4.1) set
# cuda_graph_max_bs = 160 on every GPU of 25 GB or more, and min(160, 96) per data-parallel attention rank with
# --enable-dp-attention (python/sglang/srt/server_args.py of that period; today's defaults are in schedule.py)
SGLANG_2024_GRAPH_BATCH = 160
SGLANG_2024_DP_ATTENTION_GRAPH_BATCH = 96


def cuda_graph_max_batch(point: ServingPoint) -> int | None:
    """The CUDA-graph batch of the run's engine release where it differs from today's default (None: the default)."""
    if point.engine != "sglang" or not ("2024-12" in point.engine_version or point.engine_version == "0.4.1"):
        return None
    if "dp-attention" in point.notes or "dpattn" in point.label:
        # the batch is split over the data-parallel attention ranks (one per device), each capturing 96
        return SGLANG_2024_DP_ATTENTION_GRAPH_BATCH * int(point.devices or 1)
    return SGLANG_2024_GRAPH_BATCH


def measured(point: ServingPoint) -> dict[str, float | None]:
    """The published figures compared. Throughput only at a fixed concurrency: at a request rate the benchmarks
    divide by a window that includes the drain after the last arrival (data/README.md), while the model's figure
    is the steady state, rate × output tokens."""
    return {
        "ttft": point.ttft_s_median if point.ttft_s_median is not None else point.ttft_s_mean,
        "tpot": point.tpot_s_median if point.tpot_s_median is not None else point.tpot_s_mean,
        "throughput": point.output_tokens_per_second if point.concurrency is not None else None,
    }


def compare(point: ServingPoint, catalog: Catalog, scheduler: str | None = None) -> Compared:
    """One point under the engine's default scheduler, or `scheduler` ("static": the model before issue 30)."""
    seen = measured(point)
    nothing = dict.fromkeys(METRICS)
    if not point.prompt_tokens or not point.output_tokens:
        return Compared(point, seen, nothing, "lengths not published (dataset distribution)")
    if scheduler == "static" and point.concurrency is None:
        return Compared(point, seen, nothing, "a static batch has no arrival rate")
    try:
        answer = estimate_inference(request(point, scheduler), catalog)
    except InvalidRequest as exc:
        return Compared(point, seen, nothing, "; ".join(f"{k}: {v[0]}" for k, v in exc.errors.items())[:160])
    lat, load_ = answer["latency"], answer["load"]
    if load_["saturated"]:
        return Compared(point, seen, nothing, "predicted saturated at this rate")
    if not answer["memory"]["fits"]:
        return Compared(point, seen, nothing, "predicted not to fit")
    predicted = {
        "ttft": _ttft_like(point, answer),
        "tpot": lat["time_per_output_token_s"],
        "throughput": answer["throughput"]["output_tokens_per_second"],
    }
    return Compared(point, seen, predicted)


def _ttft_like(point: ServingPoint, answer: dict[str, Any]) -> float:
    """The model's TTFT in the source's statistic: the p50 against a published median, the mean against a mean-only
    source (NIM's AIPerf averages). The answer's mean TTFT is end_to_end_s − (O − 1)·TPOT: end_to_end_s is the mean,
    and the TPOT p50 is the mean (its spread is symmetric, a normal approximation); static batches have one value."""
    lat = answer["latency"]
    if point.ttft_s_median is not None or lat["percentiles"] is None:
        return float(lat["time_to_first_token_s"])
    return float(lat["end_to_end_s"] - (point.output_tokens - 1) * lat["time_per_output_token_s"])


def table(catalog: Catalog, scheduler: str | None = None, batches: set[str] | None = None) -> list[Compared]:
    """Every point (or those of `batches`) compared."""
    return [compare(p, catalog, scheduler) for p in load() if batches is None or p.batch in batches]


def source(point: ServingPoint) -> str:
    """The publisher a point came from: `owner/repo` for a GitHub file, else the site's host."""
    url = urlparse(point.source_url)
    if url.netloc == "github.com":
        return "/".join(url.path.strip("/").split("/")[:2])
    return url.netloc


def medians(rows: list[Compared]) -> dict[str, tuple[float, int]]:
    out = {}
    for metric in METRICS:
        errors = [abs(e) for r in rows if (e := r.error(metric)) is not None]
        out[metric] = (statistics.median(errors) if errors else float("nan"), len(errors))
    return out


def report(rows: list[Compared]) -> str:
    lines = [f"{'point':70} {'ttft':>8} {'tpot':>8} {'thru':>8}"]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.point.label[:70]:70} skipped: {r.skipped}")
            continue
        cells = [f"{e:+8.0%}" if (e := r.error(m)) is not None else f"{'-':>8}" for m in METRICS]
        lines.append(f"{r.point.label[:70]:70} " + " ".join(cells))
    for metric, (median, n) in medians(rows).items():
        lines.append(f"median |error| {metric}: {median:.1%} over {n} points")
    lines.append(breakdown(rows))
    return "\n".join(lines)


def _median_cells(rows: list[Compared]) -> str:
    return " ".join(f"{m:.1%} ({n:>2})".rjust(14) if n else f"{'-':>14}" for m, n in medians(rows).values())


def breakdown(rows: list[Compared]) -> str:
    """Median |error| per metric for each batch alone, for all rows up to it (in file order), and per source."""
    lines = [f"{'median |error| (points)':44} {'ttft':>14} {'tpot':>14} {'thru':>14}"]
    batches = list(dict.fromkeys(r.point.batch for r in rows))
    for i, batch in enumerate(batches):
        lines.append(
            f"{'batch ' + batch + ' alone':44} " + _median_cells([r for r in rows if r.point.batch == batch])
        )
        if i:
            upto = set(batches[: i + 1])
            lines.append(
                f"{'with batches ' + '+'.join(batches[: i + 1]):44} "
                + _median_cells([r for r in rows if r.point.batch in upto])
            )
    for name in dict.fromkeys(source(r.point) for r in rows):
        lines.append(
            f"{'source ' + name[:37]:44} " + _median_cells([r for r in rows if source(r.point) == name])
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    from .reference_catalog import load_catalog

    args = sys.argv[1:]
    only = {args[args.index("--batch") + 1]} if "--batch" in args else None
    print(report(table(load_catalog(), "static" if "--static" in args else None, only)))
