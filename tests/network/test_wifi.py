"""Wi-Fi cells (edgesim/network/wifi.py, contention.contention_ns): PHY arithmetic, Bianchi, contention."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

from edgesim.cli import main
from edgesim.config import resolved_options
from edgesim.network.access import Wifi, WifiOptions
from edgesim.network.contention import contention_ns
from edgesim.network.radio import RadioConfig
from edgesim.network.wifi import (
    SLOT_S,
    STANDARDS,
    TCP_BACKLOG,
    WifiMac,
    bianchi_tau,
    phy_rate_bps,
)
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write


def wifi_mac(cfg: RadioConfig) -> WifiMac:
    """The MAC of a Wi-Fi cell configured by ``cfg`` (its options resolved)."""
    return Wifi.mac_of(cfg, resolved_options(cfg, "access_options"))


@pytest.mark.parametrize(
    "standard, mcs, mhz, streams, mbps",
    [
        ("802.11ac", 7, 20, 1, 65.0),
        ("802.11ac", 3, 20, 1, 26.0),
        ("802.11ac", 9, 80, 2, 780.0),
        ("802.11n", 7, 40, 1, 135.0),
        ("802.11ax", 7, 20, 1, 86.0),
        ("802.11ax", 11, 80, 2, 1201.0),
    ],
)  # the standards' rate tables (0.8 us guard interval)
def test_phy_rates_match_the_standards_tables(standard, mcs, mhz, streams, mbps):
    assert phy_rate_bps(standard, mcs, mhz, streams, 800) == phy_rate_bps(
        standard, mcs, mhz, streams
    )
    assert phy_rate_bps(standard, mcs, mhz, streams) / 1e6 == pytest.approx(
        mbps, rel=5e-4
    )  # tables round to 0.1


def test_guard_intervals_lengthen_the_symbol():
    # 802.11ac MCS 7 with the short 0.4 us guard interval: 72.2 Mbit/s; 802.11ax MCS 7 with
    # 3.2 us: 73.1 Mbit/s (what ns-3 runs by default)
    assert phy_rate_bps("802.11ac", 7, 20, 1, 400) / 1e6 == pytest.approx(72.2, rel=5e-4)
    assert phy_rate_bps("802.11ax", 7, 20, 1, 3200) / 1e6 == pytest.approx(73.1, rel=5e-4)
    with pytest.raises(ValueError, match="guard intervals"):
        phy_rate_bps("802.11ac", 7, 20, 1, 3200)


def test_bianchi_fixed_point_against_an_independent_root_finder():
    # tau from p, p from tau: solve the two equations as one root of tau (brentq)
    W, m = 16, 6
    for n in (2, 5, 10, 20, 50):

        def gap(tau, n=n):
            p = 1 - (1 - tau) ** (n - 1)
            return tau - 2 * (1 - 2 * p) / ((1 - 2 * p) * (W + 1) + p * W * (1 - (2 * p) ** m))

        tau_ref = brentq(gap, 1e-9, 0.4, xtol=1e-15)
        tau, p = bianchi_tau(n, W, m)
        assert tau == pytest.approx(tau_ref, rel=1e-9)
        assert p == pytest.approx(1 - (1 - tau_ref) ** (n - 1), rel=1e-9)


def test_saturation_throughput_for_1_to_50_contenders():
    mac = WifiMac(phy_rate_bps("802.11ac", 7, 20, 1))
    T = mac.success_s
    for n in range(1, 51):
        tau, _ = bianchi_tau(n, 16, 6)
        p_tr = 1 - (1 - tau) ** n
        p_s = n * tau * (1 - tau) ** (n - 1) / p_tr
        s = p_s * p_tr * mac.payload_bits / ((1 - p_tr) * SLOT_S + p_tr * T)
        assert mac.goodput_bps(n) == pytest.approx(s, rel=1e-12)
    rates = [mac.goodput_bps(n) for n in range(1, 51)]
    assert all(a > b for a, b in zip(rates, rates[1:], strict=False))  # collisions grow with n
    # one sender alone: payload over (backoff CWmin / 2 slots + T_s) per A-MPDU
    alone = mac.payload_bits / (7.5 * SLOT_S + T)
    assert rates[0] == pytest.approx(alone, rel=1e-9)


def test_tcp_acks_contend_as_one_more_contender_with_short_frames():
    # an independent count of Bianchi's slot: k of the n data senders and a (0 or 1) of the
    # ACK side transmit, each with the tau of n + 1 contenders
    from scipy.stats import binom

    from edgesim.network.wifi import BLOCK_ACK_S, SIFS_S

    mac = WifiMac(phy_rate_bps("802.11ac", 7, 20, 1), tcp_backlog=50)  # every sender saturated
    for n in (1, 2, 5, 20, 50):
        tau, _ = bianchi_tau(n + 1, 16, 6)
        slot = payload = 0.0
        for k in range(n + 1):
            for a in (0, 1):
                prob = binom.pmf(k, n, tau) * (tau if a else 1 - tau)
                if k + a == 0:
                    slot += prob * SLOT_S
                elif k == 0:
                    slot += prob * mac.tcp_ack_s
                else:  # a data frame alone, or a collision as long as the data frame
                    slot += prob * mac.success_s
                    payload += prob * mac.payload_bits * (k + a == 1)
        assert mac.efficiency_tcp(n) == pytest.approx(payload / slot / mac.phy_bps, rel=1e-12)
    # the ACK A-MPDU answering 28 data MPDUs: 14 TCP ACKs of 96 bytes at 65 Mbit/s
    ack = 40e-6 + 14 * 96 * 8 / 65e6 + SIFS_S + BLOCK_ACK_S + mac.aifs_s
    assert mac.tcp_ack_s == pytest.approx(ack, rel=1e-12)
    # a lone TCP sender loses about 15 % to its receiver's ACKs; ACKs cost at every n
    assert 0.8 < mac.efficiency_tcp(1) / mac.efficiency(1) < 0.9
    assert all(mac.efficiency_tcp(n) < mac.efficiency(n) for n in range(1, 51))


def test_tcp_senders_contend_at_most_tcp_backlog_at_once():
    phy = phy_rate_bps("802.11ac", 7, 20, 1)
    saturated, mac = WifiMac(phy, tcp_backlog=10**6), WifiMac(phy)
    assert mac.tcp_backlog == TCP_BACKLOG == WifiOptions().tcp_backlog
    for n in range(1, 61):
        expect = saturated.efficiency_tcp(min(n, TCP_BACKLOG))
        assert mac.efficiency_tcp(n) == expect
    # below the cap Bianchi's efficiency falls with n; above it the goodput stays where ns-3's
    # TCP uplinks level off at this PHY (40-43 Mbit/s from N = 10 to 50; docs/network.md)
    assert saturated.efficiency_tcp(50) < mac.efficiency_tcp(50) == mac.efficiency_tcp(TCP_BACKLOG)
    assert 40e6 < mac.efficiency_tcp(50) * phy < 43e6
    cfg = RadioConfig(access="wifi", access_options=WifiOptions(tcp_backlog=3))
    assert wifi_mac(cfg).tcp_backlog == 3


def test_slow_start_sends_a_tcp_message_in_small_a_mpdus():
    # 50 000 B at 802.11ac MCS 7: 35 segments in slow-start windows of 10, 20 and 5, each one
    # A-MPDU (28 fit one); every opportunity costs the data PPDU, its TCP ACKs' PPDU (one per
    # two segments), two block acks, two AIFS and two mean backoffs (7.5 slots)
    from edgesim.network.wifi import BLOCK_ACK_S, SIFS_S

    mac = WifiMac(phy_rate_bps("802.11ac", 7, 20, 1))
    mpdu, ack, syn = 1532 * 8 / 65e6, 96 * 8 / 65e6, 102 * 8 / 65e6
    frame_end = SIFS_S + BLOCK_ACK_S + 43e-6 + 7.5 * SLOT_S

    def txop(m):
        return 40e-6 + m * mpdu + 40e-6 + math.ceil(m / 2) * ack + 2 * frame_end

    handshake = 2 * (40e-6 + syn + frame_end)
    expected = (txop(10) + txop(20) + txop(5) + handshake) / (35 / 28 * txop(28))
    assert mac.slow_start_factor(50_000) == pytest.approx(expected, rel=1e-12)
    assert 1.1 < expected < 1.2
    # a larger initial window needs fewer opportunities; large messages go in full A-MPDUs
    assert mac.slow_start_factor(50_000, initial_window=40) < expected
    assert mac.slow_start_factor(30_000_000) == pytest.approx(1.0, abs=2e-3)
    # never below 1: an opportunity's cost is affine in its segments, with a positive intercept
    sizes = np.unique(np.logspace(0, 8, 300).astype(int)).tolist()
    assert min(mac.slow_start_factor(s) for s in sizes) >= 1.0


def _one_device_round(size: int, latency_s: float, **network) -> dict:
    """Run one FedAvg round of one Wi-Fi device sending ``size`` bytes each way; its result."""
    raw = {
        "agents": {"count": 1},
        "data": {"samples": 20},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 1},
        "network": {
            "fidelity": "batched",
            "model_bytes": size - 64,
            "radio": {"access": "wifi", "latency_s": latency_s},
            "backhaul": {"hops": 0},
            "compute": {"seconds": 0.0},
            **network,
        },
    }
    return run(from_dict(raw))


def test_a_tcp_message_alone_on_wifi_takes_its_start_up_and_small_a_mpdus():
    # one device, 50 kB each way over TCP: per direction the latency, the handshake and slow
    # start (transport.tcp_extra_ns), and the airtime alone x slow_start_factor at the lone
    # TCP sender's rate (its receiver's ACKs contend: efficiency_tcp(1) / efficiency(1))
    from edgesim.network.transport import tcp_extra_ns

    S, latency = 50_000, 0.0005
    result = _one_device_round(S, latency, transport="tcp")
    mac = wifi_mac(RadioConfig(access="wifi"))
    alone_ns = round(S * 8 / mac.goodput_bps(1) * 1e9)
    start_ns = tcp_extra_ns(np.array([S]), alone_ns, round(2 * latency * 1e9))[0]
    medium = alone_ns * mac.slow_start_factor(S) * mac.efficiency(1) / mac.efficiency_tcp(1)
    one_way = (start_ns + medium) / 1e9 + latency
    assert result["sim_time_s"]["total"] == pytest.approx(2 * one_way, abs=1e-8)


def test_one_device_alone_takes_the_phy_arithmetic():
    # a message of S bytes alone: ceil(segments / MPDUs per A-MPDU) transmission opportunities
    # in the limit of many; edgesim charges S 8 / goodput(1) plus the latency
    S = 800_000
    result = _one_device_round(S, 0.0)
    mac = wifi_mac(RadioConfig(access="wifi"))
    one_way = S * 8 / mac.goodput_bps(1)
    assert result["sim_time_s"]["total"] == pytest.approx(2 * one_way, abs=2e-9)
    # the PHY arithmetic: 65 Mbit/s; an A-MPDU of 28 MPDUs of 1448 payload bytes
    assert mac.phy_bps == 65e6 and mac.mpdus == 28
    per_txop = 7.5 * SLOT_S + mac.success_s
    assert one_way == pytest.approx(S / (28 * 1448) * per_txop, rel=1e-12)


def test_contention_equal_uploads_finish_at_n_s_8_over_goodput_n():
    mac = wifi_mac(RadioConfig(access="wifi"))
    eff = lambda n: mac.efficiency(n) / mac.efficiency(1)  # noqa: E731
    N, w = 20, 1_000_000
    down, up = contention_ns(
        np.zeros(N), np.full(N, w), np.zeros(N), np.full(N, w), np.ones(N, bool), eff
    )
    # the access point alone sends N downlinks (each 1/N of its share): N w; then N devices
    # contend: each at eff(N) / N of its lone rate
    assert down.tolist() == [N * w] * N
    assert up.max() == pytest.approx(N * w + N * w / eff(N), abs=1)
    assert up.min() == up.max()


def test_the_access_point_contends_with_its_devices():
    # device 0's reply starts at once; the access point still holds device 1's downlink: two
    # contenders each get eff(2) / 2, not the lone rate
    # (defined for every n: the compiled walk, loaded by an earlier test, tabulates eff to 2 m + 1)
    eff = lambda n: 1.0 if n == 1 else 0.9  # noqa: E731
    down, up = contention_ns([0, 0], [100, 1000], [0, 0], [500, 500], [True, False], eff)
    # 0..200: the AP alone, two downlinks at 1/2: the first done at 200 (100 each);
    # then AP (900 left) and device 0 (500) contend at 0.45 each: device 0 done at 200 + 500 /
    # 0.45; the AP's 900 - 500 = 400 left alone
    t_up = 200 + 500 / 0.45
    assert down[0] == 200 and up[0] == round(t_up) and up[1] == -1
    assert down[1] == round(t_up + 400)


@pytest.mark.parametrize("fidelity", ["events", "batched"])
def test_wifi_round_in_both_fidelities_with_tcp_and_broadcast(fidelity):
    texts = []
    for fid in ("events", "batched"):
        raw = {
            "agents": {"count": 12},
            "mechanism": {"kind": "ffl", "phase1_rounds": 3, "phase2_rounds": 1},
            "network": {
                "fidelity": fid,
                "transport": "tcp",
                "downlink": "broadcast",
                "round_policy": "deadline",
                "deadline_s": 0.05,
                "radio": {"access": "wifi", "loss": "bernoulli", "loss_prob": 0.1},
                "compute": {"model": "shifted-exponential"},
            },
        }
        r = run(from_dict(raw))
        r["scenario"]["network"]["fidelity"] = r["network"]["fidelity"] = "(either)"
        texts.append(r)
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    "radio, key",
    [
        ("access = 'wifi'\n[network.radio.wifi]\nmcs = 10\n", "network.radio.wifi.mcs"),
        (
            "access = 'wifi'\nchannel_mhz = 80\n[network.radio.wifi]\nstandard = '802.11n'\n",
            "network.radio.channel_mhz",
        ),
        # MCS 9 does not exist at 20 MHz with one stream
        ("access = 'wifi'\n[network.radio.wifi]\nmcs = 9\n", "network.radio.wifi.mcs"),
        ("access = 'wifi'\nmodel = 'shannon'\n", "network.radio.model"),
        ("access = 'wifi'\ndownlink_access = 'dedicated'\n", "network.radio.downlink_access"),
        ("[network.radio.wifi]\nmcs = 5\n", "network.radio.wifi"),  # only read with wifi
        (
            "access = 'wifi'\n[network.radio.wifi]\nguard_interval_ns = 3200\n",
            "network.radio.wifi.guard_interval_ns",
        ),
        # the deprecated flat keys still work: the same key as their options'
        ("access = 'wifi'\nwifi_mcs = 10\n", "network.radio.wifi.mcs"),
        (
            "access = 'wifi'\nwifi_guard_interval_ns = 3200\n",
            "network.radio.wifi.guard_interval_ns",
        ),
    ],
)
def test_bad_wifi_input_exits_2_naming_the_key(tmp_path, capsys, radio, key):
    path = write(tmp_path, f"[network]\nfidelity = 'events'\n[network.radio]\n{radio}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the flat keys' deprecation
        assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err


def test_churn_and_tcp_keys_without_their_models_exit_2(tmp_path, capsys):
    for text, key in (
        ("[network.radio]\naccess = 'wifi'\n[network.availability]\nmodel = 'markov'\n",
         "network.availability.model"),
        ("tcp_initial_window = 4\n", "network.tcp_initial_window"),
        ("[network.radio]\naccess = 'wifi'\n[network.radio.wifi]\ntcp_backlog = 5\n",
         "network.radio.wifi.tcp_backlog"),
        ("[network.radio.wifi]\ntcp_backlog = 5\n", "network.radio.wifi"),
        ("transport = 'tcp'\n[network.radio]\naccess = 'wifi'\n[network.radio.wifi]\n"
         "tcp_backlog = 0\n", "network.radio.wifi.tcp_backlog"),
    ):  # fmt: skip
        path = write(tmp_path, "[network]\nfidelity = 'events'\n" + text)
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and key in err[0], err


def test_standards_table_is_consistent():
    for _, (subcarriers, t_sym, top, preamble, _) in STANDARDS.items():
        assert t_sym in (4e-6, 13.6e-6) and 7 <= top <= 11 and 30e-6 <= preamble <= 50e-6
        assert all(math.log2(w / 20).is_integer() for w in subcarriers)


def test_a_steady_wifi_exchange_is_planned_once_and_equals_the_general_plan():
    from edgesim.network.build import Network
    from edgesim.network.config import NetworkConfig
    from edgesim.network.server import NetworkServer

    cfg = NetworkConfig(fidelity="batched", radio=RadioConfig(access="wifi"))
    net = Network(cfg, np.full(20, 10), np.random.SeedSequence(3))
    server = NetworkServer(net, None, np.arange(20))
    assert server.steady_ok
    up = np.full(20, 50_000, dtype=np.int64)
    steady = server.plan_exchange(server.everyone, 40_000, up)
    general = server._plan_joint(np.arange(20), 40_000, up, True)
    assert steady.steady and steady is server.plan_exchange(server.everyone, 40_000, up)
    np.testing.assert_array_equal(steady.resolve_ns, general.resolve_ns)
    np.testing.assert_array_equal(steady.arrive_ns, general.arrive_ns)
