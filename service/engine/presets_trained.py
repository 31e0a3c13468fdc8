"""Presets for models whose pre-training runs or training benchmarks are public; presets.py appends them to PRESETS.

Every shape is copied from the model's config.json, training config or paper (see `source`). Where the engine has
no field for a detail, the shape keeps the parameter count and the FLOPs and `source` says what differs:
parallel attention + MLP blocks (Falcon, GPT-NeoX, Pythia) hold the same weights and do the same matmuls as the
sequential block modelled here; ReLU (OPT) and squared-ReLU (Nemotron-4) MLPs have two matrices, like ffn_type
"gelu"; ALiBi (BLOOM, MPT) and rotary positions have no weights. `default_sequence_length` is the pre-training
context where the source gives it, else the config's maximum capped at 8192 as for a posted config.json.
"""

from __future__ import annotations

from .architecture import ModelSpec, TransformerShape
from .preset_shapes import _llama, _shape, _transformer

_LLAMA_1 = (
    "Touvron et al. 2023 'LLaMA: Open and Efficient Foundation Language Models' Table 2 ({table}); SwiGLU width "
    "{ffn} = compute_intermediate_size({h}) (multiple_of 256) and context 2048 = CONTEXT_LENGTH_FOR_VERSION['1'] in "
    "huggingface/transformers src/transformers/models/llama/convert_llama_weights_to_hf.py @01cc9cd9; vocab 32000, "
    "untied embeddings"
)
_FALCON = (
    "tiiuae/{repo} config.json ({cfg}, parallel_attn, bias false, vocab 65024, 2048 context); GELU MLP 4h "
    "(FalconMLP), tied embeddings; Almazrouei et al. 2023 'The Falcon Series of Open Language Models'. The "
    "parallel attention + MLP block has the weights and FLOPs of the sequential one; {norms}"
)
_NEOX = (
    "{files}; GPT-NeoX blocks: biases, two LayerNorms per layer, GELU 4h MLP, untied embed_out, rotary on 25% of "
    "the head (no weights), parallel residual (gpt-j-residual: same weights and FLOPs as sequential); {count}"
)


def _gelu(layers: int, h: int, a: int, g: int, v: int, ctx: int, **extra: object) -> TransformerShape:
    """A non-gated 4h MLP (GELU, ReLU, squared ReLU: two matrices), untied unless `extra` says otherwise."""
    return _shape(layers, h, a, g, 4 * h, v, ctx, ffn_type="gelu", **extra)


