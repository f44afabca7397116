"""wifi_validation: edgesim's Wi-Fi cell against the committed ns-3 runs (no ns-3 needed)."""

import numpy as np
import pytest

from analysis import wifi_validation


@pytest.fixture(scope="module")
def rows():
    configs = wifi_validation.ns3_configurations()
    # a reduced grid: 802.11ac, N in {1, 10, 40}, both sizes, every mode
    keep = {k: v for k, v in configs.items() if k[0] == "ac" and k[2] in (1, 10, 40)}
    assert len(keep) == 2 * 3 * 2 * 3
    return wifi_validation.rows_for(keep)


def test_ns3_runs_are_there_and_repeat():
    configs = wifi_validation.ns3_configurations()
    assert all(len(v) >= 5 for v in configs.values())
    assert all(len(v) >= 10 for k, v in configs.items() if k[3] < 100_000)
    # the numbers that motivated the Wi-Fi model: an 800 kB round at MCS 7, N = 40
    assert np.mean(configs[("ac", 7, 40, 800_000, "round")]) == pytest.approx(11.7, rel=0.05)


def test_edgesim_tracks_ns3_on_802_11ac(rows):
    # measured with the receivers' TCP ACKs contending: median |ratio - 1| 5 % over these
    # rows (14 % before them), ratios 0.66-1.12; every 800 kB row within 12 % (all were 12-16 %
    # too fast without the ACKs). These bounds fail if a change moves the model away from ns-3.
    deviation = [abs(r["ratio"] - 1) for r in rows]
    assert np.median(deviation) < 0.1
    assert all(0.6 < r["ratio"] < 1.15 for r in rows)
    big = [r for r in rows if r["bytes"] == 800_000]
    assert all(abs(r["ratio"] - 1) < 0.12 for r in big)
    # what is left: one-way 50 kB transfers, where ns-3's first transfer on a station pair
    # costs about 6 ms more than its second (docs/network.md); edgesim models neither
    rounds = [r for r in rows if r["mode"] == "round"]
    assert all(abs(r["ratio"] - 1) < 0.2 for r in rounds)
