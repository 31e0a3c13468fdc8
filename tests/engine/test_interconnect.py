"""Scale-up domains and scale-out networks are properties of the system (issue 11 item 3)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scalecost.engine import estimate_training
from scalecost.engine.hardware import Catalog
from scalecost.engine.parallelism import (
    builds_training_clusters,
    domain_size,
    group_bandwidth,
    scale_out_bytes_per_s,
)

from .conftest import load_catalog

BASE = load_catalog()
A100 = BASE.accelerators["nvidia-a100-sxm-80gb"]
RTX = BASE.accelerators["nvidia-rtx-6000-ada"]


def test_a_pcie_workstation_card_gets_less_network_than_an_a100():
    """The bug: RTX 6000 Ada (2022, no NVLink) got more inter-node bandwidth than an A100 (2020)."""
    assert scale_out_bytes_per_s(RTX) < scale_out_bytes_per_s(A100)
    assert not builds_training_clusters(RTX) and builds_training_clusters(A100)


def test_a_72_gpu_domain_keeps_a_64_way_group_on_the_fabric():
    nvl72 = replace(A100, id="nvl72-like", scale_up_domain=72)
    assert domain_size(nvl72) == 72 and domain_size(A100) == 8
    assert group_bandwidth(nvl72, 64, 1) > group_bandwidth(A100, 64, 1)


def test_catalog_network_figure_wins_over_the_release_year_default():
    fast = replace(A100, scale_out_bandwidth_bytes_per_s=100e9)
    assert scale_out_bytes_per_s(fast) > scale_out_bytes_per_s(A100)


def test_request_can_describe_its_own_cluster():
    request = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": 1e10, "global_batch_size": 512, "sequence_length": 4096},
        "hardware": {
            "accelerator": "nvidia-a100-sxm-80gb",
            "count": 64,
            "parallelism": {"data": 64, "zero_stage": 3},
        },
        "output": {"recommendations": False},
    }
    slow = estimate_training(
        {**request, "hardware": {**request["hardware"], "interconnect": {"scale_out_bytes_per_s": 3.125e9}}},
        BASE,
    )
    fast = estimate_training(
        {**request, "hardware": {**request["hardware"], "interconnect": {"scale_up_domain_devices": 64}}},
        BASE,
    )
    default = estimate_training(request, BASE)
    assert slow["time"]["seconds"] > default["time"]["seconds"] > fast["time"]["seconds"]
    assert any("Cluster as given" in n for n in fast["assumptions"]["notes"])


def test_catalog_is_unchanged_by_a_request_override():
    assert isinstance(BASE, Catalog) and BASE.accelerators["nvidia-a100-sxm-80gb"].scale_up_domain in (
        None,
        8,
    )


def test_advice_never_suggests_a_part_nobody_builds_clusters_from():
    """1,024 A100s pre-training Llama-2-7B: the advice once said "RTX 6000 Ada does it 66 % cheaper"."""
    answer = estimate_training(
        {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": 2e12, "global_batch_size": 1024, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 1024, "parallelism": {"data": 1024}},
        },
        BASE,
    )
    suggested = {r["change"].get("hardware", {}).get("accelerator") for r in answer["recommendations"]}
    clusterless = {a.id for a in BASE.accelerators.values() if not builds_training_clusters(a)}
    assert not suggested & clusterless, suggested


def test_a_group_spanning_whole_nodes_moves_one_nic_per_member_per_node():
    """NCCL runs one ring per rail: 64 ranks on 8-GPU nodes cross nodes on 8 NICs at once (stride 1), while a
    data-parallel group strided by tensor parallel 8 has one member per node and one NIC."""
    dense = group_bandwidth(A100, 64, 1)
    strided = group_bandwidth(A100, 64, 8)
    assert dense == pytest.approx(min(8 * scale_out_bytes_per_s(A100), group_bandwidth(A100, 8, 1)))
    assert strided == pytest.approx(scale_out_bytes_per_s(A100))


BRIDGED = ("nvidia-h100-pcie-80gb", "nvidia-a100-pcie-80gb", "nvidia-h100-nvl-94gb", "nvidia-rtx-3090")


@pytest.mark.parametrize("part", BRIDGED)
def test_pcie_cards_bridged_in_pairs_are_one_server_parts(part):
    """An NVLink bridge joins two PCIe cards; the catalog once took the H100 PCIe for an 8-GPU NVLink domain with a
    release-year network, and the advice had 1,024 of them run DeepSeek-V3's EP64 layout 9 % cheaper."""
    acc = BASE.accelerators[part]
    assert domain_size(acc) == 2 and not builds_training_clusters(acc)
    assert scale_out_bytes_per_s(acc) <= 64e9  # between pairs: the server's PCIe x16 link


