"""Parameter counts from shapes against published totals; model JSON forms (models.py)."""

from __future__ import annotations

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.models import PRESETS, list_presets, resolve_model, transformer_parameters
from scalecost.engine.presets_trained import TRAINED_PRESETS

# (preset, published total, published active or None, source of the published figure)
PUBLISHED = [
    ("llama-2-7b", 6.74e9, None, "Llama 2 model card / HF safetensors 6,738,415,616"),
    ("llama-2-13b", 13.0e9, None, "HF safetensors 13,015,864,320"),
    ("llama-2-70b", 68.98e9, None, "HF safetensors 68,976,648,192"),
    ("llama-3-8b", 8.03e9, None, "HF Meta-Llama-3-8B model page 8.03B params"),
    ("llama-3-70b", 70.55e9, None, "HF Meta-Llama-3-70B model page 70.6B params"),
    ("llama-3.1-405b", 405.9e9, None, "HF Llama-3.1-405B model page 406B params"),
    ("llama-3.1-8b", 8.03e9, None, "HF Llama-3.1-8B model page 8.03B params"),
    ("llama-3.1-70b", 70.55e9, None, "HF Llama-3.1-70B model page 70.6B params"),
    ("qwen2.5-7b", 7.61e9, None, "Qwen2.5 model card: 7.61B parameters"),
    ("qwen2.5-72b", 72.7e9, None, "Qwen2.5 model card: 72.7B parameters"),
    ("mistral-7b", 7.24e9, None, "HF Mistral-7B-v0.1 model page 7.24B params"),
    (
        "mixtral-8x7b",
        46.7e9,
        12.9e9,
        "Jiang et al. 2024 'Mixtral of Experts' §2: 47B / 13B; Mistral blog 46.7B / 12.9B",
    ),
    ("qwen3-8b", 8.19e9, None, "Qwen3-8B model card: 8.2B parameters"),
    ("qwen3-32b", 32.8e9, None, "Qwen3-32B model card: 32.8B parameters"),
    ("qwen3-30b-a3b", 30.5e9, None, "Qwen3-30B-A3B model card: 30.5B total (3.3B activated: see below)"),
    ("qwen3-235b-a22b", 235e9, 22e9, "Qwen3-235B-A22B model card: 235B total, 22B activated"),
    ("gemma-2-9b", 9.24e9, None, "HF google/gemma-2-9b model page 9.24B params"),
    ("gemma-2-27b", 27.2e9, None, "HF google/gemma-2-27b model page 27.2B params"),
    ("gemma-3-12b", 11.77e9, None, "Gemma 3 report Table 1: 10.76B non-embedding + 1.01B embedding"),
    ("gemma-3-27b", 27.0e9, None, "Gemma 3 report Table 1: 25.6B non-embedding + 1.4B embedding"),
    ("phi-4", 14.7e9, None, "HF microsoft/phi-4 model page 14.7B params"),
    ("mixtral-8x22b", 141e9, 39e9, "Mistral AI Mixtral 8x22B announcement: 141B total, 39B active"),
    ("deepseek-r1", 671e9, None, "DeepSeek-R1 model card: 671B total (V3 shape)"),
    ("gpt-oss-120b", 116.8e9, None, "gpt-oss model card Table 1: 116.83B total"),
    ("gpt-oss-20b", 20.9e9, None, "gpt-oss model card Table 1: 20.91B total"),
    ("llama-4-maverick", 400e9, None, "Llama 4 model card: 400B total (17B active: see below)"),
    ("gpt-3-175b", 175e9, None, "Brown et al. 2020 Table 2.1"),
    ("gpt-2-1.5b", 1.56e9, None, "HF gpt2-xl 1,557,611,200 ('1.5B' in Radford et al. 2019)"),
    ("bert-large", 335e6, None, "HF bert-large-uncased BertModel 335M (Devlin et al. 2019: 340M)"),
    # presets_trained.py
    ("llama-1-7b", 6.7e9, None, "Touvron et al. 2023 (LLaMA) Table 2: 6.7B"),
    ("llama-1-13b", 13.0e9, None, "Touvron et al. 2023 (LLaMA) Table 2: 13.0B"),
    ("llama-1-33b", 32.5e9, None, "Touvron et al. 2023 (LLaMA) Table 2: 32.5B"),
    ("llama-1-65b", 65.2e9, None, "Touvron et al. 2023 (LLaMA) Table 2: 65.2B"),
    ("llama-3.2-1b", 1.23e9, None, "Llama 3.2 model card: 1.23B"),
    ("llama-3.2-3b", 3.21e9, None, "Llama 3.2 model card: 3.21B"),
    ("falcon-180b", 180e9, None, "Falcon-180B model card, Almazrouei et al. 2023: 180B"),
    ("opt-175b", 175e9, None, "Zhang et al. 2022 (OPT) Table 1: 175B"),
    ("bloom-176b", 176_247_271_424, None, "bigscience/bloom model card @ae814bf: 176,247,271,424"),
    ("mpt-7b", 6.7e9, None, "mosaicml/mpt-7b model card: n_parameters 6.7B"),
    ("mpt-30b", 29.95e9, None, "mosaicml/mpt-30b model card: n_parameters 29.95B"),
    ("pythia-1b", 1_011_781_632, None, "Biderman et al. 2023 (Pythia): 1,011,781,632"),
    ("pythia-6.9b", 6_857_302_016, None, "Biderman et al. 2023 (Pythia): 6,857,302,016"),
    ("pythia-12b", 11_846_072_320, None, "Biderman et al. 2023 (Pythia): 11,846,072,320"),
    ("gpt-neox-20b", 20_554_567_680, None, "Black et al. 2022 (GPT-NeoX-20B): 20,554,567,680"),
    ("nemotron-4-15b", 15.7e9, None, "Parmar et al. 2024: 3.2B embedding + 12.5B non-embedding"),
    ("nemotron-4-340b", 341.0e9, None, "Nemotron-4 340B report: 9.4B embedding + 331.6B non-embedding"),
    ("qwen2.5-14b", 14.7e9, None, "Qwen2.5 model card: 14.7B parameters"),
    ("qwen2.5-32b", 32.5e9, None, "Qwen2.5 model card: 32.5B parameters"),
    ("qwen3-4b", 4.0e9, None, "Qwen3-4B model card: 4.0B parameters"),
    ("qwen3-14b", 14.8e9, None, "Qwen3-14B model card: 14.8B parameters"),
    ("tinyllama-1.1b", 1.1e9, None, "TinyLlama README: 1.1B"),
    ("smollm2-1.7b", 1.7e9, None, "SmolLM2 model card: 1.7B"),
    ("phi-3-mini", 3.8e9, None, "Abdin et al. 2024 (Phi-3): phi-3-mini 3.8B"),
    ("deepseek-v2", 236e9, None, "DeepSeek-V2 report: 236B total (21B activated: see below)"),
    ("dbrx", 132e9, None, "Databricks DBRX announcement: 132B total (36B active: see below)"),
]


