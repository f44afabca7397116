"""Access schemes as registered parts (edgesim/network/access/): a toy scheme from outside the
package runs in both fidelities, check_access accepts it and rejects a broken one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import edgesim
from edgesim.check import AccessCheckError, check_access
from edgesim.config import option
from edgesim.errors import ScenarioErrors
from edgesim.network.access import ACCESS_SCHEMES, AccessScheme, register_access
from edgesim.network.radio import RadioConfig

TOY = "toy-static-split"


@dataclass(frozen=True)
class SplitOptions:
    """The toy's one option: a factor on every message's work (framing overhead)."""

    overhead: float = option(1.0, "factor on each message's work", ge=1.0)


class StaticSplit(AccessScheme):
    """Each of a cell's n senders in an exchange gets 1/n of the channel for its whole message."""

    options = SplitOptions

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        work = np.rint(transfers.attempts * transfers.airtime_ns * self.settings.overhead)
        _, where, counts = np.unique(cell, return_inverse=True, return_counts=True)
        return arrive_ns + work.astype(np.int64) * counts[where]


class TooEarly(AccessScheme):
    """A broken scheme: every message is through before it arrives."""

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        return arrive_ns - 1


@pytest.fixture
def toy():
    register_access(TOY, StaticSplit)
    yield TOY
    del ACCESS_SCHEMES[TOY]


def scenario(access: str, fidelity: str, **radio) -> dict:
    return {
        "seed": 3,
        "data": {"source": "synthetic", "samples": 80, "features": 3},
        "model": {"kind": "ridge", "l2": 0.1},
        "agents": {"count": 8},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 3, "exact_vcg": False},
        "network": {
            "fidelity": fidelity,
            "radio": {"access": access, "bandwidth_bps": 4e6, **radio},
            "compute": {"seconds": 0.01},
            "backhaul": {"hops": 0},
        },
        "output": {"local_baseline": False},
    }


def test_toy_scheme_runs_in_both_fidelities_with_identical_results(toy):
    runs = []
    for fidelity in ("events", "batched"):
        out = edgesim.run(scenario(toy, fidelity, loss="bernoulli", loss_prob=0.2)).to_dict()
        out["scenario"]["network"]["fidelity"] = out["network"]["fidelity"] = "(either)"
        runs.append(out)
    assert runs[0] == runs[1]
    assert runs[0]["scenario"]["network"]["radio"]["access"] == toy


def test_toy_scheme_times_follow_its_closed_form(toy):
    # 8 devices in one cell, equal messages arriving together: each gets 1/8 of the channel
    # for its whole message, so all finish at 8 S 8 / r, as processor sharing's fluid limit
    # (round-robin) does; its overhead option doubles the work
    toy_s = edgesim.run(scenario(toy, "batched"))["sim_time_s"]["total"]
    rr_s = edgesim.run(scenario("round-robin", "batched"))["sim_time_s"]["total"]
    assert toy_s == rr_s
    # twice the work at the same rate is the work at half the rate (4e6 bit/s: whole ns)
    slow = edgesim.run(scenario(toy, "batched", **{toy: {"overhead": 2.0}}))
    half = edgesim.run(scenario("round-robin", "batched", bandwidth_bps=2e6))
    assert slow["sim_time_s"]["total"] == half["sim_time_s"]["total"] > toy_s


def test_toy_options_are_checked_with_their_key(toy):
    with pytest.raises(ScenarioErrors, match=rf"network\.radio\.{toy}\.overhead"):
        edgesim.run(scenario(toy, "batched", **{toy: {"overhead": 0.5}}))
    assert RadioConfig(access=toy, access_options=SplitOptions(overhead=2.0)).cross_check() == []


def test_check_access_accepts_the_built_in_schemes_and_the_toy(toy):
    for name in ("round-robin", "ofdma", "tdma", "wifi", toy):
        report = check_access(name)
        assert report["access"] == name and report["batched"] and report["sim_time_s"] > 0
    report = check_access("proportional-fair")
    assert not report["batched"] and report["messages"] == 12
    assert check_access(StaticSplit)["access"] == "StaticSplit"
    assert set(ACCESS_SCHEMES) == {
        "round-robin",
        "proportional-fair",
        "ofdma",
        "tdma",
        "shared",
        "wifi",
        toy,
    }


def test_check_access_rejects_a_scheme_that_finishes_before_arrival():
    with pytest.raises(AccessCheckError, match="before it arrived"):
        check_access(TooEarly)
    assert not any(k.startswith("check-access") for k in ACCESS_SCHEMES)
    with pytest.raises(AccessCheckError, match="no access scheme is registered"):
        check_access("csma")


def test_register_access_refuses_what_is_not_a_scheme_and_taken_names():
    with pytest.raises(TypeError, match="subclass of AccessScheme"):
        register_access("toy-function", lambda cfg: None)
    with pytest.raises(ValueError, match="already registered"):
        register_access("wifi", StaticSplit)


def test_unknown_access_is_refused_with_the_choices():
    (err,) = RadioConfig(access="wfi").cross_check()
    assert err.key == "network.radio.access" and "did you mean 'wifi'" in err.message


@pytest.mark.parametrize(
    "flat, options",
    [
        (
            {"access": "wifi", "wifi_standard": "802.11ax", "wifi_mcs": 5, "wifi_tcp_backlog": 4},
            {"access": "wifi", "wifi": {"standard": "802.11ax", "mcs": 5, "tcp_backlog": 4}},
        ),
        (
            {"access": "proportional-fair", "model": "shannon", "slot_s": 0.002, "pf_window_slots": 50},
            {"access": "proportional-fair", "model": "shannon",
             "proportional-fair": {"slot_s": 0.002, "window_slots": 50}},
        ),
    ],
)  # fmt: skip
def test_flat_keys_are_deprecated_aliases_with_identical_results(flat, options):
    def run(radio: dict) -> dict:
        raw = scenario("round-robin", "events")
        raw["network"]["radio"] = radio
        raw["network"]["transport"] = "tcp"
        return edgesim.run(raw).to_dict()

    moved = [k for k in flat if k not in ("access", "model")]
    with pytest.warns(FutureWarning, match=r"network\.radio\.\w+ is deprecated") as warned:
        old = run(flat)
    said = {str(w.message).split()[0] for w in warned}
    assert said == {f"network.radio.{k}" for k in moved}  # one warning per old key
    new = run(options)
    assert old == new
    name = options["access"]
    assert new["scenario"]["network"]["radio"][name] == {
        **new["scenario"]["network"]["radio"][name],
        **options[name],
    }
