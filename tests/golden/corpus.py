"""A fixed corpus of varied estimate requests (training and inference, every model form, errors included).

Its answers are recorded in `estimates.json` (`python -m tests.golden.record`); `test_golden.py` proves that the
service still returns the same JSON (floats within 1e-12 relative). A change that means to move the numbers
re-records the file in its own commit that says why. The corpus is built by fixed loops (no randomness), so the
same requests come out on every machine.
"""

from __future__ import annotations

import itertools
from typing import Any

Request = tuple[str, dict[str, Any]]  # ("training" | "inference", body)

LLM_PRESETS = [
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3-70b",
    "mistral-7b",
    "mixtral-8x7b",
]
BIG_PRESETS = ["gpt-3-175b", "llama-3.1-405b", "deepseek-v3"]
TRAIN_ACCELERATORS = [
    "nvidia-a100-sxm-80gb",
    "nvidia-h100-sxm-80gb",
    "nvidia-h200-sxm-141gb",
    "nvidia-b200",
    "amd-mi300x",
    "google-tpu-v5p",
    "nvidia-v100-sxm-32gb",
    "nvidia-l40s",
]
SERVE_ACCELERATORS = [
    "nvidia-rtx-4090",
    "nvidia-l4",
    "nvidia-a100-sxm-80gb",
    "nvidia-h100-sxm-80gb",
    "nvidia-h200-sxm-141gb",
    "amd-mi300x",
    "apple-m3-max",
    "nvidia-t4",
    "cpu-2s-xeon-spr",
]
SHAPE = {
    "architecture": "transformer",
    "layers": 24,
    "hidden_size": 2048,
    "attention_heads": 16,
    "kv_heads": 4,
    "ffn_hidden_size": 5632,
    "vocab_size": 32000,
}
HF_CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
}


def _training_layouts() -> list[Request]:
    out: list[Request] = []
    layouts = [
        {"data": 8},
        {"data": 8, "zero_stage": 1},
        {"data": 8, "zero_stage": 3},
        {"data": 4, "tensor": 2},
        {"data": 2, "tensor": 4, "sequence_parallel": True},
        {"data": 2, "tensor": 2, "pipeline": 2},
        {"data": 1, "tensor": 8},
    ]
    for preset, acc, layout in itertools.product(LLM_PRESETS[:5], TRAIN_ACCELERATORS[:4], layouts):
        out.append(
            (
                "training",
                {
                    "model": {"preset": preset},
                    "training": {"tokens": "2B", "global_batch_size": 256, "sequence_length": 4096},
                    "hardware": {"accelerator": acc, "count": 8, "parallelism": layout},
                    "output": {"recommendations": preset in ("llama-2-7b", "llama-2-70b")},
                },
            )
        )
    return out  # 140


