"""A calibration profile's residuals as prediction intervals (engine/accuracy/profile.py): the sign turned once,
one training residual per point, and the small-sample rule (docs/formulas.md, "With a calibration profile")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scalecost.engine.accuracy.intervals import ClassStats, interval_factors
from scalecost.engine.accuracy.profile import PRIOR_POINTS, from_profile, interval_for, pooled_factors

PRIOR = ClassStats(100, 0.0, 0.3, 0.7, 1.4)  # a default class: half-width ln(2)/2 in log units


def _profile(rows, informed=("compute",)) -> dict:
    factors = {
        f: {"value": 1.0, "informed": f in informed} for f in ("compute", "memory_bandwidth", "network")
    }
    return {"id": 7, "name": "p", "revision": 3, "factors": factors, "residuals": rows}


def test_the_sign_is_turned_to_measured_over_predicted_in_each_metrics_direction():
    # the fit stores ln(predicted / measured): 0.2 on tokens/s means the run is slower than predicted (time up)
    rows = [
        {"point": 0, "metric": "tokens_per_second", "log_ratio": 0.2},
        {"point": 0, "metric": "step_seconds", "log_ratio": -0.2},  # the same point: counted once
        {"point": 1, "metric": "step_seconds", "log_ratio": -0.1},  # step shorter predicted: time up
        {
            "point": 2,
            "metric": "tokens_per_second",
            "log_ratio": float("nan"),
        },  # no figure at the fit: left out
    ]
    training = from_profile("training", _profile(rows))
    assert training is not None and training.of("time") == pytest.approx((0.2, 0.1))
    assert training.fitted == 3 and training.informed == 1 and training.revision == 3
    serving = from_profile(
        "inference", _profile([{"point": 0, "metric": "time_to_first_token_s", "log_ratio": 0.3}])
    )
    assert serving is not None and serving.of("time_to_first_token_s") == pytest.approx((-0.3,))
    assert serving.of("output_tokens_per_second") == ()
    assert from_profile("inference", _profile([])) is None


def test_few_points_keep_most_of_the_prior_width_and_many_points_reach_the_profiles_own():
    prior_width = math.log(PRIOR.p90_factor / PRIOR.p10_factor)
    tight = [0.01, -0.01]  # two points the fit matched almost exactly
    low, high = pooled_factors(tight, fitted=2 * 3, informed=1, prior=PRIOR)
    assert math.log(high / low) >= math.sqrt(PRIOR_POINTS / (2 + PRIOR_POINTS)) * prior_width
    rng = np.random.default_rng(0)
    spread = list(rng.normal(0.1, 0.05, 4000))
    widths = []
    for n in (5, 40, 400, 4000):
        low, high = pooled_factors(spread[:n], fitted=n, informed=2, prior=PRIOR)
        widths.append(math.log(high / low))
    assert widths == sorted(widths, reverse=True)  # the more points, the less the prior's width counts
    own_low, own_high = interval_factors(spread)
    assert widths[-1] == pytest.approx(math.log(own_high / own_low), rel=0.05)
    assert math.sqrt(low * high) == pytest.approx(math.exp(0.1), rel=0.02)  # the centre follows the data


def test_no_residual_to_spare_and_a_single_point_fall_back_to_the_prior():
    # as many informed factors as residuals: the fit can match them all, their spread says nothing
    low, high = pooled_factors([0.0, 0.0], fitted=2, informed=2, prior=PRIOR)
    assert math.log(high / low) == pytest.approx(math.log(PRIOR.p90_factor / PRIOR.p10_factor))
    assert pooled_factors([0.5], fitted=3, informed=1, prior=PRIOR) == (PRIOR.p10_factor, PRIOR.p90_factor)


def test_the_basis_names_the_profile_and_whether_it_set_the_interval():
    rows = [
        {"point": i, "metric": "tokens_per_second", "log_ratio": r} for i, r in enumerate((0.1, -0.05, 0.02))
    ]
    profile = from_profile("training", _profile(rows))
    found = interval_for("training/time/benchmark/cuda", "time", profile)
    assert found is not None
    basis = found[2]
    assert basis["class"] == "training/time/benchmark/cuda" and basis["source"] == "profile"
    assert basis["profile"] == {
        "id": 7,
        "name": "p",
        "revision": 3,
        "points": 3,
        "prior_points": PRIOR_POINTS,
    }
    serving = from_profile(
        "inference", _profile([{"point": 0, "metric": "time_to_first_token_s", "log_ratio": 0.1}])
    )
    missing = interval_for("inference/output_tokens_per_second/cuda", "output_tokens_per_second", serving)
    assert missing is not None and missing[2]["source"] == "defaults" and missing[2]["profile"]["points"] == 0
    plain = interval_for("inference/output_tokens_per_second/cuda", "output_tokens_per_second", None)
    assert plain is not None and missing[:2] == plain[:2] and "profile" not in plain[2]
