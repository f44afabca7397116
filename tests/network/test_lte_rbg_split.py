"""LTE's ``downlink_rbg_split``: ns-3's round robin leaves resource block groups idle ('floor')."""

from __future__ import annotations

import numpy as np
import pytest

import edgesim
from edgesim.errors import ScenarioErrors
from edgesim.network.access.round_robin import RbgFloorEfficiency
from edgesim.network.cells import Cells
from edgesim.network.links import build_link
from edgesim.network.lte import LteOptions
from edgesim.network.lte.options import downlink_groups
from edgesim.network.medium import finish_ns
from edgesim.network.radio import RadioConfig
from edgesim.scenario import from_dict


def test_efficiency_is_ns3s_share_of_groups():
    # 25 groups of 4 blocks at 100 blocks: n floor(25 / n) of them in use, all from n = 25 on
    eff = RbgFloorEfficiency(25)
    assert [eff(n) for n in (1, 2, 3, 7, 10, 13, 20, 24, 25, 30)] == pytest.approx(
        [1.0, 24 / 25, 24 / 25, 21 / 25, 20 / 25, 13 / 25, 20 / 25, 24 / 25, 1.0, 1.0]
    )
    assert eff(np.array([1, 10, 20, 30])) == pytest.approx([1.0, 0.8, 0.8, 1.0])
    # the groups: 25 at 100 blocks; at 50 (groups of 3), 16 whole ones, 17 with the partial one
    assert downlink_groups(100, "used") == downlink_groups(100, "unused") == 25
    assert downlink_groups(50, "unused") == 16 and downlink_groups(50, "used") == 17
    assert downlink_groups(6, "used") == 6  # 1.4 MHz: groups of one block


def _downlink(split: str, n: int, size: int, direction: str = "down"):
    """n devices 50 m from the eNB (MCS 28), 100 blocks, round robin: (link, through, arrive)."""
    cfg = RadioConfig(model="lte", link_options=LteOptions(downlink_rbg_split=split))
    rng = np.random.default_rng(0)
    dist = np.full(n, 50.0)
    links = {d: build_link(cfg, d, dist, rng) for d in ("up", "down")}
    cells = Cells(cfg, np.zeros(n, dtype=np.int64), links["up"], links["down"])
    dev = np.arange(n)
    sizes = np.full(n, size)
    t = links[direction].send(dev, sizes, np.random.default_rng(1))
    arrive = np.full(n, 7_000, dtype=np.int64)
    return links[direction], cells.through_ns(direction, dev, sizes, arrive, t, None), t, arrive


@pytest.mark.parametrize("n", [1, 10, 20, 30])
def test_floor_closed_form_for_equal_messages_arriving_together(n):
    # finish = S 8 n / (rate efficiency(n)) after arrival, then the downlink's latency; G = 25
    size = 100_000
    link, through, t, arrive = _downlink("floor", n, size)
    rate = link.rate_bps[0]
    eff = {1: 1.0, 10: 0.8, 20: 0.8, 30: 1.0}[n]
    expected_s = size * 8 * n / (rate * eff)
    assert (through == through[0]).all()
    # the lone airtime is rounded to the ns, then scaled by n / efficiency(n)
    assert (through[0] - arrive[0]) == pytest.approx(expected_s * 1e9, abs=n / eff)
    done = through + t.after_ns
    assert (done[0] - arrive[0]) / 1e9 == pytest.approx(
        expected_s + 0.005, abs=(n / eff + 1) * 1e-9
    )
    # 'whole' (the default) uses every group: S 8 n / rate
    whole = _downlink("whole", n, size)[1]
    assert (whole[0] - arrive[0]) == pytest.approx(size * 8 * n / rate * 1e9, abs=n)


def test_floor_leaves_the_uplink_alone():
    floor = _downlink("floor", 10, 100_000, "up")[1]
    whole = _downlink("whole", 10, 100_000, "up")[1]
    assert (floor == whole).all()


