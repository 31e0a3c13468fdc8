"""Recommendations hold what they claim once applied as the client would apply them (merge patch, re-estimated),
for the cases a scripted review found broken in session 25."""

from __future__ import annotations

import copy

from scalecost.engine import estimate_training
from scalecost.engine.patch import merge_patch
from scalecost.engine.training.advice.catalog import CHEAPER_MAX_SLOWDOWN, CHEAPER_MIN_SAVING

from .conftest import load_catalog

CATALOG = load_catalog()


def _applied(body: dict, rec: dict) -> dict:
    return estimate_training(merge_patch(copy.deepcopy(body), rec["change"]), CATALOG)


def test_a_cheaper_tpu_clears_the_saving_and_slowdown_bars_under_its_own_recomputation():
    """A GPU request that names no recomputation runs in full on a TPU (MaxText's default): the scan once judged
    TPUs at the GPU's selective recomputation and claimed v6e '1 % less' or '57 % less' at 2.3x the time."""
    for count, tensor in ((16, 8), (256, 8), (128, 1)):
        body = {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": 1e11, "global_batch_size": 256, "sequence_length": 2048},
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": count,
                "parallelism": {"tensor": tensor, "data": count // tensor},
            },
        }
        answer = estimate_training(body, CATALOG)
        for rec in answer["recommendations"]:
            if rec["code"] != "cheaper_accelerator":
                continue
            applied = _applied(body, rec)
            assert applied["memory"]["fits"]
            assert applied["cost"]["total_usd"] <= (1 - CHEAPER_MIN_SAVING) * answer["cost"]["total_usd"]
            assert applied["time"]["seconds"] <= CHEAPER_MAX_SLOWDOWN * answer["time"]["seconds"]


def test_the_fit_advice_drops_a_named_default_module_list_with_full_recomputation():
    """recompute_modules ["core_attn"] (the default list, named) once stayed in the 'full recomputation' change,
    which then was a 422 ('only with selective')."""
    body = {
        "model": {"preset": "llama-2-7b"},
        "training": {
            "tokens": 1e10,
            "global_batch_size": 64,
            "sequence_length": 8192,
            "recompute_modules": ["core_attn"],
        },
        "hardware": {"accelerator": "google-tpu-v6e", "count": 4},
        "cost": {"usd_per_accelerator_hour": 1.0},
    }
    answer = estimate_training(body, CATALOG)
    assert not answer["memory"]["fits"]
    fits = [r for r in answer["recommendations"] if r["code"] == "does_not_fit"]
    assert fits and all(_applied(body, r)["memory"]["fits"] for r in fits)
