"""SemiAnalysis InferenceX's DeepSeek-R1 runs on one node, as serving points (batch `inferencex-2026` of
data/public_serving_sweeps.csv), and their errors by hardware, engine and weights.

The rows come from the InferenceX app's API fixture `packages/app/cypress/fixtures/api/benchmarks.json`, the copy in
vngcloud/InferenceX-app @ 44c8e03e672f38a3c2b78fa03cc900ff674f69e5 (a fork of SemiAnalysisAI/InferenceX-app; 435
rows, each with the GitHub Actions run of SemiAnalysisAI/InferenceX that measured it). Kept: one node, prefill and
decode on the same GPUs, no speculative decoding, no expert parallelism or data-parallel attention (the estimator
models neither), an engine it models (SGLang, TensorRT-LLM, vLLM) on a GPU in its catalog. What InferenceX's client
sends (utils/bench_serving/benchmark_serving.py of SemiAnalysisAI/InferenceX): the random dataset with
`--random-range-ratio 0.8`, i.e. prompt and output lengths uniform in [0.8·L, L] (means 0.9·L), `--ignore-eos`,
`--request-rate inf`, `--max-concurrency C`: a closed loop of C users with varied lengths.

`python -m tests.engine.inferencex` prints the errors grouped by hardware, engine and weights;
`python -m tests.engine.inferencex --rows FIXTURE.json` prints the CSV rows the batch was made from.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import asdict, fields
from pathlib import Path

from .serving_calibration import METRICS, Compared, compare
from .serving_sweeps import ServingPoint, load

BATCH = "inferencex-2026"
SOURCE = (
    "https://github.com/vngcloud/InferenceX-app/blob/44c8e03e672f38a3c2b78fa03cc900ff674f69e5/"
    "packages/app/cypress/fixtures/api/benchmarks.json"
)
HARDWARE = {
    "h100": "nvidia-h100-sxm-80gb",
    "h200": "nvidia-h200-sxm-141gb",
    "b200": "nvidia-b200",
    "mi300x": "amd-mi300x",
    "mi325x": "amd-mi325x",
    "mi355x": "amd-mi355x",
}
ENGINES = {"sglang": "sglang", "trt": "tensorrt-llm", "vllm": "vllm"}
MODELS = {"dsr1": "deepseek-r1"}
RANGE_RATIO = 0.8  # --random-range-ratio: lengths uniform in [int(0.8 L), L]


def kept(row: dict) -> bool:
    """One node, co-located, no MTP, no EP or DP attention, a modelled engine on a catalogued GPU."""
    return (
        not row["disagg"]
        and not row["is_multinode"]
        and row["spec_method"] == "none"
        and row["decode_ep"] == 1
        and not row["decode_dp_attention"]
        and row["hardware"] in HARDWARE
        and row["framework"] in ENGINES
        and row["model"] in MODELS
    )


def mean_length(nominal: int) -> float:
    """Mean of numpy's randint(int(0.8 L), L + 1): (int(0.8 L) + L) / 2."""
    return (int(nominal * RANGE_RATIO) + nominal) / 2.0


def weights(row: dict) -> str:
    if row["precision"] != "fp4":
        return row["precision"]
    return "mxfp4" if row["hardware"].startswith("mi") else "nvfp4"


def point(row: dict) -> ServingPoint:
    m, gpus = row["metrics"], row["decode_tp"]
    prompt, output = mean_length(row["isl"]), mean_length(row["osl"])
    total = m["tput_per_gpu"] * gpus
    out = (
        m["output_tput_per_gpu"] * gpus if "output_tput_per_gpu" in m else total * output / (prompt + output)
    )
    version = (row.get("image") or "").rsplit(":", 1)[-1] or f"not recorded (run of {row['date']})"
    label = (
        f"inferencex-{row['framework']}-{MODELS[row['model']]}-{row['precision']}-{gpus}x{row['hardware']}"
        f"-tp{gpus}-isl{row['isl']}-osl{row['osl']}-c{row['conc']}-{row['date']}"
    )
    notes = (
        f"InferenceX row: hardware={row['hardware']}, framework={row['framework']}, precision={row['precision']}, "
        f"tp={gpus}, ep=1, dp_attention=false, isl={row['isl']}, osl={row['osl']} (random, range ratio 0.8: means "
        f"{prompt:g} / {output:g}), conc={row['conc']}, image={row.get('image')}, date={row['date']}, run "
        f"{row['run_url']}. Medians and means as printed; output tokens/s = "
        + ("output_tput_per_gpu" if "output_tput_per_gpu" in m else "tput_per_gpu x O/(P+O)")
        + f" x {gpus} GPUs."
    )
    return ServingPoint(
        label=label,
        source_url=SOURCE,
        engine=ENGINES[row["framework"]],
        engine_version=version,
        model=MODELS[row["model"]],
        weights_precision=weights(row),
        kv_cache_precision="",
        accelerator=HARDWARE[row["hardware"]],
        devices=float(gpus),
        tensor_parallel=float(gpus),
        concurrency=float(row["conc"]),
        request_rate=None,
        prompt_tokens=prompt,
        output_tokens=output,
        ttft_s_mean=m["mean_ttft"],
        ttft_s_median=m["median_ttft"],
        ttft_s_p90=None,
        ttft_s_p99=m["p99_ttft"],
        tpot_s_mean=m["mean_tpot"],
        tpot_s_median=m["median_tpot"],
        tpot_s_p90=None,
        output_tokens_per_second=round(out, 2),
        total_tokens_per_second=round(total, 2),
        notes=notes,
        batch=BATCH,
    )


def csv_rows(fixture: Path) -> str:
    """The batch's CSV lines (no header) from the fixture file."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in json.loads(fixture.read_text(encoding="utf-8")):
        if kept(row):
            p = asdict(point(row))
            writer.writerow(["" if p[f.name] is None else p[f.name] for f in fields(ServingPoint)])
    return buffer.getvalue()


def grouped(rows: list[Compared]) -> str:
    """Median signed error per metric for each (accelerator, engine, weights), then the medians of |error|."""
    groups: dict[tuple[str, str, str], list[Compared]] = defaultdict(list)
    for r in rows:
        if not r.skipped:
            groups[(r.point.accelerator, r.point.engine, r.point.weights_precision)].append(r)
    lines = [f"{'accelerator / engine / weights':52} {'n':>3} " + " ".join(f"{m:>8}" for m in METRICS)]
    for key, members in sorted(groups.items()):
        cells = []
        for metric in METRICS:
            errors = [e for r in members if (e := r.error(metric)) is not None]
            cells.append(f"{statistics.median(errors):+8.0%}" if errors else f"{'-':>8}")
        lines.append(f"{' / '.join(key):52} {len(members):>3} " + " ".join(cells))
    for metric in METRICS:
        errors = [abs(e) for r in rows if (e := r.error(metric)) is not None]
        lines.append(f"median |error| {metric}: {statistics.median(errors):.1%} over {len(errors)} points")
    skipped = [r for r in rows if r.skipped]
    lines.append(f"skipped: {len(skipped)}" + "".join(f"\n  {r.point.label}: {r.skipped}" for r in skipped))
    return "\n".join(lines)


if __name__ == "__main__":
    if "--rows" in sys.argv:
        print(csv_rows(Path(sys.argv[sys.argv.index("--rows") + 1])), end="")
    else:
        from .reference_catalog import load_catalog

        catalog = load_catalog()
        print(grouped([compare(p, catalog) for p in load() if p.batch == BATCH]))
