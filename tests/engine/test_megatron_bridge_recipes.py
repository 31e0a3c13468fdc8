"""Megatron-Bridge's performance recipes (NVIDIA-NeMo/Megatron-Bridge@067f987 src/megatron/bridge/perf_recipes/
<family>/<gpu>/*.py, the configurations behind the NeMo 26.x performance summaries), sent with only the columns those
tables publish (GPUs, GBS, MBS, sequence, TP, PP, CP, VP, EP, FSDP, precision), must be accepted and fit, as
tests/engine/test_nemo_configs.py checks NeMo 25.x's. tests/engine/data/megatron_bridge_perf_recipes.csv holds the 138
pre-training recipes of models the catalog has a preset for, on parts it has (H100, B200, GB200, GB300), read from
each recipe function's assignments; the recipe-only settings (expert_tensor, CPU offload, recomputation) are kept for
reference, not sent. Left out, with the reason, in tests/engine/data/README.md: 25 "legacy-scaled" recipes (a larger
count's layout with a scaled batch), 5 whose batch the parser does not reach, 8 whose layout cannot run as written
(expert degrees above the ranks of a pipeline stage) and 7 Llama 3.1 405B recipes predicted not to fit that no
published performance row backs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from scalecost.engine import estimate_training

from .conftest import load_catalog
from .test_nemo_configs import _request

CATALOG = load_catalog()
ROWS = list(csv.DictReader((Path(__file__).with_name("data") / "megatron_bridge_perf_recipes.csv").open()))


def test_the_fixture_covers_every_family_and_part():
    assert len(ROWS) == 138
    assert {r["system"] for r in ROWS} == {"h100", "b200", "gb200", "gb300"}
    assert "kimi-k2" in {r["model"] for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["recipe"])
def test_every_recipe_is_accepted_and_fits(row):
    answer = estimate_training(_request(row), CATALOG)
    memory = answer["memory"]
    print(f"{row['recipe']}: {memory['human']['per_device']} of {memory['human']['device_capacity']}")
    assert memory["fits"], memory["human"]
