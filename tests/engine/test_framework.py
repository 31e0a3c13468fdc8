"""training.framework / training.torch_compile: the stack's attention kernel and element-wise fusion (framework.py)."""

from __future__ import annotations

import copy

import pytest
from scalecost.engine import InvalidRequest, estimate_training
from scalecost.engine.training.model.framework import (
    EAGER_ELEMENTWISE_FACTOR,
    FA2_ON_HOPPER_RATIO,
    attention_factor,
    attention_kernel,
    elementwise_factor,
)

from .conftest import load_catalog
from .public_points import throughput_request, throughput_rows

CATALOG = load_catalog()


def _body(accelerator: str, seq: int = 8192, **training) -> dict:
    return {
        "model": {"preset": "llama-3.1-8b"},
        "training": {
            "tokens": 1e10,
            "sequence_length": seq,
            "global_batch_size": 16,
            "micro_batch_size": 1,
            "precision": "bf16",
            **training,
        },
        "hardware": {"accelerator": accelerator, "count": 8, "parallelism": {"data": 8, "zero_stage": 3}},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def _tokens_per_s(body: dict) -> float:
    return estimate_training(body, CATALOG)["time"]["tokens_per_second"]


def _zero(body: dict, stage: int) -> dict:
    body["hardware"]["parallelism"]["zero_stage"] = stage
    return body


def test_default_is_megatron_and_moves_nothing():
    base = estimate_training(_zero(_body("nvidia-h100-sxm-80gb"), 1), CATALOG)
    explicit = estimate_training(_zero(_body("nvidia-h100-sxm-80gb", framework="megatron"), 1), CATALOG)
    assert base["time"]["seconds"] == explicit["time"]["seconds"]
    assert base["assumptions"]["framework"] == "megatron"
    assert base["assumptions"]["framework_source"] == "default"
    assert explicit["assumptions"]["framework_source"] == "given"
    assert base["assumptions"]["attention_kernel"] == "fused"
    assert base["assumptions"]["torch_compile"] is False


def test_a_zero3_layout_naming_no_stack_is_a_pytorch_fsdp_stack():
    # ZeRO-3 is what PyTorch FSDP stacks run (Megatron-Core's data parallelism is its distributed optimizer)
    inferred = estimate_training(_body("nvidia-h100-sxm-80gb"), CATALOG)
    assert inferred["assumptions"]["framework"] == "fsdp"
    assert inferred["assumptions"]["framework_source"].startswith("inferred")
    assert inferred["assumptions"]["attention_kernel"] == "flash2"  # FlashAttention-2 on Hopper
    named = estimate_training(_body("nvidia-h100-sxm-80gb", framework="fsdp"), CATALOG)
    assert named["time"]["seconds"] == inferred["time"]["seconds"]
    megatron = estimate_training(_body("nvidia-h100-sxm-80gb", framework="megatron"), CATALOG)
    assert megatron["time"]["seconds"] < inferred["time"]["seconds"]  # a name given wins
    # cuDNN attention on Blackwell, as torchtitan; FlashAttention-2 is everyone's kernel on Ampere
    b200 = estimate_training(_body("nvidia-b200"), CATALOG)["assumptions"]
    assert (b200["framework"], b200["attention_kernel"]) == ("fsdp", "fused")
    a100 = estimate_training(_body("nvidia-a100-sxm-80gb"), CATALOG)
    a100_megatron = estimate_training(_body("nvidia-a100-sxm-80gb", framework="megatron"), CATALOG)
    assert a100["time"]["seconds"] == a100_megatron["time"]["seconds"]
    # XLA's kernels on a TPU: nothing to infer
    tpu = estimate_training(_body("google-tpu-v5p"), CATALOG)["assumptions"]
    assert (tpu["framework"], tpu["framework_source"]) == ("megatron", "default")


def test_flash_attention_2_on_hopper_is_the_measured_half_of_cudnn():
    assert FA2_ON_HOPPER_RATIO == pytest.approx(0.522, abs=0.001)  # 329.5 / 631.3 TFLOP/s, pytorch#142132
    h100, a100, b200 = (
        CATALOG.accelerators[i] for i in ("nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb", "nvidia-b200")
    )
    assert attention_kernel("torchtitan", h100) == "flash2"
    assert attention_factor("torchtitan", h100) == FA2_ON_HOPPER_RATIO
    assert attention_kernel("torchtitan", b200) == "fused"  # cuDNN on Blackwell (torchtitan#1196)
    assert attention_factor("llm-foundry", b200) == FA2_ON_HOPPER_RATIO
    for framework in ("megatron", "torchtitan", "llm-foundry", "pytorch"):
        assert attention_factor(framework, a100) == 1.0  # Ampere: FlashAttention-2 is the fast kernel


def test_long_context_on_hopper_slows_with_flash_attention_2_and_ampere_does_not():
    hopper = [
        _tokens_per_s(_body("nvidia-h100-sxm-80gb", seq, framework="llm-foundry")) for seq in (2048, 32768)
    ]
    fused = [_tokens_per_s(_body("nvidia-h100-sxm-80gb", seq, framework="megatron")) for seq in (2048, 32768)]
    slowdown = [f / h for f, h in zip(fused, hopper, strict=True)]
    assert 1.0 < slowdown[0] < slowdown[1]  # the attention share grows with the sequence
    ampere = _tokens_per_s(_body("nvidia-a100-sxm-80gb", 8192, framework="llm-foundry"))
    assert ampere == _tokens_per_s(_body("nvidia-a100-sxm-80gb", 8192, framework="megatron"))


def test_eager_stacks_pay_unfused_element_wise_work_unless_compiled():
    assert elementwise_factor("torchtitan", False) == EAGER_ELEMENTWISE_FACTOR
    assert elementwise_factor("torchtitan", True) == 1.0
    assert elementwise_factor("megatron", False) == 1.0
    eager = _tokens_per_s(_body("nvidia-a100-sxm-80gb", framework="torchtitan"))
    compiled = _tokens_per_s(_body("nvidia-a100-sxm-80gb", framework="torchtitan", torch_compile=True))
    assert eager < compiled == _tokens_per_s(_body("nvidia-a100-sxm-80gb", framework="megatron"))


def test_torchtitan_eager_vs_compile_gap_is_of_the_published_size():
    """torchtitan's own table: compile lifts Llama 3.1 8B on 8 H100s from 5,762 to 6,667 tokens/s (+15.7 %)."""
    rows = {r["label"]: r for r in throughput_rows()}
    eager = _tokens_per_s(throughput_request(rows["torchtitan Llama3.1-8B FSDP 8xH100 bf16 eager"]))
    compiled = _tokens_per_s(throughput_request(rows["torchtitan Llama3.1-8B FSDP 8xH100 bf16 compile"]))
    gain = compiled / eager - 1.0
    print(f"compile gain: predicted {gain:+.1%}, published {6667 / 5762 - 1:+.1%}")
    assert 0.05 < gain < 0.30


@pytest.mark.parametrize(("field", "value"), [("framework", "jax"), ("torch_compile", "yes")])
def test_bad_values_are_422_naming_the_field(field, value):
    body = copy.deepcopy(_body("nvidia-h100-sxm-80gb"))
    body["training"][field] = value
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, CATALOG)
    assert f"training.{field}" in err.value.errors
    if field == "framework":
        assert "torchtitan" in err.value.errors["training.framework"][0]