@pytest.mark.parametrize(("preset", "total", "active", "source"), PUBLISHED)
def test_preset_parameter_counts_match_published_totals(
    preset: str, total: float, active: float | None, source: str
) -> None:
    spec = PRESETS[preset]
    assert spec.total_parameters == pytest.approx(total, rel=0.01), source
    if active is not None:
        assert spec.active_parameters == pytest.approx(active, rel=0.01), source


def test_llama_2_7b_is_exact() -> None:
    # HF safetensors metadata of meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters
    assert transformer_parameters(PRESETS["llama-2-7b"].shape) == (6_738_415_616, 6_738_415_616)


def test_deepseek_v3_mla_moe_counts() -> None:
    # DeepSeek-V3 Technical Report (2024), abstract: "671B total parameters with 37B activated for each token".
    spec = PRESETS["deepseek-v3"]
    assert spec.total_parameters == pytest.approx(671e9, rel=0.005)
    # Exact MLA + MoE count gives 37.55B active incl. both embedding matrices; the report rounds to "37B"
    # (36.6B without the input embedding lookup). 1.5% tolerance documents that rounding, not an approximation.
    assert spec.active_parameters == pytest.approx(37e9, rel=0.015)


@pytest.mark.parametrize(
    ("preset", "field", "card"),
    [
        ("qwen3-30b-a3b", "active_parameters", 3.3e9),  # model card "3.3B activated"; exact 3.35B
        ("llama-4-scout", "active_parameters", 17e9),  # Llama 4 model card "17B active"; exact 17.17B
        ("llama-4-maverick", "active_parameters", 17e9),  # "17B active"; exact 17.18B
        ("llama-4-scout", "total_parameters", 109e9),  # "109B total" includes the vision encoder; text 107.8B
        ("deepseek-v2", "active_parameters", 21e9),  # DeepSeek-V2 report "21B activated"; exact 21.38B
        ("dbrx", "active_parameters", 36e9),  # DBRX announcement "36B active"; exact 36.47B
    ],
)
def test_counts_the_cards_round(preset: str, field: str, card: float) -> None:
    # The cards give these to two significant figures; 2% covers that rounding, not an approximation.
    assert getattr(PRESETS[preset], field) == pytest.approx(card, rel=0.02)


