"""The activation formula against bytes autograd really keeps (tests/engine/data/measured_activations.json,
recorded by bench/measure_activations.py with torch 2.13 on the CPU: a Llama-style layer, every saved tensor
counted once per storage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scalecost.engine.architecture import TransformerShape
from scalecost.engine.parallelism import Parallelism
from scalecost.engine.training.model.activations import layer_activation_bytes

FIXTURE = json.loads((Path(__file__).with_name("data") / "measured_activations.json").read_text())
FUSED = [r for r in FIXTURE["rows"] if r["variant"] == "fused"]


def _shape(row: dict, ffn_type: str = "swiglu") -> TransformerShape:
    """The one-layer shape a fixture row was measured on (Llama-style, or a two-matrix MLP: ffn_type gelu)."""
    return TransformerShape(
        layers=1,
        hidden_size=row["hidden"],
        attention_heads=row["heads"],
        kv_heads=row["kv_heads"],
        ffn_hidden_size=row["ffn"],
        ffn_type=ffn_type,
        vocab_size=32000,
        tied_embeddings=False,
    )


@pytest.mark.parametrize("row", FUSED, ids=lambda r: f"h{r['hidden']}-kv{r['kv_heads']}-f{r['ffn']}")
def test_formula_matches_the_bytes_autograd_keeps(row):
    shape = _shape(row)
    stored, _ = layer_activation_bytes(shape, Parallelism(), "selective", True, row["sequence"], row["batch"])
    error = stored / row["bytes"] - 1.0
    print(
        f"h={row['hidden']} kv={row['kv_heads']} f={row['ffn']}: formula {stored:,.0f} B, measured {row['bytes']:,} B ({error:+.2%})"
    )
    assert abs(error) < 0.02


def test_eager_pytorch_keeps_far_more_than_fused_kernels():
    """Why eager torchtitan runs hold ~1.6x the activations of Megatron-Core: unfused norms and SwiGLU."""
    eager = {(r["hidden"], r["ffn"]): r["bytes"] for r in FIXTURE["rows"] if r["variant"] == "eager"}
    assert all(eager[(r["hidden"], r["ffn"])] > 1.5 * r["bytes"] for r in FUSED)


OP_SAC = [r for r in FIXTURE["rows"] if r["variant"] == "op-sac"]


@pytest.mark.parametrize("row", OP_SAC, ids=lambda r: f"h{r['hidden']}-kv{r['kv_heads']}-f{r['ffn']}")
def test_op_level_selective_checkpointing_matches_the_bytes_torch_keeps(row):
    """torchtitan's op-level SAC under torch.utils.checkpoint: the layer input, every other matmul output and the
    attention output (bench/measure_activations.py, variant "op-sac")."""
    shape = _shape(row)
    stored, working = layer_activation_bytes(
        shape, Parallelism(), "selective_op", True, row["sequence"], row["batch"]
    )
    error = stored / row["bytes"] - 1.0
    print(
        f"h={row['hidden']} kv={row['kv_heads']} f={row['ffn']}: formula {stored:,.0f} B, measured {row['bytes']:,} B ({error:+.2%})"
    )
    assert abs(error) < 0.01
    # kept: fewer than half the bytes of the fused layer without recomputation, which is rebuilt one layer at a time
    fused = next(
        r
        for r in FUSED
        if (r["hidden"], r["kv_heads"], r["ffn"]) == (row["hidden"], row["kv_heads"], row["ffn"])
    )
    assert stored < 0.5 * fused["bytes"]
    assert working == pytest.approx(fused["bytes"], rel=0.02)


def test_the_eager_element_wise_factor_is_the_measured_ratio():
    """framework.EAGER_ELEMENTWISE_FACTOR is the mean eager/fused saved-bytes ratio of these four shapes."""
    from scalecost.engine.training.model.framework import EAGER_ELEMENTWISE_FACTOR

    eager = {(r["hidden"], r["ffn"]): r["bytes"] for r in FIXTURE["rows"] if r["variant"] == "eager"}
    ratios = [eager[(r["hidden"], r["ffn"])] / r["bytes"] for r in FUSED]
    print(f"eager / fused: {', '.join(f'{x:.3f}' for x in ratios)}")
    assert abs(sum(ratios) / len(ratios) - EAGER_ELEMENTWISE_FACTOR) < 0.01


TWO_MATRIX = [r for r in FIXTURE["rows"] if r["variant"].startswith(("gelu", "relu2"))]


@pytest.mark.parametrize("row", TWO_MATRIX, ids=lambda r: f"{r['variant']}-h{r['hidden']}-kv{r['kv_heads']}")
def test_two_matrix_mlps_without_dropout_and_unfused_attention_match_the_bytes_autograd_keeps(row):
    """GPT-3 / Nemotron-4 style layers without dropout (GELU or squared ReLU): Korthikanti et al. 2022 Table 2 less
    its dropout terms, grouped-query K and V, and, without a fused kernel, the softmax output (2 bytes per score)
    and K and V repeated for every head (bench/measure_activations.py)."""
    unfused = row["variant"].endswith("-unfused-attention")
    stored, _ = layer_activation_bytes(
        _shape(row, "gelu"), Parallelism(), "none", not unfused, row["sequence"], row["batch"]
    )
    error = stored / row["bytes"] - 1.0
    print(
        f"{row['variant']} h={row['hidden']} kv={row['kv_heads']}: formula {stored:,.0f} B, measured {row['bytes']:,} B ({error:+.2%})"
    )
    assert abs(error) < 0.005
