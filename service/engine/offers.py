"""What an offer sells: whole instances of a size, up to a limit, in valid slice shapes, billed in increments from
start-up (docs/formulas.md, "Offers"). Shared by both estimators and both planners: the one place that turns a run's
seconds into the seconds billed and a device count into instances.

Written over `float | ndarray` where the planners call it on arrays of layouts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from .hardware import Price

Number = TypeVar("Number", float, np.ndarray)

COVERS = (
    "instance",
    "accelerator",
)  # what a price row pays for: the whole VM, or the GPU alone (GCP GPU SKUs)

# Billing and start-up by provider where the provider publishes them (docs/formulas.md, "Offers"):
# (billing_increment_seconds, minimum_billed_seconds, startup_seconds)
PROVIDER_TERMS: dict[str, tuple[int, int, int]] = {
    # EC2 Linux: 1 s increments, 60 s minimum — aws.amazon.com/about-aws/whats-new/2017/10/announcing-amazon-ec2-per-second-billing/
    "aws": (1, 60, 600),
    # Compute Engine: 1 s increments after a 1-minute minimum — cloud.google.com/compute/vm-instance-pricing
    "gcp": (1, 60, 600),
    # Azure VMs: full minutes — azure.microsoft.com/.../if-my-virtual-machine-ran-for-6-minutes-and-45/
    "azure": (60, 60, 600),
    # Lambda on-demand: one-minute increments — old.docs.lambdalabs.com/cloud/on-demand-instance-invoicing/
    "lambda": (60, 60, 300),
    # RunPod: compute billed per second — docs.runpod.io/accounts-billing/billing
    "runpod": (1, 0, 300),
}
HYPERSCALERS = ("aws", "gcp", "azure", "oracle", "oci", "ibm", "alibaba")
# Providers the table does not name: a hyperscaler's terms, or a neocloud's (minute billing, 5 min start-up), as
# documented defaults (docs/formulas.md, "Offers"); an admin states the real ones on the price row.
HYPERSCALER_TERMS = (1, 60, 600)
NEOCLOUD_TERMS = (60, 60, 300)
# Start-up, provisioning to first step: 80-120 s to boot a GPU node (tensorfuse.io/docs/blogs/
# lazy_loading_performance_degradation) plus minutes of image pull and weight/checkpoint load (same source);
# hyperscaler GPU capacity takes longer to provision (5-15 min: io.net/p/faq-how-long-does-it-take-to-spin-up-a-gpu-on-io-net).

# Valid slice sizes (chips) of sliced parts where the vendor documents them; larger jobs are whole multiples of the
# largest slice (Multislice: cloud.google.com/tpu/docs/multislice-introduction).
SLICE_SIZES: dict[str, tuple[int, ...]] = {
    # v5e: 1x1 … 16x16 — cloud.google.com/tpu/docs/v5e
    "google-tpu-v5e": (1, 4, 8, 16, 32, 64, 128, 256),
    # v6e (Trillium): 256-chip pod, the v5e shapes — cloud.google.com/tpu/docs/v6e
    "google-tpu-v6e": (1, 4, 8, 16, 32, 64, 128, 256),
    # v5p: 2x2x1 … 16x16x24 (6,144 chips) — cloud.google.com/tpu/docs/v5p
    "google-tpu-v5p": (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144),
}

# Spot and preemptible capacity: evictions per instance-hour by provider where the provider publishes a rate, else a
# documented default (docs/formulas.md, "Spot interruptions"). An eviction takes its instance away; the job restarts
# on new capacity after the offer's start-up (provisioning, image pull, checkpoint load).
SPOT_INTERRUPTIONS_PER_HOUR: dict[str, float] = {
    # AWS Spot Instance Advisor: "frequency of interruption", the share of Spot capacity reclaimed over the trailing
    # month, in bands <5 %, 5-10 %, 10-15 %, 15-20 %, >20 % (aws.amazon.com/ec2/spot/instance-advisor/); GPU
    # instances sit in the upper bands (p5 H100: 10-20 %, May 2025): 20 % a month over 730 h
    "aws": 0.20 / 730.0,
    # Azure Spot VMs: the portal's eviction-rate bands have the AWS shape (0-5 % … 20 %+,
    # learn.microsoft.com/azure/virtual-machines/spot-vms "Pricing and eviction history"): the same top-band figure
    "azure": 0.20 / 730.0,
    # Compute Engine preemptible/Spot VMs: "an average preemption rate [of] 5 % to 15 % per day per project, on a
    # seven-day average" (cloud.google.com/compute/docs/instances/preemptible, 2019-2021 text); the upper figure
    "gcp": 0.15 / 24.0,
}
# Providers the table does not name (interruptible pods of neoclouds and marketplaces publish no rate): GCP's
# published upper figure, the highest of the three, as the documented default.
DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR = 0.15 / 24.0
MAX_INTERRUPTIONS_PER_HOUR = 10.0  # an eviction every 6 minutes: past that no job makes progress (422 above)
MAX_DOWN_SHARE = 0.9  # a replica down more than 90 % of the time serves nothing worth planning on
SPOT_MODELS = ("spot",)  # pricing models whose capacity the provider may reclaim

# Scale-out networks: whether a provider sells the network that joins instances into one job (RDMA or its equivalent
# between nodes; docs/formulas.md, "Scale-out networks"). Without one, a job is one node: a training plan spans at
# most SINGLE_NODE_ACCELERATORS (or one instance, if larger), however many instances the provider rents out.
SCALE_OUT: dict[str, bool] = {
    # p4d/p5 with EFA (3,200 Gbps on p5) in EC2 UltraClusters — aws.amazon.com/ec2/instance-types/p5/
    "aws": True,
    # A3 with GPUDirect-TCPX (a3-highgpu-8g), TCPXO (a3-megagpu-8g) — cloud.google.com/compute/docs/gpus/gpudirect
    "gcp": True,
    # ND H100 v5: 3.2 Tb/s InfiniBand per VM — learn.microsoft.com/azure/virtual-machines/nd-h100-v5-series
    "azure": True,
    # Lambda's on-demand instances are single machines; InfiniBand clusters are a separate product, 1-Click
    # Clusters (16 GPUs and up, lambda.ai/1-click-clusters): an admin adds them as rows with scale_out true
    "lambda": False,
    # RunPod Pods are single machines (up to 8 GPUs); multi-node is a separate product, Instant Clusters
    # (docs.runpod.io/instant-clusters): an admin adds them as rows with scale_out true
    "runpod": False,
}
# Hyperscalers the table does not name sell RDMA cluster networks with their GPU shapes (OCI cluster networks:
# docs.oracle.com/iaas/Content/Compute/Tasks/managingclusternetworks.htm); any other provider: none unless its row
# says so (a scale-out network is a product one buys, not a given: marketplaces and most neoclouds rent single nodes).
SINGLE_NODE_ACCELERATORS = 8  # one HGX/OAM node: the most accelerators a single-node pod or instance holds
# A training plan on more than one instance spends at most this share of its billed time starting up: Llama 3 kept
# "more than 90 % effective training time" through every interruption of its 54-day run (Dubey et al. 2024
# §3.3.4); a plan that loses more than that to start-up alone buys instances for waiting (constraints.
# max_startup_share changes it).
DEFAULT_MAX_STARTUP_SHARE = 0.1


@dataclass(frozen=True)
class Terms:
    """How an offer is bought and billed. The neutral terms (one accelerator at a time, billed by the second from the
    first step) are those of a price given in the request."""

    accelerators_per_instance: int = 1
    max_accelerators: int | None = None  # one order's limit there; None: not stated
    billing_increment_s: float = 1.0
    minimum_billed_s: float = 0.0
    startup_s: float = 0.0
    slice_sizes: tuple[int, ...] = ()  # valid counts of a sliced part; () = any whole number of instances
    instance_type: str | None = None
    interruptions_per_hour: float = 0.0  # evictions per instance-hour (spot capacity); 0: not reclaimed
    scale_out: bool = True  # a scale-out network joins instances into one job; False: one node at most

    @property
    def single_job_limit(self) -> int | None:
        """The most accelerators one job may span on this offer: one node without a scale-out network."""
        return None if self.scale_out else max(self.accelerators_per_instance, SINGLE_NODE_ACCELERATORS)


NEUTRAL = Terms()


def provider_terms(provider: str) -> tuple[int, int, int]:
    """(increment, minimum, start-up) seconds of a provider: its published terms, else its kind's default."""
    key = provider.lower()
    if key in PROVIDER_TERMS:
        return PROVIDER_TERMS[key]
    return HYPERSCALER_TERMS if key in HYPERSCALERS else NEOCLOUD_TERMS