def test_gpt_oss_active_matches_the_model_card_without_the_embedding() -> None:
    # gpt-oss model card Table 1 counts active parameters without the 201088 × 2880 input embedding:
    # 3.61B (20b) and 5.13B (120b); the count here includes the lookup table, as for the other presets.
    for preset, card in (("gpt-oss-20b", 3.61e9), ("gpt-oss-120b", 5.13e9)):
        spec = PRESETS[preset]
        assert spec.active_parameters - 201088 * 2880 == pytest.approx(card, rel=0.01)


def test_trained_presets_are_appended_with_new_ids() -> None:
    # presets_trained.py adds to the built-in list: no id is reused (a reused id would keep the old entry's place)
    ids = [spec.name for spec in TRAINED_PRESETS]
    assert len(set(ids)) == len(ids)
    assert list(PRESETS)[-len(ids) :] == ids


def test_every_preset_has_a_source_and_listing() -> None:
    listed = {row["id"] for row in list_presets()}
    assert listed == set(PRESETS)
    for spec in PRESETS.values():
        assert spec.source
        if spec.architecture == "transformer":
            assert spec.shape is not None and spec.shape.head_dim > 0
        if spec.architecture in ("cnn", "vit"):
            assert spec.flops_per_sample
    # ResNet-50: 4.1 G multiply-adds per 224² image (He et al. 2016; torchvision) → ~8.2 GFLOPs forward
    assert PRESETS["resnet-50"].flops_per_sample == pytest.approx(8.2e9, rel=0.01)
    assert PRESETS["vit-l-16"].flops_per_sample == pytest.approx(123.1e9, rel=0.01)
    assert PRESETS["lstm-2x1500"].total_parameters == pytest.approx(66e6, rel=0.01)


def test_unknown_preset_lists_valid_ids() -> None:
    with pytest.raises(InvalidRequest) as err:
        resolve_model({"preset": "llama-9"})
    assert "model.preset" in err.value.errors
    assert "llama-2-7b" in err.value.errors["model.preset"][0]


def test_explicit_shape_matches_preset() -> None:
    spec = resolve_model(
        {
            "architecture": "transformer",
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "kv_heads": 8,
            "ffn_hidden_size": 14336,
            "ffn_type": "swiglu",
            "vocab_size": 128256,
            "max_context_tokens": 8192,
        }
    )
    assert spec.total_parameters == PRESETS["llama-3-8b"].total_parameters
    assert spec.default_sequence_length == 8192


def test_explicit_shape_reports_all_bad_fields() -> None:
    with pytest.raises(InvalidRequest) as err:
        resolve_model(
            {
                "architecture": "transformer",
                "layers": 2,
                "hidden_size": 100,
                "attention_heads": 3,
                "kv_heads": 2,
                "vocab_size": 10,
                "ffn_type": "relu",
                "experts": 4,
                "experts_per_token": 5,
            }
        )
    assert {"model.attention_heads", "model.kv_heads", "model.ffn_type", "model.experts_per_token"} <= set(
        err.value.errors
    )


