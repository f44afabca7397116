"""The per-device events log and its Gantt chart (edgesim/network/timeline.py, CLI)."""

from __future__ import annotations

import json

import pytest

from edgesim.cli import main
from edgesim.network import NS_PER_S
from edgesim.network.timeline import read_log
from tests.helpers import write

SCENARIO = """
[agents]
count = 3
[data]
samples = 30
[mechanism]
kind = "fedavg"
phase1_rounds = 4
[network]
fidelity = "{fidelity}"
[network.radio]
latency_s = 0.002
bandwidth_bps = 1e6
resource_blocks = "per-device"
[network.backhaul]
hops = 0
[network.compute]
seconds = 0.01
"""


@pytest.mark.parametrize("fidelity", ["events", "batched"])
def test_log_follows_each_round_in_closed_form(tmp_path, fidelity):
    sc = write(tmp_path, SCENARIO.format(fidelity=fidelity))
    log, out = tmp_path / "events.csv", tmp_path / "result.json"
    assert main(["run", str(sc), "--events-log", str(log), "--json", str(out), "--quiet"]) == 0
    rows = read_log(log)
    assert {r["kind"] for r in rows} == {"downlink", "compute", "uplink"}
    assert len(rows) == 4 * 3 * 3  # 4 rounds, 3 devices, 3 events each
    size = json.loads(out.read_text())["communication"]["model_message_bytes"]
    air = round(8 * size * NS_PER_S / 1e6) / NS_PER_S
    one_way = air + 0.002
    round_s = 2 * one_way + 0.01
    for r in rows:
        t0 = (int(r["exchange"]) - 1) * round_s
        start, end = {
            "downlink": (t0, t0 + one_way),
            "compute": (t0 + one_way, t0 + one_way + 0.01),
            "uplink": (t0 + one_way + 0.01, t0 + round_s),
        }[r["kind"]]
        assert r["start_s"] == pytest.approx(start, abs=1e-9)
        assert r["end_s"] == pytest.approx(end, abs=1e-9)


def test_window_keeps_the_log_small_and_the_chart_draws(tmp_path):
    sc = write(tmp_path, SCENARIO.format(fidelity="batched"))
    log, png = tmp_path / "events.csv", tmp_path / "timeline.png"
    args = ["run", str(sc), "--events-log", str(log), "--events-window", "0:0.01", "--quiet"]
    assert main(args) == 0
    rows = read_log(log)
    assert {r["exchange"] for r in rows} == {"1"}  # only the first round overlaps 0..10 ms
    assert main(["plot-timeline", str(log), "-o", str(png)]) == 0
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize(
    "extra, key",
    [
        (["--events-window", "5:1"], "--events-window"),
        (["--events-window", "soon"], "--events-window"),
    ],
)
def test_bad_windows_exit_2(tmp_path, capsys, extra, key):
    sc = write(tmp_path, SCENARIO.format(fidelity="batched"))
    assert main(["run", str(sc), "--events-log", str(tmp_path / "e.csv"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err
    assert not (tmp_path / "e.csv").exists()


def test_events_log_needs_a_network_and_plot_needs_a_log(tmp_path, capsys):
    sc = write(tmp_path, SCENARIO.format(fidelity="none"))
    assert main(["run", str(sc), "--events-log", str(tmp_path / "e.csv")]) == 2
    assert "--events-log" in capsys.readouterr().err
    bad = tmp_path / "not-a-log.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["plot-timeline", str(bad), "-o", str(tmp_path / "t.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not-a-log.csv" in err[0], err
