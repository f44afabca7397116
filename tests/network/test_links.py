"""Link models: closed forms, statistics within 3 standard errors, determinism, validation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import quad

from edgesim.errors import ScenarioError
from edgesim.network import NS_PER_S
from edgesim.network.access import ProportionalFairOptions
from edgesim.network.links import (
    LINKS,
    BernoulliLoss,
    FixedLink,
    GilbertElliottLoss,
    NoLoss,
    ShannonLink,
    SNRLoss,
    Transfers,
    WiredLink,
    build_link,
    register_link,
)
from edgesim.network.radio import RadioConfig


def check_valid(t: Transfers, R: int) -> None:
    """Invariants every Transfers must satisfy."""
    assert t.attempts.dtype == np.int64 and t.delivered.dtype == bool
    assert ((t.attempts >= 1) & (t.attempts <= R + 1)).all()
    # a message that is not delivered used up all R + 1 transmissions
    assert (t.attempts[~t.delivered] == R + 1).all()
    assert t.duration_ns.dtype == np.int64


# ----------------------------------------------------------------------------- fixed


def test_fixed_link_duration_closed_form():
    link = FixedLink(0.005, 1e6, NoLoss(), arq_max_retries=3, rto_s="auto")
    sizes = np.array([0, 1, 125, 1000, 123_457])
    t = link.send(np.zeros(5, dtype=int), sizes, np.random.default_rng(0))
    # 8 S / 1e6 s = 8000 S ns, exact; plus 5 ms
    assert t.duration_ns.tolist() == [8000 * s + 5_000_000 for s in sizes]
    assert t.attempts.tolist() == [1] * 5 and t.retransmissions == 0 and t.dropped == 0
    assert link.rto_ns == 10_000_000  # auto = 2 x latency


def test_fixed_link_failed_attempts_cost_airtime_plus_rto():
    R = 2
    link = FixedLink(0.001, 3e6, BernoulliLoss(1.0), arq_max_retries=R, rto_s=0.0125)
    t = link.send(np.arange(4), np.full(4, 1000), np.random.default_rng(1))
    air = round(8000 / 3e6 * NS_PER_S)  # 2666667 ns
    assert t.airtime_ns.tolist() == [air] * 4
    assert (t.duration_ns == (R + 1) * (air + 12_500_000)).all()
    assert t.dropped == 4 and t.retransmissions == 4 * R and t.transmissions == 4 * (R + 1)


def test_duration_formula_mixed():
    t = Transfers(
        attempts=np.array([1, 2, 4, 4]),
        delivered=np.array([True, True, True, False]),
        airtime_ns=np.array([10, 10, 7, 7]),
        latency_ns=np.full(4, 100),
        rto_ns=np.full(4, 1000),
    )
    assert t.duration_ns.tolist() == [110, 1120, 3128, 4028]
    assert t.retransmissions == 7 and t.dropped == 1 and len(t) == 4


def test_zero_latency_infinite_bandwidth_is_instant():
    rng = np.random.default_rng(2)
    sizes = rng.integers(0, 10**9, 1000)
    for link in (WiredLink(0.0, 1e30), FixedLink(0.0, math.inf, rto_s="auto")):
        t = link.send(rng.integers(0, 10, 1000), sizes, rng)
        assert (t.duration_ns == 0).all() and t.delivered.all()


def test_wired_link_is_lossless_and_draws_nothing():
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    t = WiredLink(0.002, 1e9).send(np.arange(3), np.array([125, 250, 0]), rng)
    assert rng.bit_generator.state == state
    assert t.duration_ns.tolist() == [2_001_000, 2_002_000, 2_000_000]


# ----------------------------------------------------------------------------- bernoulli + ARQ


@pytest.mark.parametrize("q,R", [(0.3, 3), (0.6, 2)])
def test_bernoulli_arq_mean_attempts(q, R):
    n = 200_000
    link = FixedLink(0.0, 1e6, BernoulliLoss(q), arq_max_retries=R, rto_s=0.0)
    t = link.send(np.zeros(n, dtype=int), np.ones(n, dtype=int), np.random.default_rng(4))
    check_valid(t, R)
    expected = (1 - q ** (R + 1)) / (1 - q)
    se = t.attempts.std(ddof=1) / math.sqrt(n)
    assert abs(t.attempts.mean() - expected) < 3 * se
    p_drop = q ** (R + 1)
    assert abs(t.dropped / n - p_drop) < 3 * math.sqrt(p_drop * (1 - p_drop) / n)


def test_bernoulli_no_retry_loss_fraction():
    n, q = 200_000, 0.07
    link = FixedLink(0.0, 1e6, BernoulliLoss(q), arq_max_retries=0)
    t = link.send(np.arange(n) % 7, np.ones(n, dtype=int), np.random.default_rng(5))
    assert abs(t.dropped / n - q) < 3 * math.sqrt(q * (1 - q) / n)
    assert t.retransmissions == 0


def test_draw_order_one_draw_per_attempt_for_those_still_trying():
    q, R, m = 0.5, 3, 1000
    t = FixedLink(0.0, 1e6, BernoulliLoss(q), arq_max_retries=R).send(
        np.arange(m), np.ones(m, dtype=int), np.random.default_rng(6)
    )
    rng = np.random.default_rng(6)
    attempts = np.zeros(m, dtype=int)
    trying = np.arange(m)
    for _ in range(R + 1):
        attempts[trying] += 1
        trying = trying[rng.random(trying.size) < q]
    assert (t.attempts == attempts).all()
    assert (t.delivered == ~np.isin(np.arange(m), trying)).all()


# ----------------------------------------------------------------------------- gilbert-elliott


def ge_reference(bad, p, r, h, k, endpoints, u):
    """Transmission by transmission, as Linux netem's loss_gilb_ell (loss by state, then move)."""
    bad = bad.copy()
    lost = np.zeros(len(endpoints), dtype=bool)
    for i, e in enumerate(endpoints):
        if bad[e]:
            lost[i] = u[i, 1] < 1 - h
            bad[e] = not (u[i, 0] < r)
        else:
            lost[i] = u[i, 1] < 1 - k
            bad[e] = u[i, 0] < p
    return lost, bad


