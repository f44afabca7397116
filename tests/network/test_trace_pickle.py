"""Pickled FedScale traces: refused without network.availability.trace_allow_pickle; convert-trace."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.cli.data import trace_to_json
from edgesim.network.availability import (
    AvailabilityConfig,
    TraceAvailability,
    TraceError,
    load_trace,
)
from edgesim.output import to_json
from tests.helpers import write

# FedScale's layout: integer ids; 'finish_time' an int; other keys ('model') ignored.
TRACE = {
    7: {"active": [0.0, 0.25], "inactive": [0.125, 0.5], "finish_time": 1, "model": "x"},
    3: {"active": [0, 0.3], "inactive": [0.2, 0.7], "finish_time": 1},
    12: {"active": [0.05], "inactive": [0.4]},
}

SCENARIO = """\
seed = 3
[data]
source = "synthetic"
samples = 300
features = 4
[model]
kind = "ridge"
[agents]
count = 6
[mechanism]
kind = "fedavg"
phase1_rounds = 12
[network]
fidelity = "events"
round_policy = "deadline"
deadline_s = 0.05
[network.availability]
model = "trace"
trace_path = "{path}"
{extra}
[output]
local_baseline = false
"""


class _Touch:
    """A pickle whose loading creates a file: what unpickling an untrusted trace can do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _scenario(tmp_path: Path, trace: Path, allow: bool | None) -> Path:
    extra = "" if allow is None else f"trace_allow_pickle = {str(allow).lower()}"
    text = SCENARIO.format(path=trace.as_posix(), extra=extra)
    return write(tmp_path, text, f"s-{trace.suffix[1:]}-{allow}.toml")


def test_pickle_refused_before_anything_is_unpickled(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_Touch(marker)))
    with pytest.raises(TraceError, match=r"trace_allow_pickle = true") as err:
        load_trace(path)
    assert "edgesim data convert-trace" in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()
    errs = AvailabilityConfig(model="trace", trace_path=str(path)).cross_check(3)
    assert len(errs) == 1 and errs[0].key == "network.availability.trace_path"
    assert "network.availability.trace_allow_pickle" in errs[0].message
    assert not marker.exists()
    # the opt-in unpickles, and the file's code runs (then the trace is rejected as malformed)
    with pytest.raises(TraceError, match="expected a non-empty mapping"):
        load_trace(path, allow_pickle=True)
    assert marker.exists()


def test_cli_refuses_a_pickled_trace_with_one_line_naming_the_key(tmp_path, capsys):
    trace = tmp_path / "trace.pkl"
    trace.write_bytes(pickle.dumps(TRACE))
    for allow in (None, False):
        out = tmp_path / f"run-{allow}.json"
        code = main(["run", str(_scenario(tmp_path, trace, allow)), "--json", str(out)])
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and not out.exists()
        assert len(lines) == 1, err
        assert lines[0].startswith("edgesim: error: network.availability.trace_path (line ")
        assert "network.availability.trace_allow_pickle = true" in lines[0]


def test_converted_json_trace_gives_the_pickles_run_byte_for_byte(tmp_path, capsys):
    pkl, js = tmp_path / "trace.pkl", tmp_path / "trace.json"
    pkl.write_bytes(pickle.dumps(TRACE))
    assert main(["data", "convert-trace", str(pkl), str(js)]) == 0
    assert "3 clients written" in capsys.readouterr().out
    data = json.loads(js.read_text())
    assert list(data) == ["3", "7", "12"]  # numeric id order kept, ids as strings
    assert data["7"] == {"active": [0.0, 0.25], "inactive": [0.125, 0.5], "finish_time": 1.0}
    assert data["12"] == {"active": [0.05], "inactive": [0.4]}  # no finish_time: none written
    runs = {}
    for trace, allow in ((pkl, True), (js, None)):
        out = tmp_path / f"run-{trace.suffix[1:]}.json"
        sc = _scenario(tmp_path, trace, allow)
        assert main(["run", str(sc), "--json", str(out), "--quiet"]) == 0
        runs[trace.suffix] = out.read_bytes()
    from_pkl = json.loads(runs[".pkl"])
    avail = from_pkl["scenario"]["network"]["availability"]
    assert avail["trace_allow_pickle"] is True and avail["trace_path"] == pkl.as_posix()
    # The echoed scenario names the trace file and the opt-in; everything else is the same
    # bytes. Put the pickle run's two keys into the JSON run's echo, then compare the files.
    from_json = json.loads(runs[".json"])
    assert from_json["scenario"]["network"]["availability"]["trace_allow_pickle"] is False
    from_json["scenario"]["network"]["availability"].update(avail)
    assert to_json(from_pkl).encode() == runs[".pkl"]  # to_json writes the file's bytes
    assert to_json(from_json).encode() == runs[".pkl"]
    # the trace mattered: devices were offline, so some replies were cut or dropped
    assert from_pkl["communication"]["dropped"] > 0


def test_converted_trace_replays_identically():
    text = trace_to_json(TRACE)
    a, b = TraceAvailability(TRACE, 9), TraceAvailability(json.loads(text), 9)
    assert [str(c) for c in a.client_ids] == b.client_ids == ["3", "7", "12"]
    agents = np.repeat(np.arange(9), 40)
    t = np.tile(np.arange(40, dtype=np.int64) * 37_500_000, 9)  # 0 to 1.4625 s
    for got, want in zip(b.online_until(agents, t), a.online_until(agents, t), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("trace", "match"),
    [
        ({1: {"active": [0], "inactive": [1]}, "1": {"active": [2], "inactive": [3]}}, "collide"),
        ({2.0: {"active": [0], "inactive": [1]}, 10.0: {"active": [2], "inactive": [3]}}, "order"),
        ({1: {"active": [1], "inactive": [0]}}, "ends before it starts"),
    ],
)
def test_traces_that_json_cannot_hold_exactly_are_refused(trace, match):
    with pytest.raises(TraceError, match=match):
        trace_to_json(trace)


def test_convert_trace_bad_input_exits_2(tmp_path, capsys):
    pkl = tmp_path / "t.pkl"
    pkl.write_bytes(pickle.dumps({1: {"active": [1], "inactive": [0]}}))
    assert main(["data", "convert-trace", str(pkl), str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("edgesim: error: IN: ") and "ends before it starts" in err
    assert not (tmp_path / "t.json").exists()
    assert main(["data", "convert-trace", str(pkl), str(tmp_path / "t.txt")]) == 2
    assert "must end in .json" in capsys.readouterr().err