def spot_interruptions(provider: str) -> float:
    """Evictions per instance-hour of a provider's spot capacity: its published rate, else the documented default."""
    return SPOT_INTERRUPTIONS_PER_HOUR.get(provider.lower(), DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR)


def scale_out_of(row: Price) -> bool:
    """Whether a row's instances join into one job: the row's own statement, else its provider's (SCALE_OUT)."""
    if row.scale_out is not None:
        return bool(row.scale_out)
    key = row.provider.lower()
    return SCALE_OUT.get(key, key in HYPERSCALERS)


def interruptions_of(row: Price) -> float:
    """A row's evictions per instance-hour: the row's own rate, else its provider's for spot rows, else none."""
    if row.interruptions_per_hour is not None:
        return float(row.interruptions_per_hour)
    return spot_interruptions(row.provider) if row.pricing_model in SPOT_MODELS else 0.0


def eviction_rate_per_device_hour(terms: Terms) -> float:
    """Evictions per accelerator-hour: an eviction takes a whole instance, so a job of N accelerators on instances
    of k sees N/k × the instance rate."""
    return terms.interruptions_per_hour / terms.accelerators_per_instance


def eviction_down_share(devices: int, terms: Terms) -> float:
    """Share of the time a serving replica of `devices` is down on an offer that evicts: each eviction of one of its
    instances takes it away for the offer's start-up (new capacity, image pull, weights loaded), λ·k·R for a replica
    on k instances (a replica sharing an instance goes with it: k = 1); at most MAX_DOWN_SHARE."""
    spans = max(math.ceil(devices / terms.accelerators_per_instance), 1)
    return min(terms.interruptions_per_hour * spans * terms.startup_s / 3600.0, MAX_DOWN_SHARE)


