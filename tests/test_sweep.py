"""Sweeps: expansion, records that survive crashes, resume, executors, tables and plots."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgesim import progress
from edgesim import sweeps as sw
from edgesim.errors import ScenarioErrors
from edgesim.mechanisms import register_mechanism
from edgesim.mechanisms.fedavg import fedavg
from edgesim.output import to_json
from edgesim.scenario import load_sweep
from edgesim.simulate import run
from edgesim.sweeps.store import locked
from tests.helpers import write

TINY = """\
seed = 1
[data]
source = "synthetic"
samples = 120
[model]
kind = "ridge"
[agents]
count = 3
[mechanism]
kind = "ffl"
phase1_rounds = 20
phase2_rounds = 2
exact_vcg = false
[output]
local_baseline = false
"""

SWEEP = (
    TINY
    + """\
[sweep]
seed = [0, 1]
"agents.count" = [3, 4]
[[sweep.zip]]
"mechanism.kind" = ["fedavg", "ffl"]
name = ["avg", "faithful"]
"""
)


def lines_of(folder: Path) -> list[dict]:
    """Parse results.jsonl strictly, line by line."""
    data = (folder / sw.RESULTS).read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


# ---------------------------------------------------------------------------- expansion


def test_cartesian_product_with_zip_group(tmp_path):
    plan = load_sweep(write(tmp_path, SWEEP))
    assert plan.keys == ["seed", "agents.count", "mechanism.kind", "name"]
    assert len(plan.runs) == 8
    # first axis slowest; a zip group is one axis
    got = [
        (r.values["seed"], r.values["agents.count"], r.values["mechanism.kind"]) for r in plan.runs
    ]
    assert got[:3] == [(0, 3, "fedavg"), (0, 3, "ffl"), (0, 4, "fedavg")]
    for r in plan.runs:
        sc = r.scenario
        assert (sc.seed, sc.agents.count, sc.mechanism.kind) == (
            r.values["seed"],
            r.values["agents.count"],
            r.values["mechanism.kind"],
        )
        assert sc.name == {"fedavg": "avg", "ffl": "faithful"}[sc.mechanism.kind]
        assert sc.data.samples == 120  # base keys kept
    assert [r.index for r in plan.runs] == list(range(8))
    assert len({r.run_id for r in plan.runs}) == 8


def test_nested_sweep_keys_equal_quoted_ones(tmp_path):
    quoted = load_sweep(write(tmp_path, TINY + '[sweep]\n"agents.count" = [3, 5]\n', "a.toml"))
    nested = load_sweep(write(tmp_path, TINY + "[sweep]\nagents.count = [3, 5]\n", "b.toml"))
    assert [r.run_id for r in quoted.runs] == [r.run_id for r in nested.runs]


def test_no_sweep_is_one_run(tmp_path):
    plan = load_sweep(write(tmp_path, TINY))
    assert plan.axes == () and len(plan.runs) == 1 and plan.runs[0].values == {}


def test_sweep_override_replaces_an_axis(tmp_path):
    p = write(tmp_path, SWEEP)
    plan = load_sweep(p, ["sweep.seed=[7]", "sweep.agents.count=[5, 6, 7]", "model.l2=0.5"])
    assert len(plan.runs) == 1 * 3 * 2
    assert {r.scenario.seed for r in plan.runs} == {7}
    assert {r.scenario.model.l2 for r in plan.runs} == {0.5}


def test_overriding_a_swept_key_directly_is_an_error(tmp_path):
    with pytest.raises(ScenarioErrors) as info:
        load_sweep(write(tmp_path, SWEEP), ["agents.count=5"])
    (e,) = info.value.errors
    assert e.key == "agents.count" and "sweep.agents.count" in e.message


def test_run_id_is_a_hash_of_the_resolved_scenario(tmp_path):
    a = load_sweep(write(tmp_path, SWEEP, "a.toml"))
    # the same runs written another way (explicit defaults, another order) keep their ids
    b = load_sweep(
        write(
            tmp_path,
            TINY.replace("[agents]", "[agents]\nweights = 'equal'")
            + '[sweep]\n[[sweep.zip]]\nname = ["avg", "faithful"]\n'
            '"mechanism.kind" = ["fedavg", "ffl"]\n'
            "[sweep.agents]\ncount = [3, 4]\n[sweep.seed]\n",
            "b.toml",
        ).with_suffix(".toml"),
        ["sweep.seed=[0, 1]"],
    )
    assert {r.run_id for r in a.runs} == {r.run_id for r in b.runs}


@pytest.mark.parametrize(
    ("sweep", "key", "words"),
    [
        ('"agents.count" = 3', "sweep.agents.count", ["list"]),
        ('"agents.count" = []', "sweep.agents.count", ["empty"]),
        ('"agents.count" = [3, 3]', "sweep.agents.count", ["twice"]),
        ('"include" = ["a"]', "sweep.include", ["cannot be swept"]),
        ('[[sweep.zip]]\nseed = [1, 2]\nname = ["a"]', "sweep.zip[0]", ["equal lengths"]),
        ("seed = [1, 2]\n[[sweep.zip]]\nseed = [3, 4]", "sweep.zip[0].seed", ["swept twice"]),
    ],
)
def test_sweep_shape_errors(tmp_path, sweep, key, words):
    text = TINY + ("[sweep]\n" if not sweep.startswith("[[") else "") + sweep + "\n"
    with pytest.raises(ScenarioErrors) as info:
        load_sweep(write(tmp_path, text))
    (e,) = info.value.errors
    assert e.key == key, str(e)
    for w in words:
        assert w in e.message
    assert e.line is not None and "\n" not in str(e)


def test_every_run_is_validated_and_each_error_reported_once(tmp_path):
    text = TINY + '[sweep]\n"agents.count" = [0, 3, 5]\nseed = [0, 1]\n"model.l2" = [0.1, -1.0]\n'
    with pytest.raises(ScenarioErrors) as info:
        load_sweep(write(tmp_path, text))
    msgs = [str(e) for e in info.value.errors]
    assert len(msgs) == 2, msgs
    count = next(m for m in msgs if m.startswith("agents.count"))
    l2 = next(m for m in msgs if m.startswith("model.l2"))
    assert "(from [sweep] line 17)" in count and "in 4 of 12 runs" in count
    assert "agents.count=0" in count
    assert "in 6 of 12 runs" in l2 and "model.l2=-1.0" in l2


def test_base_error_is_reported_once_not_per_run(tmp_path):
    text = TINY.replace("[model]", "[model]\nl3 = 1") + "[sweep]\nseed = [0, 1, 2]\n"
    with pytest.raises(ScenarioErrors) as info:
        load_sweep(write(tmp_path, text))
    (e,) = info.value.errors
    assert e.key == "model.l3" and e.line == 6 and "runs" not in str(e)


def test_sweep_can_fix_what_the_base_lacks(tmp_path):
    text = TINY.replace(
        "[mechanism]", "[[agents.strategy]]\nagent = 4\nkind = 'amplify'\ngamma = 2.0\n[mechanism]"
    )
    text += '[sweep]\n"agents.count" = [5, 6]\n'
    assert len(load_sweep(write(tmp_path, text)).runs) == 2


# ---------------------------------------------------------------------------- records and resume


def test_records_contain_the_run_json_byte_for_byte(tmp_path):
    plan = load_sweep(write(tmp_path, SWEEP))
    out = tmp_path / "out"
    summary = sw.run_sweep(plan, out, workers=0)
    assert (summary.ok, summary.failed, summary.skipped) == (8, 0, 0)
    recs = lines_of(out)
    assert sorted(r["index"] for r in recs) == list(range(8))
    by_id = {r.run_id: r for r in plan.runs}
    for rec in recs:
        run_ = by_id[rec["run_id"]]
        assert rec["status"] == "ok" and rec["values"] == run_.values
        assert sw.result_json(rec) == to_json(run(run_.scenario))
    manifest = json.loads((out / sw.MANIFEST).read_text())
    assert manifest["edgesim_version"] == "0.1.0"
    assert manifest["swept_keys"] == plan.keys and manifest["runs"] == 8
    assert manifest["scenario_files"][str(tmp_path / "s.toml")].startswith("seed = 1")
    assert "started" in manifest and manifest["sessions"][0]["runs_ok"] == 8
    assert "revision" in manifest["sessions"][0]["git"]


def test_rerun_skips_recorded_runs_and_extends_a_grown_sweep(tmp_path):
    p = write(tmp_path, SWEEP)
    out = tmp_path / "out"
    sw.run_sweep(load_sweep(p), out, workers=0)
    again = sw.run_sweep(load_sweep(p), out, workers=0)
    assert (again.skipped, again.ok) == (8, 0)
    grown = sw.run_sweep(load_sweep(p, ["sweep.seed=[0, 1, 2]"]), out, workers=0)
    assert (grown.skipped, grown.ok) == (8, 4)
    recs = lines_of(out)
    assert len(recs) == 12 == len({r["run_id"] for r in recs})
    assert len(json.loads((out / sw.MANIFEST).read_text())["sessions"]) == 3


def _flaky(ctx):
    """A mechanism that fails for K = 4 and is FedAvg otherwise."""
    if ctx.K == 4:
        raise RuntimeError("no luck\nwith four agents")
    return (yield from fedavg(ctx))


register_mechanism("test-flaky", _flaky)


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    plan = load_sweep(
        write(tmp_path, TINY + '[sweep]\n"agents.count" = [3, 4, 5]\n'),
        ["mechanism.kind=test-flaky"],
    )
    out = tmp_path / "out"
    summary = sw.run_sweep(plan, out, workers=0)
    assert (summary.ok, summary.failed) == (2, 1)
    bad = [r for r in lines_of(out) if r["status"] != "ok"]
    assert len(bad) == 1 and bad[0]["values"] == {"agents.count": 4}
    assert bad[0]["error"] == "RuntimeError: no luck with four agents"
    assert "Traceback" in bad[0]["traceback"] and "result" not in bad[0]
    # failures count as recorded, unless retried; the newest record then wins
    assert sw.run_sweep(plan, out, workers=0).skipped == 3
    retry = sw.run_sweep(plan, out, workers=0, retry_failed=True)
    assert (retry.skipped, retry.failed) == (2, 1)
    assert len(sw.load_records(out)) == 3


def test_partial_last_line_is_cut_on_resume(tmp_path):
    plan = load_sweep(write(tmp_path, SWEEP))
    out = tmp_path / "out"
    sw.run_sweep(plan, out, workers=0)
    data = (out / sw.RESULTS).read_bytes()
    lines = data.splitlines(keepends=True)
    # a crash in the middle of writing the 6th record
    (out / sw.RESULTS).write_bytes(b"".join(lines[:5]) + lines[5][:100])
    summary = sw.run_sweep(plan, out, workers=0)
    assert summary.repaired_bytes == 100
    assert (summary.skipped, summary.ok) == (5, 3)
    recs = lines_of(out)
    assert len(recs) == 8 == len({r["run_id"] for r in recs})


def test_interrupt_keeps_finished_runs_and_resumes(tmp_path):
    plan = load_sweep(write(tmp_path, SWEEP))
    out = tmp_path / "out"
    seen = []

    def stop_after_three(rec):
        seen.append(rec)
        if len(seen) == 3:
            raise KeyboardInterrupt

    summary = sw.run_sweep(plan, out, workers=0, on_record=stop_after_three)
    assert summary.interrupted and summary.ok == 3 and summary.remaining == 5
    assert len(lines_of(out)) == 3
    assert json.loads((out / sw.MANIFEST).read_text())["sessions"][-1]["interrupted"] is True
    rest = sw.run_sweep(plan, out, workers=0)
    assert (rest.skipped, rest.ok, rest.interrupted) == (3, 5, False)
    assert len(lines_of(out)) == 8


def test_interrupt_stops_a_process_pool_promptly(tmp_path):
    plan = load_sweep(write(tmp_path, SWEEP))
    out = tmp_path / "out"

    def stop(rec):
        raise KeyboardInterrupt

    t0 = time.monotonic()
    summary = sw.run_sweep(plan, out, workers=2, on_record=stop)
    assert summary.interrupted and 1 <= summary.ok + summary.failed < 8
    assert time.monotonic() - t0 < 30
    assert len(lines_of(out)) == summary.ok
    assert sw.run_sweep(plan, out, workers=2).ok == 8 - summary.ok
    assert len(lines_of(out)) == 8


def test_a_folder_in_use_is_refused(tmp_path):
    plan = load_sweep(write(tmp_path, TINY))
    out = tmp_path / "out"
    out.mkdir()
    with locked(out), pytest.raises(sw.SweepError, match="in use"):
        sw.run_sweep(plan, out, workers=0)


# ---------------------------------------------------------------------------- executors


#: The sweep with a logistic model (BLAS-heavier, so thread and process effects would show).
LOGISTIC = SWEEP.replace('"ridge"', '"logistic"').replace(
    "phase2_rounds = 2", "phase2_rounds = 2\nphase2_check = false"
)


def _per_run_json(folder: Path) -> dict[str, str]:
    return {r["run_id"]: sw.result_json(r) for r in lines_of(folder)}


@pytest.mark.slow
def test_byte_identical_across_workers_1_2_and_in_process(tmp_path):
    plan = load_sweep(write(tmp_path, LOGISTIC))
    texts = []
    for workers in (0, 1, 2):
        out = tmp_path / f"w{workers}"
        assert sw.run_sweep(plan, out, workers=workers).ok == 8
        texts.append(_per_run_json(out))
    assert texts[0] == texts[1] == texts[2]
    assert len(texts[0]) == 8


@pytest.mark.slow
def test_byte_identical_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    plan = load_sweep(write(tmp_path, LOGISTIC))
    sw.run_sweep(plan, tmp_path / "local", workers=2)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        summary = sw.run_sweep(plan, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert summary.ok == 8 and summary.executor.startswith("dask ")
    assert _per_run_json(tmp_path / "dask") == _per_run_json(tmp_path / "local")


def test_unreachable_scheduler_is_bad_input():
    pytest.importorskip("distributed")
    with pytest.raises(sw.SweepError) as info:
        sw.make_executor(scheduler="tcp://127.0.0.1:1", timeout_s=1)
    assert info.value.key == "--scheduler" and "cannot connect" in info.value.message


@pytest.mark.slow
def test_resume_after_sigkill(tmp_path):
    """Kill the whole sweep (SIGKILL) after some runs; the rerun ends with one record per run."""
    text = SWEEP.replace("phase1_rounds = 20", "phase1_rounds = 3000").replace(
        "seed = [0, 1]", "seed = [0, 1, 2]"
    )
    p = write(tmp_path, text)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "edgesim.cli", "sweep", str(p), "-o", str(out), "--workers", "1"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    results = out / sw.RESULTS
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if results.exists() and results.read_bytes().count(b"\n") >= 2:
                break
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        else:
            pytest.fail("no records appeared")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its worker
        proc.wait()
    done_before = results.read_bytes().count(b"\n")
    assert 2 <= done_before < 12
    again = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    recs = lines_of(out)
    plan = load_sweep(p)
    assert sorted(r["run_id"] for r in recs) == sorted(r.run_id for r in plan.runs)
    assert all(r["status"] == "ok" for r in recs)


# ---------------------------------------------------------------------------- tables and plots


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A finished 8-run sweep folder (seeds x K x two mechanisms)."""
    d = tmp_path_factory.mktemp("swept")
    plan = load_sweep(write(d, SWEEP))
    sw.run_sweep(plan, d / "out", workers=0)
    return d / "out"


