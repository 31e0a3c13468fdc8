"""Serving per software stack against public measurements (tests/engine/data/public_serving_throughput.csv).

`pytest -s tests/engine/test_stack_calibration.py` prints the error per point and the median per stack (the same
table as `python -m tests.engine.serving_points`). Errors are speed errors: positive = predicted faster than measured.

Issue 31's goal: every stack with at least 5 public points within 15 % median error. Before the stack factors
(stacks.py), on these points: rocm/vllm 50.4 % (2× optimistic at load, +38 % at batch 1 on 405B), Gaudi 17.8 %
(Gaudi 3 70B +20…+60 %, Gaudi 2 7B/8B −15…−27 %), Neuron 18.6 % (small models' decode 25-60 % fast: a per-layer
cost the CUDA tables do not have; batch-8 decode up to 2.5× fast: the KV reads).
"""

from __future__ import annotations

from scalecost.engine.inference.model.stacks import NEUTRAL, stack_factors

from .reference_catalog import load_catalog
from .serving_points import by_stack, evaluate, serving_rows, summary, table

CATALOG = load_catalog()


def test_every_stack_prints_its_error_per_point():
    outcomes = evaluate(CATALOG)
    print("\n" + table(outcomes))
    assert len(outcomes) == len(serving_rows()) >= 180
    assert all(o.predicted > 0 for o in outcomes)


def test_every_serving_stack_is_within_15_percent_median():
    stacks = by_stack(evaluate(CATALOG))
    assert set(stacks) == {"rocm/vllm", "gaudi/optimum-habana", "neuron/transformers-neuronx"}
    for name, outcomes in stacks.items():
        s = summary(outcomes)
        assert s["points"] >= 20, name
        assert s["median_abs_error"] < 0.15, (name, s)
        assert s["within_15_percent"] >= 0.55, (name, s)


def test_rocm_batch_one_decode_is_no_longer_optimistic():
    """AMD's batch-1 latency rows (memory-bound decode): the CUDA tables alone predicted them 6-38 % fast."""
    rows = [o for o in evaluate(CATALOG) if o.stack == "rocm/vllm" and o.batch == 1]
    assert len(rows) == 2
    assert all(abs(o.error) < 0.15 for o in rows), [(o.label, o.error) for o in rows]


def test_neuron_decode_is_within_10_percent_median():
    """Neuron's per-token latency (60 configurations, batch 1 to 8): its prefill (TTFT, Neuron's bucketed context
    encoding) scatters more and is only held by the stack median above."""
    tpot = [
        o
        for o in by_stack(evaluate(CATALOG))["neuron/transformers-neuronx"]
        if o.metric == "time_per_output_token_s"
    ]
    assert len(tpot) >= 50 and summary(tpot)["median_abs_error"] < 0.10


def test_cuda_builds_keep_the_calibrated_tables():
    for part in ("nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb", "nvidia-rtx-4090"):
        for engine in ("vllm", "tensorrt-llm", "sglang", "llama.cpp"):
            assert stack_factors(engine, CATALOG.accelerators[part]) is NEUTRAL


def test_every_row_names_its_source():
    for row in serving_rows():
        assert row["source_url"].startswith("https://"), row["label"]
        assert float(row["measured"]) > 0


# ------------------------------------------------------------------------------------------------------ training


def test_training_stacks_print_their_error_per_point():
    """`pytest -s` prints the table; before the stack factors and the JAX frameworks (the rows sent without
    training.framework, the engine's inferred stack): JAX/XLA on GPU 15.4 %, Gaudi 2 Megatron-DeepSpeed 11.5 %
    (+11.5 % signed), Trainium NxD 20.7 % (−20.7 % signed)."""
    from .training_stack_points import evaluate as evaluate_training
    from .training_stack_points import stack_rows
    from .training_stack_points import table as training_table

    evaluated = evaluate_training(CATALOG)
    print("\n" + training_table(evaluated))
    assert len(evaluated) == len(stack_rows()) >= 24
    assert all(o.predicted and o.fits for _, o in evaluated), "every published configuration ran, so it fits"


def test_every_training_stack_is_within_15_percent_median():
    from .training_stack_points import by_stack as training_by_stack
    from .training_stack_points import evaluate as evaluate_training
    from .training_stack_points import median_error

    stacks = training_by_stack(evaluate_training(CATALOG))
    assert set(stacks) == {"jax-xla/gpu", "gaudi/megatron-deepspeed", "neuron/neuronx-distributed"}
    for name, outcomes in stacks.items():
        assert len(outcomes) >= 5, name
        assert median_error(outcomes) < 0.15, (name, median_error(outcomes))


def test_jax_frameworks_are_accepted_and_keep_the_xla_path_on_tpus():
    from scalecost.engine import estimate_training

    def request(accelerator: str, framework: str | None) -> dict:
        training = {"tokens": 1e11, "sequence_length": 4096, "global_batch_size": 256, "precision": "bf16"}
        if framework:
            training["framework"] = framework
        return {
            "model": {"preset": "llama-2-7b"},
            "training": training,
            "hardware": {
                "accelerator": accelerator,
                "count": 64,
                "parallelism": {"data": 64, "zero_stage": 3},
            },
        }

    tpu = {fw: estimate_training(request("google-tpu-v5p", fw), CATALOG) for fw in (None, "maxtext", "paxml")}
    seconds = {fw: answer["time"]["seconds"] for fw, answer in tpu.items()}
    assert seconds["maxtext"] == seconds[None] == seconds["paxml"]
    gpu = estimate_training(request("nvidia-h100-sxm-80gb", "maxtext"), CATALOG)
    assert gpu["time"]["seconds"] > 0


def test_the_answer_names_the_stack_and_the_factors_it_used():
    from scalecost.engine import estimate_inference

    def answer(accelerator: str) -> dict:
        request = {
            "model": {"preset": "llama-3.1-70b"},
            "weights": {"precision": "fp8"},
            "hardware": {"accelerator": accelerator, "count": 8},
        }
        return estimate_inference(request, CATALOG)

    amd, nvidia = answer("amd-mi300x"), answer("nvidia-h100-sxm-80gb")
    assert amd["hardware"]["serving_stack"] == "rocm/vllm"
    assert nvidia["hardware"]["serving_stack"] == "cuda/vllm"
    cuda_mbu = nvidia["assumptions"]["memory_bandwidth_efficiency"]["value"]
    assert amd["assumptions"]["memory_bandwidth_efficiency"]["value"] == cuda_mbu * 0.6
    assert "AMD ROCm" in amd["assumptions"]["memory_bandwidth_efficiency"]["source"]
    amd_kv, cuda_kv = (
        amd["assumptions"]["kv_bandwidth_efficiency"],
        nvidia["assumptions"]["kv_bandwidth_efficiency"],
    )
    assert amd_kv == cuda_kv * 0.6
