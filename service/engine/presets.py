"""Built-in model presets; every shape is copied from the model's config.json or paper (see `source`). Their notes
are marked N_ and translated where an answer shows them (`source` strings stay as written)."""

from __future__ import annotations

from dataclasses import replace

from .architecture import ModelSpec, TransformerShape
from .i18n import N_
from .preset_shapes import _gpt, _llama, _shape, _transformer
from .presets_trained import TRAINED_PRESETS

# deepseek-ai/DeepSeek-V3 config.json (DeepSeek-R1 has the same shape)
_DEEPSEEK_V3 = TransformerShape(
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
        "qwen3-8b",
        _shape(36, 4096, 32, 8, 12288, 151936, 40960, explicit_head_dim=128),
        4096,
        "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json (36 layers, hidden 4096, 32 heads, 8 KV heads, "
        "head_dim 128, intermediate 12288, vocab 151936, untied, max_position_embeddings 40960); "
        "Qwen3 model card (8.2B parameters); Q/K RMSNorm weights (a few KB per layer) not counted",
    ),
    _transformer(
        "qwen3-32b",
        _shape(64, 5120, 64, 8, 25600, 151936, 40960, explicit_head_dim=128),
        4096,
        "https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json (64 layers, hidden 5120, 64 heads, 8 KV heads, "
        "head_dim 128, intermediate 25600, vocab 151936, untied, max_position_embeddings 40960); "
        "Qwen3 model card (32.8B parameters)",
    ),
    _transformer(
        "qwen3-30b-a3b",
        _shape(
            48,
            2048,
            32,
            4,
            6144,
            151936,
            40960,
            explicit_head_dim=128,
            experts=128,
            experts_per_token=8,
            moe_ffn_hidden_size=768,
        ),
        4096,
        "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json (48 layers, hidden 2048, 32 heads, "
        "4 KV heads, head_dim 128, 128 experts, 8 per token, moe_intermediate_size 768, no shared expert, "
        "vocab 151936, untied, max_position_embeddings 40960); Qwen3 model card (30.5B total, 3.3B activated)",
    ),
    _transformer(
        "qwen3-235b-a22b",
        _shape(
            94,
            4096,
            64,
            4,
            12288,
            151936,
            40960,
            explicit_head_dim=128,
            experts=128,
            experts_per_token=8,
            moe_ffn_hidden_size=1536,
        ),
        4096,
        "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json (94 layers, hidden 4096, 64 heads, "
        "4 KV heads, head_dim 128, 128 experts, 8 per token, moe_intermediate_size 1536, no shared expert, "
        "vocab 151936, untied, max_position_embeddings 40960); Qwen3 model card (235B total, 22B activated)",
    ),
    _transformer(
        "gemma-2-9b",
        _shape(42, 3584, 16, 8, 14336, 256000, 8192, explicit_head_dim=256, tied_embeddings=True),
        8192,
        "https://huggingface.co/google/gemma-2-9b/blob/main/config.json (42 layers, hidden 3584, 16 heads, "
        "8 KV heads, head_dim 256, GeGLU intermediate 14336, vocab 256000, tied, max_position_embeddings 8192, "
        "sliding window 4096 on alternate layers); Gemma Team 2024 'Gemma 2' Table 1",
        (N_("Sliding-window attention (4096) not modelled in training FLOPs."),),
    ),
    _transformer(
        "gemma-2-27b",
        _shape(46, 4608, 32, 16, 36864, 256000, 8192, explicit_head_dim=128, tied_embeddings=True),
        8192,
        "https://huggingface.co/google/gemma-2-27b/blob/main/config.json (46 layers, hidden 4608, 32 heads, "
        "16 KV heads, head_dim 128, GeGLU intermediate 36864, vocab 256000, tied, max_position_embeddings 8192, "
        "sliding window 4096 on alternate layers); Gemma Team 2024 'Gemma 2' Table 1",
        (N_("Sliding-window attention (4096) not modelled in training FLOPs."),),
    ),
    _transformer(
        "gemma-3-12b",
        _shape(48, 3840, 16, 8, 15360, 262208, 131072, explicit_head_dim=256, tied_embeddings=True),
        8192,
        "https://huggingface.co/google/gemma-3-12b-pt/blob/main/config.json text_config (48 layers, hidden 3840, "
        "16 heads, 8 KV heads, head_dim 256, GeGLU intermediate 15360, vocab 262208, tied, "
        "max_position_embeddings 131072; 5 local (1024-token window) layers per global layer); "
        "Gemma Team 2025 'Gemma 3 Technical Report' Table 1 (language model only; the 417M SigLIP encoder is not counted)",
    ),
    _transformer(
        "gemma-3-27b",
        _shape(62, 5376, 32, 16, 21504, 262208, 131072, explicit_head_dim=128, tied_embeddings=True),
        8192,
        "https://huggingface.co/google/gemma-3-27b-pt/blob/main/config.json text_config (62 layers, hidden 5376, "
        "32 heads, 16 KV heads, head_dim 128, GeGLU intermediate 21504, vocab 262208, tied, "
        "max_position_embeddings 131072; 5 local (1024-token window) layers per global layer); "
        "Gemma Team 2025 'Gemma 3 Technical Report' Table 1 (language model only; the 417M SigLIP encoder is not counted)",
    ),
    _transformer(
        "phi-4",
        _llama(40, 5120, 40, 10, 17920, 100352, 16384),
        4096,
        "https://huggingface.co/microsoft/phi-4/blob/main/config.json (40 layers, hidden 5120, 40 heads, 10 KV heads, "
        "intermediate 17920, vocab 100352, untied, max_position_embeddings 16384); Abdin et al. 2024 "
        "'Phi-4 Technical Report' (14B; pre-trained at 4K context, mid-trained to 16K)",
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
        "mixtral-8x22b",
        _shape(56, 6144, 48, 8, 16384, 32000, 65536, experts=8, experts_per_token=2),
        8192,
        "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json (56 layers, hidden 6144, "
        "48 heads, 8 KV heads, intermediate 16384, 8 experts, 2 per token, vocab 32000, untied, "
        "max_position_embeddings 65536); Mistral AI 'Cheaper, Better, Faster, Stronger' (141B total, 39B active)",
    ),
    _transformer(
        "deepseek-v3",
        _DEEPSEEK_V3,
        4096,
        "deepseek-ai/DeepSeek-V3 config.json; DeepSeek-AI 2024 'DeepSeek-V3 Technical Report' "
        "(671B total, 37B activated; pre-trained at 4K context)",
        (N_("Excludes the 14B multi-token-prediction module (HF checkpoint totals 685B)."),),
    ),
    _transformer(
        "deepseek-r1",
        _DEEPSEEK_V3,
        4096,
        "https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json (the DeepSeek-V3 shape: 61 layers, "
        "hidden 7168, 128 heads, MLA kv_lora_rank 512, 256 experts, 8 per token, 1 shared, 3 dense layers, "
        "vocab 129280, max_position_embeddings 163840); DeepSeek-AI 2025 'DeepSeek-R1' (671B total, 37B activated)",
        (N_("Excludes the 14B multi-token-prediction module (HF checkpoint totals 685B)."),),
    ),
    _transformer(
        "kimi-k2",
        replace(
            _DEEPSEEK_V3,
            attention_heads=64,
            kv_heads=64,
            vocab_size=163840,
            experts=384,
            dense_layers=1,
            max_context_tokens=131072,
        ),
        4096,
        "moonshotai/Kimi-K2-Base config.json (model_type kimi_k2, the DeepSeek-V3 architecture: 61 layers, hidden "
        "7168, 64 heads, MLA kv_lora_rank 512 / q_lora_rank 1536 / qk 128+64 / v 128, intermediate 18432, 384 routed "
        "experts of 2048, 8 per token, 1 shared, first_k_dense_replace 1, vocab 163840, max_position_embeddings "
        "131072), as reproduced in public copies of the config; Kimi Team 2025 'Kimi K2' (1.04T total, 32B "
        "activated; pre-trained at 4K context)",
    ),
    _transformer(
        "gpt-oss-20b",
        _shape(
            24,
            2880,
            64,
            8,
            2880,
            201088,
            131072,
            explicit_head_dim=64,
            experts=32,
            experts_per_token=4,
            qkv_bias=True,
        ),
        4096,
        "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json (24 layers, hidden 2880, 64 heads, "
        "8 KV heads, head_dim 64, 32 experts, 4 per token, expert intermediate 2880, vocab 201088, untied, "
        "max_position_embeddings 131072, sliding window 128 on alternate layers); OpenAI 2025 'gpt-oss-120b & "
        "gpt-oss-20b Model Card' Table 1 (20.9B total, 3.6B active); expert, router and output biases and "
        "attention sinks (under 0.1%) not counted",
    ),
    _transformer(
        "gpt-oss-120b",
        _shape(
            36,
            2880,
            64,
            8,
            2880,
            201088,
            131072,
            explicit_head_dim=64,
            experts=128,
            experts_per_token=4,
            qkv_bias=True,
        ),
        4096,
        "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json (36 layers, hidden 2880, 64 heads, "
        "8 KV heads, head_dim 64, 128 experts, 4 per token, expert intermediate 2880, vocab 201088, untied, "
        "max_position_embeddings 131072, sliding window 128 on alternate layers); OpenAI 2025 'gpt-oss-120b & "
        "gpt-oss-20b Model Card' Table 1 (116.8B total, 5.1B active); expert, router and output biases and "
        "attention sinks (under 0.1%) not counted",
    ),
    _transformer(
        "llama-4-scout",
        _shape(
            48,
            5120,
            40,
            8,
            16384,
            202048,
            10485760,
            explicit_head_dim=128,
            experts=16,
            experts_per_token=1,
            shared_experts=1,
            moe_ffn_hidden_size=8192,
        ),
        8192,
        "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json text_config (48 layers, "
        "hidden 5120, 40 heads, 8 KV heads, head_dim 128, every layer MoE: 16 experts, 1 per token + 1 shared, "
        "intermediate 8192, vocab 202048, untied, max_position_embeddings 10485760); Meta Llama 4 model card "
        "(109B total, 17B active; language model only, the vision encoder is not counted)",
    ),
    _transformer(
        "llama-4-maverick",
        _shape(
            48,
            5120,
            40,
            8,
            16384,
            202048,
            1048576,
            explicit_head_dim=128,
            experts=128,
            experts_per_token=1,
            shared_experts=1,
            moe_ffn_hidden_size=8192,
            dense_layers=24,
        ),
        8192,
        "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E/blob/main/config.json text_config (48 layers, "
        "hidden 5120, 40 heads, 8 KV heads, head_dim 128, interleave_moe_layer_step 2: 24 dense layers with "
        "intermediate_size_mlp 16384 and 24 MoE layers of 128 experts, 1 per token + 1 shared, intermediate 8192, "
        "vocab 202048, untied, max_position_embeddings 1048576); Meta Llama 4 model card (400B total, 17B active; "
        "language model only). The dense layers alternate with the MoE ones; they are counted as a block",
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

# The built-in list, then the models of public pre-training runs and training benchmarks (presets_trained.py).
PRESETS: dict[str, ModelSpec] = {spec.name: spec for spec in _PRESET_LIST + TRAINED_PRESETS if spec.name}