@pytest.mark.parametrize("n", ["7B", 7e9, "350M", "70B"])
def test_parameter_count_form_infers_a_plausible_shape(n: object) -> None:
    spec = resolve_model({"architecture": "transformer", "parameters": n})
    assert spec.shape_inferred and spec.notes
    total, _ = transformer_parameters(spec.shape)
    assert total == pytest.approx(spec.total_parameters, rel=0.15)
    assert spec.shape.attention_heads % spec.shape.kv_heads == 0


def test_cnn_requires_flops_per_sample_and_bad_counts_are_rejected() -> None:
    with pytest.raises(InvalidRequest) as err:
        resolve_model({"architecture": "cnn", "parameters": "25.6M"})
    assert "model.flops_per_sample" in err.value.errors
    with pytest.raises(InvalidRequest) as err:
        resolve_model({"architecture": "mlp", "parameters": "lots"})
    assert "model.parameters" in err.value.errors
    spec = resolve_model({"architecture": "lstm", "parameters": "66M"})
    assert spec.shape is None and spec.total_parameters == 66e6


LLAMA2_7B_CONFIG = {  # meta-llama/Llama-2-7b-hf config.json
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "rms_norm_eps": 1e-5,
}
MIXTRAL_CONFIG = {  # mistralai/Mixtral-8x7B-v0.1 config.json
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "max_position_embeddings": 32768,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
}
GPT2_XL_CONFIG = {  # openai-community/gpt2-xl config.json
    "model_type": "gpt2",
    "n_layer": 48,
    "n_embd": 1600,
    "n_head": 25,
    "n_inner": None,
    "n_positions": 1024,
    "n_ctx": 1024,
    "vocab_size": 50257,
    "activation_function": "gelu_new",
}
PYTHIA_1B_CONFIG = {  # EleutherAI/pythia-1b config.json; HF model page: 1,011,781,632 parameters
    "model_type": "gpt_neox",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_attention_heads": 8,
    "num_hidden_layers": 16,
    "vocab_size": 50304,
    "hidden_act": "gelu",
    "rotary_pct": 0.25,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
}
QWEN2_7B_CONFIG = {  # Qwen/Qwen2-7B config.json; HF model page: 7.62B parameters
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "hidden_act": "silu",
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}


@pytest.mark.parametrize(
    ("config", "total", "active"),
    [
        (LLAMA2_7B_CONFIG, 6_738_415_616, 6_738_415_616),
        (MIXTRAL_CONFIG, 46.7e9, 12.9e9),
        (GPT2_XL_CONFIG, 1_557_611_200, 1_557_611_200),
        (PYTHIA_1B_CONFIG, 1_011_781_632, 1_011_781_632),
        (QWEN2_7B_CONFIG, 7.62e9, 7.62e9),
    ],
)
def test_hf_config_parsing_reproduces_published_counts(config: dict, total: float, active: float) -> None:
    spec = resolve_model({"hf_config": config})
    assert spec.total_parameters == pytest.approx(total, rel=0.005)
    assert spec.active_parameters == pytest.approx(active, rel=0.005)


def test_hf_config_missing_keys_are_named() -> None:
    with pytest.raises(InvalidRequest) as err:
        resolve_model({"hf_config": {"model_type": "llama", "hidden_size": 4096}})
    assert "model.hf_config.num_hidden_layers" in err.value.errors
    assert "model.hf_config.vocab_size" in err.value.errors


def test_kimi_k2_is_the_deepseek_v3_architecture_at_384_experts() -> None:
    # Kimi K2 model card: "1T" total, "32B" activated parameters (both rounded); the config is DeepSeek-V3's with 64
    # heads, 384 routed experts, one dense layer and a 163,840-token vocabulary
    spec = PRESETS["kimi-k2"]
    assert spec.total_parameters == pytest.approx(1.0e12, rel=0.03)
    assert spec.active_parameters == pytest.approx(32e9, rel=0.03)
    assert spec.shape is not None and spec.shape.kv_lora_rank == 512 and spec.shape.experts == 384
