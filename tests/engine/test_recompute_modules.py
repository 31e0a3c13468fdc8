"""training.recompute_modules: Megatron-Core's selective recomputation of named modules (model/recompute.py).

Megatron-Core TransformerConfig.recompute_modules (megatron/core/transformer/transformer_config.py @core_v0.15.0):
default ["core_attn"], read only under recompute_granularity "selective"."""

from __future__ import annotations

import numpy as np
import pytest
from scalecost.engine import InvalidRequest
from scalecost.engine.architecture import matmul_parameters_per_token
from scalecost.engine.models import PRESETS
from scalecost.engine.parallelism import Parallelism
from scalecost.engine.training.estimate import estimate_training
from scalecost.engine.training.model.activations import (
    UNFUSED_SCORE_BYTES,
    layer_activation_bytes,
    unfused_kv_expansion,
)
from scalecost.engine.training.model.arrays import Layouts, evaluate_layouts
from scalecost.engine.training.model.evaluate import evaluate
from scalecost.engine.training.model.flops import recompute_gemm_factor
from scalecost.engine.training.model.recompute import (
    RECOMPUTE_MODULES,
    recomputed_elementwise_bytes,
    recomputed_matmul_share,
)
from scalecost.engine.training.request import build_plan

GPT_OSS = PRESETS["gpt-oss-120b"].shape  # h 2880, 4 of 128 experts of width 2880, no shared expert, SwiGLU
LLAMA = PRESETS["llama-3-8b"].shape  # dense: h 4096, f 14336
DSV3 = PRESETS["deepseek-v3"].shape  # MLA, 1 shared expert, 3 dense layers
assert GPT_OSS is not None and LLAMA is not None and DSV3 is not None
S, B = 4096, 1