@pytest.mark.parametrize("p,r", [(0.05, 0.2), (0.3, 0.1), (0.5, 0.5), (0.9, 0.7)])
def test_gilbert_elliott_matches_sequential_reference_with_repeated_endpoints(p, r):
    rng = np.random.default_rng(7)
    h, k, N = 0.3, 0.9, 13
    ge = GilbertElliottLoss(p, r, h, k, N, rng)
    bad0 = ge.bad.copy()
    endpoints = rng.integers(0, N, 3000)  # many transmissions per endpoint in one call
    draw = np.random.default_rng(8)
    lost = ge.lost(endpoints, draw)
    u = np.random.default_rng(8).random((endpoints.size, 2))
    ref_lost, ref_bad = ge_reference(bad0, p, r, h, k, endpoints, u)
    assert (lost == ref_lost).all()
    assert (ge.bad == ref_bad).all()


def test_gilbert_elliott_long_run_loss_rate():
    p, r, h, k = 0.05, 0.2, 0.3, 0.95
    N, T = 4000, 150
    rng = np.random.default_rng(9)
    ge = GilbertElliottLoss(p, r, h, k, N, rng)
    losses = np.empty((T, N))
    for t in range(T):
        losses[t] = ge.lost(np.arange(N), rng)
    # endpoints are independent chains started stationary: the per-endpoint means
    # are i.i.d. and unbiased, so their spread gives an honest standard error
    per_endpoint = losses.mean(axis=0)
    se = per_endpoint.std(ddof=1) / math.sqrt(N)
    pi_b = p / (p + r)
    expected = (1 - pi_b) * (1 - k) + pi_b * (1 - h)
    assert ge.mean_loss == pytest.approx(expected)
    assert abs(per_endpoint.mean() - expected) < 3 * se
    # bursty: a loss is more likely right after a loss than on average
    after_loss = losses[1:][losses[:-1] == 1].mean()
    assert after_loss > expected + 0.2


def test_gilbert_elliott_long_run_loss_rate_repeated_endpoints_in_one_send():
    p, r, h, k = 0.1, 0.4, 0.0, 1.0
    N, per = 2000, 100
    rng = np.random.default_rng(10)
    link = FixedLink(0.0, 1e6, GilbertElliottLoss(p, r, h, k, N, rng), arq_max_retries=0)
    endpoints = np.repeat(np.arange(N), per)
    rng.shuffle(endpoints)
    t = link.send(endpoints, np.ones(endpoints.size, dtype=int), rng)
    per_endpoint = 1 - np.bincount(endpoints, weights=t.delivered, minlength=N) / per
    se = per_endpoint.std(ddof=1) / math.sqrt(N)
    assert abs(per_endpoint.mean() - p / (p + r)) < 3 * se


