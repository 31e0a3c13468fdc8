"""The loss's buffers in the activation peak (training/model/activations.py `activation_bytes_by_runtime`, framework.py
`loss_bytes_per_logit`; docs/formulas.md, "Loss memory"): the loss and the layer rebuilt during backward are never
live together, and XLA keeps two 16-bit values per logit where a CUDA stack keeps more."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scalecost.engine.training.model.activations import (
    activation_bytes,
    layer_activation_bytes,
    saved_input_bytes,
)
from scalecost.engine.training.model.arrays import evaluate_layouts
from scalecost.engine.training.model.evaluate import basis, evaluate
from scalecost.engine.training.model.framework import UNFUSED_LOSS_BYTES_PER_LOGIT, loss_bytes_per_logit
from scalecost.engine.training.model.layouts import Layouts
from scalecost.engine.training.request import build_plan

from .public_points import evaluate_throughput
from .reference_catalog import load_catalog

CATALOG = load_catalog()


def _plan(
    accelerator: str,
    recompute: str,
    micro: int,
    seq: int = 8192,
    framework: str | None = None,
    chunks: int = 1,
):
    training = {
        "loss_chunks": chunks,
        "tokens": 1e12,
        "sequence_length": seq,
        "global_batch_size": 64 * micro,
        "micro_batch_size": micro,
        "activation_recomputation": recompute,
    }
    if framework:
        training["framework"] = framework
    request = {
        "model": {"preset": "llama-3-70b"},
        "training": training,
        "hardware": {
            "accelerator": accelerator,
            "count": 64,
            "parallelism": {"data": 64, "tensor": 1, "pipeline": 1, "zero_stage": 3},
        },
    }
    return build_plan(request, CATALOG)


def _parts(plan, micro: int) -> tuple[float, float, float]:
    """(layers' kept bytes, one rebuilt layer, logits) of a one-stage plan, from the per-layer terms."""
    sh = plan.model.shape
    stored, working = layer_activation_bytes(
        sh, plan.par, plan.recompute, plan.flash_attention, plan.sequence_length, micro,
        plan.activation_bytes_per_value, input_bytes=saved_input_bytes(plan.precision),
        modules=plan.recompute_modules,
    )  # fmt: skip
    return sh.layers * stored, working, plan.sequence_length * micro * sh.vocab_size


@pytest.mark.parametrize("micro", [1, 2, 4])
@pytest.mark.parametrize("recompute", ["full", "selective", "none"])
def test_the_loss_and_the_rebuilt_layer_never_add(recompute: str, micro: int) -> None:
    """One stage: kept layers + max(rebuilt layer, loss), not their sum (the loss's buffers are freed once the LM
    head's backward has run, before the last layer is rebuilt)."""
    plan = _plan("nvidia-h100-sxm-80gb", recompute, micro)
    kept, working, logits = _parts(plan, micro)
    loss = logits * loss_bytes_per_logit(plan.framework, plan.activation_bytes_per_value)
    got = activation_bytes(plan, micro, 1)
    assert got == pytest.approx(kept + max(working, loss))
    if (
        recompute == "full"
    ):  # the rebuilt layer is large there: the sum would be wrong by the smaller of the two
        assert got < kept + working + loss - 0.9 * min(working, loss)


def test_xla_keeps_two_activation_values_per_logit_cuda_stacks_more() -> None:
    assert loss_bytes_per_logit("megatron", 2.0, xla=True) == 4.0
    assert loss_bytes_per_logit("megatron", 2.0) == 6.0
    assert loss_bytes_per_logit("torchtitan", 2.0) == UNFUSED_LOSS_BYTES_PER_LOGIT
    # on a TPU the framework field does not change XLA's loss
    assert loss_bytes_per_logit("torchtitan", 2.0, xla=True) == 4.0


def test_the_same_plan_holds_less_loss_on_a_tpu_than_on_a_gpu() -> None:
    """Where the loss sets the peak (micro-batch 4 at 8K tokens of a 128K vocabulary, full recomputation), the
    TPU's activations are the GPU's less 2 bytes per logit."""
    gpu = _plan("nvidia-h100-sxm-80gb", "full", 4)
    tpu = replace(gpu, accelerator=CATALOG.accelerators["google-tpu-v6e"])
    kept, working, logits = _parts(gpu, 4)
    assert 4.0 * logits > working  # the loss is the tail on both
    assert activation_bytes(gpu, 4, 1) - activation_bytes(tpu, 4, 1) == pytest.approx(2.0 * logits)


def test_a_basis_evaluated_on_a_tpu_carries_the_tpus_loss() -> None:
    """The catalog scan evaluates a GPU request's basis on every part: on a TPU it must hold what a TPU request
    holds (MemoryBreakdown.by_runtime), and back on the GPU what it held."""
    gpu = _plan("nvidia-h100-sxm-80gb", "full", 4)
    known = basis(gpu)
    tpu_acc = CATALOG.accelerators["google-tpu-v6e"]
    fast = evaluate(gpu.on(tpu_acc, 1.0), known)
    slow = evaluate(replace(gpu, accelerator=tpu_acc, usd_per_hour=1.0))
    assert fast.memory == slow.memory and fast.fits == slow.fits
    _, mem = known.candidates[0]
    assert mem.on(tpu_acc).on(gpu.accelerator) == mem
    assert mem.on(tpu_acc).activations < mem.activations


@pytest.mark.parametrize("accelerator", ["nvidia-h100-sxm-80gb", "google-tpu-v6e"])
def test_the_planners_array_model_counts_the_loss_as_the_single_estimate(accelerator: str) -> None:
    plan = _plan(accelerator, "full", 2)
    ev = evaluate(plan)
    par = plan.par
    values = (par.data, par.tensor, par.pipeline, par.context, par.expert, par.zero_stage, par.sequence_parallel,
              par.virtual_pipeline, plan.micro_batch, par.pipeline_schedule == "zero_bubble")  # fmt: skip
    one = Layouts(*(np.array([v], dtype=bool if isinstance(v, bool) else np.int64) for v in values))
    arrays = evaluate_layouts(plan, one)
    assert float(arrays.memory_bytes[0]) == pytest.approx(ev.memory.total, rel=1e-9)


def test_the_tpu_recipes_that_ran_fit() -> None:
    """tpu-recipes' Llama 3.1 70B on v6e-32 … v6e-256 (micro-batch 2–5 at 8K, 128K vocabulary) and 405B on two
    v6e-256 slices ran (their READMEs' step logs): with the loss and the rebuilt layer not summed and XLA's loss they
    fit; before, all six were 'does not fit' by 3–19 GiB."""
    outcomes = {o.label: o for o in evaluate_throughput(CATALOG)}
    ran = [label for label in outcomes if label.startswith("MaxText Llama3.1-") and "v6e" in label]
    assert len(ran) == 6
    for label in ran:
        assert outcomes[label].fits, label


@pytest.mark.parametrize("chunks", [1, 4, 16])
def test_loss_chunks_divide_the_loss_buffers(chunks: int) -> None:
    """training.loss_chunks (MaxText num_vocab_tiling, chunked / fused linear cross entropy): one chunk's logits at a
    time; with selective recomputation at micro-batch 4 the loss sets the peak until the chunks make it smaller
    than the rebuilt layer."""
    plan = _plan("nvidia-h100-sxm-80gb", "selective", 4, chunks=chunks)
    kept, working, logits = _parts(plan, 4)
    loss = logits / chunks * loss_bytes_per_logit(plan.framework, plan.activation_bytes_per_value)
    assert activation_bytes(plan, 4, 1) == pytest.approx(kept + max(working, loss))
    assert plan.loss_chunks == chunks


def test_the_array_model_divides_the_loss_as_the_single_estimate() -> None:
    plan = _plan("google-tpu-v6e", "none", 2, chunks=8)
    ev = evaluate(plan)
    par = plan.par
    values = (par.data, par.tensor, par.pipeline, par.context, par.expert, par.zero_stage, par.sequence_parallel,
              par.virtual_pipeline, plan.micro_batch, par.pipeline_schedule == "zero_bubble")  # fmt: skip
    one = Layouts(*(np.array([v], dtype=bool if isinstance(v, bool) else np.int64) for v in values))
    assert float(evaluate_layouts(plan, one).memory_bytes[0]) == pytest.approx(ev.memory.total, rel=1e-9)


def test_the_engine_refuses_fewer_than_one_loss_chunk() -> None:
    from scalecost.engine.errors import InvalidRequest

    request = {
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e9, "global_batch_size": 8, "loss_chunks": 0},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
    }
    with pytest.raises(InvalidRequest) as err:
        build_plan(request, CATALOG)
    assert "training.loss_chunks" in err.value.errors


@pytest.mark.parametrize("value", ["abc", 2.5, -3])
def test_a_loss_chunks_that_is_no_whole_number_is_named(value: object) -> None:
    from scalecost.engine.errors import InvalidRequest

    request = {
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e9, "global_batch_size": 8, "loss_chunks": value},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
    }
    with pytest.raises(InvalidRequest) as err:
        build_plan(request, CATALOG)
    assert "training.loss_chunks" in err.value.errors
