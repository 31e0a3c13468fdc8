"""Activation offload to host memory (training.activation_offload_layers; training/offload.py)."""

from __future__ import annotations

import pytest
from scalecost.engine import InvalidRequest, estimate_training, plan_training
from scalecost.engine.training.fit_defaults import offload_to_fit
from scalecost.engine.training.model.activations import layer_activation_bytes
from scalecost.engine.training.model.evaluate import evaluate
from scalecost.engine.training.model.offload import exposed_offload_s, host_link_bytes_per_s
from scalecost.engine.training.request import build_plan

from .conftest import load_catalog

CATALOG = load_catalog()


def _body(offload: int | None, accelerator: str = "nvidia-gb200", pipeline: int = 1, seq: int = 8192):
    training: dict = {
        "tokens": 1e11,
        "sequence_length": seq,
        "global_batch_size": 256,
        "micro_batch_size": 2,
        "precision": "bf16",
    }
    if offload is not None:
        training["activation_offload_layers"] = offload
    return {
        "model": {"preset": "llama-3-70b"},
        "training": training,
        "hardware": {
            "accelerator": accelerator,
            "count": 64,
            "parallelism": {"data": 64 // pipeline, "pipeline": pipeline, "zero_stage": 3},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_offloaded_layers_leave_the_device_but_for_a_double_buffer():
    base = estimate_training(_body(0), CATALOG)["memory"]["breakdown"]["activations"]
    plan = build_plan(_body(40), CATALOG)
    one_layer, _ = layer_activation_bytes(
        plan.model.shape, plan.par, plan.recompute, plan.flash_attention, 8192, 2, 2.0
    )
    for k in (1, 2, 10, 40, 79):
        got = estimate_training(_body(k), CATALOG)["memory"]["breakdown"]["activations"]
        assert got == pytest.approx(base - (k - min(k, 2)) * one_layer, rel=1e-12), k


def test_offload_can_make_a_published_gb200_recipe_fit():
    # NeMo 25.11: Llama 3 70B, Megatron-FSDP over 64 GB200, MBS 2, cpu_offloading_num_layers=40
    without = estimate_training(_body(0), CATALOG)["memory"]
    with_offload = estimate_training(_body(40), CATALOG)["memory"]
    assert with_offload["per_device_bytes"] < without["per_device_bytes"] - 100e9


def test_a_request_naming_no_offload_gets_the_fewest_layers_that_fit_on_a_grace_part():
    # NVIDIA's GB200 recipe for this run offloads 40 layers (docs/formulas.md "Activation offload")
    answer = estimate_training(_body(None), CATALOG)
    chosen = answer["assumptions"]["activation_offload_layers"]
    assert answer["memory"]["fits"] and 0 < chosen < 79
    assert answer["assumptions"]["activation_offload_source"].startswith("chosen")
    assert estimate_training(_body(chosen), CATALOG)["memory"]["fits"]
    assert not estimate_training(_body(chosen - 1), CATALOG)["memory"]["fits"]
    assert answer["time"]["seconds"] == estimate_training(_body(chosen), CATALOG)["time"]["seconds"]


def test_no_offload_is_chosen_when_asked_for_none_when_it_fits_or_over_pcie():
    refused = estimate_training(_body(0), CATALOG)
    assert not refused["memory"]["fits"]
    assert (
        refused["assumptions"]["activation_offload_layers"],
        refused["assumptions"]["activation_offload_source"],
    ) == (0, "given")
    short = estimate_training(_body(None, seq=2048), CATALOG)
    assert short["memory"]["fits"]
    assert (
        short["assumptions"]["activation_offload_layers"],
        short["assumptions"]["activation_offload_source"],
    ) == (0, "default")
    pcie = estimate_training(_body(None, accelerator="nvidia-b200"), CATALOG)
    assert not pcie["memory"]["fits"] and pcie["assumptions"]["activation_offload_layers"] == 0


def test_copies_hide_behind_compute_on_nvlink_c2c_but_not_always_on_pcie():
    fast = estimate_training(_body(40), CATALOG)["time"]["breakdown"]
    assert fast["activation_offload_s"] == 0.0
    slow = estimate_training(_body(79, accelerator="nvidia-h100-sxm-80gb"), CATALOG)["time"]["breakdown"]
    none = estimate_training(_body(0, accelerator="nvidia-h100-sxm-80gb"), CATALOG)["time"]["breakdown"]
    assert slow["activation_offload_s"] > 0.0
    assert slow["communication_s"] == pytest.approx(none["communication_s"] + slow["activation_offload_s"])


def test_exposed_time_is_what_the_layer_compute_cannot_hide():
    assert exposed_offload_s(0.0, 1e9, 1.0) == 0.0
    assert exposed_offload_s(1e9, 1e9, 3.0) == 0.0  # 1 s each way vs 1 s and 2 s of compute
    assert exposed_offload_s(3e9, 1e9, 3.0) == pytest.approx(2.0 + 1.0)
    assert host_link_bytes_per_s(CATALOG.accelerators["nvidia-gb200"]) == 450e9
    assert host_link_bytes_per_s(CATALOG.accelerators["nvidia-a100-sxm-80gb"]) == 32e9


def test_more_layers_than_a_stage_has_is_a_422_naming_the_field():
    with pytest.raises(InvalidRequest) as err:
        estimate_training(_body(20, pipeline=4), CATALOG)  # 80 layers / 4 stages = 20 per stage
    assert "training.activation_offload_layers" in err.value.errors
    assert "19" in " ".join(err.value.errors["training.activation_offload_layers"])
    estimate_training(_body(19, pipeline=4), CATALOG)


def test_the_search_evaluates_a_given_offload_as_the_single_estimate_does():
    """A given activation_offload_layers is searched, not refused: the search's best layout with 10 layers offloaded
    per stage is the single estimate of that layout with the offload (seconds and memory, 1e-9), needs less memory
    than without, and layouts whose stages have no more layers than the offload are left out (request._offload)."""
    from dataclasses import replace

    from scalecost.engine.training.search.rank import Candidate, Constraints, Offer, prepare, search
    from scalecost.engine.training.search.space import default_space, enumerate_layouts

    def best(offload: int):
        body = _body(offload)
        body["training"].pop("micro_batch_size")
        body["hardware"] = {"accelerator": "nvidia-gb200", "count": 1}
        base = build_plan(body, CATALOG)
        space = replace(default_space(base, 64), device_counts=(64,), tensor=(1, 2), pipeline=(1, 2, 8))
        candidate = Candidate(base, (Offer("request", "on-demand", 1.0),))
        found = search(prepare([candidate], lambda _plan: space), Constraints(), "fastest", 1, None)
        return found.results[0], enumerate_layouts(base, space)

    plain, _ = best(0)
    offloaded, layouts = best(10)  # 80 layers: 10 per stage at pipeline 8, so no offload of 10 there
    assert set(layouts.pipeline.tolist()) == {1, 2}
    single = _body(10)
    single["training"]["micro_batch_size"] = offloaded.micro_batch
    single["hardware"]["parallelism"] = offloaded.parallelism()
    answer = estimate_training(single, CATALOG)
    assert answer["time"]["seconds"] == pytest.approx(offloaded.seconds, rel=1e-9)
    assert answer["memory"]["per_device_bytes"] == pytest.approx(offloaded.memory_bytes, rel=1e-9)
    assert answer["assumptions"]["activation_offload_layers"] == 10
    without = estimate_training(
        {**single, "training": {**single["training"], "activation_offload_layers": 0}}, CATALOG
    )
    assert answer["memory"]["per_device_bytes"] < without["memory"]["per_device_bytes"]
    assert plain.memory_bytes != offloaded.memory_bytes or plain.parallelism() != offloaded.parallelism()


def test_parallelism_auto_and_the_planner_search_a_given_offload():
    body = _body(10)
    body["hardware"]["parallelism"] = "auto"
    chosen = estimate_training(body, CATALOG)
    assert chosen["assumptions"]["activation_offload_layers"] == 10
    assert chosen["assumptions"]["auto"]["parallelism"] == "auto"
    plan_body = {
        "model": body["model"],
        "training": body["training"],
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "device_counts": [64]},
        "cost": {"usd_per_accelerator_hour": 1.0},
    }
    best = plan_training(plan_body, CATALOG)["best"]  # with the full estimate of its layout
    assert best["estimate"]["assumptions"]["activation_offload_layers"] == 10
    assert best["seconds"] == pytest.approx(best["estimate"]["time"]["seconds"], rel=1e-9)
    assert best["memory_per_device_bytes"] == pytest.approx(
        best["estimate"]["memory"]["per_device_bytes"], rel=1e-9
    )
    assert best["estimate"]["time"]["breakdown"]["activation_offload_s"] > 0


def test_advice_candidates_never_carry_an_offload_chosen_to_fit():
    plan = build_plan(_body(None), CATALOG)
    fitted, ev = offload_to_fit(plan, evaluate(plan))
    assert ev.fits and fitted.offload_source == "fit" and fitted.offload_layers > 0
    moved = fitted.on(CATALOG.accelerators["nvidia-h100-sxm-80gb"], 1.0)
    patched = fitted.with_fields(recompute="full")
    assert (moved.offload_layers, moved.offload_source) == (0, "default")
    assert (patched.offload_layers, patched.offload_source) == (0, "default")
    given = build_plan(_body(40), CATALOG).with_fields(recompute="full")
    assert (given.offload_layers, given.offload_source) == (40, "given")


def test_no_offload_is_chosen_where_megatron_core_refuses_it():
    """Megatron-Core's TransformerConfig refuses CPU offloading with pipeline parallelism and with activation
    recomputation: such plans stay "does not fit" rather than fit by an offload that cannot run."""
    piped = _body(None, pipeline=4)
    piped["training"]["micro_batch_size"] = 1
    full = _body(None, seq=32768)
    full["training"]["activation_recomputation"] = "full"
    for body in (piped, full):
        answer = estimate_training(body, CATALOG)
        assert answer["assumptions"]["activation_offload_layers"] == 0, body


def test_the_cheaper_part_scan_judges_other_parts_without_the_chosen_offload():
    """With a price on GB200 the scan once reused the offloaded plan's memory on B200 and claimed a cheaper run that,
    applied, does not fit (750 GiB of 179)."""
    import copy

    from scalecost.engine.hardware import Catalog, Price
    from scalecost.engine.patch import merge_patch

    prices = {**CATALOG.prices, "nvidia-gb200": (Price("test", 20.0),)}
    priced = Catalog(
        accelerators=dict(CATALOG.accelerators),
        prices=prices,
        today=CATALOG.today,
        stale_after_days=CATALOG.stale_after_days,
    )
    body = _body(None)
    body["training"]["micro_batch_size"] = 4
    body.pop("cost")
    body["output"] = {"recommendations": True}
    answer = estimate_training(body, priced)
    assert answer["assumptions"]["activation_offload_layers"] > 0
    for rec in answer["recommendations"]:
        applied = estimate_training(merge_patch(copy.deepcopy(body), rec["change"]), priced)
        assert applied["memory"]["fits"], rec["message"]


def test_offload_copies_move_the_bytes_memory_keeps_for_fp4():
    """The copies are the offloaded layers' saved activations: under NVFP4 the GEMM inputs are kept at ~0.56 bytes
    (activations.SAVED_GEMM_INPUT_BYTES), and the copies were sized as 16-bit ones. Over PCIe (B200) they are exposed."""
    from scalecost.engine.training.model.activations import saved_input_bytes
    from scalecost.engine.training.model.step import StepModel

    body = _body(40, accelerator="nvidia-b200")
    body["training"]["precision"] = "fp4"
    plan = build_plan(body, CATALOG)
    shape, par = plan.model.shape, plan.par

    def kept(input_bytes: float) -> float:
        return layer_activation_bytes(
            shape, par, plan.recompute, plan.flash_attention, 8192, 2, 2.0, input_bytes=input_bytes
        )[0]

    ev = evaluate(plan)
    model = StepModel(plan, ev.basis.flops, ev.basis.params, ev.basis.work)
    compute_s, bandwidth = 1.0, host_link_bytes_per_s(plan.accelerator)
    got = model._offload_s(2, ev.micro_batches, compute_s)
    want = exposed_offload_s(
        40 * kept(saved_input_bytes("fp4")) * ev.micro_batches, bandwidth, compute_s * 40 / 80
    )
    sixteen = exposed_offload_s(40 * kept(2.0) * ev.micro_batches, bandwidth, compute_s * 40 / 80)
    assert got == pytest.approx(want, rel=1e-12) and want < sixteen


def _maxtext_405b(offload: int | None = None, remat: str | None = "full", pipeline: int = 1) -> dict:
    """tpu-recipes' Llama 3.1 405B on v5p-1024 (512 chips, pure FSDP, 2 x 8,192 tokens per chip), which runs only with
    layer tensors offloaded to the host (remat_policy custom: context and mlpwo offloaded)."""
    training: dict = {"tokens": 1e12, "sequence_length": 8192, "global_batch_size": 1024 // pipeline}
    training["micro_batch_size"] = 2
    if remat is not None:
        training["activation_recomputation"] = remat
    if offload is not None:
        training["activation_offload_layers"] = offload
    return {
        "model": {"preset": "llama-3.1-405b"},
        "training": training,
        "hardware": {
            "accelerator": "google-tpu-v5p",
            "count": 512,
            "parallelism": {"data": 512 // pipeline, "pipeline": pipeline, "zero_stage": 3},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def test_a_tpu_plan_that_does_not_fit_under_full_remat_offloads_the_fewest_layers_that_fit():
    """Google's TPU recipes keep layer inputs and projections in host memory to fit (7 of the 8 tpu-recipes
    configurations read): a request that names no offload gets the fewest layers per stage that fit, after the remat
    ladder; asked for none, it stays "does not fit"."""
    refused = estimate_training(_maxtext_405b(offload=0), CATALOG)
    assert not refused["memory"]["fits"]
    for remat in ("full", "dots"):  # MaxText's policies, named
        answer = estimate_training(_maxtext_405b(remat=remat), CATALOG)
        chosen = answer["assumptions"]["activation_offload_layers"]
        assert answer["memory"]["fits"] and 0 < chosen < 125
        assert answer["assumptions"]["activation_recomputation"] == remat
        source = answer["assumptions"]["activation_offload_source"]
        assert source.startswith("chosen") and "TPU" in source
        assert estimate_training(_maxtext_405b(offload=chosen, remat=remat), CATALOG)["memory"]["fits"]
        assert not estimate_training(_maxtext_405b(offload=chosen - 1, remat=remat), CATALOG)["memory"][
            "fits"
        ]
    # a pipeline is not offered one (the recipes run one stage), as on the Grace parts
    staged = estimate_training(_maxtext_405b(pipeline=4), CATALOG)
    assert staged["assumptions"]["activation_offload_layers"] == 0


def test_a_tpu_request_naming_no_remat_weighs_minimal_with_an_offload_against_more_remat():
    """Where 'minimal' (dots) does not fit on its own, dots with the fewest offloaded layers is weighed against the
    next remat step (with an offload where it needs one) and the faster taken (MaxText's recipes offload tensors
    rather than recompute them): before, full recomputation was taken even when dots plus an offload was faster.
    Neither Megatron setting (none, selective) is offered an offload on a TPU: no recipe moves their saved sets."""
    ladder = estimate_training(_maxtext_405b(remat=None), CATALOG)
    full = estimate_training(_maxtext_405b(remat="full"), CATALOG)
    dots = estimate_training(_maxtext_405b(remat="dots"), CATALOG)
    assert ladder["memory"]["fits"]
    fastest = min((full, dots), key=lambda a: a["time"]["seconds"])
    assert ladder["time"]["seconds"] == fastest["time"]["seconds"]
    assert (
        ladder["assumptions"]["activation_recomputation"]
        == fastest["assumptions"]["activation_recomputation"]
    )
    assert ladder["assumptions"]["activation_recomputation_source"].startswith("chosen")
    bloom = {
        "model": {"preset": "bloom-176b"},
        "training": {
            "tokens": 1e12,
            "sequence_length": 2048,
            "micro_batch_size": 8,
            "global_batch_size": 16384,
        },
        "hardware": {
            "accelerator": "google-tpu-v5p",
            "count": 1024,
            "parallelism": {"data": 256, "tensor": 4, "pipeline": 1, "zero_stage": 2},
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }

    def naming(remat: str) -> dict:
        return estimate_training(
            {**bloom, "training": {**bloom["training"], "activation_recomputation": remat}}, CATALOG
        )

    answer = estimate_training(bloom, CATALOG)
    assert answer["assumptions"]["activation_recomputation"] == "dots"
    assert answer["assumptions"]["activation_offload_layers"] > 0
    assert answer["time"]["seconds"] < naming("full")["time"]["seconds"]
    for megatron in ("none", "selective"):
        named = naming(megatron)
        assert not named["memory"]["fits"] and named["assumptions"]["activation_offload_layers"] == 0