def test_gilbert_elliott_state_persists_across_calls():
    # p = r = 1: the chain alternates deterministically; bad loses all, good none
    ge = GilbertElliottLoss(1.0, 1.0, 0.0, 1.0, 1, initial_bad=np.array([True]))
    link = FixedLink(0.0, 1e6, ge, arq_max_retries=0)
    rng = np.random.default_rng(11)
    one = np.zeros(1, dtype=int)
    got = [bool(link.send(one, one, rng).delivered[0]) for _ in range(6)]
    assert got == [False, True, False, True, False, True]
    # two messages in one call, with one retry: attempt 0 sends message 0 (bad: lost),
    # then message 1 (good: delivered); attempt 1 resends message 0 (bad again: lost)
    t = FixedLink(0.0, 1e6, ge, arq_max_retries=1).send(np.zeros(2, dtype=int), one.repeat(2), rng)
    assert t.attempts.tolist() == [2, 1] and t.delivered.tolist() == [False, True]
    assert ge.bad.tolist() == [False]


def test_split_send_differs_but_is_valid():
    cfg = RadioConfig(loss="gilbert-elliott", ge_p=0.2, ge_r=0.3, ge_h=0.1, arq_max_retries=2)
    N, m = 50, 4000
    endpoints = np.random.default_rng(12).integers(0, N, m)
    sizes = np.full(m, 1000)

    def fresh():
        return build_link(cfg, "up", np.full(N, 100.0), np.random.default_rng(13))

    link = fresh()
    whole = link.send(endpoints, sizes, np.random.default_rng(14))
    end_state_whole = link.loss.bad.copy()

    link = fresh()
    start = link.loss.bad.copy()
    rng = np.random.default_rng(14)
    a = link.send(endpoints[: m // 2], sizes[: m // 2], rng)
    mid = link.loss.bad.copy()
    b = link.send(endpoints[m // 2 :], sizes[m // 2 :], rng)
    for t in (whole, a, b):
        check_valid(t, 2)
    assert (mid != start).any()  # the first call moved the chains and they were kept
    split_attempts = np.concatenate([a.attempts, b.attempts])
    assert (split_attempts != whole.attempts).any()
    assert (link.loss.bad != end_state_whole).any() or (split_attempts != whole.attempts).any()


# ----------------------------------------------------------------------------- shannon


def test_shannon_rate_matches_hand_computation():
    cfg = RadioConfig(model="shannon", shadowing_db=0.0, rb_bandwidth_hz=1e6, resource_blocks=1)
    d = np.array([10.0, 200.0, 500.0])
    up = ShannonLink(cfg, d, "up", np.random.default_rng(15))
    down = ShannonLink(cfg, d, "down", np.random.default_rng(15))
    noise_dbm = -174 + 10 * math.log10(1e6)  # -114 dBm over 1 MHz
    for i, dist in enumerate([35.0, 200.0, 500.0]):  # 10 m is raised to the 35 m minimum
        pl = 128.1 + 37.6 * math.log10(dist / 1000)
        for link, p_dbm in ((up, 10.0), (down, 23.0)):
            snr = 10 ** ((p_dbm - pl - noise_dbm) / 10)
            assert link.mean_snr[i] == pytest.approx(snr, rel=1e-12)
            assert link.rate_bps[i] == pytest.approx(1e6 * math.log2(1 + snr), rel=1e-12)
    # 500 m uplink: PL = 116.78 dB, SNR = 7.22 dB, about 2.65 Mbit/s
    assert up.rate_bps[2] == pytest.approx(2.6486e6, rel=1e-3)
    t = up.send(np.array([2]), np.array([125_000]), np.random.default_rng(0))
    assert t.airtime_ns[0] == round(1e6 / up.rate_bps[2] * NS_PER_S)


def test_shannon_default_cell_is_lte_20_mhz():
    # 100 blocks of 180 kHz; the SNR per block (power and noise per block); a lone
    # sender's rate is 100 x 180 kHz x log2(1 + SNR)
    cfg = RadioConfig(model="shannon", shadowing_db=0.0)
    link = ShannonLink(cfg, np.array([500.0]), "up", np.random.default_rng(0))
    pl = 128.1 + 37.6 * math.log10(0.5)
    snr = 10 ** ((10.0 - pl - (-174 + 10 * math.log10(180e3))) / 10)
    assert link.mean_snr[0] == pytest.approx(snr, rel=1e-12)
    assert link.rate_bps[0] == pytest.approx(100 * 180e3 * math.log2(1 + snr), rel=1e-12)


def test_shannon_interference_and_shadowing():
    cfg = RadioConfig(model="shannon", interference_dbm=-110.0, rb_bandwidth_hz=1e6)
    n = 20_000
    link = ShannonLink(cfg, np.full(n, 300.0), "up", np.random.default_rng(16))
    # shadowing: N(0, 8^2) dB, standard error of a sample sd ~ sigma / sqrt(2 n)
    assert abs(link.shadow_db.std(ddof=1) - 8.0) < 3 * 8.0 / math.sqrt(2 * n)
    assert abs(link.shadow_db.mean()) < 3 * 8.0 / math.sqrt(n)
    ni = 10 ** (-114 / 10) + 10 ** (-110 / 10)
    pl = 128.1 + 37.6 * math.log10(0.3) + link.shadow_db[0]
    assert link.mean_snr[0] == pytest.approx(10 ** ((10 - pl) / 10) / ni, rel=1e-12)
    # the down link can share the up link's shadowing (reciprocity)
    down = ShannonLink(cfg, np.full(n, 300.0), "down", None, shadow_db=link.shadow_db)
    assert down.mean_snr == pytest.approx(link.mean_snr * 10**1.3, rel=1e-12)


def snr_loss_by_quad(c: float) -> float:
    """E_h[1 - exp(-c/h)] for h ~ Exp(1), by numerical integration."""
    val, _ = quad(lambda h: -math.expm1(-c / h) * math.exp(-h), 0, math.inf, limit=200)
    return val


@pytest.mark.parametrize("c", [0.05, 0.5, 2.0])
def test_snr_loss_matches_integral(c):
    n = 200_000
    loss = SNRLoss(0.023, np.array([0.023 / c]))
    lost = loss.lost(np.zeros(n, dtype=int), np.random.default_rng(17))
    expected = snr_loss_by_quad(c)
    assert loss.mean_loss[0] == pytest.approx(expected, rel=1e-8)
    assert abs(lost.mean() - expected) < 3 * math.sqrt(expected * (1 - expected) / n)


def test_snr_loss_on_a_shannon_link():
    cfg = RadioConfig(
        model="shannon", loss="snr", shadowing_db=0.0, arq_max_retries=0, rb_bandwidth_hz=1e6
    )
    link = build_link(cfg, "up", np.array([450.0]), np.random.default_rng(18))
    pl = 128.1 + 37.6 * math.log10(0.45)
    c = 0.023 * 10 ** (-114 / 10) / 10 ** ((10 - pl) / 10)  # m (I + B N0) / (P g)
    assert link.loss.c[0] == pytest.approx(c, rel=1e-12)
    n = 200_000
    t = link.send(np.zeros(n, dtype=int), np.full(n, 100), np.random.default_rng(19))
    q = snr_loss_by_quad(c)
    assert abs(t.dropped / n - q) < 3 * math.sqrt(q * (1 - q) / n)


# ----------------------------------------------------------------------------- determinism, registry


@pytest.mark.parametrize(
    "cfg",
    [
        RadioConfig(model="shannon", loss="gilbert-elliott"),
        RadioConfig(model="shannon", loss="snr", arq_max_retries=5),
        RadioConfig(loss="bernoulli", loss_prob=0.2),
    ],
)
def test_same_seed_same_transfers(cfg):
    N = 100
    d = np.random.default_rng(20).uniform(0, 500, N)
    endpoints = np.random.default_rng(21).integers(0, N, 5000)
    sizes = np.random.default_rng(22).integers(1, 10**6, 5000)
    runs = []
    for _ in range(2):
        link = build_link(cfg, "up", d, np.random.default_rng(23))
        runs.append(link.send(endpoints, sizes, np.random.default_rng(24)))
    for f in dataclasses.fields(Transfers):
        assert (getattr(runs[0], f.name) == getattr(runs[1], f.name)).all()
    other = build_link(cfg, "up", d, np.random.default_rng(23)).send(
        endpoints, sizes, np.random.default_rng(25)
    )
    assert (other.attempts != runs[0].attempts).any()
    check_valid(other, cfg.arq_max_retries)


def test_register_link():
    made = {}

    def factory(cfg, direction, distance_m, rng):
        made["args"] = (direction, len(distance_m))
        return WiredLink(cfg.latency_s, 1e9)

    register_link("test-wired", factory)
    try:
        link = build_link(RadioConfig(model="test-wired"), "down", np.zeros(4), None)
        assert made["args"] == ("down", 4)
        assert (
            link.send(np.arange(2), np.array([0, 0]), None).duration_ns.tolist() == [5_000_000] * 2
        )
    finally:
        del LINKS["test-wired"]


# ----------------------------------------------------------------------------- validation


def keys(cfg: RadioConfig) -> list[str]:
    return [e.key for e in cfg.cross_check()]


def test_defaults_are_valid():
    assert RadioConfig().cross_check() == []
    assert RadioConfig(model="shannon", loss="snr").cross_check() == []
    assert RadioConfig(loss="bernoulli", loss_prob=0.0).cross_check() == []


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"loss": "snr"}, "network.radio.loss"),
        ({"loss_prob": 0.2}, "network.radio.loss_prob"),
        ({"loss": "bernoulli", "loss_prob": 1.5}, "network.radio.loss_prob"),
        ({"loss": "bernoulli", "loss_prob": 1.0}, "network.radio.loss_prob"),
        ({"arq_max_retries": -1}, "network.radio.arq_max_retries"),
        ({"arq_max_retries": 2.0}, "network.radio.arq_max_retries"),
        ({"model": "shanon"}, "network.radio.model"),
        ({"loss": "gilbert"}, "network.radio.loss"),
        ({"loss": "gilbert-elliott", "ge_p": 0.0, "ge_r": 0.0}, "network.radio.ge_p"),
        ({"loss": "gilbert-elliott", "ge_p": 1.0, "ge_r": 0.0}, "network.radio.ge_k"),
        ({"ge_h": 0.5}, "network.radio.ge_h"),
        ({"tx_power_dbm": 20.0}, "network.radio.tx_power_dbm"),
        ({"model": "shannon", "bandwidth_bps": 1e6}, "network.radio.bandwidth_bps"),
        ({"rto_s": "never"}, "network.radio.rto_s"),
        ({"rto_s": -0.1}, "network.radio.rto_s"),
        ({"latency_s": math.nan}, "network.radio.latency_s"),
        ({"resource_blocks": 0}, "network.radio.resource_blocks"),
        ({"resource_blocks": "all"}, "network.radio.resource_blocks"),
        ({"access": "csma"}, "network.radio.access"),
        ({"access": "proportional-fair"}, "network.radio.access"),  # needs shannon
        ({"channel_mhz": 7}, "network.radio.channel_mhz"),
        ({"numerology": "nr-60", "channel_mhz": 5}, "network.radio.channel_mhz"),
        ({"numerology": "nr-120"}, "network.radio.numerology"),
        ({"downlink_access": "broadcast"}, "network.radio.downlink_access"),
        # options of a scheme that is not the one chosen (round-robin declares none)
        (
            {"access_options": ProportionalFairOptions(slot_s=0.002)},
            "network.radio.access_options",
        ),
        (
            {"access": "wifi", "access_options": ProportionalFairOptions()},
            "network.radio.access_options",
        ),
        ({"model": "shannon", "rb_bandwidth_hz": 0}, "network.radio.rb_bandwidth_hz"),
    ],
)
def test_bad_values_are_reported(kwargs, key):
    cfg = RadioConfig(**kwargs)
    assert keys(cfg) == [key]
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
        build_link(cfg, "up", np.zeros(3), np.random.default_rng(0))