def test_table_one_row_per_run_with_dotted_columns(swept):
    rows = sw.table(sw.load_records(swept))
    assert len(rows) == 8
    cols = sw.columns_of(rows)
    assert cols[:8] == [
        "run_id",
        "index",
        "status",
        "error",
        "seed",
        "agents.count",
        "mechanism.kind",
        "name",
    ]
    for c in ("communication.messages_up", "model.global_loss", "iterations.phase1", "K"):
        assert c in cols
    assert not any(c.startswith(("scenario.", "agents.")) and c != "agents.count" for c in cols)
    for r in rows:
        assert r["K"] == r["agents.count"] and r["mechanism"] == r["mechanism.kind"]
        # FedAvg: one message up per agent and round
        if r["mechanism"] == "fedavg":
            assert r["communication.messages_up"] == 20 * r["K"]


def test_table_per_agent(swept):
    rows = sw.table(sw.load_records(swept), per_agent=True)
    assert len(rows) == 2 * 2 * (3 + 4)
    assert {"agent.id", "agent.payment", "agent.overall_loss", "seed", "agents.count"} <= set(
        rows[0]
    )


def test_csv_round_trip(swept, tmp_path):
    import csv

    rows = sw.table(sw.load_records(swept))
    sw.write_csv(tmp_path / "t.csv", rows)
    with open(tmp_path / "t.csv") as fh:
        back = list(csv.DictReader(fh))
    assert len(back) == 8
    for a, b in zip(rows, back, strict=True):
        assert float(b["model.global_loss"]) == a["model.global_loss"]  # full precision
        assert b["diverged"] == "false" and b["error"] == ""


