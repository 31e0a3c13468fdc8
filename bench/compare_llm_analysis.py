"""Our training estimate side by side with llm-analysis 0.2.2's in-process training analysis, in one run.

    make bench-compare                               # or: .venv/bin/python bench/compare_llm_analysis.py

Installs nothing. llm-analysis (https://github.com/cli99/llm-analysis, `pip install llm-analysis==0.2.2`) is
timed where it is found: importable by this interpreter, else the interpreter named by BENCH_LLM_ANALYSIS_PYTHON,
else bench/.venv-llm-analysis/bin/python (git-ignored; docs/benchmarks.md shows how to create it: its
transformers/numpy pins are kept out of the service's virtual environment). In another interpreter this file
runs itself with `--llm-analysis-worker` and prints JSON; nothing there touches the network or the HF hub:
the model, GPU and dtype are explicit ModelConfig/GPUConfig/DtypeConfig objects.

Cases (the same physical request for both tools):
- llama-2-7b, 8 × A100-SXM-80GB, data 8, ZeRO-1, global batch 64 × 4,096 tokens, 1B tokens, selective
  recomputation, FlashAttention;
- the README's example: llama-2-70b, 2,048 × A100-SXM-80GB, data 64 × tensor 8 × pipeline 4, ZeRO-1, sequence
  parallel, global batch 1,024 × 4,096 tokens, 2T tokens (ours also prices it on AWS);
- ours only: the bench's llama-2-7b body without ZeRO, which does not fit, so the advice searches for the
  smallest change that fits (the slowest recommendation path).

Each tool and case runs back to back for BENCH_COMPARE_SECONDS (2) per round; BENCH_COMPARE_ROUNDS (3) rounds
are interleaved and the median round is reported (the machine may be shared). Per call:
- llm-analysis: `LLMAnalysis(model, gpu, dtype, parallelism)` + `.training(...)`, its logger at ERROR
  (as a library is used; its f-string log messages are still built on every call);
- ours, lean: `estimate_training` with `output.recommendations: false` (request dict → JSON answer);
- ours, full: `estimate_training` as the endpoint calls it (every recommendation verified by re-evaluating).
The request dicts are what the endpoint's marshmallow schema produced (loaded once, outside the timing).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECONDS = float(os.environ.get("BENCH_COMPARE_SECONDS", "2"))
ROUNDS = int(os.environ.get("BENCH_COMPARE_ROUNDS", "3"))
WORKER_FLAG = "--llm-analysis-worker"

# Shapes as in the models' config.json (meta-llama/Llama-2-7b-hf, Llama-2-70b-hf); A100 SXM4 80GB as in
# llm-analysis' own gpu_configs/a100-sxm-80gb.json.
LLAMA = {
    "llama-2-7b": dict(num_layers=32, n_head=32, hidden_dim=4096, vocab_size=32000, max_seq_len=4096,
                       num_key_value_heads=32, ffn_embed_dim=11008),
    "llama-2-70b": dict(num_layers=80, n_head=64, hidden_dim=8192, vocab_size=32000, max_seq_len=4096,
                        num_key_value_heads=8, ffn_embed_dim=28672),
}  # fmt: skip
A100 = dict(name="a100-sxm-80gb", mem_per_GPU_in_GB=80, hbm_bandwidth_in_GB_per_sec=2039,
            intra_node_bandwidth_in_GB_per_sec=300, intra_node_min_message_latency=8e-06, peak_fp16_TFLOPS=312,
            peak_i8_TFLOPS=624, peak_i4_TFLOPS=1248, inter_node_bandwidth_in_GB_per_sec=200)  # fmt: skip

# (label, llm-analysis model, parallelism (tp, pp, dp), training kwargs, our request)
CASES = [
    (
        "llama-2-7b, 8 × A100, ZeRO-1",
        "llama-2-7b",
        (1, 1, 8),
        dict(global_batch_size=64, seq_len=4096, total_num_tokens=1e9, zero=1),
        {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {
                "accelerator": "nvidia-a100-sxm-80gb",
                "count": 8,
                "parallelism": {"data": 8, "zero_stage": 1},
            },
        },
    ),
    (
        "README: llama-2-70b, 2048 × A100, d64 t8 p4",
        "llama-2-70b",
        (8, 4, 64),
        dict(global_batch_size=1024, batch_size_per_gpu=1, seq_len=4096, total_num_tokens=2e12, zero=1),
        {
            "model": {"preset": "llama-2-70b"},
            "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
            "hardware": {
                "accelerator": "nvidia-a100-sxm-80gb",
                "count": 2048,
                "parallelism": {
                    "data": 64,
                    "tensor": 8,
                    "pipeline": 4,
                    "zero_stage": 1,
                    "sequence_parallel": True,
                },
            },
            "cost": {"provider": "aws"},
        },
    ),
]
OURS_ONLY = [
    (
        "llama-2-7b, 8 × A100, no ZeRO (does not fit)",
        {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
        },
    ),
]


def rate(fn, seconds: float) -> float:
    """Calls per second of `fn` run back to back for `seconds`."""
    fn()  # warm (first-call caches, imports)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        fn()
        n += 1
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


# ------------------------------------------------------------------------------------------ llm-analysis


def llm_analysis_calls() -> dict:
    """label -> a zero-argument callable running one llm-analysis training analysis (raises ImportError)."""
    import logging

    from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
    from llm_analysis.config import DtypeConfig, GPUConfig, ModelConfig, ParallelismConfig
    from llm_analysis.logger import logger

    logger.setLevel(logging.ERROR)  # a library caller's setting; the messages are still formatted
    gpu, dtype = GPUConfig(**A100), DtypeConfig()
    calls = {}
    for label, model_name, (tp, pp, dp), kw, _ in CASES:
        shape = LLAMA[model_name]
        model = ModelConfig(
            name=model_name,
            model_type="llama",
            expansion_ratio=shape["ffn_embed_dim"] / shape["hidden_dim"],  # 11008/4096 is not an integer
            **shape,
        )
        par = ParallelismConfig(tp_size=tp, pp_size=pp, dp_size=dp, sp_size=tp)
        kw = dict(kw)
        zero = DSZeRO(kw.pop("zero"))

        def call(model=model, par=par, kw=kw, zero=zero):
            analysis = LLMAnalysis(model, gpu, dtype, par)
            return analysis.training(
                activation_recomputation=ActivationRecomputation.SELECTIVE,
                ds_zero=zero,
                flash_attn=True,
                mlp_gated_linear_units=True,
                **kw,
            )

        calls[label] = call
    return calls


def worker(seconds: float) -> None:
    """Run inside the llm-analysis interpreter: one round, JSON on stdout."""
    import llm_analysis

    out = {"version": getattr(llm_analysis, "__version__", None), "rates": {}}
    try:
        from importlib.metadata import version

        out["version"] = version("llm-analysis")
    except Exception:  # noqa: BLE001 - the version is only reported
        pass
    for label, call in llm_analysis_calls().items():
        out["rates"][label] = rate(call, seconds)
    print(json.dumps(out))


def external_python() -> str | None:
    named = os.environ.get("BENCH_LLM_ANALYSIS_PYTHON")
    if named:
        return named
    default = HERE / ".venv-llm-analysis" / "bin" / "python"
    return str(default) if default.exists() else None


class LLMAnalysisRunner:
    """In process when importable here; else a subprocess per round in the other interpreter; else absent."""

    def __init__(self) -> None:
        self.mode, self.version, self.calls, self.python = None, None, None, None
        try:
            self.calls = llm_analysis_calls()
            from importlib.metadata import version

            self.mode, self.version = "in process", version("llm-analysis")
        except ImportError:
            self.python = external_python()
            if self.python:
                self.mode = f"subprocess ({self.python})"

    def round(self, seconds: float) -> dict[str, float] | None:
        if self.calls is not None:
            return {label: rate(call, seconds) for label, call in self.calls.items()}
        if self.python is None:
            return None
        done = subprocess.run(
            [self.python, __file__, WORKER_FLAG, str(seconds)],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        if done.returncode != 0:
            raise SystemExit(f"llm-analysis worker failed ({self.python}):\n{done.stderr[-2000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        self.version = result["version"]
        return result["rates"]


# ------------------------------------------------------------------------------------------------ ours


def our_calls() -> dict[str, tuple]:
    """label -> (lean callable, full callable) for every case, on the seeded catalog."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    from bodies import as_loaded
    from engine_bench import build_catalog
    from scalecost.engine import estimate_training

    catalog = build_catalog()
    calls = {}
    for label, body in [(c[0], c[4]) for c in CASES] + OURS_ONLY:
        loaded = as_loaded(
            body
        )  # exactly what the endpoint hands the engine (tests/contract/test_bench_bodies.py)
        lean = {**loaded, "output": {**loaded.get("output", {}), "recommendations": False}}
        calls[label] = (
            lambda lean=lean: estimate_training(lean, catalog),
            lambda full=loaded: estimate_training(full, catalog),
        )
    return calls


