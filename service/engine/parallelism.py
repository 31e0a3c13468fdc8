"""Parallel layout: degrees, the pipeline bubble, and collective-communication times."""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import Accelerator
from .numeric import Num, maximum, where

DEVICES_PER_NODE = (
    8  # HGX/DGX, MI300X OAM and Gaudi boards: 8 accelerators per node (scale-up domain default)
)
NCCL_BUS_EFFICIENCY = (
    0.8  # NCCL all-reduce bus bandwidth ≈ 80 % of NVLink per-direction rate (nccl-tests READMEs)
)
PCIE_GEN4_BYTES_PER_S = (
    25e9  # PCIe 4.0 x16 ≈ 32 GB/s raw per direction, ~25 GB/s achieved (PCI-SIG; nccl-tests)
)
# Scale-out per device when the catalog has no figure for a part with a scale-up fabric, by release year: DGX-1
# 100 Gb/s, DGX A100 1× HDR 200 Gb/s, DGX H100 1× NDR 400 Gb/s per GPU (NVIDIA DGX user guides); 80 % achieved.
SCALE_OUT_BYTES_PER_S = {2017: 12.5e9 * 0.8, 2020: 25e9 * 0.8, 2022: 50e9 * 0.8}
NIC_EFFICIENCY = 0.8  # NCCL reaches ~80 % of the NIC line rate across nodes (nccl-tests READMEs)
# Parts without a scale-up fabric (PCIe workstation and inference cards) are not built into training clusters:
# their servers typically carry 2× 100 GbE for 8 cards, 25 Gb/s per card (assumption; a request may override).
PCIE_SERVER_SCALE_OUT_BYTES_PER_S = 25e9 / 8


PIPELINE_SCHEDULES = ("1f1b", "zero_bubble")


@dataclass(frozen=True)
class Parallelism:
    """Degrees of each kind. data·tensor·pipeline = devices; expert parallel splits the data dimension.

    Expert parallelism follows Megatron-Core / DeepSpeed-MoE: expert ranks are drawn from the data-parallel
    ranks (expert must divide data); experts are sharded over them, dense weights stay replicated. With
    `expert_tensor` given (Megatron-Core expert_tensor_parallel_size, "MoE parallel folding": Liu et al. 2025,
    arXiv 2504.14960) the expert layers have their own layout, expert_tensor × expert × expert-data = tensor ×
    context × data, so expert ranks may span tensor ranks.
    """

    data: int = 1
    tensor: int = 1
    pipeline: int = 1
    expert: int = 1
    zero_stage: int = 0
    sequence_parallel: bool = False
    virtual_pipeline: int = 1  # interleaved 1F1B model chunks per stage (Narayanan et al. 2021 §2.2.2)
    # Context parallel: each sequence split over `context` ranks, attention exchanging K/V blocks in a ring
    # (Liu et al. 2023 "Ring Attention"; Megatron-Core context parallelism). Rank order t, cp, d, p.
    context: int = 1
    # Hybrid sharding (PyTorch FSDP2 HSDP dp_shard × dp_replicate, MaxText multislice): ZeRO
    # shards over groups of `data_shard` gradient ranks and replicates across the groups. 0: one group of all.
    data_shard: int = 0
    # "1f1b" (with virtual_pipeline > 1: interleaved 1F1B) or "zero_bubble": ZB-H1 (Qi et al. 2024, "Zero Bubble
    # Pipeline Parallelism", ICLR; torchtitan's ZBV/InterleavedZeroBubble schedules), which fills the 1F1B bubble
    # with the weight-gradient halves of the backward at 1F1B's peak memory
    pipeline_schedule: str = "1f1b"
    # Expert all-to-all overlapped with another micro-batch's compute: Megatron-Core's 1F1B A2A overlap
    # (overlap_moe_expert_parallel_comm, off by default), DeepSeek-V3's DualPipe (Liu et al. 2024 §3.2.1)
    expert_overlap: bool = False
    # Tensor-parallel degree of the expert layers (Megatron-Core expert_tensor_parallel_size); 0: `tensor`
    expert_tensor: int = 0

    @property
    def expert_tensor_ranks(self) -> int:
        """Ranks each expert's weights are split over: expert_tensor, or tensor when it is not given."""
        return int(expert_tensor_ranks(self.tensor, self.expert_tensor))

    @property
    def expert_shard_ranks(self) -> int:
        """Ranks ZeRO shards an expert's weights over (Megatron-Core's expert-data-parallel group)."""
        return int(expert_shard_ranks(self.shard_ranks, self.tensor, self.expert, self.expert_tensor_ranks))

    @property
    def devices(self) -> int:
        return self.data * self.tensor * self.pipeline * self.context

    @property
    def shard_ranks(self) -> int:
        """Ranks ZeRO shards over: the hybrid-sharding group, or every gradient rank."""
        return int(shard_ranks(self.gradient_ranks, self.data_shard))

    @property
    def replicas(self) -> int:
        """Shard groups that hold the same shards and all-reduce their gradient shards (1 without hybrid sharding)."""
        return self.gradient_ranks // self.shard_ranks

    @property
    def gradient_ranks(self) -> int:
        """Ranks that hold the same weights and reduce gradients together (and over which ZeRO shards):
        data × context, as Megatron-Core's data-parallel-with-context group and FSDP's dp_shard × cp."""
        return self.data * self.context