def test_parquet(swept, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    sw.write_parquet(tmp_path / "t.parquet", sw.table(sw.load_records(swept)))
    t = pq.read_table(tmp_path / "t.parquet")
    assert t.num_rows == 8 and "communication.messages_up" in t.column_names


def test_plot_names_its_axes_and_legend_by_the_keys(swept, tmp_path):
    from matplotlib.image import imread

    rows = sw.table(sw.load_records(swept))
    fig = sw.plot(
        rows,
        "agents.count",
        "communication.messages_up",
        hue="mechanism.kind",
        logy=True,
        swept=["seed", "agents.count", "mechanism.kind", "name"],
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "agents.count"
    assert ax.get_ylabel() == "communication.messages_up"
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "mechanism.kind"
    assert sorted(t.get_text() for t in legend.get_texts()) == ["fedavg", "ffl"]
    # the fedavg line: mean over seeds of 20 rounds x K messages
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "fedavg")
    assert list(line.get_xdata()) == [3.0, 4.0] and list(line.get_ydata()) == [60.0, 80.0]
    sw.save_figure(fig, tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = imread(tmp_path / "f.png")
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100


def test_plot_refuses_to_average_over_another_swept_key(swept):
    rows = sw.table(sw.load_records(swept))
    keys = ["seed", "agents.count", "mechanism.kind", "name"]
    with pytest.raises(sw.SweepError) as info:
        sw.plot(rows, "agents.count", "model.global_loss", swept=keys)
    assert info.value.key in ("mechanism.kind", "name") and "--hue" in info.value.message
    fig = sw.plot(
        rows, "agents.count", "model.global_loss", where={"mechanism.kind": "ffl"}, swept=keys[:3]
    )
    assert fig.axes[0].get_legend() is None
    with pytest.raises(sw.SweepError, match="did you mean"):
        sw.plot(rows, "agents.cont", "model.global_loss")


def test_plot_spread_band_is_the_sample_std():
    rows = [{"status": "ok", "x": 1, "y": v, "seed": s} for s, v in enumerate([1.0, 2.0, 6.0])] + [
        {"status": "ok", "x": 2, "y": 5.0, "seed": 0}
    ]
    fig = sw.plot(rows, "x", "y", spread="std")
    ax = fig.axes[0]
    assert list(ax.get_lines()[0].get_ydata()) == [3.0, 5.0]
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    sd = (((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2) / 2) ** 0.5
    assert min(ys) == pytest.approx(3 - sd) and max(ys) == pytest.approx(3 + sd)
    fig = sw.plot(rows, "x", "y", spread="minmax")
    ys = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert (min(ys), max(ys)) == (1.0, 6.0)


# ---------------------------------------------------------------------------- progress


def test_progress_bar_counts_runs_and_eta():
    now = [0.0]
    buf = io.StringIO()
    bar = progress.Bar(
        total=4, label="sweep", stream=buf, enabled=True, min_interval_s=0, clock=lambda: now[0]
    )
    now[0] = 10.0
    bar.advance()
    now[0] = 20.0
    bar.advance(failed=True)
    # 2 runs in 20 s: 10 s per run, 2 runs left
    assert bar.text() == "sweep  2/4 runs  1 failed  10 s/run  ETA 20s"
    bar.close()
    assert buf.getvalue().endswith("\n") and buf.getvalue().count("\r") == 3


def test_progress_single_run_phase_and_round():
    now = [0.0]
    bar = progress.Bar(label="quickstart", enabled=True, stream=io.StringIO(), clock=lambda: now[0])
    bar.update(phase="phase1", round=0, total=400)
    now[0] = 2.0
    bar.update(round=100)
    assert bar.text() == "quickstart  phase1  round 100/400  ETA 6s"


def test_progress_quiet_when_not_a_terminal_and_callback_is_a_noop():
    buf = io.StringIO()
    bar = progress.Bar(total=3, stream=buf)
    assert not bar.enabled
    progress.update(phase="phase1", round=3)  # nothing active: nothing happens
    with progress.active(bar):
        assert progress._current is None  # a disabled bar is not installed: update is a no-op
        progress.update(phase="phase1", round=5, total=10)
        assert "round" not in bar.fields and "phase" not in bar.fields
    assert buf.getvalue() == ""
    enabled = progress.Bar(total=3, stream=io.StringIO(), enabled=True)
    with progress.active(enabled):
        assert progress._current is enabled
        progress.update(phase="phase1", round=5, total=10)
        assert "phase1  round 5/10" in enabled.text()
    assert progress._current is None
