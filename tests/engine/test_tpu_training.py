"""TPU training: the MXU best-GEMM efficiency, XLA's fused element-wise work, and the `dots` recomputation
(MaxText `remat_policy: minimal`) against MaxText's published v5p/v5e runs (docs/formulas.md, "TPU training (XLA)")."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scalecost.engine.training.model.activations import layer_activation_bytes
from scalecost.engine.training.model.compute import DEFAULT_GEMM_EFFICIENCY, best_gemm_efficiency
from scalecost.engine.training.model.evaluate import evaluate
from scalecost.engine.training.model.flops import flops_per_unit
from scalecost.engine.training.model.plan import RECOMPUTATION, SEARCHED_RECOMPUTATION
from scalecost.engine.training.model.step import StepModel
from scalecost.engine.training.request import build_plan
from scalecost.engine.training.search.space import SearchSpace

from .public_points import evaluate_throughput, throughput_request, throughput_rows
from .reference_catalog import load_catalog

CATALOG = load_catalog()
# the six rows these checks were written on; later MaxText rows (batch "dense-2026-12": the v5p README's 1x/2x rows) are
# reported by public_points' table, not bounded here
MAXTEXT = {
    r["label"]: r for r in throughput_rows() if r["label"].startswith("MaxText") and not r.get("batch")
}


def test_every_tpu_uses_the_mxu_efficiency_not_the_default():
    tpus = [acc for acc_id, acc in CATALOG.accelerators.items() if acc_id.startswith("google-tpu")]
    assert len(tpus) >= 4  # v4, v5e, v5p, v6e (and TPU7x)
    for acc in tpus:
        assert best_gemm_efficiency(acc, "bf16") == 0.99 != DEFAULT_GEMM_EFFICIENCY


def test_maxtext_points_fit_and_agree():
    """The MaxText rows that ran (three with remat minimal = `dots`, three with full) fit their chips and land within
    ±15 %, but the 1024B v5p-4096 one (full remat at tensor 16) and the 64B on 32 v5e slices (hybrid sharding over
    the data-center network), which stay within ±30 %."""
    outcomes = {
        o.label: o for o in evaluate_throughput(CATALOG) if o.label in MAXTEXT and o.error is not None
    }
    assert len(outcomes) == 6
    for label, outcome in outcomes.items():
        assert outcome.fits, label
        bound = 0.30 if "1024B" in label or "32x" in label else 0.15
        assert abs(outcome.error) < bound, (label, outcome.error)
    minimal = [label for label, row in MAXTEXT.items() if row["recompute"] == "dots"]
    assert len(minimal) == 3


def _plan(label: str, recompute: str | None = None):
    request = throughput_request(MAXTEXT[label])
    if recompute is not None:
        request["training"]["activation_recomputation"] = recompute
    return build_plan(request, CATALOG)


def test_dots_keeps_the_layer_input_and_the_backwards_matmul_outputs():
    """32B of the 2023 base (h 10240, 32 heads x 256, ReLU MLP 32768), tensor 4, 32 x 2048 tokens per chip: the layer
    input, Q, K, V and the MLP input projection at 2 bytes, split by t: 2·s·b·(h + 3·8192 + 32768)/4 bytes."""
    plan = _plan("MaxText 32B v5p-128 (64 chips)")
    assert plan.recompute == "dots"
    sh = plan.model.shape
    assert sh is not None
    stored, working = layer_activation_bytes(sh, plan.par, "dots", True, 2048, 32)
    assert stored == pytest.approx(2.0 * 2048 * 32 * (10240 + 3 * 8192 + 32768) / 4)
    selective, _ = layer_activation_bytes(sh, plan.par, "selective", True, 2048, 32)
    full, _ = layer_activation_bytes(sh, plan.par, "full", True, 2048, 32)
    assert full < stored < selective
    assert working == selective  # one layer rebuilt at a time during the backward
    # Megatron's selective (what the row used to say) does not fit the 95 GiB chip; dots does
    assert not evaluate(_plan("MaxText 32B v5p-128 (64 chips)", "selective")).fits
    assert evaluate(plan).fits


def test_dots_recomputes_element_wise_work_and_one_tp_collective_but_no_matmul():
    dots, selective, full = (
        _plan("MaxText 32B v5p-128 (64 chips)", r) for r in ("dots", "selective", "full")
    )
    steps = {}
    for plan in (dots, selective, full):
        ev = evaluate(plan)
        steps[plan.recompute] = ev.step
    assert steps["dots"].gemm_s == pytest.approx(steps["selective"].gemm_s)
    assert steps["dots"].gemm_s < steps["full"].gemm_s
    assert steps["selective"].tensor_comm_s < steps["dots"].tensor_comm_s < steps["full"].tensor_comm_s
    assert steps["dots"].tensor_comm_s == pytest.approx(steps["selective"].tensor_comm_s * 5 / 4)


def test_element_wise_work_is_fused_on_tpus_only():
    """XLA fuses element-wise work into the matmuls on TPUs: no memory-bound term with flash attention; the same
    plan on an H100 keeps it. Unfused attention's score traffic stays memory-bound on the TPU."""
    plan = _plan("MaxText 16B 1x v5e-256")
    flops = flops_per_unit(plan)
    ev = evaluate(plan)
    assert plan.flash_attention and ev.step.memory_bound_s == 0.0
    h100 = replace(plan, accelerator=CATALOG.accelerators["nvidia-h100-sxm-80gb"])
    assert StepModel(h100, flops).step(ev.micro_batch, ev.memory).memory_bound_s > 0.0
    unfused = replace(plan, flash_attention=False)
    assert evaluate(unfused).step.memory_bound_s > 0.0


def test_planner_does_not_search_dots():
    assert "dots" in RECOMPUTATION and "dots" not in SEARCHED_RECOMPUTATION
    assert SearchSpace(device_counts=(8,)).recomputation == SEARCHED_RECOMPUTATION


def test_a_tpu_carries_no_allocator_fragmentation_a_gpu_does():
    from scalecost.engine.training.model.memory import FRAGMENTATION, fragmentation_fraction

    plan = _plan(next(iter(MAXTEXT)))
    ev = evaluate(plan)
    mem = ev.memory
    assert fragmentation_fraction(plan.accelerator) == 0.0
    assert mem.overhead == pytest.approx(
        mem.base_overhead
    )  # no reserve, no fragmentation: the gathered layers
    gpu = CATALOG.accelerators["nvidia-h100-sxm-80gb"]
    on_gpu = mem.on(gpu)
    assert on_gpu.overhead - mem.overhead == pytest.approx(1024**3 + FRAGMENTATION * mem.allocated)
    assert on_gpu.on(plan.accelerator) == mem  # and back
