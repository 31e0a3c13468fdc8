"""NVIDIA's NIM concurrency sweeps of the DLI course data (data/nim_dli_llama3_genai_perf.csv), as serving points.

The file is a byte-for-byte copy of `code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv` in
wbing520/ai-performance-engineering @ 0e25b2e236211ad01ed2221bd2c1cfa5b3f47b55, the course notebooks' "set of
pre-collected benchmarks ... each row corresponding to a benchmark run against an older version of NVIDIA NIM"
(notebook 02-Throughput-vs-Latency-Tradeoff.ipynb in the same folder). 787 GenAI-Perf runs of NIM's TensorRT-LLM
backend: Llama 3 8B and 70B Instruct on A100-SXM4-80GB and H100 80GB HBM3, tensor degree (`n_gpus`) 1-8, fp16/bf16
and fp8, six synthetic length pairs (200/200 … 7000/1000, stddev 0), 11 closed-loop concurrencies from 1 to 250.
Statistics: averages (TTFT, ITL, output tokens/s); ITL is GenAI-Perf's (E2E − TTFT)/(output − 1), our TPOT.

Batch `nim-dli-2024`: printed, not bounded by the calibration medians. It is an older stack than the issue-30 batch
(the notebook says so; NIM 1.x of 2024 ran Triton's TensorRT-LLM backend) and decodes slower than modelled
(docs/formulas.md, "NIM of 2024 (DLI course data)"). Its lengths are fixed (serving_calibration.fixed_lengths). What
it checks is what does not depend on the stack's speed: where the KV cache fills, the engine runs that many and the
rest queue (test_kv_queue.py), and how a fixed-length burst's TTFT grows with the users (test_fixed_lengths.py).
`python -m tests.engine.nim_dli` prints every configuration's median errors and the KV-limited sweeps.
"""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from pathlib import Path

from scalecost.engine import estimate_inference
from scalecost.engine.hardware import Catalog

from .serving_calibration import Compared, compare, request
from .serving_sweeps import ServingPoint

CSV = Path(__file__).with_name("data") / "nim_dli_llama3_genai_perf.csv"
SOURCE = (
    "https://github.com/wbing520/ai-performance-engineering/blob/0e25b2e236211ad01ed2221bd2c1cfa5b3f47b55/"
    "code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv"
)
BATCH = "nim-dli-2024"
GPUS = {"A100-SXM4-80GB": "nvidia-a100-sxm-80gb", "H100_80GB_HBM3": "nvidia-h100-sxm-80gb"}
MODELS = {"meta-llama3-8b-instruct": "llama-3-8b", "meta-llama3-70b-instruct": "llama-3-70b"}
NS = 1e-9


def load(path: Path = CSV) -> list[ServingPoint]:
    """Every run of the file as a ServingPoint (a repeated configuration gets a `-run2` label)."""
    points, seen = [], set()
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            config = config_of(row)
            label = "nim-dli-" + "-".join(str(v) for v in config)
            points.append(_point(row, label + ("-run2" if config in seen else "")))
            seen.add(config)
    return points


def config_of(row: dict[str, str]) -> tuple[str, str, int, str, int, int, int]:
    """(model, accelerator, tensor degree, precision, concurrency, input tokens, output tokens) as configured."""
    return (
        MODELS[row["task_inputs-model"]],
        GPUS[row["task_inputs-GPU"]],
        int(row["task_inputs-n_gpus"]),
        row["task_inputs-precision"],
        int(row["input_config-concurrency"]),
        int(row["input_config-synthetic_input_tokens_mean"]),
        int(row["input_config-output_tokens_mean"]),
    )


def _point(row: dict[str, str], label: str) -> ServingPoint:
    model, accelerator, degree, precision, concurrency, _, _ = config_of(row)
    return ServingPoint(
        label=label,
        source_url=SOURCE,
        engine="tensorrt-llm",
        engine_version="NIM of 2024 (TensorRT-LLM backend)",
        model=model,
        weights_precision=precision,
        kv_cache_precision="",  # not printed: the engine default (fp8 with fp8 weights; the sweeps' plateaus agree)
        accelerator=accelerator,
        devices=float(degree),
        tensor_parallel=float(degree),
        concurrency=float(concurrency),
        request_rate=None,
        prompt_tokens=float(row["num_input_token-avg"]),
        output_tokens=float(row["num_output_token-avg"]),
        ttft_s_mean=float(row["time_to_first_token-avg"]) * NS,
        ttft_s_median=None,
        ttft_s_p90=None,
        ttft_s_p99=None,
        tpot_s_mean=float(row["inter_token_latency-avg"]) * NS,
        tpot_s_median=None,
        tpot_s_p90=None,
        output_tokens_per_second=float(row["output_token_throughput-avg"]),
        total_tokens_per_second=None,
        notes="GenAI-Perf averages; ITL recorded as TPOT mean; lengths are the measured means",
        batch=BATCH,
    )