def test_did_you_mean_and_custom_prefix():
    (err,) = RadioConfig(model="shanon").cross_check("network.downlink")
    assert err.key == "network.downlink.model" and "did you mean 'shannon'" in err.message


def test_rto_auto_is_twice_latency_in_ns():
    assert RadioConfig(latency_s=0.0015).rto_ns() == 3_000_000
    assert RadioConfig(latency_s=0.0015, rto_s=0.02).rto_ns() == 20_000_000


def test_send_rejects_bad_inputs():
    link = build_link(RadioConfig(), "up", np.zeros(3), np.random.default_rng(0))
    with pytest.raises(ValueError, match="endpoints"):
        link.send(np.array([3]), np.array([1]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="size_bytes"):
        link.send(np.array([0]), np.array([-1]), np.random.default_rng(0))
    t = link.send(np.array([], dtype=int), np.array([], dtype=int), np.random.default_rng(0))
    assert len(t) == 0 and t.duration_ns.shape == (0,)


@pytest.mark.parametrize(
    "numerology, mhz, blocks, block_hz",
    [("lte", 20, 100, 180e3), ("lte", 1.4, 6, 180e3), ("nr-15", 50, 270, 180e3),
     ("nr-30", 100, 273, 360e3), ("nr-60", 100, 135, 720e3)],
)  # fmt: skip
def test_channel_tables(numerology, mhz, blocks, block_hz):
    cfg = RadioConfig(numerology=numerology, channel_mhz=mhz)
    assert cfg.cross_check() == []
    assert cfg.blocks() == blocks and cfg.block_bandwidth_hz() == block_hz
    # the blocks fill the channel but for the guard bands (at most 10 % of LTE 1.4 MHz: 23 %)
    assert 0.75 < blocks * block_hz / (mhz * 1e6) <= 0.99


def test_bad_channel_exits_2_naming_the_key(tmp_path, capsys):
    from edgesim.cli import main
    from tests.helpers import write

    path = write(tmp_path, "[network]\nfidelity = 'batched'\n[network.radio]\nchannel_mhz = 12\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.radio.channel_mhz" in err[0] and "20" in err[0], err


def test_an_airtime_that_is_no_int64_is_refused():
    from edgesim.network.links import _airtime_ns

    assert _airtime_ns(np.array([1000], dtype=np.int64), 8e6).tolist() == [1_000_000]
    for size, rate in (([1], 0.0), ([-1], 0.0), ([0], 0.0)):  # +inf, -inf, NaN
        with pytest.raises(ValueError, match="int64 ns"):
            _airtime_ns(np.array(size, dtype=np.int64), rate)


def test_shannon_airtime_of_one_size_reads_a_table_with_the_same_numbers():
    """Messages of one size (a constant view) read that size's airtime table: the same int64
    ns as computed message by message; a zero rate raises only where it is asked for."""
    from edgesim.arrays import constant
    from edgesim.network.airtime import airtime_ns

    cfg = RadioConfig(model="shannon", shadowing_db=8.0)
    d = np.random.default_rng(3).uniform(1.0, 2000.0, 50)
    link = ShannonLink(cfg, d, "up", np.random.default_rng(4))
    asked = np.random.default_rng(5).integers(0, 50, 30)
    for size in (0, 1, 1234, 10**9):
        got = link.airtime_ns(asked, constant(asked.size, size))
        each = airtime_ns(np.full(asked.size, size, dtype=np.int64), link.rate_bps[asked])
        assert got.dtype == np.int64 and np.array_equal(got, each)
        assert link.airtime_ns(asked, constant(asked.size, size)) is not got  # a fresh gather
    with pytest.raises(ValueError):
        link.rate_bps[0] = 1.0  # the table's rates are read-only
    zero = ShannonLink(cfg, d[:3], "up", np.random.default_rng(4))
    zero.rate_bps = np.array([1e6, 0.0, 2e6])
    fine = zero.airtime_ns(np.array([0, 2]), constant(2, 100))
    assert np.array_equal(fine, [800_000, 400_000])
    with pytest.raises(ValueError, match="does not fit"):
        zero.airtime_ns(np.array([1]), constant(1, 100))


def test_a_large_link_keeps_no_airtime_tables(monkeypatch):
    """Above AIRTIME_TABLE_MAX_ENDPOINTS a link computes the asked airtimes (no (N,) table per
    size beside the memory estimate): the same numbers."""
    from edgesim.arrays import constant
    from edgesim.network import airtime

    monkeypatch.setattr(airtime, "AIRTIME_TABLE_MAX_ENDPOINTS", 10)
    cfg = RadioConfig(model="shannon", shadowing_db=8.0)
    link = ShannonLink(cfg, np.linspace(10.0, 900.0, 20), "up", np.random.default_rng(1))
    asked = np.array([3, 17, 3])
    got = link.airtime_ns(asked, constant(3, 1500))
    assert link._airtimes.tables == {}
    assert np.array_equal(got, airtime.airtime_ns(np.full(3, 1500), link.rate_bps[asked]))
