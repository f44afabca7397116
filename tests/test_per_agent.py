"""Per-agent results in a sidecar (``output.per_agent``): written, summarised, read back."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from edgesim import per_agent
from edgesim.cli import main

SMALL = [
    "--set", "agents.count=6", "--set", "data.samples=300", "--set", "mechanism.kind=ffl",
    "--set", "mechanism.phase1_rounds=30", "--set", "mechanism.phase2_rounds=3",
    "--set", "agents.strategy=[{agent = 2, kind = 'amplify', gamma = 2.0}]",
    "--set", "output.local_baseline=false",
]  # fmt: skip


def _run(tmp_path, name: str, mode: str, capsys) -> dict:
    out = tmp_path / f"{name}.json"
    rc = main(["run", "--quiet", *SMALL, "--set", f"output.per_agent={mode}", "--json", str(out)])
    assert rc == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def test_npz_sidecar_holds_the_json_agents_and_the_summary_is_theirs(tmp_path, capsys):
    full = _run(tmp_path, "full", "json", capsys)
    side = _run(tmp_path, "side", "npz", capsys)
    assert side["agents"] == [] and "payments" not in side
    meta = side["per_agent"]
    assert meta["file"] == "side.agents.npz" and meta["rows"] == 6
    cols = per_agent.read(tmp_path / meta["file"])
    assert list(cols) == meta["columns"]
    for k, agent in enumerate(full["agents"]):
        assert cols["id"][k] == k and cols["n"][k] == agent["n"]
        assert meta["strategy_labels"][cols["strategy"][k]] == agent["strategy"]
        for name in ("payment", "train_loss", "test_loss", "overall_loss"):
            assert cols[name][k] == agent[name]
        for name, value in agent["network"].items():
            assert cols[f"network.{name}"][k] == value
    assert np.array_equal(cols["payment"], full["payments"])
    assert cols["phase2_rounds"].tolist() == full["iterations"]["phase2_per_agent"]
    assert cols["phase2_eta2_final"].tolist() == full["mechanism_info"]["phase2_eta2_final"]
    assert "phase2_per_agent" not in side["iterations"]
    pay = np.array(full["payments"])
    s = meta["summary"]["payment"]
    assert s["count"] == 6 and s["sum"] == pytest.approx(pay.sum(), rel=1e-15)
    assert s["median"] == np.quantile(pay, 0.5) and s["q99"] == np.quantile(pay, 0.99)
    assert s["max"] == pay.max() and s["min"] == pay.min()
    assert "local_loss" not in cols  # no local baseline: a column without any value is left out
    # Everything else in the JSON is the same run's.
    for key in ("communication", "sim_time_s", "model", "budget_total", "constants"):
        assert side[key] == full[key]


def test_results_per_agent_reads_the_json_or_the_sidecar(tmp_path, capsys):
    _run(tmp_path, "full", "json", capsys)
    _run(tmp_path, "side", "npz", capsys)
    capsys.readouterr()
    tables = {}
    for name in ("full", "side"):
        csv = tmp_path / f"{name}.csv"
        assert (
            main(["results", str(tmp_path / f"{name}.json"), "--per-agent", "--csv", str(csv)]) == 0
        )
        lines = csv.read_text().splitlines()
        head = lines[0].split(",")
        tables[name] = [dict(zip(head, line.split(","), strict=False)) for line in lines[1:]]
    assert len(tables["full"]) == len(tables["side"]) == 6
    for a, b in zip(tables["full"], tables["side"], strict=True):
        for key in ("agent.id", "agent.strategy", "agent.payment", "agent.train_loss"):
            assert a[key] == b[key]
    assert "agent.phase2_rounds" in tables["side"][0]


def test_none_keeps_the_summaries_only(tmp_path, capsys):
    none = _run(tmp_path, "none", "none", capsys)
    assert none["per_agent"]["file"] is None and not list(tmp_path.glob("*.agents.*"))
    assert none["per_agent"]["summary"]["payment"]["count"] == 6


def test_parquet_sidecar_reads_back_as_the_npz_one(tmp_path, capsys):
    pytest.importorskip("pyarrow")  # in the dev extra: CI has it
    side = _run(tmp_path, "side", "npz", capsys)
    pq = _run(tmp_path, "pq", "parquet", capsys)
    assert pq["per_agent"]["file"] == "pq.agents.parquet"
    a = per_agent.read(tmp_path / side["per_agent"]["file"])
    b = per_agent.read(tmp_path / pq["per_agent"]["file"])
    assert list(a) == list(b)
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"), name


def test_parquet_without_pyarrow_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    rc = main(["run", "--set", "output.per_agent=parquet", "--json", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "output.per_agent" in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob("p.*"))


def test_sidecar_path_sits_beside_the_json():
    assert per_agent.sidecar_path("out/run.json", "npz").as_posix() == "out/run.agents.npz"
    assert per_agent.sidecar_path("run", "parquet").as_posix() == "run.agents.parquet"


def test_auto_is_json_everywhere_but_a_large_run_written_with_json(tmp_path, capsys, monkeypatch):
    """``output.per_agent = "auto"`` (the default) resolves to "json" in the scenario itself, so
    the echo and the run id of a default scenario are those of "json"; ``edgesim run --json``
    writes the npz sidecar from K = AUTO_SIDECAR_FROM_K on (here lowered to 6), says so,
    and echoes "npz": the JSON's echo loads back to the run it describes."""
    from edgesim import scenario as scn
    from edgesim.scenario import schema

    assert scn.OutputConfig().per_agent == "json"
    assert scn.OutputConfig(per_agent="auto") == scn.OutputConfig(per_agent="json")
    default = scn.load(None, SMALL[1::2])
    assert scn.run_id(default) == scn.run_id(
        scn.load(None, [*SMALL[1::2], "output.per_agent='json'"])
    )
    assert scn.for_json_file(default, {}) is default  # K = 6 < 10^5
    full = _run(tmp_path, "full", "json", capsys)  # before the threshold moves
    monkeypatch.setattr(schema, "AUTO_SIDECAR_FROM_K", 6)
    for mode in ("json", "npz", "none"):  # a value the scenario sets is kept
        prep = scn.prepare(None, [*SMALL[1::2], f"output.per_agent='{mode}'"])
        sc = scn.load_prepared(prep)
        assert scn.for_json_file(sc, prep.raw) is sc and sc.output.per_agent == mode
    out = tmp_path / "auto.json"
    assert main(["run", *SMALL, "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "auto.agents.npz" in err and "output.per_agent = 'auto'" in err
    auto = json.loads(out.read_text())
    assert auto["scenario"]["output"]["per_agent"] == "npz"
    assert auto["agents"] == [] and auto["per_agent"]["file"] == "auto.agents.npz"
    cols = per_agent.read(tmp_path / "auto.agents.npz")
    assert cols["payment"].tolist() == full["payments"]
    # the same K through the Python API (as in a sweep): the agents array
    import edgesim

    res = edgesim.run(None, SMALL[1::2])
    assert res["scenario"]["output"]["per_agent"] == "json"
    assert [a["payment"] for a in res["agents"]] == full["payments"]
