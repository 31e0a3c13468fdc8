"""Calibration profiles: fit a few achieved-rate factors to a team's own measurements, and estimate with them."""

from .apply import annotate, calibrated_catalog, estimate_calibrated, used_profile
from .factors import FACTORS, NOISE_SIGMA, PRIOR_SIGMA, scaled_accelerator, scaled_catalog
from .fit import Point, fit_profile
from .metrics import MEASURED

__all__ = [
    "FACTORS",
    "MEASURED",
    "NOISE_SIGMA",
    "PRIOR_SIGMA",
    "Point",
    "annotate",
    "calibrated_catalog",
    "estimate_calibrated",
    "fit_profile",
    "scaled_accelerator",
    "scaled_catalog",
    "used_profile",
]
