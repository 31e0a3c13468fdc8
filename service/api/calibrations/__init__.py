"""Calibration profiles: POST/GET/PUT/DELETE /v1/calibrations."""
