"""Built-in model presets; every shape is copied from the model's config.json or paper (see `source`). Their notes
are marked N_ and translated where an answer shows them (`source` strings stay as written)."""

from __future__ import annotations

from .architecture import ModelSpec, TransformerShape, transformer_parameters
from .i18n import N_


def _transformer(
    name: str, shape: TransformerShape, seq: int, source: str, notes: tuple[str, ...] = ()
) -> ModelSpec:
    total, active = transformer_parameters(shape)
    return ModelSpec(
        name=name,
        architecture="transformer",
        total_parameters=float(total),
        active_parameters=float(active),
        shape=shape,
        shape_inferred=False,
        default_sequence_length=seq,
        source=source,
        notes=notes,
    )


def _llama(layers: int, h: int, a: int, g: int, f: int, v: int, ctx: int) -> TransformerShape:
    return TransformerShape(
        layers=layers,
        hidden_size=h,
        attention_heads=a,
        kv_heads=g,
        ffn_hidden_size=f,
        ffn_type="swiglu",
        vocab_size=v,
        tied_embeddings=False,
        max_context_tokens=ctx,
    )


def _gpt(layers: int, h: int, a: int, v: int, ctx: int) -> TransformerShape:
    return TransformerShape(
        layers=layers,
        hidden_size=h,
        attention_heads=a,
        kv_heads=a,
        ffn_hidden_size=4 * h,
        ffn_type="gelu",
        vocab_size=v,
        tied_embeddings=True,
        max_context_tokens=ctx,
        biases=True,
        learned_position_embeddings=ctx,
    )