def _request(preset: str = "gpt-oss-120b", modules: list[str] | None = None, **training: object) -> dict:
    """The NeMo 25.11 GPT-OSS-120B H100 layout (PP4 EP8 on 64 GPUs), micro-batch 1."""
    run: dict = {
        "tokens": 1e12,
        "sequence_length": S,
        "global_batch_size": 512,
        "micro_batch_size": 1,
        **training,
    }
    if modules is not None:
        run["recompute_modules"] = modules
    return {
        "model": {"preset": preset},
        "training": run,
        "hardware": {
            "accelerator": "nvidia-h100-sxm-80gb",
            "count": 64,
            "parallelism": {"data": 16, "pipeline": 4, "expert": 8, "zero_stage": 1},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def _kept(shape, modules: tuple[str, ...], par: Parallelism | None = None, flash: bool = True) -> float:
    stored, _ = layer_activation_bytes(shape, par or Parallelism(), "selective", flash, S, B, modules=modules)
    return stored


def test_default_core_attn_is_the_engines_selective(catalog) -> None:
    default = estimate_training(_request(), catalog)
    named = estimate_training(_request(modules=["core_attn"]), catalog)
    assert named == default
    assert default["assumptions"]["recompute_modules"] == ["core_attn"]


def test_layernorm_and_moe_act_free_the_pre_mlp_norm_output_and_the_fc2_input_by_hand() -> None:
    # per token: pre-MLP norm output 2·h (its own module in an MoE layer) + FC2 input 2·k·f_e = 2·2880 + 2·4·2880
    freed = _kept(GPT_OSS, ("core_attn",)) - _kept(GPT_OSS, ("core_attn", "layernorm", "moe_act"))
    assert freed == pytest.approx(S * B * (2 * 2880 + 2 * 4 * 2880))
    only_act = _kept(GPT_OSS, ("core_attn",)) - _kept(GPT_OSS, ("moe_act",))
    assert only_act == pytest.approx(S * B * 2 * 4 * 2880)


def test_moe_frees_every_experts_fc1_outputs_and_fc2_input() -> None:
    # gate + up outputs 4·k·f_e and the FC2 input 2·k·f_e per token; the layer's input stays
    freed = _kept(GPT_OSS, ("core_attn",)) - _kept(GPT_OSS, ("core_attn", "moe"))
    assert freed == pytest.approx(S * B * 6 * 4 * 2880)
    # moe_act's FC2 input is part of it: listing both frees no more
    assert _kept(GPT_OSS, ("moe", "moe_act")) == pytest.approx(_kept(GPT_OSS, ("moe",)))


def test_mlp_frees_a_dense_layers_mlp_and_nothing_in_an_moe_layer() -> None:
    # FC1 input 2h (inside the fused norm-linear), gate + up outputs 4f, FC2 input 2f
    freed = _kept(LLAMA, ("core_attn",)) - _kept(LLAMA, ("core_attn", "mlp"))
    assert freed == pytest.approx(S * B * (2 * 4096 + 6 * 14336))
    assert _kept(GPT_OSS, ("core_attn", "mlp")) == pytest.approx(_kept(GPT_OSS, ("core_attn",)))


def test_mla_up_proj_frees_the_attention_inputs_and_layernorm_the_mla_input_norm() -> None:
    h, d = DSV3.hidden_size, DSV3.head_dim
    qkv = 2 * h + 4 * DSV3.kv_heads * d  # activations._layer_terms' Q and K, V terms, per token
    assert _kept(DSV3, ("core_attn",)) - _kept(DSV3, ("mla_up_proj",)) == pytest.approx(S * B * qkv)
    # MLA's input norm and the MoE pre-MLP norm are their own modules: two norm outputs of 2·h
    assert _kept(DSV3, ("core_attn",)) - _kept(DSV3, ("layernorm",)) == pytest.approx(S * B * 4 * h)


def test_sequence_parallelism_splits_the_freed_norm_output_and_tensor_parallelism_the_rest() -> None:
    tp = Parallelism(tensor=4, sequence_parallel=True)
    freed = _kept(GPT_OSS, ("core_attn",), tp) - _kept(GPT_OSS, ("layernorm", "moe_act"), tp)
    assert freed == pytest.approx(S * B * (2 * 2880 + 2 * 4 * 2880) / 4)
    no_sp = Parallelism(tensor=4)
    freed = _kept(GPT_OSS, ("core_attn",), no_sp) - _kept(GPT_OSS, ("layernorm", "moe_act"), no_sp)
    assert freed == pytest.approx(S * B * (2 * 2880 + 2 * 4 * 2880 / 4))


def test_without_core_attn_and_without_a_fused_kernel_the_scores_stay() -> None:
    # the softmax output (no dropout) and K, V repeated for every query head (grouped-query attention)
    scores = (
        UNFUSED_SCORE_BYTES * LLAMA.attention_heads * S * S * B
        + unfused_kv_expansion(LLAMA) * S * B * LLAMA.hidden_size
    )
    assert _kept(LLAMA, ("mlp",), flash=False) - _kept(
        LLAMA, ("core_attn", "mlp"), flash=False
    ) == pytest.approx(scores)
    assert _kept(LLAMA, ("mlp",), flash=True) == pytest.approx(_kept(LLAMA, ("core_attn", "mlp"), flash=True))


def test_the_rebuilt_layer_is_what_the_modules_freed() -> None:
    _, working = layer_activation_bytes(GPT_OSS, Parallelism(), "selective", True, S, B, modules=("moe_act",))
    assert working == pytest.approx(S * B * 2 * 4 * 2880)
    _, default = layer_activation_bytes(GPT_OSS, Parallelism(), "selective", True, S, B)
    assert default == 0.0


def test_recomputed_matmuls_add_their_forward_flops() -> None:
    h, f_e = 2880, 2880
    moe = GPT_OSS.layers * (4 * 3 * h * f_e + h * 128) / matmul_parameters_per_token(GPT_OSS)
    assert recomputed_matmul_share(GPT_OSS, ("moe",)) == pytest.approx(moe)
    dense = LLAMA.layers * 3 * 4096 * 14336 / matmul_parameters_per_token(LLAMA)
    assert recomputed_matmul_share(LLAMA, ("core_attn", "mlp")) == pytest.approx(dense)
    # norms and activation functions are element-wise work, no matmul
    assert recomputed_matmul_share(GPT_OSS, ("layernorm", "moe_act", "core_attn")) == 0.0
    # a norm reads and writes h values, a SwiGLU reads 2·k·f_e and writes k·f_e (2 bytes each)
    assert recomputed_elementwise_bytes(GPT_OSS, ("layernorm", "moe_act")) == pytest.approx(
        4 * h + 6 * 4 * f_e
    )


def test_more_recomputation_never_raises_memory_and_never_shortens_the_step(catalog) -> None:
    base = evaluate(build_plan(_request(), catalog))
    for modules in (["layernorm"], ["moe_act"], ["layernorm", "moe_act"], ["moe"], ["core_attn", "moe"]):
        plan = build_plan(_request(modules=modules), catalog)
        ev = evaluate(plan)
        assert ev.memory.activations < base.memory.activations, modules
        assert ev.step.total_s >= base.step.total_s, modules
    moe = build_plan(_request(modules=["moe"]), catalog)
    assert recompute_gemm_factor(moe) == pytest.approx(1 + recomputed_matmul_share(GPT_OSS, ("moe",)) / 3)


def test_vector_model_agrees_with_the_single_estimate_under_named_modules(catalog) -> None:
    for preset, modules in (
        ("gpt-oss-120b", ["layernorm", "moe_act"]),
        ("gpt-oss-120b", ["moe"]),
        ("deepseek-v3", ["mla_up_proj", "mlp"]),
        ("llama-3-8b", ["mlp"]),
    ):
        request = _request(preset, modules, flash_attention=preset != "llama-3-8b")
        if preset == "llama-3-8b":
            request["hardware"]["parallelism"] = {"data": 8, "tensor": 8, "sequence_parallel": True}
        plan = build_plan(request, catalog)
        par = plan.par
        values = (par.data, par.tensor, par.pipeline, par.context, par.expert, par.zero_stage)
        columns = [np.array([v], dtype=np.int64) for v in values]
        layout = Layouts(
            *columns,
            np.array([par.sequence_parallel]),
            np.array([par.virtual_pipeline], dtype=np.int64),
            np.array([plan.micro_batch], dtype=np.int64),
            np.array([par.pipeline_schedule == "zero_bubble"]),
        )
        got = evaluate_layouts(plan, layout, None)
        ev = evaluate(plan)
        assert float(got.memory_bytes[0]) == pytest.approx(ev.memory.total, rel=1e-9), preset
        assert float(got.step_s[0]) == pytest.approx(ev.step.total_s, rel=1e-9), preset


@pytest.mark.parametrize(
    ("training", "preset", "words"),
    [
        ({"recompute_modules": ["moe_act"], "activation_recomputation": "full"}, "gpt-oss-120b", "selective"),
        ({"recompute_modules": ["attention"]}, "gpt-oss-120b", "core_attn, moe_act"),
        ({"recompute_modules": "moe_act"}, "gpt-oss-120b", "list"),
        ({"recompute_modules": ["moe_act"]}, "llama-3-8b", "moe_act"),
        ({"recompute_modules": ["shared_experts"]}, "gpt-oss-120b", "shared_experts"),
        ({"recompute_modules": ["mla_up_proj"]}, "gpt-oss-120b", "mla_up_proj"),
    ],
)
def test_invalid_modules_name_the_field_and_the_allowed_values(catalog, training, preset, words) -> None:
    request = _request(preset)
    request["training"].update(training)
    if preset == "llama-3-8b":
        request["hardware"]["parallelism"] = {"data": 64}
    with pytest.raises(InvalidRequest) as err:
        build_plan(request, catalog)
    assert set(err.value.errors) == {"training.recompute_modules"}
    assert words in " ".join(err.value.errors["training.recompute_modules"])


def test_every_module_name_is_megatron_cores() -> None:
    # transformer_config.py @core_v0.15.0 allowed_modules, less the GatedDeltaNet / hyper-connection ones
    assert set(RECOMPUTE_MODULES) == {
        "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"
    }  # fmt: skip


def test_mlp_on_an_moe_model_with_dense_layers_costs_what_it_frees_nothing() -> None:
    # DeepSeek-V3's first three layers are dense, but the memory model counts every layer as an MoE layer: "mlp"
    # must then neither free memory (above) nor add recompute (review finding: it charged the dense MLPs' recompute)
    assert DSV3.dense_layers > 0
    assert recomputed_matmul_share(DSV3, ("core_attn", "mlp")) == 0.0
    assert recomputed_elementwise_bytes(DSV3, ("core_attn", "mlp")) == 0.0
    assert _kept(DSV3, ("core_attn", "mlp")) == pytest.approx(_kept(DSV3, ("core_attn",)))
