"""The LTE link model (network.radio.model = "lte"): TS 36.213 tables, link adaptation, HARQ, options."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import edgesim
from edgesim.errors import ScenarioErrors
from edgesim.network.links import build_link
from edgesim.network.lte import LteOptions, peak_rate_bps
from edgesim.network.lte.rates import adapt, expected_transmissions
from edgesim.network.lte.tables import (
    cqi_of_sinr,
    cqi_of_sinr_mi,
    mcs_of_cqi,
    rbg_size,
    snr_gap,
    tbs_bits,
)
from edgesim.network.radio import RadioConfig
from edgesim.scenario import from_dict


def db(x):
    return 10.0 ** (np.asarray(x, dtype=np.float64) / 10.0)


# ------------------------------------------------------------------ the standard's tables


@pytest.mark.parametrize(
    "mcs, prbs, direction, bits",
    [
        (28, 100, "down", 75376),  # I_TBS 26, N_PRB 100
        (0, 1, "down", 16),  # I_TBS 0, N_PRB 1
        (9, 50, "down", 7992),  # I_TBS 9, N_PRB 50
        (10, 50, "down", 7992),  # PDSCH: MCS 10 is I_TBS 9 too (16QAM)
        (10, 50, "up", 8760),  # PUSCH Table 8.6.1-1: MCS 10 is I_TBS 10
        (28, 110, "down", 75376),  # I_TBS 26, N_PRB 110
        (0, 110, "down", 3112),  # I_TBS 0, N_PRB 110
        (13, 25, "down", 5736),  # I_TBS 12, N_PRB 25
    ],
)
def test_tbs_matches_ts_36213(mcs, prbs, direction, bits):
    # Values of TS 36.213 Table 7.1.7.2.1-1; the whole embedded table also equals ns-3 3.44's
    # LteAmc::GetDlTbSizeFromMcs / GetUlTbSizeFromMcs for all 29 MCS x 110 N_PRB.
    assert tbs_bits(np.array([mcs]), prbs, direction)[0] == bits


def test_tbs_refuses_what_the_table_lacks():
    with pytest.raises(ValueError, match="MCS"):
        tbs_bits(np.array([29]), 100)
    with pytest.raises(ValueError, match="1..110"):
        tbs_bits(np.array([28]), 111)


def test_peak_rate_per_lte_channel_width():
    # MCS 28 (I_TBS 26) transport blocks of 1.4, 3, 5, 10, 15, 20 MHz, less 2.1% of headers.
    tbs = {6: 4392, 15: 11064, 25: 18336, 50: 36696, 75: 55056, 100: 75376}
    for rbs, bits in tbs.items():
        assert peak_rate_bps(rbs) == pytest.approx(bits * 1e3 * (1 - 0.021), rel=1e-12)
    assert peak_rate_bps(100) == pytest.approx(73.8e6, rel=0.002)
    assert peak_rate_bps(100, header_overhead=0.0) == 75376e3


# ------------------------------------------------------------------ SINR -> CQI -> MCS


def test_piro_gap_and_cqi_at_known_points():
    # Gamma = -ln(5 x 5e-5) / 1.5 = 5.529 (7.43 dB).
    assert snr_gap(5e-5) == pytest.approx(5.5294, abs=1e-4)
    # 0 dB: log2(1 + 1/5.529) = 0.240 -> CQI 2 (0.23 < 0.240 < 0.38) -> MCS 2 (0.23);
    # 10 dB: log2(2.809) = 1.490 -> CQI 7 (1.48) -> MCS 12 (1.48);
    # 20 dB: log2(19.09) = 4.255 -> CQI 12 (3.90) -> MCS 22 (3.90); 30 dB: 7.5 -> CQI 15, MCS 28.
    cqi = cqi_of_sinr(db([0, 10, 20, 30]))
    assert cqi.tolist() == [2, 7, 12, 15]
    assert mcs_of_cqi(cqi).tolist() == [2, 12, 22, 28]
    assert cqi_of_sinr(db([-20]))[0] == 0 and mcs_of_cqi(np.array([0]))[0] == 0


def test_mi_error_model_cqi_at_measured_points():
    # ns-3 3.44 MiErrorModel AMC, 100 blocks (RBG 4), flat SINR: CQI 15 from 19.9 dB,
    # CQI 7 from 6.1 dB, CQI 1 from -4.4 dB.
    assert rbg_size(100) == 4 and rbg_size(50) == 3 and rbg_size(25) == 2 and rbg_size(6) == 1
    cqi = cqi_of_sinr_mi(db([19.9, 19.8, 6.1, 6.0, -4.4, -4.5]), 100)
    assert cqi.tolist() == [15, 14, 7, 6, 1, 0]


@pytest.mark.parametrize("mapping", ["piro-ew2010", "mi-error-model"])
def test_cqi_mcs_and_rate_are_monotone_in_sinr(mapping):
    sinr = db(np.linspace(-15, 40, 2000))
    opts = LteOptions(downlink_cqi_mapping=mapping)
    mcs, rate, tail = adapt(sinr, 100, "down", opts)
    assert (np.diff(mcs) >= 0).all() and mcs[0] == 0 and mcs[-1] == 28
    # the rate may dip just past an MCS switch (BLER back at the target), never by more
    # than the HARQ factor at the target
    assert (rate[1:] >= rate[:-1] / expected_transmissions(0.1, 3) - 1e-6).all()
    assert rate[-1] == pytest.approx(73.8e6, rel=0.002) and tail[-1] < 1e-9


# ------------------------------------------------------------------ the link


def test_lone_ue_goodput_at_mcs_28_and_100_blocks():
    cfg = RadioConfig(model="lte")  # 50 m: 52 dB (up) and 65 dB (down) before shadowing
    for direction in ("down", "up"):
        link = build_link(cfg, direction, np.array([50.0]), np.random.default_rng(0))
        assert link.mcs[0] == 28
        size = 1_000_000
        t = link.send(np.array([0]), np.array([size]), np.random.default_rng(1))
        goodput = size * 8 / (t.airtime_ns[0] / 1e9)
        assert abs(goodput / 73.8e6 - 1) < 0.02
        one_way = 0.012 if direction == "up" else 0.005
        assert t.latency_ns[0] == round(one_way * 1e9)


def test_harq_costs_rate_and_latency_in_expectation():
    # SINR at the MCS 12 switch of PiroEW2010: Gamma (2^1.48 - 1); BLER = the target there.
    sinr = np.array([snr_gap(5e-5) * (2**1.48 - 1) * (1 + 1e-12)])
    opts = LteOptions(downlink_cqi_mapping="piro-ew2010", bler_target=0.2)
    mcs, rate, tail = adapt(sinr, 100, "down", opts)
    tries = (1 - 0.2**4) / (1 - 0.2)  # 1.248
    assert mcs[0] == 12
    assert rate[0] == pytest.approx(19848e3 * (1 - 0.021) / tries, rel=1e-9)
    assert tail[0] == pytest.approx((tries - 1) * 0.008, rel=1e-9)
    none = LteOptions(downlink_cqi_mapping="piro-ew2010", harq_max_retransmissions=0)
    assert adapt(sinr, 100, "down", none)[1][0] == pytest.approx(19848e3 * (1 - 0.021))


def test_max_mcs_caps_the_rate():
    opts = LteOptions(max_mcs=20)
    mcs, rate, _ = adapt(db([40.0]), 50, "down", opts)
    assert mcs[0] == 20 and rate[0] == pytest.approx(19848e3 * (1 - 0.021))  # I_TBS 18, 50 PRB


def test_lte_link_needs_the_lte_grid():
    cfg = RadioConfig(model="lte", numerology="nr-30", channel_mhz=100.0)
    with pytest.raises(ValueError, match="numerology"):
        build_link(cfg, "up", np.array([50.0]), np.random.default_rng(0))
    # ... and a scenario says so when it loads, naming the key (exit 2 from the CLI)
    errs = cfg.cross_check()
    assert [e.key for e in errs] == ["network.radio.numerology"]
    too_many = RadioConfig(model="lte", resource_blocks=111).cross_check()
    assert [e.key for e in too_many] == ["network.radio.resource_blocks"]
    assert RadioConfig(model="lte", resource_blocks=110).cross_check() == []


# ------------------------------------------------------------------ runs and scenario checks


def scenario(access: str, fidelity: str, **lte) -> dict:
    return {
        "seed": 5,
        "data": {"source": "synthetic", "samples": 120, "features": 3},
        "model": {"kind": "ridge", "l2": 0.1},
        "agents": {"count": 12},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 3, "exact_vcg": False},
        "network": {
            "fidelity": fidelity,
            "radio": {"model": "lte", "access": access, "lte": lte},
            "topology": {"cell_radius_m": 900.0},
            "compute": {"seconds": 0.01},
            "backhaul": {"hops": 0},
        },
        "output": {"local_baseline": False},
    }


@pytest.mark.parametrize("access", ["round-robin", "ofdma"])
def test_events_equal_batched_for_the_lte_cell(access):
    runs = []
    for fidelity in ("events", "batched"):
        out = edgesim.run(scenario(access, fidelity)).to_dict()
        out["scenario"]["network"]["fidelity"] = out["network"]["fidelity"] = "(either)"
        runs.append(out)
    assert runs[0] == runs[1]
    assert runs[0]["sim_time_s"]["total"] > 0


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("mcs_table", "36.214", r"network\.radio\.lte\.mcs_table"),
        ("max_mcs", 29, r"network\.radio\.lte\.max_mcs: must be in \[0, 28\]"),
        ("harq_max_retransmissions", -1, r"network\.radio\.lte\.harq_max_retransmissions"),
        ("bler_target", 0.0, r"network\.radio\.lte\.bler_target"),
        ("bler_target", 1.0, r"network\.radio\.lte\.bler_target"),
        ("downlink_cqi_mapping", "vienna", r"network\.radio\.lte\.downlink_cqi_mapping"),
    ],
)
def test_bad_lte_options_name_their_key(key, value, message):
    raw = copy.deepcopy(scenario("round-robin", "batched"))
    raw["network"]["radio"]["lte"] = {key: value}
    with pytest.raises(ScenarioErrors, match=message):
        from_dict(raw)


def test_bad_lte_option_exits_2_naming_the_key(tmp_path, capsys):
    from edgesim.cli import main

    path = tmp_path / "bad.toml"
    path.write_text(
        '[network.radio]\nmodel = "lte"\n[network.radio.lte]\nmax_mcs = 29\n', encoding="utf-8"
    )
    assert main(["run", str(path)]) == 2
    assert "network.radio.lte.max_mcs" in capsys.readouterr().err


def test_ns3_sinrs_give_ns3_mcs_and_transport_blocks():
    # ns-3 3.44 (analysis/validation/ns3_lte.csv): at these SINRs its UEs got these MCS and
    # transport blocks (bytes per TTI to one UE alone); ns-3's round robin leaves the last,
    # partial resource block group of a 50-block downlink unused (48 blocks).
    opts = LteOptions(downlink_last_rbg="unused")
    cases = [  # (blocks, dl SINR dB, ul SINR dB, dl MCS, ul MCS, dl TBS bytes, ul TBS bytes)
        (100, 9.49, 7.31, 14, 8, 3182, 1764),
        (50, 12.5, 10.32, 18, 12, 1980, 1239),
        (50, 52.5, 37.26, 28, 28, 4395, 4587),
    ]
    for blocks, dl, ul, dl_mcs, ul_mcs, dl_bytes, ul_bytes in cases:
        cfg = RadioConfig(model="lte", channel_mhz={50: 10.0, 100: 20.0}[blocks], link_options=opts)
        rng = np.random.default_rng(0)
        down = build_link(cfg, "down", np.array([100.0]), rng)
        up = build_link(cfg, "up", np.array([100.0]), rng)
        assert down.data_blocks == (48 if blocks == 50 else 100) and up.data_blocks == blocks
        assert mcs_of_cqi(cqi_of_sinr_mi(db([dl]), blocks))[0] == dl_mcs
        assert mcs_of_cqi(cqi_of_sinr(db([ul])))[0] == ul_mcs
        assert tbs_bits(np.array([dl_mcs]), down.data_blocks, "down")[0] == 8 * dl_bytes
        assert tbs_bits(np.array([ul_mcs]), blocks, "up")[0] == 8 * ul_bytes
