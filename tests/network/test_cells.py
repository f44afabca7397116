"""A cell's channel shared by its devices (edgesim/network/cells.py, proportional_fair.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgesim.network import NS_PER_S
from edgesim.network.cells import Cells
from edgesim.network.links import build_link
from edgesim.network.proportional_fair import proportional_fair_ns
from edgesim.network.radio import RadioConfig

S = 10_000  # bytes per message


def _through(cfg: RadioConfig, N: int, direction="up", arrive=None, cells=1):
    """Send N messages of S bytes at once (or at ``arrive``) in ``cells`` cells; returns ns."""
    ap_of = np.arange(N) % cells
    distance = np.full(N, 100.0)
    rng = np.random.default_rng(0)
    up, down = (build_link(cfg, d, distance, rng) for d in ("up", "down"))
    cell = Cells(cfg, ap_of, up, down)
    link = up if direction == "up" else down
    dev = np.arange(N)
    sizes = np.full(N, S, dtype=np.int64)
    t = link.send(dev, sizes, rng)
    at = np.zeros(N, dtype=np.int64) if arrive is None else np.asarray(arrive, dtype=np.int64)
    return cell.through_ns(direction, dev, sizes, at, t, np.random.default_rng(1))


@pytest.mark.parametrize("N, R", [(10, 3), (40, 40), (100, 7), (500, 100)])
def test_round_robin_n_uploads_on_r_blocks(N, R):
    # per-block rate r: the channel carries R r; all N finish together at N S 8 / (R r)
    r = 150e3
    cfg = RadioConfig(access="round-robin", resource_blocks=R, bandwidth_bps=R * r)
    done = _through(cfg, N)
    assert done.max() == pytest.approx(N * S * 8 / (R * r) * NS_PER_S, abs=N)
    assert done.min() == done.max()


@pytest.mark.parametrize("N, R", [(10, 3), (7, 7), (100, 7)])
def test_first_come_waves_of_whole_messages(N, R):
    r = 150e3
    cfg = RadioConfig(access="ofdma", resource_blocks=R, bandwidth_bps=R * r)
    done = np.sort(_through(cfg, N))
    waves = math.ceil(N / R)
    # a block's airtime: R times the lone airtime, each rounded to the ns once
    one = R * round(S * 8 / (R * r) * NS_PER_S)
    assert abs(one - S * 8 / r * NS_PER_S) <= R
    assert done[-1] == waves * one
    assert np.bincount(done // one)[1:].tolist() == [min(R, N - R * k) for k in range(waves)]


def test_tdma_serialises_on_the_whole_channel():
    cfg = RadioConfig(access="tdma", bandwidth_bps=1e6)
    one = round(S * 8 / 1e6 * NS_PER_S)
    assert np.sort(_through(cfg, 5)).tolist() == [one * (i + 1) for i in range(5)]


def test_per_device_and_a_dedicated_downlink_share_nothing():
    one = round(S * 8 / 1e6 * NS_PER_S)
    alone = RadioConfig(resource_blocks="per-device", bandwidth_bps=1e6)
    assert _through(alone, 8).tolist() == [one] * 8
    dedicated = RadioConfig(downlink_access="dedicated", bandwidth_bps=1e6)
    assert _through(dedicated, 8, "down").tolist() == [one] * 8
    assert _through(dedicated, 8, "up").tolist() == [8 * one] * 8  # the uplink still shares
    shared = RadioConfig(bandwidth_bps=1e6)
    assert _through(shared, 8, "down").tolist() == [8 * one] * 8


def test_cells_share_only_within_themselves():
    one = round(S * 8 / 1e6 * NS_PER_S)
    cfg = RadioConfig(bandwidth_bps=1e6)
    assert _through(cfg, 12, cells=3).tolist() == [4 * one] * 12


def test_proportional_fair_gives_two_snr_classes_half_the_block_slots_each():
    # 10 devices at 30 dB and 10 at 10 dB, all backlogged for 4 s of 1 ms slots on 25
    # blocks: with independent Rayleigh fading each class gets about half the block-slots
    # (exactly half when the normalised rates are identically distributed; with Shannon
    # rates the log compresses the strong class's fades, which moves the share by a few %)
    m = 20
    snr = np.r_[np.full(10, 1000.0), np.full(10, 10.0)]
    _, won = proportional_fair_ns(
        np.zeros(m, dtype=np.int64),
        np.full(m, 1e12),
        snr,
        np.zeros(m, dtype=np.int64),
        blocks=25,
        block_hz=180e3,
        slot_ns=1_000_000,
        window_slots=100,
        rng=np.random.default_rng(2),
        horizon_ns=4 * NS_PER_S,
    )
    assert won.sum() == 25 * 4000
    assert won[:10].sum() / won.sum() == pytest.approx(0.5, rel=0.05)


def test_proportional_fair_beats_round_robin_by_multi_user_diversity():
    # equal devices: PF serves each on its good blocks, so the cell carries more than the
    # mean rate R B E[log2(1 + SNR h)] round robin gets
    m, snr, R, B = 10, 10.0, 25, 180e3
    bits = 2e6
    done, _ = proportional_fair_ns(
        np.zeros(m, dtype=np.int64),
        np.full(m, bits),
        np.full(m, snr),
        np.zeros(m, dtype=np.int64),
        blocks=R,
        block_hz=B,
        slot_ns=1_000_000,
        window_slots=100,
        rng=np.random.default_rng(3),
    )
    h = np.random.default_rng(4).standard_exponential(10**6)
    round_robin_s = m * bits / (R * B * np.log2(1 + snr * h).mean())
    assert done.max() / NS_PER_S < 0.8 * round_robin_s


def test_proportional_fair_in_events_runs_end_to_end():
    from edgesim.scenario import from_dict
    from edgesim.simulate import run

    raw = {
        "agents": {"count": 8},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 2},
        "network": {
            "fidelity": "events",
            "model_bytes": 20000,
            "radio": {"model": "shannon", "access": "proportional-fair", "channel_mhz": 5},
        },
    }
    a, b = run(from_dict(raw)), run(from_dict(raw))
    assert a["sim_time_s"] == b["sim_time_s"] and a["sim_time_s"]["total"] > 0
    assert a["communication"]["dropped"] == 0
