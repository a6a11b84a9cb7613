"""Collectives that leave the node (issue 38): a serving group larger than the NVLink domain crosses the scale-out
network. Hand derivations on round figures; the H100 SXM's are its datasheet's (NVLink 4: 450 GB/s a direction)
and DGX H100's (one 400 Gb/s NIC a GPU: 50 GB/s)."""

import pytest

from ffncalc.accelerators import accelerator
from ffncalc.roofline import Roofline, boundary_seconds_per_byte, gpu_figures, overlapped

NVLINK, NIC = 450e9, 50e9


def roof(span: int) -> Roofline:
    return Roofline(peak=1e15, bandwidth=3e12, interconnect=NVLINK, scale_out=NIC, domain=8, span=span)


def test_an_all_reduce_inside_a_node_runs_at_nvlink():
    assert roof(8).allreduce_seconds(450_000_000) == pytest.approx(1e-3)


def test_an_all_reduce_over_two_nodes_runs_at_the_nic():
    # a ring over 16 GPUs crosses the nodes: the slowest link, 50 GB/s, sets its rate
    assert roof(16).allreduce_seconds(450_000_000) == pytest.approx(9e-3)


def test_an_all_to_all_over_16_gpus_sends_8_of_15_peers_shares_over_the_nic():
    # 15 peers, 7 in the node, 8 outside: 1.5 GB sent is 0.7 GB over NVLink (1.56 ms) and 0.8 GB over the NIC (16 ms)
    sent = 1_500_000_000
    assert roof(16).all_to_all_seconds(sent) == pytest.approx(0.8e9 / NIC)


def test_an_all_to_all_inside_a_node_runs_at_nvlink():
    assert roof(8).all_to_all_seconds(900_000_000) == pytest.approx(2e-3)


def test_the_ceiling_lets_the_all_to_all_hide_behind_the_compute():
    assert overlapped(5e-3, 3e-3) == 5e-3
    assert overlapped(5e-3, 16e-3) == 16e-3


def test_pipeline_boundaries_cross_the_nic_where_a_stage_ends_a_node():
    h100 = gpu_figures(accelerator("h100"), "bf16", 1.0, 1.0)
    # 4 GPUs a stage: stages 1|2 share a node (GPUs 0-7), 2|3 cross into the next, 3|4 share it; none after the last
    assert boundary_seconds_per_byte(h100, 4, 4) == [1 / 450e9, 1 / 50e9, 1 / 450e9, 0.0]
    # 8 GPUs a stage: every boundary leaves a node
    assert boundary_seconds_per_byte(h100, 8, 3) == [1 / 50e9, 1 / 50e9, 0.0]


def test_speed_over_two_h100_nodes_times_the_all_reduce_at_the_nic_and_says_so():
    from ffncalc.api import speed

    h100, mi300x = speed("meta-llama/Llama-3.1-70B", "h100,mi300x", tensor_parallel=16).reports
    # DGX H100: one 400 Gb/s NIC a GPU, 50 GB/s each way
    assert h100.decode.allreduce_seconds == pytest.approx(h100.decode.allreduce_bytes / 50e9)
    assert any("spans 2 domains of 8 GPUs" in note and "scale-out" in note for note in h100.notes)
    # no scale-out figure in the table for the MI300X: its Infinity Fabric's rate, said to be optimistic
    assert mi300x.decode.allreduce_seconds == pytest.approx(mi300x.decode.allreduce_bytes / mi300x.gpu.interconnect)
    assert any("optimistic ceiling" in note for note in mi300x.notes)
    assert not any("optimistic" in note for note in h100.notes)