def main() -> None:
    ours = our_calls()
    other = LLMAnalysisRunner()
    rounds: list[tuple[dict | None, dict]] = []
    for _ in range(ROUNDS):
        theirs = other.round(SECONDS)
        mine = {label: (rate(lean, SECONDS), rate(full, SECONDS)) for label, (lean, full) in ours.items()}
        rounds.append((theirs, mine))

    def median(values: list[float]) -> float:
        return statistics.median(values)

    print("\n## Side by side with llm-analysis (training, in process)\n")
    where = other.mode or "not found (pip install llm-analysis==0.2.2; see docs/benchmarks.md)"
    print(f"- llm-analysis {other.version or ''}: {where}")
    print(
        f"- {ROUNDS} interleaved rounds of {SECONDS:g} s per tool and case; median round (min–max); "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print()
    print(
        "| case | llm-analysis calls/s | ours lean calls/s | ours full calls/s | lean ÷ llm-a | full ÷ llm-a |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    labels = [c[0] for c in CASES] + [o[0] for o in OURS_ONLY]
    for label in labels:
        lean = [r[1][label][0] for r in rounds]
        full = [r[1][label][1] for r in rounds]
        theirs = [r[0][label] for r in rounds if r[0] and label in r[0]]

        def cell(values: list[float]) -> str:
            return f"{median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})" if values else "–"

        ratio_lean = f"{median(lean) / median(theirs):.2f}×" if theirs else "–"
        ratio_full = f"{median(full) / median(theirs):.2f}×" if theirs else "–"
        print(f"| {label} | {cell(theirs)} | {cell(lean)} | {cell(full)} | {ratio_lean} | {ratio_full} |")
    print(
        "\nTargets (issue 10): lean ≥ 4× llm-analysis, full (verified recommendations) ≥ 1× llm-analysis. "
        "llm-analysis answers memory, FLOPs and time for one configuration; ours also prices it, predicts the "
        "utilization instead of taking a constant, chooses the micro-batch, renders the JSON answer and, in the "
        "full column, verifies every recommendation by re-evaluating the changed plan."
    )


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == WORKER_FLAG:
        worker(float(sys.argv[2]) if len(sys.argv) > 2 else SECONDS)
    else:
        main()