def test_eager_loss_holds_three_fp32_copies_of_the_logits():
    """torchtitan's cross_entropy(pred.float()): 12 B per logit at the loss's backward, Megatron's fused loss 2 + 4."""
    from scalecost.engine.training.model.framework import loss_bytes_per_logit

    assert loss_bytes_per_logit("torchtitan", 2.0) == 12.0
    assert loss_bytes_per_logit("megatron", 2.0) == 6.0
    fused = estimate_training(_body("nvidia-h100-sxm-80gb"), CATALOG)["memory"]["breakdown"]["activations"]
    eager = estimate_training(_body("nvidia-h100-sxm-80gb", framework="torchtitan"), CATALOG)["memory"]
    logits = 8192 * 1 * 128256  # one sequence of 8,192 tokens × Llama 3's vocabulary, no tensor parallelism
    assert eager["breakdown"]["activations"] - fused == pytest.approx(6.0 * logits, rel=1e-9)


def test_torchtitan_memory_near_its_published_peaks():
    """torchtitan's own table: Llama 3.1 8B, local batch 2 × 8,192, op-level SAC, 82.4 GiB reserved on 8 H100s
    (77.0 compiled) and 67.0 GiB on 128; the estimate must fit and lie within 15 % of those."""
    rows = {r["label"]: r for r in throughput_rows()}
    for label, published in (
        ("torchtitan Llama3.1-8B FSDP 8xH100 bf16 eager", 82.4),
        ("torchtitan Llama3.1-8B FSDP 128xH100 bf16 eager", 67.0),
    ):
        memory = estimate_training(throughput_request(rows[label]), CATALOG)["memory"]
        predicted = memory["per_device_bytes"] / 2**30
        print(f"{label}: {predicted:.1f} GiB predicted, {published} GiB published")
        assert memory["fits"] and abs(predicted / published - 1.0) < 0.15


