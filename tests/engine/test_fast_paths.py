"""The engine's fast paths give the answers of the slow ones they replace.

The training advice evaluates one validated plan on every catalog part with the plan's Basis (memory does not depend
on the accelerator), prunes parts with floors of their cost, and applies some merge patches to the plan instead of
re-parsing the patched request. Each shortcut is exact only while the physics keeps the property it relies on; these
tests fail when a change to the formulas breaks one (then adapt the shortcut, or drop it).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from scalecost.engine import merge_patch
from scalecost.engine.training.model.compute import compute_floor_s
from scalecost.engine.training.model.evaluate import basis, evaluate, local_seconds_floor, seconds_floor
from scalecost.engine.training.model.step import StepModel
from scalecost.engine.training.request import build_plan

LAYOUTS = [
    (
        "llama-2-70b",
        2048,
        {"data": 64, "tensor": 8, "pipeline": 4, "zero_stage": 1, "sequence_parallel": True},
    ),
    ("llama-2-7b", 8, {"data": 8, "zero_stage": 1}),
    ("llama-2-7b", 8, {"data": 8}),
    ("mixtral-8x7b", 64, {"data": 16, "tensor": 2, "pipeline": 2, "expert": 8}),
    ("llama-3-8b", 64, {"data": 8, "tensor": 2, "pipeline": 2, "context": 2, "zero_stage": 3}),
    ("gpt-2-1.5b", 16, {"data": 4, "pipeline": 4, "virtual_pipeline": 2}),
]


def _requests():
    for (preset, count, par), micro, recompute in itertools.product(
        LAYOUTS, (None, 1), ("selective", "none")
    ):
        training = {"tokens": 20e9, "global_batch_size": 512, "sequence_length": 1024}
        if micro:
            training["micro_batch_size"] = micro
        training["activation_recomputation"] = recompute
        yield {
            "model": {"preset": preset},
            "training": training,
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": count, "parallelism": par},
        }


REQUESTS = list(_requests())


@pytest.mark.parametrize("request_body", REQUESTS)
def test_a_plan_on_another_part_evaluates_as_the_replaced_plan(request_body, catalog):
    plan = build_plan(request_body, catalog)
    known = basis(plan)
    for acc in catalog.accelerators.values():
        if not acc.supports(plan.precision):
            continue
        fast = evaluate(plan.on(acc, 2.5), known)
        slow = evaluate(replace(plan, accelerator=acc, usd_per_hour=2.5))
        assert (fast.seconds, fast.fits, fast.memory, fast.micro_batch, fast.step) == (
            slow.seconds,
            slow.fits,
            slow.memory,
            slow.micro_batch,
            slow.step,
        ), acc.id


@pytest.mark.parametrize("request_body", REQUESTS)
def test_the_scan_floors_never_exceed_the_time(request_body, catalog):
    plan = build_plan(request_body, catalog)
    ev = evaluate(plan)
    known = ev.basis
    largest, memory = known.candidates[0]
    for acc in catalog.accelerators.values():
        if not acc.supports(plan.precision):
            continue
        on_acc = plan.on(acc, 1.0)
        actual = evaluate(on_acc, known)
        model = StepModel(on_acc, known.flops, known.params, known.work)
        first = ev.step_equivalents * compute_floor_s(known.work, acc, plan.precision, largest, memory)
        assert first <= actual.seconds, acc.id
        assert local_seconds_floor(on_acc, known, model) <= actual.seconds, acc.id
        assert seconds_floor(on_acc, known, model) <= actual.seconds, acc.id


@pytest.mark.parametrize("request_body", REQUESTS)
def test_memory_levers_applied_to_the_plan_equal_the_reparsed_request(request_body, catalog):
    plan = build_plan(request_body, catalog)
    changes = [
        ({"training": {"activation_recomputation": "full"}}, {"recompute": "full"}),
        ({"hardware": {"parallelism": {"zero_stage": 3}}}, {"par": replace(plan.par, zero_stage=3)}),
        ({"training": {"micro_batch_size": None}}, {"micro_batch": None}),
    ]
    for change, fields in changes:
        assert plan.with_fields(**fields) == build_plan(merge_patch(request_body, change), catalog), change
