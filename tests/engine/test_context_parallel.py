"""Context parallelism (issue 11 item 6): the sequence splits over ranks; activations split, K/V travel a ring."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest, estimate_training

from .conftest import load_catalog

CATALOG = load_catalog()
LONG = {  # Llama 3.1 8B shape with its 128K context (config.json of meta-llama/Llama-3.1-8B)
    "architecture": "transformer",
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "ffn_hidden_size": 14336,
    "vocab_size": 128256,
    "max_context_tokens": 131072,
}


def _estimate(context: int, data: int, seq: int = 65536):
    return estimate_training(
        {
            "model": LONG,
            "training": {
                "tokens": 1e10,
                "global_batch_size": data,
                "sequence_length": seq,
                "micro_batch_size": 1,
            },
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 8,
                "parallelism": {"data": data, "context": context, "zero_stage": 3},
            },
            "output": {"recommendations": False},
        },
        CATALOG,
    )


def test_activations_split_over_context_ranks_and_the_ring_costs_time():
    alone = _estimate(context=1, data=8)
    split = _estimate(context=8, data=1)
    ratio = split["memory"]["breakdown"]["activations"] / alone["memory"]["breakdown"]["activations"]
    assert ratio == pytest.approx(1 / 8, rel=0.05)
    assert split["assumptions"]["parallelism"]["context"] == 8
    assert split["memory"]["fits"] and not alone["memory"]["fits"]  # 64K tokens on one H100 do not fit
    assert split["time"]["breakdown"]["communication_s"] > alone["time"]["breakdown"]["communication_s"]


def test_sequence_must_split_into_two_chunks_per_context_rank():
    with pytest.raises(InvalidRequest) as err:
        _estimate(context=4, data=2, seq=65536 + 4)
    assert "hardware.parallelism.context" in err.value.errors


def test_degrees_must_multiply_to_the_count():
    with pytest.raises(InvalidRequest) as err:
        _estimate(context=4, data=4)
    assert "context" in err.value.errors["hardware.parallelism"][0]