def sweeps(points: list[ServingPoint]) -> dict[tuple, list[ServingPoint]]:
    """The points of each configuration but concurrency, in rising concurrency."""
    out: dict[tuple, list[ServingPoint]] = defaultdict(list)
    for p in points:
        out[_sweep_key(p)].append(p)
    return {k: sorted(v, key=lambda p: p.concurrency or 0) for k, v in out.items()}


def _sweep_key(p: ServingPoint) -> tuple:
    return (
        p.model,
        p.accelerator,
        int(p.devices or 1),
        p.weights_precision,
        round(p.prompt_tokens or 0, -1),
        round(p.output_tokens or 0, -1),
    )


def kv_limited(sweep: list[ServingPoint]) -> bool:
    """A sweep whose last concurrencies (150 … 250) run at one throughput (within 3 %) while their TTFT grows 1.5×:
    a full engine with a queue in front of it. Prompt-heavy sweeps plateau on the step budget instead, so only the
    sweeps whose output is at least 1,000 tokens count (decode-bound: the KV cache fills first)."""
    top = [p for p in sweep if (p.concurrency or 0) >= 150]
    rates = [p.output_tokens_per_second or 0.0 for p in top]
    return (
        len(top) >= 3
        and (sweep[0].output_tokens or 0) >= 1000
        and max(rates) <= 1.03 * min(rates)
        and (top[-1].ttft_s_mean or 0) > 1.5 * (top[0].ttft_s_mean or 0)
    )


def running_measured(p: ServingPoint) -> float:
    """Requests decoding at once, by Little's law over the tokens: output tokens/s × seconds per token."""
    return (p.output_tokens_per_second or 0.0) * (p.tpot_s_mean or 0.0)


def report(rows: list[Compared]) -> str:
    groups: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for metric in ("ttft", "tpot", "throughput"):
            e = r.error(metric)
            if e is not None:
                groups[_sweep_key(r.point)[:4]][metric].append(e)
    lines = [
        f"{'configuration':50} {'ttft':>7} {'tpot':>7} {'thru':>7}   (median signed error, 65-66 runs each)"
    ]
    for key, errors in sorted(groups.items()):
        cells = " ".join(f"{statistics.median(errors[m]):+7.0%}" for m in ("ttft", "tpot", "throughput"))
        lines.append(f"{' '.join(str(k) for k in key):50} {cells}")
    for metric in ("ttft", "tpot", "throughput"):
        errors = [abs(e) for r in rows if (e := r.error(metric)) is not None]
        lines.append(f"median |error| {metric}: {statistics.median(errors):.1%} over {len(errors)} runs")
    return "\n".join(lines)


def kv_table(catalog: Catalog) -> list[tuple[tuple, float, float, float]]:
    """For each KV-limited sweep, at its highest concurrency: (configuration, running measured, running modelled,
    requests the model queues)."""
    out = []
    for key, sweep in sweeps(load()).items():
        if kv_limited(sweep):
            load_ = estimate_inference(request(sweep[-1]), catalog)["load"]
            out.append(
                (key, running_measured(sweep[-1]), load_["running_requests"], load_["queued_requests"])
            )
    return out


if __name__ == "__main__":
    from .reference_catalog import load_catalog

    catalog = load_catalog()
    print(report([compare(p, catalog) for p in load()]))
    print(
        "\nKV-limited sweeps at 250 users (throughput flat from 150): requests running, measured vs modelled"
    )
    for key, measured, modelled, queued in kv_table(catalog):
        print(
            f"{' '.join(str(k) for k in key):55} {measured:6.1f} {modelled:6.0f} ({modelled / measured - 1:+.0%}), "
            f"{queued:.0f} queued"
        )
