"""lte_validation: edgesim's LTE cell against the committed ns-3 LTE runs (no ns-3 needed)."""

import csv

import numpy as np
import pytest

from analysis import lte_validation


@pytest.fixture(scope="module")
def configs():
    return lte_validation.ns3_configurations()


@pytest.fixture(scope="module")
def rows(configs):
    # the whole committed grid: one edgesim round per (cell, N, S), a few seconds in all
    return lte_validation.rows_for(configs)


def test_ns3_runs_are_there_and_repeat(configs):
    # round robin's 120 configurations are complete: 2 widths x 2 distances x N in 5 x S in 2 x 3
    rr = [k for k in configs if k[2] == "rr"]
    assert len(rr) == 120
    assert all(len(configs[k]) >= 3 for k in rr)
    # one reference: every row from the same script, ns-3 version and RLC buffer
    with open(lte_validation.NS3_CSV, newline="") as f:
        made = {(r["script"], r["ns3_version"], r["rlc_buffer"]) for r in csv.DictReader(f)}
    assert len(made) == 1
    # issue 30's sanity point: 1 MB to a lone UE at MCS 28, 20 MHz, in 0.179 s
    assert np.mean([r["last_s"] for r in configs[(100, 50.0, "rr", 1, 1_000_000, "downlink")]]) == (
        pytest.approx(0.179, abs=0.001)
    )


def test_rr_resource_block_group_share_follows_ns3s_scheduler():
    # RrFfMacScheduler: floor(G / N) of G groups each (README: 20 of 25 at N = 10 and 20)
    share = lte_validation.rr_downlink_share
    assert share(100, 1) == 1.0 and share(100, 5) == 1.0
    assert share(100, 2) == pytest.approx(24 / 25)
    assert share(100, 10) == share(100, 20) == pytest.approx(20 / 25)
    # 50 blocks: 16 whole groups of 3; N = 10 uses 10 of them, N = 20 each in turn
    assert share(50, 5) == pytest.approx(15 / 16)
    assert share(50, 10) == pytest.approx(10 / 16)
    assert share(50, 20) == 1.0


def _ratio(r):
    """edgesim over ns-3's mean, or over its median run where some run had a TCP timeout (its
    mean then measures the timer, which edgesim does not model)."""
    return r["edgesim_s"] / r["ns3_median_s"] if r["ns3_timeout"] else r["ratio"]


def _held_out(rows, scheduler, mode):
    return [
        r
        for r in rows
        if r["scheduler"] == scheduler and r["mode"] == mode and not r["calibration"]
    ]


@pytest.mark.parametrize("mode", lte_validation.MODES)
def test_acceptance_against_ns3s_pf_a_full_band_reference(rows, mode):
    # issue 30: on the held-out part, median |ratio - 1| <= 10 %, N >= 2 within 20 %, N = 1
    # within 10 % at 1 MB and 30 % at 100 kB; configurations with an ns-3 TCP timeout (none so
    # far) are judged on the median run and must stay a minority
    held = _held_out(rows, "pf", mode)
    assert held and sum(r["ns3_timeout"] for r in held) <= len(held) // 4
    assert lte_validation.summary(held)["median"] <= 0.1
    for r in held:
        assert abs(_ratio(r) - 1) <= lte_validation.bound(r), r


@pytest.mark.parametrize("mode", lte_validation.MODES)
def test_acceptance_against_ns3s_rr_with_its_idle_resource_block_groups(rows, mode):
    # issue 30's lines against ns-3's RR, edgesim's downlink split 'floor' (floor(G / N) groups
    # each, the rest idle, as RrFfMacScheduler): every held-out configuration, the 20 downlink
    # ones where ns-3 leaves groups idle (N = 2, 5, 10, 20) included
    held = _held_out(rows, "rr", mode)
    assert len(held) == 38 and all(r["rbg_split"] == "floor" for r in held)
    assert sum(r["ns3_timeout"] for r in held) <= len(held) // 4
    assert lte_validation.summary(held)["median"] <= 0.1
    assert sum(r["rr_rbg_share"] < 1 for r in held) == (0 if mode == "uplink" else 20)
    for r in held:
        assert abs(_ratio(r) - 1) <= lte_validation.bound(r), r


def test_whole_band_is_compared_with_pf_only(rows):
    # edgesim's default split (every group in use) against ns-3's PF (one UE per TTI, whole band)
    assert {r["rbg_split"] for r in rows if r["scheduler"] == "pf"} == {"whole"}
    assert {r["rbg_split"] for r in rows if r["scheduler"] == "rr"} == {"floor"}
    # where ns-3's RR uses every group, the two splits give the same edgesim time
    by = {
        (r["rbs"], r["distance_m"], r["n"], r["bytes"], r["mode"], r["scheduler"]): r for r in rows
    }
    for (rbs, d, n, size, mode, sched), r in by.items():
        if sched == "rr" and r["rr_rbg_share"] == 1.0:
            assert r["edgesim_s"] == by[(rbs, d, n, size, mode, "pf")]["edgesim_s"], r


def test_uplink_and_downlink_are_one_round_split(rows):
    # one round gives all three modes (alike devices): down + up = round, per cell, N and S
    by = {(r["rbs"], r["distance_m"], r["n"], r["bytes"], r["mode"]): r["edgesim_s"] for r in rows}
    for (rbs, d, n, size, mode), t in by.items():
        if mode == "round":
            down, up = by[(rbs, d, n, size, "downlink")], by[(rbs, d, n, size, "uplink")]
            assert down + up == pytest.approx(t, abs=1e-6)