_PRESET_LIST: tuple[ModelSpec, ...] = (
    _transformer(
        "gpt-2-1.5b",
        _gpt(48, 1600, 25, 50257, 1024),
        1024,
        "openai-community/gpt2-xl config.json (n_layer 48, n_embd 1600, n_head 25, n_positions 1024); "
        "Radford et al. 2019",
    ),
    _transformer(
        "gpt-3-175b",
        _gpt(96, 12288, 96, 50257, 2048),
        2048,
        "Brown et al. 2020 'Language Models are Few-Shot Learners' Table 2.1 (96 layers, d_model 12288, "
        "96 heads, context 2048; GPT-2 BPE vocabulary 50257)",
        (N_("GPT-3 alternates dense and locally banded sparse attention; counted as dense here."),),
    ),
    _transformer(
        "llama-2-7b",
        _llama(32, 4096, 32, 32, 11008, 32000, 4096),
        4096,
        "meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023 (Llama 2) Table 1",
    ),
    _transformer(
        "llama-2-13b",
        _llama(40, 5120, 40, 40, 13824, 32000, 4096),
        4096,
        "meta-llama/Llama-2-13b-hf config.json; Touvron et al. 2023 (Llama 2)",
    ),
    _transformer(
        "llama-2-70b",
        _llama(80, 8192, 64, 8, 28672, 32000, 4096),
        4096,
        "meta-llama/Llama-2-70b-hf config.json (GQA, 8 KV heads); Touvron et al. 2023",
    ),
    _transformer(
        "llama-3-8b",
        _llama(32, 4096, 32, 8, 14336, 128256, 8192),
        8192,
        "meta-llama/Meta-Llama-3-8B config.json; Meta Llama 3 model card",
    ),
    _transformer(
        "llama-3-70b",
        _llama(80, 8192, 64, 8, 28672, 128256, 8192),
        8192,
        "meta-llama/Meta-Llama-3-70B config.json; Meta Llama 3 model card",
    ),
    _transformer(
        "llama-3.1-8b",
        _llama(32, 4096, 32, 8, 14336, 128256, 131072),
        8192,
        "meta-llama/Llama-3.1-8B config.json (max_position_embeddings 131072, rope_scaling llama3 factor 8); "
        "Llama Team 2024 'The Llama 3 Herd of Models' Table 3 (pre-trained at 8K context, extended to 128K)",
    ),
    _transformer(
        "llama-3.1-70b",
        _llama(80, 8192, 64, 8, 28672, 128256, 131072),
        8192,
        "meta-llama/Llama-3.1-70B config.json (max_position_embeddings 131072); Llama Team 2024 Table 3",
    ),
    _transformer(
        "llama-3.3-70b",
        _llama(80, 8192, 64, 8, 28672, 128256, 131072),
        8192,
        "meta-llama/Llama-3.3-70B-Instruct config.json (same shape as Llama 3.1 70B, 128K context)",
    ),
    _transformer(
        "llama-3.1-405b",
        _llama(126, 16384, 128, 8, 53248, 128256, 131072),
        8192,
        "meta-llama/Llama-3.1-405B config.json; Llama Team 2024 'The Llama 3 Herd of Models' Table 3 "
        "(pre-trained at 8K context, extended to 128K)",
    ),
    _transformer(
        "qwen2.5-7b",
        _llama(28, 3584, 28, 4, 18944, 152064, 32768),
        4096,
        "Qwen/Qwen2.5-7B-Instruct config.json (28 layers, hidden 3584, 28 heads, 4 KV heads, intermediate 18944, "
        "vocab 152064, untied, max_position_embeddings 32768; 128K with YaRN per the model card)",
        (N_("Q/K/V biases (a few MB) are not counted."),),
    ),
    _transformer(
        "qwen2.5-72b",
        _llama(80, 8192, 64, 8, 29568, 152064, 32768),
        4096,
        "Qwen/Qwen2.5-72B-Instruct config.json (80 layers, hidden 8192, 64 heads, 8 KV heads, intermediate 29568, "
        "vocab 152064, untied, max_position_embeddings 32768; 128K with YaRN per the model card)",
        (N_("Q/K/V biases (a few MB) are not counted."),),
    ),
    _transformer(
        "mistral-7b",
        _llama(32, 4096, 32, 8, 14336, 32000, 32768),
        8192,
        "mistralai/Mistral-7B-v0.1 config.json; Jiang et al. 2023 (sliding window 4096)",
        (N_("Sliding-window attention (4096) not modelled in training FLOPs."),),
    ),
    _transformer(
        "mixtral-8x7b",
        TransformerShape(
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=8,
            ffn_hidden_size=14336,
            ffn_type="swiglu",
            vocab_size=32000,
            tied_embeddings=False,
            experts=8,
            experts_per_token=2,
            max_context_tokens=32768,
        ),
        8192,
        "mistralai/Mixtral-8x7B-v0.1 config.json; Jiang et al. 2024 'Mixtral of Experts' (46.7B total, 12.9B active)",
    ),
    _transformer(
        "deepseek-v3",
        TransformerShape(
            layers=61,
            hidden_size=7168,
            attention_heads=128,
            kv_heads=128,
            ffn_hidden_size=18432,
            ffn_type="swiglu",
            vocab_size=129280,
            tied_embeddings=False,
            experts=256,
            experts_per_token=8,
            shared_experts=1,
            moe_ffn_hidden_size=2048,
            dense_layers=3,
            max_context_tokens=163840,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            q_lora_rank=1536,
            qk_nope_head_dim=128,
            v_head_dim=128,
        ),
        4096,
        "deepseek-ai/DeepSeek-V3 config.json; DeepSeek-AI 2024 'DeepSeek-V3 Technical Report' "
        "(671B total, 37B activated; pre-trained at 4K context)",
        (N_("Excludes the 14B multi-token-prediction module (HF checkpoint totals 685B)."),),
    ),
    _transformer(
        "bert-large",
        TransformerShape(
            layers=24,
            hidden_size=1024,
            attention_heads=16,
            kv_heads=16,
            ffn_hidden_size=4096,
            ffn_type="gelu",
            vocab_size=30522,
            tied_embeddings=True,
            max_context_tokens=512,
            biases=True,
            encoder_only=True,
            learned_position_embeddings=512 + 2,
        ),
        512,
        "google-bert/bert-large-uncased config.json; Devlin et al. 2019 (340M; HF BertModel 335M); "
        "learned positions 512 + 2 token types",
        (N_("Pooler and MLM transform head (~2M) not counted."),),
    ),
    ModelSpec(
        name="resnet-50",
        architecture="cnn",
        total_parameters=25.557032e6,  # torchvision ResNet50_Weights.IMAGENET1K_V1 num_params
        active_parameters=25.557032e6,
        # 4.09 GMACs at 224² (torchvision "GFLOPS" are MACs; He et al. 2016 Table 1 "3.8e9"), 2 FLOPs per MAC
        flops_per_sample=2 * 4.09e9,
        default_sequence_length=None,
        source="He et al. 2016 'Deep Residual Learning' Table 1; torchvision ResNet50_Weights (25.6M params, "
        "4.09 G multiply-adds per 224×224 image → 8.2 GFLOPs forward)",
    ),
    ModelSpec(
        name="vit-l-16",
        architecture="vit",
        total_parameters=304.326632e6,  # torchvision ViT_L_16_Weights.IMAGENET1K_V1 num_params
        active_parameters=304.326632e6,
        # 61.55 G multiply-adds at 224² (torchvision "GFLOPS"; 197 tokens × 24 layers), 2 FLOPs per MAC
        flops_per_sample=2 * 61.55e9,
        shape=TransformerShape(  # used for activation memory and step time only; FLOPs come from flops_per_sample
            layers=24,
            hidden_size=1024,
            attention_heads=16,
            kv_heads=16,
            ffn_hidden_size=4096,
            ffn_type="gelu",
            vocab_size=1000,  # ImageNet-1k classifier head in place of an LM head
            tied_embeddings=True,
            max_context_tokens=197,
            biases=True,
            encoder_only=True,
            learned_position_embeddings=197,  # 14×14 patches + [class] token
        ),
        default_sequence_length=197,
        source="Dosovitskiy et al. 2021 (ViT-L/16: 24 layers, 1024 wide, 16 heads); torchvision ViT_L_16_Weights "
        "(304.3M params, 61.55 G multiply-adds → 123.1 GFLOPs forward at 224×224)",
        notes=(N_("torchvision's '61.55 GFLOPS' counts multiply-adds; forward FLOPs are twice that."),),
    ),
    ModelSpec(
        name="lstm-2x1500",
        architecture="lstm",
        total_parameters=66.0e6,  # 2 × 4·(1500·3000 + 1500) + 2 × 10000·1500 + 10000 ≈ 66.0M
        active_parameters=66.0e6,
        default_sequence_length=35,
        source="Zaremba, Sutskever & Vinyals 2014 'Recurrent Neural Network Regularization', large PTB model "
        "(2 layers × 1500 units, 10k vocabulary, 66M parameters, 35 unrolled steps)",
    ),
)

PRESETS: dict[str, ModelSpec] = {spec.name: spec for spec in _PRESET_LIST if spec.name}