def _training_knobs() -> list[Request]:
    out: list[Request] = []
    knobs: list[dict[str, Any]] = [
        {"precision": "fp8"},
        {"precision": "fp16"},
        {"precision": "fp32"},
        {"precision": "tf32"},
        {"optimizer": "sgd"},
        {"optimizer": "adam-8bit"},
        {"optimizer": "adafactor"},
        {"optimizer": "lion"},
        {"optimizer_memory_multiplier": 3.0},
        {"activation_recomputation": "full"},
        {"activation_recomputation": "none"},
        {"flash_attention": False},
        {"micro_batch_size": 2},
        {"checkpoint_interval_steps": 500},
        {"checkpoint_interval_steps": 100, "checkpoint_write_bandwidth_bytes_per_s": 2e9},
        {"validation": {"interval_steps": 200, "tokens": "10M"}},
        {"include_pretraining": True},
        {"include_pretraining": True, "pretraining_tokens": "2T"},
        {"epochs": 3},
        {"tokens": "300B"},
    ]
    for knob, acc in itertools.product(knobs, ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb"]):
        training = {"tokens": "10B", "global_batch_size": 512, "sequence_length": 2048, **knob}
        out.append(
            (
                "training",
                {
                    "model": {"preset": "llama-3-8b"},
                    "training": training,
                    "hardware": {
                        "accelerator": acc,
                        "count": 16,
                        "parallelism": {"data": 16, "zero_stage": 2},
                    },
                    "output": {"recommendations": False, "details": acc.startswith("nvidia-h100")},
                },
            )
        )
    return out  # 40


def _training_models_and_costs() -> list[Request]:
    out: list[Request] = []
    models: list[dict[str, Any]] = [
        {"architecture": "transformer", "parameters": "1.3B"},
        {"architecture": "transformer", "parameters": 350e6, "max_context_tokens": 2048},
        {"architecture": "lstm", "parameters": "60M"},
        {"architecture": "mlp", "parameters": "5M"},
        {"architecture": "cnn", "parameters": 25.6e6, "flops_per_sample": 4.1e9},
        {"architecture": "vit", "parameters": 304e6, "flops_per_sample": 61.6e9},
        {"preset": "resnet-50"},
        {"preset": "vit-l-16"},
        {"preset": "bert-large"},
        {"preset": "lstm-2x1500"},
        {"preset": "gpt-2-1.5b"},
        SHAPE,
        {**SHAPE, "experts": 8, "experts_per_token": 2},
        {**SHAPE, "ffn_type": "gelu", "tied_embeddings": True},
        {"hf_config": HF_CONFIG},
    ]
    for model in models:
        vision = model.get("architecture") in ("cnn", "vit") or model.get("preset") in (
            "resnet-50",
            "vit-l-16",
        )
        training: dict[str, Any] = (
            {"samples": 1281167, "epochs": 2, "global_batch_size": 1024}
            if vision
            else {"tokens": "5B", "global_batch_size": 256, "sequence_length": 1024}
        )
        for acc, cost in (
            ("nvidia-a100-sxm-80gb", {"provider": "aws"}),
            ("nvidia-h100-sxm-80gb", {"usd_per_accelerator_hour": 2.49, "infrastructure_overhead": 0.15}),
        ):
            out.append(
                (
                    "training",
                    {
                        "model": model,
                        "training": training,
                        "hardware": {"accelerator": acc, "count": 8},
                        "cost": cost,
                        "output": {"decimal_places": 2},
                    },
                )
            )
    for preset in BIG_PRESETS:
        for count, layout in (
            (1024, {"data": 16, "tensor": 8, "pipeline": 8}),
            (2048, {"data": 32, "tensor": 8, "pipeline": 8}),
        ):
            out.append(
                (
                    "training",
                    {
                        "model": {"preset": preset},
                        "training": {"tokens": "1T", "global_batch_size": 2048, "sequence_length": 4096},
                        "hardware": {
                            "accelerator": "nvidia-h100-sxm-80gb",
                            "count": count,
                            "parallelism": layout,
                        },
                        "cost": {"provider": "aws"},
                    },
                )
            )
    out.append(
        (
            "training",
            {
                "model": {"preset": "mixtral-8x7b"},
                "training": {"tokens": "100B", "global_batch_size": 1024, "sequence_length": 4096},
                "hardware": {
                    "accelerator": "nvidia-h100-sxm-80gb",
                    "count": 64,
                    "parallelism": {"data": 16, "tensor": 2, "pipeline": 2, "expert": 8},
                },
            },
        )
    )
    out.append(
        (
            "training",
            {
                "model": {"preset": "llama-2-7b"},
                "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
                "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "utilization": 0.45},
                "cost": {"provider": "lambda", "as_of": "2025-01-15"},
            },
        )
    )
    return out  # 30 + 6 + 2 = 38


def _training_errors() -> list[Request]:
    base = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
    }
    bad: list[dict[str, Any]] = [
        {**base, "hardware": {"accelerator": "nvidia-h900", "count": 8}},
        {**base, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 0}},
        {**base, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "parallelism": {"data": 3}}},
        {
            **base,
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
            "training": {**base["training"], "precision": "fp8"},
        },
        {**base, "model": {"preset": "llama-9-999b"}},
        {
            **base,
            "model": {"preset": "llama-3.1-405b"},
            "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
        },
        {**base, "training": {"global_batch_size": 64}},
        {**base, "training": {**base["training"], "sequence_length": 10_000_000}},
        {**base, "unknown_field": 1},
        {**base, "cost": {"provider": "no-such-cloud"}},
        {
            **base,
            "training": {**base["training"], "global_batch_size": 7},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "parallelism": {"data": 8}},
        },
        {**base, "model": {"architecture": "transformer"}},
    ]
    return [("training", b) for b in bad]  # 12


