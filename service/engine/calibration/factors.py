"""Calibration factors: what a profile may change, their prior and bounds, and how they are applied.

A profile moves three achieved rates of one accelerator, each relative to what the default model assumes
(docs/formulas.md, "Calibration profiles"):
- compute: the achieved matmul rate (every precision's dense peak × compute);
- memory_bandwidth: the achieved HBM/DRAM rate (memory bandwidth × memory_bandwidth);
- network: the achieved interconnect rate (the scale-up fabric and the per-device NIC × network).
They are applied at the accelerator: the estimate runs unchanged on a catalog whose part is a scaled copy, so the
model is written once and the planners, batches and scenarios need nothing of their own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..hardware import Accelerator, Catalog
from ..parallelism import NIC_EFFICIENCY, scale_out_bytes_per_s

FACTORS = ("compute", "memory_bandwidth", "network")
# Prior on log(factor): centred on the defaults (0), 1σ = ×/÷ 1.16 — the defaults' median error on the public points
# of the stacks they were fitted on is 6-15 % (docs/formulas.md, "Calibration profiles")
PRIOR_SIGMA = 0.15
# Spread of one measured metric around the model once the factors are right, in log units: run-to-run variation
# plus what three factors cannot express (engine scheduling, kernels by shape). With PRIOR_SIGMA, 2 points close
# about a third of a gap and 20 points about 90 % of it (tests/engine/test_calibration_fit.py pins both)
NOISE_SIGMA = 0.3
LOWEST = 0.2  # no factor below 1/5 of the defaults: beyond that the request, not the rate, is wrong
HIGHEST = 2.0  # nor above twice them, whatever the efficiency bound below allows
# The catalog's scale-up fabric classes an HBM GPU by a fabric of at least this rate (inference/model/efficiency.py
# accelerator_class, allreduce_latency_s): a slower achieved fabric keeps the part's class (its kernels are the same)
HBM_FABRIC_BYTES_PER_S = 200e9


@dataclass(frozen=True)
class Bounds:
    low: float
    high: float
    why: str


def bounds(kind: str, defaults: Mapping[str, float]) -> dict[str, Bounds]:
    """Each factor's physical bounds: the achieved rate never exceeds the datasheet (factor × the default's share of
    the datasheet ≤ 1), within [LOWEST, HIGHEST]. `defaults` holds the default shares the points' answers reported:
    compute (the best GEMM efficiency or the serving compute efficiency), memory_bandwidth (the serving MBU)."""

    def upper(share: float | None, fallback: float) -> float:
        return min(HIGHEST, 1.0 / share) if share else fallback

    compute = upper(defaults.get("compute"), HIGHEST)
    # training reads the datasheet memory rate as it is (training/model/compute.py): 1 is the physical bound
    memory = 1.0 if kind == "training" else upper(defaults.get("memory_bandwidth"), HIGHEST)
    return {
        "compute": Bounds(LOWEST, max(compute, 1.0), "factor × default GEMM efficiency ≤ 1"),
        "memory_bandwidth": Bounds(
            LOWEST, max(memory, 1.0), "factor × default share of datasheet bandwidth ≤ 1"
        ),
        # NCCL reaches NIC_EFFICIENCY (0.8) of the line rate and of the fabric: at most 1/0.8 more
        "network": Bounds(LOWEST, 1.0 / NIC_EFFICIENCY, "NCCL at most the line rate (default 0.8 of it)"),
    }


def scaled_accelerator(acc: Accelerator, factors: Mapping[str, float]) -> Accelerator:
    """A copy of `acc` whose achieved rates are the profile's: peaks × compute, memory bandwidth × memory_bandwidth,
    fabric and NIC × network. Same id, vendor and kind, so the stack and class rules still find the part."""
    compute = factors.get("compute", 1.0)
    memory = factors.get("memory_bandwidth", 1.0)
    network = factors.get("network", 1.0)
    peaks = {p: (v * compute if v else v) for p, v in acc.peak_flops_per_s.items()}
    fabric = acc.interconnect_bandwidth_bytes_per_s
    nic = acc.scale_out_bandwidth_bytes_per_s
    if fabric:
        if nic is None:  # the engine's default NIC for the part, as a catalog figure it then scales
            nic = scale_out_bytes_per_s(acc) / NIC_EFFICIENCY
        floor = HBM_FABRIC_BYTES_PER_S if fabric >= HBM_FABRIC_BYTES_PER_S else 0.0
        fabric = max(fabric * network, floor)
    if nic is not None:
        nic = nic * network
    return replace(
        acc,
        peak_flops_per_s=peaks,
        memory_bandwidth_bytes_per_s=acc.memory_bandwidth_bytes_per_s * memory,
        interconnect_bandwidth_bytes_per_s=fabric,
        scale_out_bandwidth_bytes_per_s=nic,
    )


def scaled_catalog(
    catalog: Catalog, factors: Mapping[str, float], accelerator_ids: tuple[str, ...]
) -> Catalog:
    """`catalog` with the named parts scaled (scaled_accelerator); prices and the rest unchanged."""
    if all(math.isclose(factors.get(f, 1.0), 1.0) for f in FACTORS):
        return catalog
    parts = dict(catalog.accelerators)
    for acc_id in accelerator_ids:
        if acc_id in parts:
            parts[acc_id] = scaled_accelerator(parts[acc_id], factors)
    return replace(catalog, accelerators=parts)
