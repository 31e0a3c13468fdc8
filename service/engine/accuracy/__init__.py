"""How far an answer can be from what is then measured: prediction intervals from measured residuals.

`intervals.py` turns a set of log residuals, log(measured / predicted), into (p10, p90) multipliers on a prediction
and looks a request's class up in `residual_table.py`, which `python -m tests.engine.residuals` generates from the
public calibration points (docs/formulas.md, "Prediction intervals").
"""

from .intervals import MIN_POINTS, ClassStats, interval_factors, lookup

__all__ = ["MIN_POINTS", "ClassStats", "interval_factors", "lookup"]