def _inference() -> list[Request]:
    out: list[Request] = []
    weights = [
        {"precision": "fp16"},
        {"precision": "int4", "format": "awq"},
        {"precision": "int8", "format": "gguf-q8_0"},
        {"precision": "fp8"},
    ]
    for preset, acc, w in itertools.product(
        ["llama-3-8b", "mistral-7b", "llama-2-13b"], SERVE_ACCELERATORS, weights
    ):
        out.append(
            (
                "inference",
                {
                    "model": {"preset": preset},
                    "weights": w,
                    "hardware": {"accelerator": acc, "count": "auto"},
                    "output": {"suggestions": False, "recommendations": acc == "nvidia-l4"},
                },
            )
        )
    for engine, batch, (prompt, output) in itertools.product(
        ["vllm", "tensorrt-llm", "llama.cpp", "hf-transformers"], [1, 16, 64], [(512, 256), (4096, 1024)]
    ):
        out.append(
            (
                "inference",
                {
                    "model": {"preset": "llama-3-70b"},
                    "weights": {"precision": "fp8"},
                    "engine": engine,
                    "batch_size": batch,
                    "prompt_tokens": prompt,
                    "output_tokens": output,
                    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
                    "output": {"suggestions": False},
                },
            )
        )
    extras: list[dict[str, Any]] = [
        {
            "model": {"preset": "mixtral-8x7b"},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 2},
        },
        {
            "model": {"preset": "deepseek-v3"},
            "weights": {"precision": "fp8"},
            "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "kv_cache_precision": "fp8",
            "batch_size": 32,
            "hardware": {"accelerator": "nvidia-l40s", "count": 1},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "weights": {"precision": "int4", "format": "gguf-q4_k_m"},
            "engine": "llama.cpp",
            "hardware": {"accelerator": "apple-m2-ultra", "apple_metal_memory_fraction": 0.9},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-rtx-4090"},
            "targets": {"output_tokens_per_second": 2000, "time_to_first_token_s": 0.5},
        },
        {
            "model": {"preset": "llama-3-70b"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"},
            "targets": {"time_per_output_token_s": 0.02},
            "cost": {"provider": "aws"},
        },
        {
            "model": {"preset": "llama-2-7b"},
            "weights": {"precision": "int4", "format": "bnb-nf4"},
            "engine": "hf-transformers",
            "hardware": {"accelerator": "nvidia-t4"},
            "output": {"details": True},
        },
        {
            "model": {"preset": "llama-2-7b"},
            "hardware": {"accelerator": "nvidia-a10g"},
            "cost": {"usd_per_accelerator_hour": 1.2, "infrastructure_overhead": 0.1},
            "output": {"decimal_places": 3},
        },
        {"model": SHAPE, "hardware": {"accelerator": "nvidia-l4"}},
        {
            "model": {"hf_config": HF_CONFIG},
            "hardware": {"accelerator": "nvidia-l4"},
            "weights": {"precision": "int8", "format": "bnb-int8"},
        },
        {
            "model": {"architecture": "transformer", "parameters": "3B"},
            "hardware": {"accelerator": "nvidia-rtx-3090"},
        },
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}},  # with suggestions
        {
            "model": {"preset": "llama-3-70b"},
            "weights": {"precision": "int4", "format": "gptq"},
            "hardware": {"accelerator": "nvidia-rtx-4090", "count": 2},
        },
        # continuous batching (issue 30): a rate, a saturated rate, prefix caching, speculative decoding, static
        {
            "model": {"preset": "llama-3-70b"},
            "weights": {"precision": "fp8"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
            "workload": {"requests_per_second": 2.5},
            "prompt_tokens": 2048,
            "output_tokens": 512,
            "output": {"details": True, "suggestions": False},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "sglang",
            "hardware": {"accelerator": "nvidia-l4"},
            "workload": {"requests_per_second": 500},
            "output": {"suggestions": False},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "tensorrt-llm",
            "weights": {"precision": "fp8"},
            "batch_size": 64,
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
            "workload": {"prefix_hit_rate": 0.75},
            "slo": {"percentile": "p99"},
            "targets": {"time_to_first_token_s": 0.2},
            "output": {"suggestions": False},
        },
        {
            "model": {"preset": "deepseek-v3"},
            "weights": {"precision": "fp8"},
            "batch_size": 32,
            "prompt_tokens": 1024,
            "output_tokens": 1024,
            "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
            "serving": {"speculative": {"method": "mtp"}, "max_num_batched_tokens": 16384},
            "output": {"suggestions": False},
        },
        {  # a named draft model (issue 30 §4): its weights and KV on the target's devices
            "model": {"preset": "llama-3.1-70b"},
            "weights": {"precision": "bf16"},
            "prompt_tokens": 1000,
            "output_tokens": 1000,
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
            "serving": {
                "speculative": {
                    "method": "draft_model",
                    "acceptance_rate": 0.7,
                    "draft_model": {"preset": "llama-3.2-1b"},
                }
            },
            "output": {"suggestions": False},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "batch_size": 16,
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb"},
            "serving": {"scheduler": "static"},
            "output": {"suggestions": False},
        },
        # disaggregated prefill/decode (issue 30 §3): at a rate, and a concurrency with pools on two parts
        {
            "model": {"preset": "llama-3-70b"},
            "weights": {"precision": "fp8"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4},
            "prompt_tokens": 6000,
            "output_tokens": 300,
            "workload": {"requests_per_second": 4.0},
            "serving": {
                "disaggregation": {
                    "prefill": {"tensor_parallel": 4, "replicas": 3},
                    "decode": {"tensor_parallel": 8, "replicas": 1},
                }
            },
            "targets": {"time_to_first_token_s": 1.5, "time_per_output_token_s": 0.025},
            "output": {"details": True, "suggestions": False},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
            "batch_size": 128,
            "prompt_tokens": 4096,
            "serving": {
                "disaggregation": {
                    "prefill": {"accelerator": "nvidia-b200", "replicas": 1},
                    "decode": {"tensor_parallel": 2, "replicas": 2},
                    "layerwise_kv_transfer": True,
                }
            },
            "output": {"suggestions": False},
        },
    ]
    out += [("inference", e) for e in extras]
    errors: list[dict[str, Any]] = [
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "tensorrt-llm",
            "prompt_tokens": 6000,
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
            "serving": {"max_num_batched_tokens": 4096, "speculative": {"method": "draft_model"}},
            "workload": {"prefix_hit_rate": 1.5},
            "slo": {"percentile": "p75"},
        },
        {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
            "serving": {
                "disaggregation": {
                    "prefill": {"accelerator": "nvidia-h900", "tensor_parallel": 3, "replicas": 1},
                    "decode": {"tensor_parallel": 5, "replicas": 1},
                }
            },
        },
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-h900"}},
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4", "count": 0}},
        {
            "model": {"preset": "llama-3-8b"},
            "weights": {"format": "awq"},
            "engine": "llama.cpp",
            "hardware": {"accelerator": "nvidia-l4"},
        },
        {"model": {"preset": "llama-3.1-405b"}, "hardware": {"accelerator": "nvidia-t4", "count": 1}},
        {
            "model": {"preset": "resnet-50"},
            "weights": {"format": "awq"},
            "hardware": {"accelerator": "nvidia-l4"},
        },
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}, "prompt_tokens": 0},
        {"model": {"preset": "llama-3-8b"}},
        {
            "model": {"preset": "llama-3-8b"},
            "weights": {"precision": "fp8"},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb"},
        },
    ]
    out += [("inference", e) for e in errors]
    return out  # 108 + 24 + 13 + 8 = 153


def corpus() -> list[Request]:
    return (
        _training_layouts()
        + _training_knobs()
        + _training_models_and_costs()
        + _training_errors()
        + _inference()
    )