def test_the_inferred_stack_follows_the_part_in_the_catalog_scan():
    """A ZeRO-3 request naming no stack is megatron on a TPU and fsdp on a GPU: evaluating the TPU plan's basis on
    a GPU (the advice's cheaper-part scan) gives what a request for that GPU gives."""
    from scalecost.engine.training.model.evaluate import basis, evaluate
    from scalecost.engine.training.request import build_plan

    body = _body("google-tpu-v5p")
    body["hardware"]["count"] = 64
    body["hardware"]["parallelism"] = {"zero_stage": 3}
    body["training"]["global_batch_size"] = 64
    body["training"]["activation_recomputation"] = (
        "selective"  # the default follows the part too (full on a TPU)
    )
    tpu = build_plan(body, CATALOG)
    assert (tpu.framework, tpu.framework_source) == ("megatron", "default")
    for accelerator in ("nvidia-h100-sxm-80gb", "nvidia-b200"):
        on = tpu.on(CATALOG.accelerators[accelerator], 2.0)
        assert on.framework == "fsdp"
        direct = build_plan({**body, "hardware": {**body["hardware"], "accelerator": accelerator}}, CATALOG)
        assert evaluate(on, basis(tpu)).seconds == pytest.approx(evaluate(direct).seconds, rel=1e-12)


def test_a_tpu_request_without_recomputation_takes_the_least_maxtext_remat_that_fits():
    """MaxText's remat policies run from 'minimal' (the engine's "dots") to 'full', its default; its v5p
    configurations use minimal where it fits and full beyond. A request that names none gets the first that fits
    (said in the notes and assumptions.activation_recomputation_source); Megatron's selective stays the GPU default,
    and a named module list still means selective."""
    light = estimate_training(_body("google-tpu-v5p"), CATALOG)
    assert light["assumptions"]["activation_recomputation"] == "dots"
    assert light["assumptions"]["activation_recomputation_source"].startswith("chosen")
    assert any("minimal" in n for n in light["assumptions"]["notes"])
    dots = _body("google-tpu-v5p", activation_recomputation="dots")
    assert estimate_training(dots, CATALOG)["time"]["seconds"] == light["time"]["seconds"]
    heavy = _body("google-tpu-v5p", seq=32768)
    # the ladder alone, without a host offload (test_offload.py weighs dots with an offload against full)
    heavy["training"].update(micro_batch_size=2, global_batch_size=16, activation_offload_layers=0)
    answer = estimate_training(heavy, CATALOG)
    tried = estimate_training(
        {**heavy, "training": {**heavy["training"], "activation_recomputation": "dots"}}, CATALOG
    )
    assert not tried["memory"]["fits"]
    assert answer["assumptions"]["activation_recomputation"] == "full" and answer["memory"]["fits"]
    assert answer["assumptions"]["activation_recomputation_source"] == "default"
    assert any("remat_policy 'full'" in n for n in answer["assumptions"]["notes"])
    gpu = estimate_training(_body("nvidia-h100-sxm-80gb"), CATALOG)
    assert gpu["assumptions"]["activation_recomputation"] == "selective"
    named = _body("google-tpu-v5p")
    named["training"]["recompute_modules"] = ["core_attn"]
    assert estimate_training(named, CATALOG)["assumptions"]["activation_recomputation"] == "selective"


def test_a_model_without_a_transformer_shape_keeps_selective_on_a_tpu():
    """MaxText's remat default is a transformer stack's: a CNN on a TPU keeps the engine's selective default (it once
    took full recomputation, and the cheaper-part advice quoted TPUs ~30 % low for CNNs)."""
    body = {
        "model": {"architecture": "cnn", "parameters": 2.5e7, "flops_per_sample": 4e9},
        "training": {"samples": 1.28e6, "epochs": 2, "global_batch_size": 1024},
        "hardware": {"accelerator": "google-tpu-v5p", "count": 8},
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }
    answer = estimate_training(body, CATALOG)
    assert answer["assumptions"]["activation_recomputation"] == "selective"
    assert not any("MaxText" in n for n in answer["assumptions"]["notes"])
