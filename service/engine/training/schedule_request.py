"""The training request's schedule: utilization, pre-training, checkpoints, validation and the goodput model's
inputs (part of request.build_plan)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..architecture import ModelSpec
from ..i18n import _
from ..parallelism import DEVICES_PER_NODE
from .model.checkpoint import CHECKPOINT_BYTES_PER_S_PER_NODE
from .model.goodput import MAX_STRAGGLER_SHARE


def parse_schedule(
    training: Mapping[str, Any],
    hardware: Mapping[str, Any],
    model: ModelSpec | None,
    unit: str,
    count: int,
    bad: Any,
) -> dict[str, Any]:
    """The plan's utilization, pre-training, checkpoint and validation fields."""
    utilization = hardware.get("utilization")
    if utilization is not None and not 0.0 < float(utilization) <= 1.0:
        bad("hardware.utilization", _("Must be in (0, 1]."))
    pretraining_units = 0.0
    if training.get("include_pretraining"):
        if unit == "sample":
            bad("training.include_pretraining", _("Pre-training phase is defined for token models only."))
        elif model is not None:
            # compute-optimal default D = 20·N (Hoffmann et al. 2022)
            pretraining_units = float(training.get("pretraining_tokens") or 20.0 * model.total_parameters)
    ckpt_interval = training.get("checkpoint_interval_steps")
    if ckpt_interval is not None and int(ckpt_interval) < 1:
        bad("training.checkpoint_interval_steps", _("Must be at least 1."))
    nodes = math.ceil(count / DEVICES_PER_NODE)
    ckpt_bw = float(
        training.get("checkpoint_write_bandwidth_bytes_per_s") or CHECKPOINT_BYTES_PER_S_PER_NODE * nodes
    )
    if ckpt_bw <= 0:
        bad("training.checkpoint_write_bandwidth_bytes_per_s", _("Must be positive."))
    validation: Mapping[str, Any] = training.get("validation") or {}
    val_interval = validation.get("interval_steps")
    val_units = float(validation.get("tokens") or validation.get("samples") or 0.0)
    if val_interval is not None and int(val_interval) < 1:
        bad("training.validation.interval_steps", _("Must be at least 1."))
    return {
        **_goodput_fields(training, bad),
        "pretraining_units": pretraining_units,
        "utilization": float(utilization) if utilization is not None else None,
        "checkpoint_interval": int(ckpt_interval) if ckpt_interval else None,
        "checkpoint_bytes_per_s": ckpt_bw,
        "validation_interval": int(val_interval) if val_interval and val_units > 0 else None,
        "validation_units": val_units,
    }


def _goodput_fields(training: Mapping[str, Any], bad: Any) -> dict[str, Any]:
    """training.goodput (a fraction that replaces the interruption model), or the model's two rates."""
    fields: dict[str, Any] = {}
    given = training.get("goodput")
    if given is not None:
        if not 0.0 < float(given) <= 1.0:
            # "90 %" as a value: a literal "% o" in a msgid reads as a %-format to Babel's compile check
            bad(
                "training.goodput",
                _("Must be in (0, 1]: a fraction (0.9 means {percent} of the wall time steps).").format(
                    percent="90 %"
                ),
            )
        fields["goodput"] = float(given)
    rate = training.get("interruptions_per_device_hour")
    if rate is not None:
        if float(rate) < 0:
            bad("training.interruptions_per_device_hour", _("Must be ≥ 0."))
        fields["interruptions_per_device_hour"] = float(rate)
    restart = training.get("restart_seconds")
    if restart is not None:
        if float(restart) < 0:
            bad("training.restart_seconds", _("Must be ≥ 0."))
        fields["restart_s"] = float(restart)
    slow = training.get("straggler_share")
    if slow is not None:
        if not 0.0 <= float(slow) <= MAX_STRAGGLER_SHARE:
            bad(
                "training.straggler_share",
                _("Must be in [0, {most}]: a fraction of the stepping time.").format(
                    most=MAX_STRAGGLER_SHARE
                ),
            )
        fields["straggler_share"] = float(slow)
    return fields