def test_the_advice_never_moves_a_cluster_job_onto_bridged_pcie_cards():
    answer = estimate_training(
        {
            "model": {"preset": "deepseek-v3"},
            "training": {
                "tokens": 1e12,
                "sequence_length": 4096,
                "global_batch_size": 8192,
                "micro_batch_size": 1,
                "precision": "fp8",
            },
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 1024,
                "parallelism": {"tensor": 2, "pipeline": 16, "expert": 64},
            },
        },
        BASE,
    )
    suggested = {r["change"].get("hardware", {}).get("accelerator") for r in answer["recommendations"]}
    assert not suggested & set(BRIDGED), suggested


def test_bridged_cards_leaving_the_server_get_a_pcie_servers_network():
    """Their catalog figure is the PCIe link between pairs inside a server; across servers they get no more than a
    PCIe server's NIC share, never more than an InfiniBand-connected SXM part."""
    pcie, sxm = BASE.accelerators["nvidia-h100-pcie-80gb"], BASE.accelerators["nvidia-h100-sxm-80gb"]
    assert group_bandwidth(pcie, 4, 1) > group_bandwidth(pcie, 32, 1)
    assert group_bandwidth(pcie, 32, 1) < group_bandwidth(sxm, 32, 1)


def test_the_does_not_fit_advice_stays_within_a_server_for_one_server_parts():
    answer = estimate_training(
        {
            "model": {"preset": "llama-3.1-405b"},
            "training": {
                "tokens": 1e11,
                "global_batch_size": 1024,
                "sequence_length": 4096,
                "activation_recomputation": "full",
            },
            "hardware": {"accelerator": "nvidia-l4", "count": 256},
        },
        BASE,
    )
    for rec in answer["recommendations"]:
        hardware = rec["change"].get("hardware", {})
        target = BASE.accelerators[hardware.get("accelerator", "nvidia-l4")]
        assert builds_training_clusters(target) or hardware.get("count", 256) <= 8, rec["message"]


def test_serving_suggestions_keep_one_server_parts_within_a_server():
    """Llama 3.1 405B served from a T4: the suggestions once listed 64 RTX 3090s (eight consumer servers) first."""
    from scalecost.engine import estimate_inference

    answer = estimate_inference(
        {"hardware": {"accelerator": "nvidia-t4", "count": 1}, "model": {"preset": "llama-3.1-405b"}}, BASE
    )
    assert answer["suggestions"]
    for row in answer["suggestions"]:
        acc = BASE.accelerators[row["accelerator"]]
        assert row["count"] <= 8 or builds_training_clusters(acc), row


def test_a_planned_count_of_a_one_server_part_stays_within_a_server():
    """hardware.count "auto" once chose 384 RTX 4090s for Llama 3 70B; the planners search such parts in one server."""
    from scalecost.engine import InvalidRequest

    body = {
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 1e11, "global_batch_size": 512, "sequence_length": 4096},
        "hardware": {"accelerator": "nvidia-rtx-4090", "count": "auto", "parallelism": "auto"},
        "constraints": {"deadline": "P30D"},
        "output": {"recommendations": False},
    }
    try:
        answer = estimate_training(body, BASE)
    except InvalidRequest as refused:
        assert "hardware.count" in refused.errors
    else:
        assert answer["assumptions"]["auto"]["chosen_count"] <= 8


def test_serving_a_one_server_part_never_grows_past_a_server():
    from scalecost.engine import estimate_inference

    auto = estimate_inference(
        {
            "hardware": {"accelerator": "nvidia-rtx-4090", "count": "auto"},
            "model": {"preset": "llama-3.1-405b"},
        },
        BASE,
    )
    assert auto["hardware"]["count"] <= 8
    one = estimate_inference(
        {"hardware": {"accelerator": "nvidia-rtx-4090", "count": 1}, "model": {"preset": "llama-3.1-405b"}},
        BASE,
    )
    for rec in one["recommendations"]:
        assert rec["change"].get("hardware", {}).get("count", 1) <= 8, rec