TRAINED_PRESETS: tuple[ModelSpec, ...] = (
    _transformer(
        "llama-1-7b",
        _llama(32, 4096, 32, 32, 11008, 32000, 2048),
        2048,
        _LLAMA_1.format(table="6.7B: 32 layers, dimension 4096, 32 heads", ffn=11008, h=4096),
    ),
    _transformer(
        "llama-1-13b",
        _llama(40, 5120, 40, 40, 13824, 32000, 2048),
        2048,
        _LLAMA_1.format(table="13.0B: 40 layers, dimension 5120, 40 heads", ffn=13824, h=5120),
    ),
    _transformer(
        "llama-1-33b",
        _llama(60, 6656, 52, 52, 17920, 32000, 2048),
        2048,
        _LLAMA_1.format(table="32.5B: 60 layers, dimension 6656, 52 heads", ffn=17920, h=6656),
    ),
    _transformer(
        "llama-1-65b",
        _llama(80, 8192, 64, 64, 22016, 32000, 2048),
        2048,
        _LLAMA_1.format(table="65.2B: 80 layers, dimension 8192, 64 heads", ffn=22016, h=8192),
    ),
    _transformer(
        "llama-3.2-1b",
        _shape(16, 2048, 32, 8, 8192, 128256, 131072, explicit_head_dim=64, tied_embeddings=True),
        8192,
        "meta-llama/Llama-3.2-1B config.json (16 layers, hidden 2048, 32 heads, 8 KV heads, head_dim 64, "
        "intermediate 8192, vocab 128256, tied, max_position_embeddings 131072, rope_scaling llama3 "
        "original_max_position_embeddings 8192); Llama 3.2 model card (1.23B, 128K context)",
    ),
    _transformer(
        "llama-3.2-3b",
        _shape(28, 3072, 24, 8, 8192, 128256, 131072, explicit_head_dim=128, tied_embeddings=True),
        8192,
        "meta-llama/Llama-3.2-3B config.json (28 layers, hidden 3072, 24 heads, 8 KV heads, head_dim 128, "
        "intermediate 8192, vocab 128256, tied, max_position_embeddings 131072, rope_scaling llama3 "
        "original_max_position_embeddings 8192); Llama 3.2 model card (3.21B, 128K context)",
    ),
    _transformer(
        "falcon-7b",
        _gelu(32, 4544, 71, 1, 65024, 2048, tied_embeddings=True),
        2048,
        _FALCON.format(
            repo="falcon-7b",
            cfg="32 layers, hidden 4544, 71 heads, multi_query: one KV head",
            norms="its one LayerNorm (weight + bias) per layer has the 2h of the two RMSNorms counted",
        ),
    ),
    _transformer(
        "falcon-40b",
        _gelu(60, 8192, 128, 8, 65024, 2048, tied_embeddings=True),
        2048,
        _FALCON.format(
            repo="falcon-40b",
            cfg="60 layers, hidden 8192, 128 heads, num_kv_heads 8, new_decoder_architecture",
            norms="the biases of its two LayerNorms per layer (1M in all) are not counted",
        ),
    ),
    _transformer(
        "falcon-180b",
        _gelu(80, 14848, 232, 8, 65024, 2048, tied_embeddings=True),
        2048,
        _FALCON.format(
            repo="falcon-180B",
            cfg="80 layers, hidden 14848, 232 heads, num_kv_heads 8, new_decoder_architecture",
            norms="the biases of its two LayerNorms per layer (2.4M in all) are not counted",
        ),
    ),
    _transformer(
        "opt-175b",
        _gelu(
            96,
            12288,
            96,
            96,
            50272,
            2048,
            biases=True,
            tied_embeddings=True,
            learned_position_embeddings=2050,
        ),
        2048,
        "Zhang et al. 2022 'OPT: Open Pre-trained Transformer Language Models' Table 1 (175B: 96 layers, 96 heads, "
        "embedding size 12288; 2048 context); facebook/opt configs: vocab_size 50272, ffn_dim 4h, biases, "
        "LayerNorm, tied embeddings, learned positions 2048 + 2 offset rows. Its ReLU MLP has two matrices, "
        "counted as ffn_type 'gelu' (same weights and FLOPs)",
    ),
    _transformer(
        "bloom-176b",
        _gelu(70, 14336, 112, 112, 250880, 2048, biases=True, tied_embeddings=True),
        2048,
        "bigscience/bloom config.json (n_layer 70, n_embed 14336, 112 heads, vocab 250880); model card @ae814bf "
        "(176,247,271,424 parameters, ALiBi, GeLU, 2048-token sequences); biases, LayerNorm, tied embeddings; "
        "the embedding LayerNorm (28,672) is not counted and ALiBi has no weights",
    ),
    _transformer(
        "mpt-7b",
        _gelu(32, 4096, 32, 32, 50432, 2048, tied_embeddings=True),
        2048,
        "mosaicml/mpt-7b config.json (n_layers 32, d_model 4096, n_heads 32, expansion_ratio 4, max_seq_len 2048, "
        "vocab 50432, no_bias, alibi, low_precision_layernorm); model card (6.7B): GELU MLP, bias-free LayerNorm "
        "(one weight per norm, as RMSNorm), tied embeddings, ALiBi (no position table counted)",
    ),
    _transformer(
        "mpt-30b",
        _gelu(48, 7168, 64, 64, 50432, 8192, tied_embeddings=True),
        8192,
        "mosaicml/mpt-30b config.json (n_layers 48, d_model 7168, n_heads 64, expansion_ratio 4, max_seq_len 8192, "
        "vocab 50432, no_bias, alibi, low_precision_layernorm); model card (29.95B): GELU MLP, bias-free "
        "LayerNorm, tied embeddings, ALiBi (no position table counted)",
    ),
    _transformer(
        "olmo-7b",
        _llama(32, 4096, 32, 32, 11008, 50304, 2048),
        2048,
        "allenai/OLMo-7B config.json (n_layers 32, d_model 4096, n_heads 32, activation swiglu, mlp_hidden_size "
        "22016 = gate + up, so the SwiGLU width is 11008; embedding_size 50304, weight_tying false, "
        "max_sequence_length 2048) and allenai/OLMo-7B-hf config.json (intermediate_size 11008, vocab 50304); "
        "Groeneveld et al. 2024 'OLMo'. Its LayerNorm has no weights (layer_norm_with_affine false): the 0.27M "
        "norm weights counted here do not exist",
    ),
    _transformer(
        "olmo-2-1124-7b",
        _llama(32, 4096, 32, 32, 11008, 100352, 4096),
        4096,
        "allenai/OLMo-2-1124-7B config.json @8fc681b (32 layers, hidden 4096, 32 heads, 32 KV heads, intermediate "
        "11008, vocab 100352, untied, max_position_embeddings 4096); OLMo 2 model card (4T tokens); the Q/K "
        "RMSNorm weights (0.26M) are not counted",
    ),
    _transformer(
        "olmo-2-1124-13b",
        _llama(40, 5120, 40, 40, 13824, 100352, 4096),
        4096,
        "allenai/OLMo-2-1124-13B config.json @b7add06 (40 layers, hidden 5120, 40 heads, 40 KV heads, intermediate "
        "13824, vocab 100352, untied, max_position_embeddings 4096); OLMo 2 model card (5T tokens); the Q/K "
        "RMSNorm weights (0.41M) are not counted",
    ),
    _transformer(
        "pythia-1b",
        _gelu(16, 2048, 8, 8, 50304, 2048, biases=True),
        2048,
        _NEOX.format(
            files="EleutherAI/pythia models/1B/pythia-1b.yml @a19eecb (16 layers, hidden 2048, 8 heads, seq-length "
            "2048, model-parallel-size 1) and EleutherAI/pythia-1b config.json (intermediate 8192, vocab 50304)",
            count="Biderman et al. 2023 'Pythia' (1,011,781,632 parameters)",
        ),
    ),
    _transformer(
        "pythia-6.9b",
        _gelu(32, 4096, 32, 32, 50432, 2048, biases=True),
        2048,
        _NEOX.format(
            files="EleutherAI/pythia models/6.9B/pythia-6.9b.yml @a19eecb (32 layers, hidden 4096, 32 heads, "
            "seq-length 2048, model-parallel-size 2); intermediate 4h = 16384, vocab 50432 (the tokenizer padded "
            "for model-parallel-size 2, as for GPT-NeoX-20B)",
            count="Biderman et al. 2023 'Pythia' (6,857,302,016 parameters)",
        ),
    ),
    _transformer(
        "pythia-12b",
        _gelu(36, 5120, 40, 40, 50688, 2048, biases=True),
        2048,
        _NEOX.format(
            files="EleutherAI/pythia models/12B/pythia-12b.yml @a19eecb (36 layers, hidden 5120, 40 heads, "
            "seq-length 2048, model-parallel-size 4) and EleutherAI/pythia-12b config.json (intermediate 20480, "
            "vocab 50688)",
            count="Biderman et al. 2023 'Pythia' (11,846,072,320 parameters)",
        ),
    ),
    _transformer(
        "gpt-neox-20b",
        _gelu(44, 6144, 64, 64, 50432, 2048, biases=True),
        2048,
        _NEOX.format(
            files="EleutherAI/gpt-neox configs/20B.yml @252ddc5 (44 layers, hidden 6144, 64 heads, seq-length 2048, "
            "model-parallel-size 2); intermediate 4h = 24576, vocab 50432 (EleutherAI/gpt-neox-20b config.json)",
            count="Black et al. 2022 'GPT-NeoX-20B' (20,554,567,680 parameters)",
        ),
    ),
    _transformer(
        "nemotron-4-15b",
        _gelu(32, 6144, 48, 8, 256000, 4096),
        4096,
        "Parmar et al. 2024 'Nemotron-4 15B Technical Report' (32 layers, hidden 6144, 48 heads, 8 KV heads, "
        "sequence 4096, vocabulary 256000, squared-ReLU MLP, no biases, untied embeddings; 3.2B embedding + 12.5B "
        "non-embedding parameters, which the 4h MLP width 24576 reproduces). Squared ReLU has two matrices, "
        "counted as ffn_type 'gelu'",
    ),
    _transformer(
        "nemotron-4-340b",
        _gelu(96, 18432, 96, 8, 256000, 4096),
        4096,
        "NVIDIA 2024 'Nemotron-4 340B Technical Report' (96 layers, hidden 18432, 96 heads, 8 KV heads, sequence "
        "4096, vocabulary 256000, squared-ReLU MLP, no biases, untied embeddings; 9.4B embedding + 331.6B "
        "non-embedding parameters, which the 4h MLP width 73728 reproduces). Squared ReLU has two matrices, "
        "counted as ffn_type 'gelu'",
    ),
    _transformer(
        "qwen2.5-14b",
        _shape(48, 5120, 40, 8, 13824, 152064, 32768, qkv_bias=True),
        4096,
        "Qwen/Qwen2.5-14B-Instruct config.json (48 layers, hidden 5120, 40 heads, 8 KV heads, intermediate 13824, "
        "vocab 152064, untied, Q/K/V biases, max_position_embeddings 32768); Qwen2.5 model card (14.7B)",
    ),
    _transformer(
        "qwen2.5-32b",
        _shape(64, 5120, 40, 8, 27648, 152064, 32768, qkv_bias=True),
        4096,
        "Qwen/Qwen2.5-32B-Instruct config.json (64 layers, hidden 5120, 40 heads, 8 KV heads, intermediate 27648, "
        "vocab 152064, untied, Q/K/V biases, max_position_embeddings 32768); Qwen2.5 model card (32.5B)",
    ),
    _transformer(
        "qwen3-4b",
        _shape(36, 2560, 32, 8, 9728, 151936, 40960, explicit_head_dim=128, tied_embeddings=True),
        4096,
        "Qwen/Qwen3-4B config.json (36 layers, hidden 2560, 32 heads, 8 KV heads, head_dim 128, intermediate 9728, "
        "vocab 151936, tied, max_position_embeddings 40960); Qwen3 model card (4.0B); Q/K RMSNorm weights not "
        "counted",
    ),
    _transformer(
        "qwen3-14b",
        _shape(40, 5120, 40, 8, 17408, 151936, 40960, explicit_head_dim=128),
        4096,
        "Qwen/Qwen3-14B config.json (40 layers, hidden 5120, 40 heads, 8 KV heads, head_dim 128, intermediate "
        "17408, vocab 151936, untied, max_position_embeddings 40960); Qwen3 model card (14.8B); Q/K RMSNorm "
        "weights not counted",
    ),
    _transformer(
        "tinyllama-1.1b",
        _llama(22, 2048, 32, 4, 5632, 32000, 2048),
        2048,
        "jzhang38/TinyLlama lit_gpt/config.py tiny_LLaMA_1b (n_layer 22, n_embd 2048, n_head 32, n_query_groups 4, "
        "intermediate_size 5632, vocab 32000, block_size 2048); TinyLlama README (1.1B)",
    ),
    _transformer(
        "smollm2-1.7b",
        _shape(24, 2048, 32, 32, 8192, 49152, 8192, tied_embeddings=True),
        8192,
        "HuggingFaceTB/SmolLM2-1.7B config.json (24 layers, hidden 2048, 32 heads, 32 KV heads, intermediate "
        "8192, vocab 49152, tied, max_position_embeddings 8192); SmolLM2 model card (1.7B)",
    ),
    _transformer(
        "phi-3-mini",
        _llama(32, 3072, 32, 32, 8192, 32064, 4096),
        4096,
        "microsoft/Phi-3-mini-4k-instruct config.json (32 layers, hidden 3072, 32 heads, intermediate 8192, vocab "
        "32064, untied, max_position_embeddings 4096); Abdin et al. 2024 'Phi-3 Technical Report' (3.8B)",
    ),
    _transformer(
        "deepseek-v2",
        _shape(
            60,
            5120,
            128,
            128,
            12288,
            102400,
            163840,
            experts=160,
            experts_per_token=6,
            shared_experts=2,
            moe_ffn_hidden_size=1536,
            dense_layers=1,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            q_lora_rank=1536,
            qk_nope_head_dim=128,
            v_head_dim=128,
        ),
        4096,
        "deepseek-ai/DeepSeek-V3 inference/configs/config_236B.json @9b4e978 (the DeepSeek-V2 shape: 60 layers, "
        "dim 5120, 128 heads, MLA q_lora_rank 1536, kv_lora_rank 512, 1 dense layer of inter_dim 12288, 160 "
        "routed experts, 6 per token, 2 shared, moe_inter_dim 1536, vocab 102400); DeepSeek-AI 2024 'DeepSeek-V2' "
        "(236B total, 21B activated, 128K context)",
    ),
    _transformer(
        "dbrx",
        _shape(40, 6144, 48, 8, 10752, 100352, 32768, experts=16, experts_per_token=4),
        8192,
        "databricks/dbrx-base config.json (n_layers 40, d_model 6144, n_heads 48, kv_n_heads 8, 16 experts, top 4, "
        "ffn_hidden_size 10752 (GLU), vocab 100352, untied, max_seq_len 32768); Databricks 2024 'Introducing "
        "DBRX' (132B total, 36B active)",
    ),
)
