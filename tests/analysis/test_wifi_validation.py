"""wifi_validation: edgesim's Wi-Fi cell against the committed ns-3 runs (no ns-3 needed)."""

import csv

import numpy as np
import pytest

from analysis import wifi_validation
from edgesim.network.wifi import TCP_BACKLOG


@pytest.fixture(scope="module")
def configs():
    return wifi_validation.ns3_configurations()


@pytest.fixture(scope="module")
def rows(configs):
    # a reduced grid: 802.11ac MCS 3 and 7, N in {1, 10, 40}, 50 kB and 800 kB, every mode
    keep = {
        k: v
        for k, v in configs.items()
        if k[0] == "ac" and k[2] in (1, 10, 40) and k[3] in (50_000, 800_000)
    }
    assert len(keep) == 2 * 3 * 2 * 3
    return wifi_validation.rows_for(keep)


def test_ns3_runs_are_there_and_repeat(configs):
    assert all(len(v) >= 5 for v in configs.values())
    assert all(len(v) >= 10 for k, v in configs.items() if k[3] < 100_000)
    # one reference: every row from the same script, ns-3 version and queue settings
    with open(wifi_validation.NS3_CSV, newline="") as f:
        made = {
            (r["script"], r["ns3_version"], r["mac_queue"], r["arp"]) for r in csv.DictReader(f)
        }
    assert len(made) == 1
    # the numbers that motivated the Wi-Fi model: an 800 kB round at MCS 7, N = 40
    assert np.mean(configs[("ac", 7, 40, 800_000, "round")]) == pytest.approx(11.7, rel=0.05)


KEY = ("standard", "mcs", "n", "bytes", "mode")


def _ratio(r, configs):
    """edgesim over ns-3's mean, or over its median run where some run had a TCP timeout."""
    if not r["ns3_timeout"]:
        return r["ratio"]
    return r["edgesim_s"] / np.median(configs[tuple(r[k] for k in KEY)])


def test_edgesim_meets_the_acceptance_bounds_on_802_11ac(rows, configs):
    # issue 13: median |ratio - 1| <= 10 %, N >= 2 within 20 %, N = 1 within 30 %. Where ns-3
    # lost a TCP segment and waited out a timer (wifi_validation.timed_out), its mean
    # measures the timer: there the bound is checked against the median run, and such
    # configurations must stay a minority
    assert np.median([abs(r["ratio"] - 1) for r in rows]) < 0.1
    assert sum(r["ns3_timeout"] for r in rows) <= len(rows) // 4
    for r in rows:
        ratio = _ratio(r, configs)
        bound = 0.3 if r["n"] == 1 else 0.2
        assert abs(ratio - 1) <= bound, r
        # the large transfers, where TCP's start-up matters least, agree closely
        assert r["bytes"] < 800_000 or abs(ratio - 1) < 0.13, r


def test_slow_start_brings_small_downlinks_to_many_stations_within_bounds(rows):
    # without slow start's small A-MPDUs these were 21-25 % too fast (ratios 0.75-0.79)
    small = [r for r in rows if r["bytes"] == 50_000 and r["mode"] == "downlink" and r["n"] > 1]
    assert small and all(0.85 < r["ratio"] < 1.1 for r in small)


def test_the_tcp_backlog_default_is_the_fit_and_fixes_small_uplinks_from_many_stations(configs):
    # the one number fitted to ns-3 (on two configurations); refit when the model changes
    assert wifi_validation.fit_tcp_backlog(configs) == TCP_BACKLOG
    # small uplinks from 40 and 50 stations, outside the fit: with every sender saturated
    # (Bianchi's model alone) edgesim was 18-23 % too slow at MCS 7
    for std in ("ac", "ax"):
        for n in (40, 50):
            key = (std, 7, n, 50_000, "uplink")
            ns3 = np.mean(configs[key])
            assert wifi_validation.edgesim_s(*key, tcp_backlog=n) / ns3 > 1.17
            assert abs(wifi_validation.edgesim_s(*key) / ns3 - 1) < 0.1
