"""network_effects: closed forms of ARQ, dropouts and deadlines, and where FFL's guarantees stop."""

import math

import numpy as np
import pytest

from analysis import common
from analysis.network_effects import STEM


@pytest.fixture(scope="module")
def rows(quick_figure):
    return common.read_figure(quick_figure("network_effects"), STEM)


def panel(rows, name, series=None):
    return [r for r in rows if r["panel"] == name and (series is None or r["series"] == series)]


def measured(rows, name, R):
    return {r["x"]: r for r in panel(rows, name, f"measured R={R}")}


def closed(rows, name, R):
    return {r["x"]: r["y"] for r in panel(rows, name, f"closed form R={R}")}


def R_values(rows):
    return sorted({int(r["R"]) for r in panel(rows, "a")})


def test_a_transmissions_per_message_follow_capped_arq(rows):
    # E[attempts] = (1 - q^(R+1)) / (1 - q); the variance of one message's attempts is below
    # q / (1-q)^2 <= 2, so with ~2 10^4 messages per point 5 sigma is under 0.05.
    for R in R_values(rows):
        m, cf = measured(rows, "a", R), closed(rows, "a", R)
        for q, r in m.items():
            assert cf[q] == pytest.approx((1 - q ** (R + 1)) / (1 - q))
            sigma = math.sqrt(q / (1 - q) ** 2 / (r["messages_up"] * r["seeds"]))
            assert abs(r["y"] - cf[q]) <= 5 * sigma + 1e-12


def test_b_requests_without_reply_follow_the_drop_probability(rows):
    # A request is unanswered when its downlink or its uplink fails R + 1 times: 1 - (1-q^(R+1))^2.
    for R in R_values(rows):
        m, cf = measured(rows, "b", R), closed(rows, "b", R)
        for q, r in m.items():
            n = r["messages_down"] * r["seeds"]
            p = cf[q]
            assert abs(r["y"] - p) <= 5 * math.sqrt(p * (1 - p) / n) + 2 / n
            assert r["drawn"] == (r["y"] > 0), "zeros are kept in the CSV, not drawn on log axes"


def test_c_payments_are_accurate_only_while_every_reply_arrives(rows):
    # Lossless: Theorem 1's |P - P_VCG| <= epsilon holds. Any loss that drops replies breaks it,
    # and each extra retransmission (fewer missing replies) makes the error smaller.
    eps = panel(rows, "c")[0]["epsilon"]
    Rs = R_values(rows)
    for R in Rs:
        assert measured(rows, "c", R)[0.0]["y"] <= eps
    lossy = [q for q in measured(rows, "c", Rs[0]) if q >= 0.1]
    assert lossy
    for q in lossy:
        errs = [measured(rows, "c", R)[q]["y"] for R in Rs]
        assert errs[0] > 10 * eps
        assert all(a > b for a, b in zip(errs, errs[1:], strict=False))


def test_d_time_to_finish_grows_with_loss_under_arq(rows):
    # With retransmissions every lost try costs airtime + a timeout, and a round waits for the
    # slowest agent: with R = 3 time to finish increases with q, and any loss costs time when
    # R >= 1. (With R = 1 and q near 0.5 messages given up end rounds early: not monotone.)
    Rs = R_values(rows)
    m = measured(rows, "d", Rs[-1])
    assert np.all(np.diff([m[q]["y"] for q in sorted(m)]) > 0)
    for R in Rs[1:]:
        m = measured(rows, "d", R)
        assert all(m[q]["y"] > m[0.0]["y"] for q in m if q > 0)
    top = max(measured(rows, "d", 0))
    assert measured(rows, "d", R_values(rows)[-1])[top]["y"] > measured(rows, "d", 0)[top]["y"]