def terms_of(row: Price, accelerator_id: str | None = None) -> Terms:
    """A catalog row's terms, the documented defaults filling what the row does not state."""
    increment, minimum, startup = provider_terms(row.provider)
    slices = row.slice_sizes or (SLICE_SIZES.get(accelerator_id or "", ()))
    return Terms(
        accelerators_per_instance=max(int(row.accelerators_per_instance or 1), 1),
        max_accelerators=row.max_accelerators,
        billing_increment_s=float(row.billing_increment_seconds or increment),
        minimum_billed_s=float(
            row.minimum_billed_seconds if row.minimum_billed_seconds is not None else minimum
        ),
        startup_s=float(row.startup_seconds if row.startup_seconds is not None else startup),
        slice_sizes=tuple(slices),
        instance_type=row.instance_type,
        interruptions_per_hour=interruptions_of(row),
        scale_out=scale_out_of(row),
    )


def billed_seconds(run_s: Number, terms: Terms) -> Number:
    """Start-up + run, rounded up to the billing increment, at least the minimum billed."""
    total = np.asarray(run_s) + terms.startup_s
    rounded = np.ceil(total / terms.billing_increment_s - 1e-9) * terms.billing_increment_s
    out = np.maximum(rounded, terms.minimum_billed_s)
    return float(out) if np.ndim(out) == 0 else out  # type: ignore[return-value]


def instances(devices: int, terms: Terms) -> int:
    """Whole instances that hold `devices` accelerators."""
    return max(math.ceil(devices / terms.accelerators_per_instance), 1) if devices > 0 else 0


def billed_devices(devices: int, terms: Terms) -> int:
    """Accelerators paid for: whole instances (4 GPUs on an 8-GPU instance pay for 8)."""
    return instances(devices, terms) * terms.accelerators_per_instance


def buyable(devices: np.ndarray, terms: Terms, quota: int | None = None) -> np.ndarray:
    """Which device counts the offer sells: whole instances, within max_accelerators and the caller's quota, and a
    valid slice size (or a whole multiple of the largest slice) for sliced parts."""
    devices = np.asarray(devices)
    ok = devices % terms.accelerators_per_instance == 0
    if terms.max_accelerators is not None:
        ok &= devices <= terms.max_accelerators
    if terms.single_job_limit is not None:
        ok &= devices <= terms.single_job_limit
    if quota is not None:
        ok &= devices <= quota
    if terms.slice_sizes:
        largest = max(terms.slice_sizes)
        ok &= np.isin(devices, terms.slice_sizes) | (devices % largest == 0)
    return ok


def startup_dominates(devices: np.ndarray, run_s: np.ndarray, terms: Terms, share: float) -> np.ndarray:
    """Which plans spread over more than one instance although their start-up takes more than `share` of start-up +
    run (docs/formulas.md, "Start-up share"): one instance is always allowed (nothing smaller can be bought)."""
    many = np.asarray(devices) > terms.accelerators_per_instance
    return many & (terms.startup_s > share * (terms.startup_s + np.asarray(run_s)))


def limit_of(terms: Terms, quota: int | None = None) -> int | None:
    """The most accelerators one order may hold there (the offer's limit and the caller's quota), None if unbounded."""
    limits = [v for v in (terms.max_accelerators, quota) if v is not None]
    return min(limits) if limits else None