def test_staggered_messages_against_a_hand_walk():
    # G = 25: efficiency(1) = 1, (2) = 24/25 (0.48 each), (3) = 24/25 (0.32 each)
    # A: 0, work 10 000; B: 2 000, 3 000; D: 4 000, 960; C: 20 000, 1 000 (after an idle gap)
    # 0-2000 A alone (A has 8000 left); 2000-4000 A, B at 0.48: 960 each (A 7040, B 2040 left);
    # 4000 D joins, three at 0.32: D's 960 take 3000, D through at 7000 (A 6080, B 1080 left);
    # A, B at 0.48: B's 1080 take 2250, B through at 9250 (A 5000 left); A alone: 14 250;
    # C alone at 20 000: 21 000
    arrive = np.array([0, 2_000, 4_000, 20_000])
    work = np.array([10_000, 3_000, 960, 1_000])
    done = finish_ns(arrive, work, None, "ps", efficiency=RbgFloorEfficiency(25))
    assert done.tolist() == [14_250, 9_250, 7_000, 21_000]
    # the same messages with every group in use (processor sharing, work-conserving):
    # 2000-4000 at 0.5: A 7000, B 2000 left; three at 1/3: D through at 6880 (A 6040, B 1040);
    # two at 0.5: B through at 8960 (A 5000); A alone: 13 960
    assert finish_ns(arrive, work, None, "ps").tolist() == [13_960, 8_960, 6_880, 21_000]
    # groups never interact; a group arriving together takes the closed form
    both = finish_ns(
        np.r_[arrive, 0, 0],
        np.r_[work, 1_000, 1_000],
        np.array([0, 0, 0, 0, 1, 1]),
        "ps",
        efficiency=RbgFloorEfficiency(3),  # two of 3 groups: 2/3 of the rate, 1/3 each
    )
    assert both[4:].tolist() == [3_000, 3_000]


def test_efficiency_only_for_processor_sharing():
    with pytest.raises(ValueError, match="efficiency"):
        finish_ns(np.zeros(2), np.ones(2), None, "fifo", efficiency=RbgFloorEfficiency(25))


def _scenario(fidelity: str, split: str, **radio) -> dict:
    return {
        "seed": 5,
        "data": {"source": "synthetic", "samples": 120, "features": 3},
        "model": {"kind": "ridge", "l2": 0.1},
        "agents": {"count": 12},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 3, "exact_vcg": False},
        "network": {
            "fidelity": fidelity,
            "transport": "tcp",
            "radio": {"model": "lte", "lte": {"downlink_rbg_split": split}, **radio},
            "topology": {"cell_radius_m": 900.0},
            "compute": {"seconds": 0.01},
            "backhaul": {"hops": 1},
        },
        "output": {"local_baseline": False},
    }


def test_floor_events_equal_batched_and_slower_than_whole():
    runs = []
    for fidelity in ("events", "batched"):
        out = edgesim.run(_scenario(fidelity, "floor")).to_dict()
        out["scenario"]["network"]["fidelity"] = out["network"]["fidelity"] = "(either)"
        runs.append(out)
    assert runs[0] == runs[1]
    whole = edgesim.run(_scenario("batched", "whole")).to_dict()["sim_time_s"]
    floor = runs[0]["sim_time_s"]
    # 12 devices share 25 groups: 24 in use while all 12 download, so the downlink is slower
    down = "downlink"
    assert floor["by_direction"]["phase1"][down] > whole["by_direction"]["phase1"][down]


@pytest.mark.parametrize(
    "radio, needs",
    [
        ({"access": "ofdma"}, "access = 'round-robin' or 'shared', got access = 'ofdma'"),
        ({"access": "tdma"}, "access = 'round-robin' or 'shared', got access = 'tdma'"),
        ({"downlink_access": "dedicated"}, "a shared downlink"),
        ({"resource_blocks": "per-device"}, "a shared downlink"),
    ],
)
def test_floor_is_refused_where_it_cannot_apply(radio, needs):
    with pytest.raises(ScenarioErrors, match=r"network\.radio\.lte\.downlink_rbg_split") as e:
        from_dict(_scenario("batched", "floor", **radio))
    assert needs in str(e.value)
    from_dict(_scenario("batched", "whole", **radio))  # the default applies everywhere
    from_dict(_scenario("batched", "floor", access="shared"))


def test_floor_without_lte_or_off_round_robin_exits_2(tmp_path, capsys):
    from edgesim.cli import main

    path = tmp_path / "bad.toml"
    path.write_text(
        '[network.radio]\nmodel = "shannon"\n[network.radio.lte]\ndownlink_rbg_split = "floor"\n',
        encoding="utf-8",
    )
    assert main(["run", str(path)]) == 2
    assert "network.radio.lte" in capsys.readouterr().err
    path.write_text(
        '[network.radio]\nmodel = "lte"\naccess = "ofdma"\n'
        '[network.radio.lte]\ndownlink_rbg_split = "floor"\n',
        encoding="utf-8",
    )
    assert main(["run", str(path)]) == 2
    assert "network.radio.lte.downlink_rbg_split" in capsys.readouterr().err