def test_e_deadline_cuts_follow_the_straggler_tail(rows):
    # Shifted-exponential compute: P(answered by d | device online) = 1 - exp(-(d - s)/m).
    # Tens of thousands of requests per point: 0.02 is several binomial sigmas.
    meas = {r["x"]: r for r in panel(rows, "e", "answered in time (measured)")}
    for d, r in meas.items():
        expected = 1 - math.exp(-(d - r["shift_s"]) / r["mean_s"])
        assert r["y"] == pytest.approx(expected, abs=0.02)
    answered = [meas[d]["y"] for d in sorted(meas)]
    assert np.all(np.diff(answered) > 0), "a shorter deadline cuts more participants"
    assert panel(rows, "e", "wait-all: answered")[0]["y"] == 1.0
    curve = panel(rows, "e", "closed form 1-exp(-(d-s)/m)")
    assert len(curve) >= 200 and set(meas) <= {r["x"] for r in curve}
    for r in curve:
        assert r["y"] == pytest.approx(
            max(0.0, 1 - math.exp(-(r["x"] - r["shift_s"]) / r["mean_s"]))
        )


def test_f_deadlines_trade_payment_accuracy_for_time(rows):
    pe = sorted(panel(rows, "f", "payment error"), key=lambda r: r["x"])
    tt = sorted(panel(rows, "f", "time to finish"), key=lambda r: r["x"])
    wait_all = panel(rows, "f", "wait-all: payment error")[0]["y"]
    calm = panel(rows, "f", "no churn: payment error")[0]["y"]
    assert np.all(np.diff([r["y"] for r in tt]) > 0)
    assert tt[-1]["y"] < panel(rows, "f", "wait-all: time to finish")[0]["y"]
    assert pe[0]["y"] > wait_all > 10 * calm


def test_g_shared_access_point_changes_time_not_payments(rows):
    # Under wait-all the same replies arrive whatever the medium: identical payments. Sharing
    # the uplink delays each round by at most all its other uploads' airtime.
    g = [r for r in panel(rows, "g") if "serialised" not in r["series"]]
    ticks = [r for r in panel(rows, "g") if "serialised" in r["series"]]
    for bw in {r["bandwidth_bps"] for r in g}:
        sel = {r["x"]: r for r in g if r["bandwidth_bps"] == bw}
        assert len({r["payment_error"] for r in sel.values()}) == 1
        base = sel["OFDMA, block per device"]["y"]
        assert all(r["payment_spread"] == 0 for r in sel.values()), "identical payments"
        tick = {r["x"]: r["y"] for r in ticks if r["bandwidth_bps"] == bw}
        for lab, r in sel.items():
            assert base - 1e-9 <= r["y"] <= base + r["serial_bound_s"] + 1e-9
            assert tick[lab] == (
                base if lab == "OFDMA, block per device" else base + r["serial_bound_s"]
            )
    slow = {r["x"]: r["y"] for r in g if r["bandwidth_bps"] == min(x["bandwidth_bps"] for x in g)}
    assert slow["TDMA"] > 1.3 * slow["OFDMA, block per device"]


def test_h_ffl_is_faithful_on_a_good_link_and_fedavg_is_not(rows):
    gain = {(r["x"], r["series"]): r["y"] for r in panel(rows, "h")}
    eps = panel(rows, "h")[0]["epsilon"]
    for cond in ("ideal link", "5 % loss, ARQ 3"):
        assert gain[(cond, "ffl")] <= eps
        assert gain[(cond, "fedavg")] > 0
    assert gain[("ideal link", "fedavg")] > gain[("ideal link", "ffl")] + 0.1


def test_i_missing_rounds_make_every_payment_wrong(rows):
    i = [r for r in panel(rows, "i") if r["series"] != "median exact VCG payment"]
    calm = [r for r in i if r["series"] == "no churn, wait-all"]
    churn = [r for r in i if r["series"] == "churn, wait-all"]
    vcg = float(np.median([abs(r["vcg"]) for r in i]))
    assert panel(rows, "i", "median exact VCG payment")[0]["y"] == vcg
    assert all(r["x"] == 0 for r in calm)
    assert max(r["y"] for r in calm) < 0.1 * float(np.median([r["y"] for r in churn]))
    never = [r for r in i if r["x"] == 1.0]
    assert never and all(r["y"] > vcg for r in never), "agents never online are still charged"
