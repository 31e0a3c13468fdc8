"""The published serving sweeps parse, and every row is usable: sourced, positive, loaded, known engine and
accelerator (tests/engine/data/public_serving_sweeps.csv, issue 30 section 6)."""

from __future__ import annotations

from collections import Counter

import pytest
from scalecost.engine.presets import PRESETS

from .reference_catalog import load_catalog
from .serving_sweeps import ENGINES, NUMBER_COLUMNS, load

POINTS = load()
CATALOG = load_catalog()


def test_the_file_holds_at_least_forty_points_from_four_sources():
    sources = Counter(p.source_url.split("/blob/")[0] for p in POINTS)
    assert len(POINTS) >= 40
    assert len(sources) >= 4


def test_labels_are_unique():
    labels = Counter(p.label for p in POINTS)
    assert [label for label, n in labels.items() if n > 1] == []


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label)
def test_every_point_is_sourced_and_loaded(point):
    assert point.source_url.startswith("https://")
    if point.source_url.startswith("https://github.com/"):
        commit = point.source_url.split("/blob/")[1].split("/")[0]
        assert len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)
    assert point.concurrency is not None or point.request_rate is not None
    assert point.devices is not None and point.tensor_parallel is not None
    assert point.devices % point.tensor_parallel == 0


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label)
def test_every_number_is_positive(point):
    for column in NUMBER_COLUMNS:
        value = getattr(point, column)
        assert value is None or value > 0, column


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label)
def test_every_point_measures_latency_and_names_a_known_engine_and_accelerator(point):
    assert point.engine in ENGINES
    assert point.accelerator in CATALOG.accelerators
    assert any(
        v is not None for v in (point.ttft_s_mean, point.ttft_s_median, point.ttft_s_p90, point.ttft_s_p99)
    )
    assert any(v is not None for v in (point.tpot_s_mean, point.tpot_s_median, point.tpot_s_p90))


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label)
def test_the_model_is_a_preset_or_a_hugging_face_id(point):
    assert point.model in PRESETS or "/" in point.model


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label)
def test_times_are_in_seconds(point):
    """A TPOT of a second or more would be a millisecond figure that missed its /1000."""
    for value in (point.tpot_s_mean, point.tpot_s_median, point.tpot_s_p90):
        assert value is None or value < 1.0