def shard_ranks(gradient_ranks: Num, data_shard: int) -> Num:
    """Ranks ZeRO shards over with `data_shard` given (0: none) over `gradient_ranks` (data × context): the
    hybrid-sharding group where it divides them, else every gradient rank. Scalars or arrays of layouts alike."""
    if not data_shard:
        return gradient_ranks
    divides = (data_shard < gradient_ranks) & (gradient_ranks % data_shard == 0)
    return where(divides, data_shard, gradient_ranks)


def expert_tensor_ranks(tensor: Num, expert_tensor: int) -> Num:
    """Ranks each expert's weights are split over: the given `expert_tensor` (0: none), else the tensor degree.
    Scalars or arrays of layouts alike (the planner carries a given expert_tensor on its base plan)."""
    return expert_tensor if expert_tensor else tensor


def expert_shard_ranks(shard: Num, tensor: Num, expert: Num, expert_tensor_ranks: Num) -> Num:
    """Ranks ZeRO shards an expert's weights over (Megatron-Core's expert-data-parallel group): the ZeRO group's
    tensor × `shard` ranks over expert × expert_tensor (the ZeRO group over expert when expert_tensor is the tensor
    degree), at least 1. Request validation (layout_request) and the search's enumeration (search/space.py) keep
    tensor × shard ranks a multiple of expert × expert_tensor. Scalars or arrays of layouts alike."""
    return maximum(1, shard * tensor // (expert * expert_tensor_ranks))


def pipeline_bubble_fraction(
    pipeline: Num, micro_batches: Num, virtual: Num = 1, zero_bubble: Num = False
) -> Num:
    """Idle share of a 1F1B pipeline step: (p − 1)/(m + p − 1) — Narayanan et al. 2021 §2.2.1;
    interleaving v chunks per stage divides the bubble time by v (§2.2.2): (p − 1)/(v·m + p − 1).
    ZB-H1 (Qi et al. 2024 §3.1) splits each backward into its input-gradient (B) and weight-gradient (W) halves and
    runs the W passes in the 1F1B bubble: (p − 1)(T_F + T_B − T_W) instead of (p − 1)(T_F + T_B + T_W), a third of
    it with T_F = T_B = T_W (the paper's setting): (p − 1)/(3·v·m + p − 1).
    Interleaving with fewer micro-batches than stages (m < p) has nothing to fill its chunks' gaps with: micro-batch
    i enters chunk slot j at time i + j, and a device holds the slots d, d + p, … of v·p, so over the v·p + m − 1
    slots of the schedule it works m·v of them: (v·(p − m) + m − 1)/(v·p + m − 1), which is Narayanan's formula at
    m = p and 1F1B's at v = 1.
    Scalars (the single estimate) or arrays of layouts (the planner's array model) alike (numeric.where)."""
    few = where(zero_bubble, False, (virtual > 1) & (micro_batches < pipeline))
    fill = where(zero_bubble, 3, 1)
    gaps = (virtual * (pipeline - micro_batches) + micro_batches - 1) / (
        virtual * pipeline + micro_batches - 1
    )
    filled = (pipeline - 1) / (fill * virtual * micro_batches + pipeline - 1)
    return where(pipeline > 1, where(few, gaps, filled), 0.0)


def bubble_seconds(stage_work_s: Num, bubble: Num) -> Num:
    """Idle seconds of a step whose busy stage takes `stage_work_s` and idles the `bubble` share of the step."""
    return where(bubble > 0, stage_work_s * bubble / (1.0 - bubble), 0.0)


def scale_up_bytes_per_s(acc: Accelerator) -> float:
    """Achievable per-direction bandwidth inside a node (NVLink/Infinity Fabric/ICI), else PCIe."""
    bidir = acc.interconnect_bandwidth_bytes_per_s
    if not bidir:
        return PCIE_GEN4_BYTES_PER_S
    return (
        bidir / 2.0 * NCCL_BUS_EFFICIENCY
    )  # catalog figure is aggregate bidirectional (docs/formulas.md, "Catalog conventions")


def domain_size(acc: Accelerator) -> int:
    """Devices that share one scale-up domain: the catalog's figure (GB200 NVL72: 72; a TPU pod), else a node."""
    return acc.scale_up_domain or DEVICES_PER_NODE


def scale_out_bytes_per_s(acc: Accelerator) -> float:
    """Achievable per-device bandwidth between scale-up domains: the system's NIC rate from the catalog (or the
    request), else a default by kind of part (a property of the system, not of the chip's release year)."""
    if acc.scale_out_bandwidth_bytes_per_s:
        return min(acc.scale_out_bandwidth_bytes_per_s * NIC_EFFICIENCY, scale_up_bytes_per_s(acc))
    if not acc.interconnect_bandwidth_bytes_per_s:
        return PCIE_SERVER_SCALE_OUT_BYTES_PER_S * NIC_EFFICIENCY
    year = acc.release_year or 2020
    best = SCALE_OUT_BYTES_PER_S[2017]
    for since, bandwidth in sorted(SCALE_OUT_BYTES_PER_S.items()):
        if year >= since:
            best = bandwidth
    return min(best, scale_up_bytes_per_s(acc))


# A scale-up "domain" of this many devices or fewer is an NVLink bridge between two PCIe cards (A100/H100 PCIe, H100
# NVL, RTX 3090, RTX A6000: seed/accelerator_fabric.csv), not a switched fabric: such parts live in one server.
BRIDGE_PAIR_DOMAIN = 2


def builds_training_clusters(acc: Accelerator) -> bool:
    """Whether multi-node clusters of this part are a known build: a scale-up fabric (more than a bridged pair) or a
    catalog network figure for a part with one. PCIe cards, bridged in pairs or not, are one-server parts: the
    advice never suggests them beyond a server and the planners search them within one."""
    if acc.scale_up_domain is not None and acc.scale_up_domain <= BRIDGE_PAIR_DOMAIN:
        return False
    return bool(acc.interconnect_bandwidth_bytes_per_s or acc.scale_out_bandwidth_bytes_per_s)


def built_at(acc: Accelerator, devices: int) -> bool:
    """Whether `devices` of this part is a system people build: within one server (or scale-up domain) always,
    beyond it only for parts that make training clusters (builds_training_clusters). The advice never moves a run
    onto a part, or a part onto a count, that fails this."""
    return devices <= max(domain_size(acc), DEVICES_PER_NODE) or builds_training_clusters(acc)


def network_bytes_per_s(acc: Accelerator, span: int) -> float:
    """scale_out_bytes_per_s for a group spanning `span` devices (group size × stride): a one-server part (not
    builds_training_clusters) whose group leaves the server gets no more than a PCIe server's NIC share, whatever its
    catalog figure says of the traffic between its bridged pairs inside the server."""
    out = scale_out_bytes_per_s(acc)
    if span > DEVICES_PER_NODE and not builds_training_clusters(acc):
        return min(out, PCIE_SERVER_SCALE_OUT_BYTES_PER_S * NIC_EFFICIENCY)
    return out


def group_bandwidth(acc: Accelerator, group_size: int, stride: int) -> float:
    """Bandwidth for a collective over `group_size` ranks spaced `stride` apart (rank order t, then d, then p)."""
    if group_size <= 1:
        return float("inf")
    nodes, members_per_domain = group_nodes(acc, group_size, stride)
    if nodes == 1:
        return scale_up_bytes_per_s(acc)
    # Across domains, NCCL runs one ring (channel) per rail: the k members of the group inside each domain
    # each carry 1/k of the cross-domain traffic on their own NIC, and the fabric spreads it inside the domain,
    # so the group moves k NICs' worth (rail-optimised clusters; NCCL's multi-node bus bandwidth), never more
    # than the scale-up fabric itself.
    return min(scale_up_bytes_per_s(acc), members_per_domain * network_bytes_per_s(acc, group_size * stride))


def expert_all_to_all_seconds(
    acc: Accelerator, token_bytes: float, experts: int, experts_per_token: int, group_size: int, stride: int
) -> float:
    """One all-to-all (dispatch or combine) of a micro-batch's routed tokens, `token_bytes` = tokens × h × bytes,
    over `group_size` expert ranks spaced `stride` apart, each token going to `experts_per_token` of `experts`.

    Inside a scale-up domain each rank sends the copies bound for the other ranks, (e − 1)/e of k per token, over the
    fabric. Across domains the copies leave through each GPU's own NIC, not a ring's k NICs: DeepEP's normal
    kernels (deepseek-ai/DeepEP README, H800 + CX7 400 Gb/s) reach ~153–158 GB/s NVLink intranode but ~43–58 GB/s
    RDMA internode per GPU, and send a token once to each remote domain that holds one of its experts, the NVLink
    of that domain forwarding the copies (DeepSeek-V3 report §3.2.2; HybridEP likewise): (N − 1)·(1 − P_miss)
    copies per token cross, with P_miss the chance that none of its k experts lie in a given domain of N (experts
    spread evenly, routing balanced). The NVLink and RDMA legs run concurrently: the slower one sets the time."""
    if group_size <= 1 or token_bytes <= 0:
        return 0.0
    nodes, members = group_nodes(acc, group_size, stride)
    k = experts_per_token
    inside = token_bytes * k * (members - 1) / group_size / scale_up_bytes_per_s(acc)
    if nodes == 1:
        return inside
    network = network_bytes_per_s(acc, group_size * stride)
    return max(inside, token_bytes * remote_domain_copies(experts, k, nodes) / network)


def remote_domain_copies(experts: int, experts_per_token: int, domains: int) -> float:
    """Expected remote scale-up domains a token's k distinct experts (of `experts`, spread evenly over `domains`)
    fall in: (N − 1)·(1 − C(E − E/N, k)/C(E, k))."""
    if domains <= 1:
        return 0.0
    elsewhere = experts - experts / domains
    miss = 1.0
    for i in range(min(experts_per_token, experts)):
        miss *= max(0.0, elsewhere - i) / (experts - i)
    return (domains - 1) * (1.0 - miss)


def all_reduce_seconds(payload_bytes: float, ranks: int, bytes_per_s: float) -> float:
    """Ring all-reduce: each rank sends 2·(n − 1)/n of the payload (Patarasuk & Yuan 2009; NCCL)."""
    if ranks <= 1 or payload_bytes <= 0:
        return 0.0
    return 2.0 * (ranks - 1) / ranks * payload_bytes / bytes_per_s


# Per-collective latency: NCCL's own cost model (NVIDIA/nccl src/graph/tuning.cc @5067397, ncclTunerConstants
# defaults, Simple protocol, the one large transfers use): a base of 8.4 µs per ring or tree collective, 3.4 µs per
# ring step over NVLink (5.7 µs over PCIe), 4.0 µs per intra-node tree step, 14 µs per step that crosses the network.
# A ring all-gather or reduce-scatter over n ranks on N nodes takes n − 1 steps, N − 1 of them across nodes; a ring
# all-reduce twice that; a tree all-reduce 2·((n/N − 1) intra + ⌊log2 N⌋ inter) steps, NCCL taking the cheaper.
# Only NVIDIA/AMD GPU collectives (NCCL/RCCL) are modelled so; TPU ICI collectives get no latency term.
NCCL_BASE_LATENCY_S = 8.4e-6
NCCL_RING_NVLINK_LATENCY_S = 3.4e-6
NCCL_RING_PCIE_LATENCY_S = 5.7e-6
NCCL_TREE_INTRA_LATENCY_S = 4.0e-6
NCCL_NET_LATENCY_S = 14.0e-6


def group_nodes(acc: Accelerator, group_size: int, stride: int) -> tuple[int, int]:
    """(scale-up domains a collective group of `group_size` ranks spaced `stride` apart spans, its members per domain):
    the placement group_bandwidth and collective_latency_s both read."""
    domain = domain_size(acc)
    if group_size * stride <= domain:
        return 1, group_size
    members = max(1, min(group_size, domain // stride)) if stride < domain else 1
    return -(-group_size // members), members


def collective_latency_s(acc: Accelerator, all_reduce: bool, group_size: int, stride: int) -> float:
    """Latency of one all-reduce (`all_reduce`) or one all-gather / reduce-scatter over `group_size` ranks."""
    if group_size <= 1 or acc.kind != "gpu":
        return 0.0
    nodes, members = group_nodes(acc, group_size, stride)
    intra = NCCL_RING_NVLINK_LATENCY_S if acc.interconnect_bandwidth_bytes_per_s else NCCL_RING_PCIE_LATENCY_S
    inter_steps = nodes - 1
    ring = (group_size - 1 - inter_steps) * intra + inter_steps * NCCL_NET_LATENCY_S
    if not all_reduce:
        return NCCL_BASE_LATENCY_S + ring
    tree = 2.0 * ((members - 1) * NCCL_TREE_INTRA_LATENCY_S + (nodes.bit_length() - 1) * NCCL_NET_LATENCY_S)
    return NCCL_BASE_LATENCY_S + min(2.0 * ring, tree)
