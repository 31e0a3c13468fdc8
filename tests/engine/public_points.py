"""The public calibration set (tests/engine/data/, with its README) as estimate requests, and the error table.

Each throughput point becomes a training request with the published layout, micro-batch and precision;
predicted tokens/s per device is compared with the published figure. Points the engine cannot express yet are
reported as skipped with the reason (not silently dropped).

Run `python -m tests.engine.public_points` for the table.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.engine import InvalidRequest, estimate_training
from service.engine.hardware import Catalog

DATA = Path(__file__).with_name("data")
# Accelerators of the set that the catalog lacks. torchtitan's H100s are Meta's 96 GB HBM2e parts capped at
# 500 W (the benchmark files say so): another part, with lower clocks than the 700 W catalog H100, so they are
# reported as skipped rather than read as a catalog H100.
ALIASES: dict[str, str] = {}


@dataclass(frozen=True)
class Outcome:
    label: str
    published: float | None  # tokens/s/device
    predicted: float | None
    fits: bool | None
    skipped: str | None = None

    @property
    def error(self) -> float | None:
        if self.published and self.predicted:
            return self.predicted / self.published - 1.0
        return None


def _int(row: dict[str, str], key: str, default: int) -> int:
    value = (row.get(key) or "").strip()
    return int(float(value)) if value else default


def _model(row: dict[str, str]) -> dict[str, Any]:
    if row["model"]:
        return {"preset": row["model"]}
    model: dict[str, Any] = {
        "architecture": "transformer",
        "layers": _int(row, "layers", 0),
        "hidden_size": _int(row, "hidden", 0),
        "attention_heads": _int(row, "heads", 0),
        "kv_heads": _int(row, "kv_heads", _int(row, "heads", 0)),
        "ffn_hidden_size": _int(row, "ffn", 4 * _int(row, "hidden", 0)),
        "ffn_type": row["ffn_type"] or "swiglu",
        "vocab_size": _int(row, "vocab", 32000),
        "max_context_tokens": max(_int(row, "seq_len", 2048), 2048),
    }
    if _int(row, "experts", 1) > 1:
        model["experts"] = _int(row, "experts", 1)
        model["experts_per_token"] = _int(row, "experts_per_token", 1)
    return model


def throughput_request(row: dict[str, str]) -> dict[str, Any]:
    devices = _int(row, "devices", 1)
    tp, pp, cp = _int(row, "tp", 1), _int(row, "pp", 1), _int(row, "cp", 1)
    data = devices // (tp * pp * cp)
    parallelism: dict[str, Any] = {
        "data": data,
        "tensor": tp,
        "pipeline": pp,
        "context": cp,
        "zero_stage": _int(row, "zero_stage", 1),
        "sequence_parallel": tp > 1,
    }
    if pp > 1 and _int(row, "vp", 1) > 1:
        parallelism["virtual_pipeline"] = _int(row, "vp", 1)
    if _int(row, "ep", 1) > 1:
        parallelism["expert"] = _int(row, "ep", 1)
    seq = _int(row, "seq_len", 2048)
    training: dict[str, Any] = {
        "tokens": 1e12,
        "sequence_length": seq,
        "global_batch_size": _int(row, "global_batch", data),
        "micro_batch_size": _int(row, "micro_batch", 1),
        "precision": row["precision"] or "bf16",
        "activation_recomputation": row["recompute"] or "selective",
    }
    return {
        "model": _model(row),
        "training": training,
        "hardware": {
            "accelerator": ALIASES.get(row["accelerator"], row["accelerator"]),
            "count": devices,
            "parallelism": parallelism,
        },
        "cost": {"usd_per_accelerator_hour": 1.0},
        "output": {"recommendations": False},
    }


def throughput_rows() -> list[dict[str, str]]:
    with (DATA / "public_training_throughput.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def evaluate_throughput(catalog: Catalog) -> list[Outcome]:
    out = []
    for row in throughput_rows():
        published = float(row["published_tokens_per_s_per_device"] or 0) or None
        if published is None:
            out.append(Outcome(row["label"], None, None, None, "only TFLOP/s or MFU published"))
            continue
        request = throughput_request(row)
        if request["hardware"]["accelerator"] not in catalog.accelerators:
            out.append(
                Outcome(row["label"], published, None, None, f"{row['accelerator']} is not in the catalog")
            )
            continue
        try:
            answer = estimate_training(request, catalog)
        except InvalidRequest as err:
            out.append(Outcome(row["label"], published, None, None, "422: " + "; ".join(sorted(err.errors))))
            continue
        predicted = answer["time"]["tokens_per_second"] / _int(row, "devices", 1)
        out.append(Outcome(row["label"], published, predicted, answer["memory"]["fits"]))
    return out


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    errors = [abs(o.error) for o in outcomes if o.error is not None]
    return {
        "points": len(errors),
        "median_abs_error": statistics.median(errors) if errors else float("nan"),
        "within_25_percent": sum(e <= 0.25 for e in errors) / len(errors) if errors else float("nan"),
        "not_fitting": sum(1 for o in outcomes if o.fits is False),
    }


def table(outcomes: list[Outcome]) -> str:
    lines = [f"{'point':<60} {'published':>10} {'predicted':>10} {'error':>8} fits"]
    for o in outcomes:
        if o.skipped:
            lines.append(f"{o.label[:60]:<60} skipped: {o.skipped[:80]}")
            continue
        lines.append(
            f"{o.label[:60]:<60} {o.published:10.0f} {o.predicted:10.0f} {o.error:+8.1%} {'yes' if o.fits else 'NO'}"
        )
    s = summary(outcomes)
    lines.append(
        f"{s['points']} points: median |error| {s['median_abs_error']:.1%}, within ±25 %: "
        f"{s['within_25_percent']:.0%}, predicted not to fit: {s['not_fitting']}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    from tests.engine.reference_catalog import load_catalog

    print(table(evaluate_throughput(load_catalog())))
