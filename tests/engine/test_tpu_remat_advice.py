"""The advice on a TPU plan whose recomputation the engine chose (fit_defaults.remat_to_fit: dots before full)
quotes what a client applying the change gets, and the cheaper-part scan judges other parts under their own
recomputation (cases a scripted review found in session 25)."""

from __future__ import annotations

import copy

from scalecost.engine import estimate_training
from scalecost.engine.patch import merge_patch
from scalecost.engine.units import human_duration, human_usd

from .conftest import load_catalog

CATALOG = load_catalog()
OPS = {
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
}


def _body(accelerator: str, count: int, **training) -> dict:
    return {
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e10, "sequence_length": 2048, **training},
        "hardware": {"accelerator": accelerator, "count": count},
    }


def _applied(body: dict, rec: dict) -> dict:
    return estimate_training(merge_patch(copy.deepcopy(body), rec["change"]), CATALOG)


def _value(answer: dict, field: str):
    value = answer
    for key in field.split("."):
        value = value[key]
    return value


def test_the_fit_advice_quotes_the_recomputation_the_client_gets():
    body = _body("google-tpu-v5e", 64, tokens=1e11)
    answer = estimate_training(body, CATALOG)
    assert not answer["memory"]["fits"] and answer["assumptions"]["activation_recomputation"] == "full"
    (fix,) = [r for r in answer["recommendations"] if r["code"] == "does_not_fit"]
    applied = _applied(body, fix)
    assert applied["assumptions"]["activation_recomputation"] == "dots"
    assert human_duration(applied["time"]["seconds"]) in fix["message"]


def test_a_move_to_another_tpu_quotes_the_recomputation_the_client_gets():
    body = _body("google-tpu-v5e", 8)
    body["hardware"]["parallelism"] = {"tensor": 2, "data": 4}
    answer = estimate_training(body, CATALOG)
    moves = [r for r in answer["recommendations"] if r["code"] == "cheaper_accelerator"]
    assert moves
    for rec in moves:
        applied = _applied(body, rec)
        # compute cost as the offer bills it: whole instances from start-up, rounded up to the increment
        cost = applied["cost"]["billed_accelerator_hours"] * applied["cost"]["usd_per_accelerator_hour"]
        assert human_usd(cost) in rec["message"]


def test_advice_on_a_planned_layout_holds_its_claims():
    body = _body("google-tpu-v5e", 512, tokens=1e9, micro_batch_size=2, global_batch_size=2048)
    body["training"]["checkpoint_interval_steps"] = 2000
    body["hardware"]["parallelism"] = "auto"
    answer = estimate_training(body, CATALOG)
    for rec in answer["recommendations"]:
        expected = rec["expected"]
        assert OPS[expected["op"]](_value(_applied(body, rec), expected["field"]), expected["value"]), rec


def test_the_cheaper_part_scan_bounds_other_parts_under_their_own_recomputation():
    """GPUs run selective where the TPU plan runs full: the scan once bounded them with the TPU plan's work and
    picked RTX 6000 Ada over a cheaper H100, or nothing over a B200 17 % cheaper."""
    small = _body("google-tpu-v5e", 4, sequence_length=8192, micro_batch_size=1, global_batch_size=512)
    small["hardware"]["parallelism"] = {"tensor": 4}
    wide = _body("google-tpu-v5p", 128, micro_batch_size=4, global_batch_size=2048)
    wide["hardware"]["parallelism"] = {"data": 128, "zero_stage": 0}
    # billed as the offers sell them (start-up included), the one-hour B200 run ($2,187) costs more than MI300X's
    # 2.5 hours ($2,035): the start-up weighs on the shorter run
    for body, part in ((small, "nvidia-h100-sxm-80gb"), (wide, "amd-mi300x")):
        answer = estimate_training(body, CATALOG)
        moves = [r for r in answer["recommendations"] if r["code"] == "cheaper_accelerator"]
        assert [r["change"]["hardware"]["accelerator"] for r in moves] == [part]
