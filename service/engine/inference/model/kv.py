"""KV-cache bytes per token on one device, from a transformer's shape (docs/formulas.md "Inference memory").

Kept apart from memory.py so that the speculative draft (draft.py) can size its own cache with the same rule."""

from __future__ import annotations

import math

from ...architecture import TransformerShape
from .formats import kv_element_bytes


def shape_kv_bytes_per_token(
    s: TransformerShape, engine: str, kv_precision: str, layout: str, count: int
) -> float:
    """KV bytes per token on one of `count` devices.

    2·L·g·d·bytes (GQA/MQA use g, not a — docs/formulas.md; Llama-2-7B fp16 = 512 KiB, Llama-3-8B = 128 KiB);
    MLA stores (kv_lora_rank + qk_rope_head_dim)·L·bytes (DeepSeek-V2 paper §2.1.2, V3 config).
    """
    nbytes = kv_element_bytes(engine, kv_precision)
    if s.kv_lora_rank:
        per = (s.kv_lora_rank + (s.qk_rope_head_dim or 0)) * s.layers * nbytes
        return float(per) / (count if layout == "layer" else 1)  # MLA latent replicated on every TP rank
    if layout == "tensor":
        heads = math.ceil(s.kv_heads / count)  # g < t: each rank keeps one replicated head
        return float(2 * s.layers * heads * s.head_dim * nbytes)
    return float(2 * s.layers * s.kv_heads * s.head_dim * nbytes) / count
