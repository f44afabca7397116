"""energy_mobility: energy per agent against K, and what moving devices do to FFL."""

import pytest

from analysis import common
from analysis.energy_mobility import STEM


@pytest.fixture(scope="module")
def rows(quick_figure):
    return common.read_figure(quick_figure("energy_mobility"), STEM)


def energy(rows, cell, mech):
    pts = [
        r for r in rows if r["panel"] == "energy" and r["cell"] == cell and r["mechanism"] == mech
    ]
    return {r["K"]: r for r in pts}


def speed(rows, series):
    return {r["x"]: r["y"] for r in rows if r["panel"] == "speed" and r["series"] == series}


@pytest.mark.parametrize("cell", ["cellular", "wifi"])
def test_energy_parts_add_up_and_ffl_costs_more_per_agent_than_fedavg(rows, cell):
    fedavg, ffl = energy(rows, cell, "fedavg"), energy(rows, cell, "ffl")
    assert set(fedavg) == set(ffl) and len(fedavg) >= 3
    for r in list(fedavg.values()) + list(ffl.values()):
        parts = r["tx_j"] + r["rx_j"] + r["compute_j"] + r["idle_j"]
        assert r["y"] == pytest.approx(parts, rel=1e-9)
        assert min(r["tx_j"], r["rx_j"], r["compute_j"], r["idle_j"]) > 0
    Ks = sorted(fedavg)
    assert all(ffl[K]["y"] > fedavg[K]["y"] for K in Ks)
    # FFL's Phase II asks each agent K - 1 times per round: its energy per agent grows faster
    grow_ffl = common.loglog_slope(Ks, [ffl[K]["y"] for K in Ks])[0]
    grow_fedavg = common.loglog_slope(Ks, [fedavg[K]["y"] for K in Ks])[0]
    assert grow_ffl > grow_fedavg + 0.3


def test_moving_devices_hand_over_and_miss_the_deadline_more(rows):
    hand, cut, err = (
        speed(rows, "handovers per device"),
        speed(rows, "cut per round"),
        speed(rows, "payment error"),
    )
    speeds = sorted(hand)
    assert speeds[0] == 0 and hand[0] == 0
    assert all(hand[a] < hand[b] for a, b in zip(speeds, speeds[1:], strict=False))
    assert cut[speeds[-1]] > cut[0] and err[speeds[-1]] > err[0]
