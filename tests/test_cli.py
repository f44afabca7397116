"""Tests of the ``edgesim`` command line: exit codes, error lines, the JSON output contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from edgesim.cli import main
from tests.helpers import write

SMALL = """\
name = "small"
seed = 4
[data]
source = "synthetic"
samples = 200
[agents]
count = 4
[[agents.strategy]]
agent = 1
kind = "amplify"
gamma = 2.0
[mechanism]
kind = "ffl"
phase1_rounds = 50
phase2_rounds = 3
"""

BAD = """\
seed = 1
agnets = 3
[data]
source = "synthtic"
partition = { kind = "iid", delta = 1.5 }
[model]
l2 = -1
[agents]
count = 0
[mechanism]
kind = "ffl"
phase1_rounds = "thoery"
beta = 1.2
"""
BAD_KEYS = [
    "agnets",
    "data.source",
    "data.partition.delta",
    "model.l2",
    "agents.count",
    "mechanism.phase1_rounds",
    "mechanism.beta",
]

CONTRACT = {
    "iterations": ["phase1", "phase2_total", "phase2_per_agent"],
    "communication": [
        "messages_down",
        "messages_up",
        "bytes_down",
        "bytes_up",
        "transmissions_up",
        "retransmissions",
        "dropped",
    ],
    "sim_time_s": ["total", "phase1", "phase2"],
    "model": ["global_loss", "test_accuracy"],
}
TOP = ["scenario", "seed", "mechanism", "K", "payments", "vcg_payments"]
TOP += ["payment_error_max", "budget_total", "agents"]
AGENT = ["id", "n", "strategy", "payment", "train_loss", "test_loss", "overall_loss"]
AGENT += ["local_loss", "test_accuracy"]


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """One good run of the small scenario, written with --json (shared by the contract tests)."""
    d = tmp_path_factory.mktemp("run")
    scenario = write(d, SMALL)
    out = d / "out" / "a.json"  # the folder does not exist yet
    code = main(["run", str(scenario), "--json", str(out), "--quiet"])
    assert code == 0
    return scenario, out


# ---------------------------------------------------------------------------- bad input


def test_bad_file_exits_2_one_line_per_error(tmp_path, capsys):
    p = write(tmp_path, BAD)
    out_json = tmp_path / "out.json"
    code, out, err = cli(capsys, "run", p, "--json", out_json)
    assert code == 2
    assert not out_json.exists()
    assert list(tmp_path.iterdir()) == [p]  # no temporary file left either
    assert "Traceback" not in err
    lines = error_lines(err)
    assert len(lines) == len(BAD_KEYS)
    for line, key in zip(lines, BAD_KEYS, strict=True):  # in file order
        assert line.startswith(f"edgesim: error: {key} (line ")
    assert "did you mean 'agents'" in err
    assert "did you mean 'theory'" in err


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        (["agents.count=0"], "agents.count"),
        (["network.fidelity=warp"], "network.fidelity"),
        (["mechanism.kind=magic"], "mechanism.kind"),
        (["mechanism.beta=1.5"], "mechanism.beta"),
        (["model.l2=-0.1"], "model.l2"),
        (["agents.strategy[0].kind=amplfy"], "agents.strategy[0].kind"),
        (["data.source=npz", "data.path=does/not/exist.npz"], "data.path"),
        (["data.source=paper-linear", "model.kind=ridge"], "agents.count"),
        (["mechanism.clusters=9"], "mechanism.clusters"),
        (["agnets.count=3"], "agnets"),
    ],
)
def test_bad_override_exits_2(tmp_path, capsys, sets, key):
    p = write(tmp_path, SMALL)
    out_json = tmp_path / "out.json"
    argv = ["run", p, "--json", out_json]
    for s in sets:
        argv += ["--set", s]
    code, out, err = cli(capsys, *argv)
    assert code == 2
    assert not out_json.exists()
    lines = error_lines(err)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"edgesim: error: {key}")
    assert "Traceback" not in err


def test_missing_scenario_file(tmp_path, capsys):
    code, _, err = cli(capsys, "run", tmp_path / "nope.toml")
    assert code == 2
    assert error_lines(err) == [
        f"edgesim: error: scenario: file not found: {tmp_path / 'nope.toml'}"
    ]


def test_json_into_a_folder_is_bad_input(tmp_path, capsys):
    p = write(tmp_path, SMALL)
    code, _, err = cli(capsys, "run", p, "--json", tmp_path)
    assert code == 2
    assert error_lines(err)[0].startswith("edgesim: error: --json")


def test_argparse_errors_exit_2(capsys):
    code, _, err = cli(capsys, "run", "--seed", "x")
    assert code == 2
    assert "invalid int value" in err
    code, _, _ = cli(capsys, "frobnicate")
    assert code == 2


def test_subprocess_bad_input_real_exit_code(tmp_path):
    p = write(tmp_path, SMALL)
    out_json = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "edgesim.cli", "run", str(p), "--json", str(out_json)]
        + ["--set", "agents.count=0", "--set", "mechanism.beta=1.2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 2
    assert lines[0].startswith("edgesim: error: agents.count")
    assert lines[1].startswith("edgesim: error: mechanism.beta")
    assert proc.stdout == ""
    assert not out_json.exists()


# ---------------------------------------------------------------------------- good runs


def test_json_output_contract(small_run):
    _, out = small_run
    result = json.loads(out.read_text())
    for key in TOP:
        assert key in result, key
    for section, keys in CONTRACT.items():
        for key in keys:
            assert key in result[section], f"{section}.{key}"
    assert result["mechanism"] == "ffl"
    assert result["K"] == 4 and result["seed"] == 4
    assert result["scenario"]["agents"]["count"] == 4
    assert result["scenario"]["mechanism"]["epsilon"] == 1e-3  # defaults resolved
    assert result["iterations"]["phase1"] == 50
    assert len(result["iterations"]["phase2_per_agent"]) == 4
    assert len(result["payments"]) == len(result["vcg_payments"]) == 4
    assert isinstance(result["payment_error_max"], float)
    assert result["budget_total"] == pytest.approx(sum(result["payments"]))
    assert result["communication"]["messages_up"] > 0
    assert [a["id"] for a in result["agents"]] == [0, 1, 2, 3]
    for a in result["agents"]:
        for key in AGENT:
            assert key in a, key
        assert a["overall_loss"] == pytest.approx(a["payment"] + a["train_loss"])
    assert result["agents"][1]["strategy"].startswith("amplify")
    assert sum(a["n"] for a in result["agents"]) == 200
    assert 0.0 <= result["model"]["test_accuracy"] <= 1.0


def test_same_seed_gives_byte_identical_json(small_run, tmp_path, capsys):
    scenario, first = small_run
    again = tmp_path / "b.json"
    assert main(["run", str(scenario), "--json", str(again), "--quiet"]) == 0
    assert again.read_bytes() == first.read_bytes()
    assert capsys.readouterr().out == ""  # --quiet


def test_other_seed_gives_other_json(tmp_path, capsys):
    p = write(tmp_path, SMALL)
    files = []
    for seed in ("4", "4", "5"):
        out = tmp_path / f"r{len(files)}.json"
        argv = ["run", p, "--set", "model.kind=ridge", "--seed", seed, "--json", out]
        assert cli(capsys, *argv)[0] == 0
        files.append(out.read_bytes())
    assert files[0] == files[1]
    assert files[2] != files[0]
    assert json.loads(files[2])["seed"] == 5
    assert json.loads(files[2])["scenario"]["seed"] == 5


def test_quick_start_prints_summary(capsys):
    code, out, err = cli(capsys, "run")
    assert code == 0, err
    assert "ffl" in out
    assert "K = 10" in out
    assert "quickstart" in out
    assert err == ""


def test_dp_ffl_privacy_object(tmp_path, capsys):
    p = write(tmp_path, SMALL)
    out_json = tmp_path / "dp.json"
    code, out, err = cli(
        capsys,
        "run",
        p,
        "--set",
        "model.kind=ridge",
        "--set",
        "mechanism.kind=dp-ffl",
        "--set",
        "mechanism.clusters=2",
        "--json",
        out_json,
    )
    assert code == 0, err
    assert "privacy" in out
    result = json.loads(out_json.read_text())
    assert result["mechanism"] == "dp-ffl"
    pr = result["privacy"]
    for key in (
        "alpha",
        "beta",
        "sigma",
        "sigma_p",
        "epsilon_accounted",
        "epsilon_zcdp",
        "releases",
    ):
        assert key in pr, key
    assert pr["alpha"] == 0.1 and pr["beta"] == 0.01
    assert pr["sigma"] > 0 and pr["sigma_p"] > 0
    assert 0 < pr["epsilon_accounted"] and 0 < pr["epsilon_zcdp"]
    assert pr["releases"]
    for rel in pr["releases"]:
        assert rel["sensitivity"] > 0 and rel["sigma"] > 0
        assert isinstance(rel["count"], int) and rel["count"] >= 1


def test_subprocess_good_run(tmp_path):
    p = write(tmp_path, SMALL)
    out_json = tmp_path / "out.json"
    env = dict(os.environ, PYTHONHASHSEED="123")
    proc = subprocess.run(
        [sys.executable, "-m", "edgesim.cli", "run", str(p), "--json", str(out_json)]
        + ["--set", "mechanism.kind=fedavg", "--set", "model.kind=ridge"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fedavg with K = 4" in proc.stdout
    assert json.loads(out_json.read_text())["mechanism"] == "fedavg"
    # another process (another hash seed) gives the same bytes
    here = tmp_path / "here.json"
    argv = ["run", str(p), "--json", str(here), "--quiet"]
    assert main(argv + ["--set", "mechanism.kind=fedavg", "--set", "model.kind=ridge"]) == 0
    assert here.read_bytes() == out_json.read_bytes()


# ---------------------------------------------------------------------------- validate


def test_validate_good_and_bad(tmp_path, capsys):
    good = write(tmp_path, SMALL, "good.toml")
    bad = write(tmp_path, BAD, "bad.toml")
    code, out, err = cli(capsys, "validate", good)
    assert code == 0
    assert out.strip() == f"{good}: ok"
    assert err == ""
    code, out, err = cli(capsys, "validate", good, bad)
    assert code == 2
    assert f"{good}: ok" in out
    lines = error_lines(err)
    assert len(lines) == len(BAD_KEYS)
    for line, key in zip(lines, BAD_KEYS, strict=True):
        assert line.startswith(f"{bad}: {key} (line ")
    assert "Traceback" not in err


def test_validate_with_set(tmp_path, capsys):
    good = write(tmp_path, SMALL)
    code, _, err = cli(capsys, "validate", good, "--set", "agents.count=0")
    assert code == 2
    assert error_lines(err) == [f"{good}: agents.count (from --set): must be >= 1, got 0"]


# ---------------------------------------------------------------------------- sweeps

SWEEP = """\
seed = 1
[data]
source = "synthetic"
samples = 120
[model]
kind = "ridge"
[agents]
count = 3
[mechanism]
kind = "fedavg"
phase1_rounds = 10
exact_vcg = false
[output]
local_baseline = false
[sweep]
seed = [0, 1]
"agents.count" = [3, 4]
"""


def test_sweep_results_plot_end_to_end(tmp_path, capsys):
    p = write(tmp_path, SWEEP)
    out = tmp_path / "runs"
    code, stdout, err = cli(capsys, "sweep", p, "-o", out, "--workers", "0")
    assert code == 0, err
    assert stdout.strip() == f"sweep: 4 runs: 4 ok, 0 failed; results in {out / 'results.jsonl'}"
    assert err == ""  # no progress bar when stderr is not a terminal
    assert len((out / "results.jsonl").read_text().splitlines()) == 4
    code, stdout, _ = cli(capsys, "sweep", p, "-o", out, "--quiet")
    assert code == 0 and stdout == ""
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # resumed: nothing to do

    code, stdout, err = cli(capsys, "results", out, "--csv", tmp_path / "t.csv")
    assert code == 0, err
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert len(rows) == 5
    assert rows[0].startswith("run_id,index,status,error,seed,agents.count,")
    code, stdout, _ = cli(capsys, "results", out, "--per-agent")
    assert code == 0 and len(stdout.splitlines()) == 1 + 2 * (3 + 4)

    fig = tmp_path / "fig.png"
    code, stdout, err = cli(
        capsys, "plot", out, "--x", "agents.count", "--y", "communication.messages_up", "-o", fig
    )
    assert code == 0, err
    assert fig.read_bytes()[:4] == b"\x89PNG"


def test_sweep_bad_input_exits_2_one_line_per_error(tmp_path, capsys):
    p = write(tmp_path, SWEEP.replace("[0, 1]", "[0, -1]") + '"model.l2" = [0.1, 0]\n')
    out = tmp_path / "runs"
    code, stdout, err = cli(capsys, "sweep", p, "-o", out)
    assert code == 2 and stdout == ""
    lines = error_lines(err)
    assert len(lines) == 2
    assert lines[0].startswith("edgesim: error: seed (from [sweep] line 16): must be >= 0")
    assert lines[1].startswith("edgesim: error: model.l2 (from [sweep] line 18): must be > 0")
    assert not out.exists()
    code, _, err = cli(capsys, "validate", p)
    assert code == 2 and len(error_lines(err)) == 2


def test_sweep_with_a_failing_run_exits_1(tmp_path, capsys):
    p = write(tmp_path, SWEEP)
    out = tmp_path / "runs"
    code, _, err = cli(
        capsys, "sweep", p, "-o", out, "--workers", "0", "--set", "mechanism.kind=test-broken"
    )
    assert code == 1
    lines = error_lines(err)
    assert len(lines) == 4 and all("failed: RuntimeError: broken on purpose" in ln for ln in lines)
    assert "run 0 (seed=0, agents.count=3) failed" in lines[0]
    code, _, err = cli(
        capsys, "sweep", p, "-o", out, "--workers", "0", "--set", "mechanism.kind=test-broken"
    )
    assert code == 1 and "4 runs are recorded as failed (rerun with --retry-failed)" in err


def _broken(ctx):
    raise RuntimeError("broken on purpose")
    yield  # pragma: no cover


from edgesim.mechanisms import register_mechanism  # noqa: E402

register_mechanism("test-broken", _broken)


def test_validate_reports_sweep_run_counts(tmp_path, capsys):
    p = write(tmp_path, SWEEP)
    code, out, _ = cli(capsys, "validate", p)
    assert code == 0 and out.strip() == f"{p}: ok (4 runs)"


def test_results_and_plot_bad_input(tmp_path, capsys):
    code, _, err = cli(capsys, "results", tmp_path / "none")
    assert code == 2 and "neither a folder" in err and "nor a run's JSON file" in err
    (tmp_path / "other.json").write_text("[1, 2]")
    code, _, err = cli(capsys, "results", tmp_path / "other.json")
    assert code == 2 and "is not the JSON of `edgesim run --json`" in err
    code, _, err = cli(capsys, "results", tmp_path)
    assert code == 2 and "no results.jsonl" in err
    p = write(tmp_path, SWEEP)
    out = tmp_path / "runs"
    assert cli(capsys, "sweep", p, "-o", out, "--workers", "0")[0] == 0
    code, _, err = cli(
        capsys, "plot", out, "--x", "agents.cuont", "--y", "K", "-o", tmp_path / "f.png"
    )
    assert code == 2
    assert error_lines(err) == [
        "edgesim: error: --x: no column 'agents.cuont' in the results (did you mean 'agents.count'?)"
    ]
    assert not (tmp_path / "f.png").exists()
    code, _, err = cli(capsys, "plot", out, "--x", "seed", "--y", "K", "-o", tmp_path / "f.png")
    assert code == 2 and "agents.count: also varies" in err


def test_scenarios_lists_shipped_ones(capsys):
    code, out, _ = cli(capsys, "scenarios")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert {"quickstart", "paper-fig1", "paper-fig3-samples", "comm-vs-k"} <= set(names)
    assert all(len(line.split(None, 1)) == 2 for line in out.splitlines())  # each has its line


def test_run_of_a_sweep_file_runs_its_base_with_a_note(tmp_path, capsys):
    p = write(tmp_path, SWEEP)
    code, out, err = cli(capsys, "run", p)
    assert code == 0 and "K = 3" in out
    assert "[sweep] table is not used by `run`" in err


def test_run_writes_the_network_trace(tmp_path):
    trace, out = tmp_path / "trace.csv", tmp_path / "out.json"
    args = ["run", "--set", 'network.fidelity="batched"', "--set", "mechanism.phase1_rounds=5"]
    args += ["--set", 'network.radio.resource_blocks="per-device"']  # batched: independent links
    assert (
        main(
            [
                *args,
                "--set",
                "mechanism.phase2_rounds=1",
                "--quiet",
                "--trace",
                str(trace),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    rows = trace.read_text().splitlines()
    result = json.loads(out.read_text())
    assert rows[0].split(",")[:3] == ["phase", "round", "problem"]
    assert len(rows) - 1 == result["network"]["exchanges"]
    ends = [float(r.split(",")[5]) for r in rows[1:]]
    assert max(ends) == result["sim_time_s"]["total"] > 0


def test_trace_needs_a_network(tmp_path, capsys):
    args = ["run", "--quiet", "--set", "network.fidelity=none", "--trace", str(tmp_path / "t.csv")]
    assert main(args) == 2
    assert "--trace" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()


def test_model_weights_in_the_json_and_as_npy_are_the_noisy_release(tmp_path, capsys):
    import numpy as np

    from edgesim import scenario
    from edgesim.simulate import Simulation

    path = write(tmp_path, SMALL)
    sets = ["--set", "mechanism.kind=dp-ffl", "--set", "output.model_weights=true"]
    out_json, out_npy = tmp_path / "r.json", tmp_path / "w.npy"
    code = main(["run", str(path), *sets, "--json", str(out_json), "--model", str(out_npy)])
    assert code == 0
    result = json.loads(out_json.read_text())
    saved = np.load(out_npy)
    classes = result["data"]["classes"]
    assert saved.shape == (result["data"]["d"] + 1, classes)  # (d', C), intercept row last
    np.testing.assert_array_equal(saved, np.asarray(result["model"]["weights"]))
    # exactly the model the mechanism released (w* of Phase I with its noise)
    sc = scenario.load(path, ["mechanism.kind=dp-ffl"])
    released = Simulation(sc).run_mechanism().outcome.model
    np.testing.assert_array_equal(saved.ravel(), released)
    # off by default: the JSON stays small
    assert main(["run", str(path), "--json", str(out_json), "--quiet"]) == 0
    assert "weights" not in json.loads(out_json.read_text())["model"]


@pytest.mark.parametrize(
    "override, key",
    [
        ("mechanism.clip_norm=-1", "mechanism.clip_norm"),
        ("mechanism.loss_bound=-0.5", "mechanism.loss_bound"),
        ("mechanism.clip_norm=2", "mechanism.clip_norm"),  # asked of vcg, which cannot clip
        ("mechanism.loss_bound=2", "mechanism.loss_bound"),
    ],
)
def test_bad_clipping_exits_2_naming_the_key(tmp_path, capsys, override, key):
    path = write(tmp_path, SMALL.replace('kind = "ffl"', 'kind = "vcg"'))
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--set", override, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0] and not out.exists()


# ------------------------------------------------------------------ diverging runs


AMPLIFY64 = os.path.join(os.path.dirname(__file__), "data", "ffl-fig1-amplify64.toml")


def _null_floats(x):
    """Return ``x`` with every float (at any depth) replaced by None: NaN or inf in the JSON."""
    if isinstance(x, dict):
        return {k: _null_floats(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_null_floats(v) for v in x]
    return None if isinstance(x, float) else x


@pytest.fixture(scope="module")
def amplify64(tmp_path_factory):
    """FFL on the Fig. 1 example with agent 0 amplifying by 64: (exit code, stdout, JSON)."""
    out = tmp_path_factory.mktemp("amp") / "r.json"
    import contextlib
    import io

    buf, errbuf = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(errbuf):
        code = main(["run", AMPLIFY64, "--json", str(out)])
    assert "Traceback" not in errbuf.getvalue()
    return code, buf.getvalue(), json.loads(out.read_text())


def test_run_whose_phase2_diverges_restarts_it_and_says_so(amplify64):
    """The other agent's Phase II problem diverges at eta2 = 1/((1-p_1) L_g): restarted, exit 0."""
    code, out, result = amplify64
    assert code == 0
    info = result["mechanism_info"]
    assert info["phase2_restarts"] == [0, 1]
    assert info["phase2_eta2_final"][1] < info["phase2_eta2_final"][0]
    assert result["diverged"] is False
    assert all(isinstance(p, float) for p in result["payments"])
    assert result["budget_total"] is not None
    assert "diverged, restarted from w* at a smaller eta2: problem of agent 1 (1x" in out
    est = info["payment_error_estimate_max"]
    assert f"error estimate {est:.1e} (Phase I gap" in out and "discretisation" in out
    assert "DIVERGED" not in out and "WARNING" not in out


def _with_error_parts(result: dict, gap: float, trunc: float, disc: float, T1=3000) -> dict:
    """Return a copy of ``result`` whose payment error estimate has these parts (maxima)."""
    out = json.loads(json.dumps(result))
    out["mechanism_info"].update(
        payment_phase1_error_max=gap,
        payment_truncation_error_max=trunc,
        payment_discretisation_error_max=disc,
        payment_error_estimate_max=gap + trunc + disc,
    )
    out["scenario"]["mechanism"]["phase1_rounds"] = T1
    return out


def test_summary_warns_when_phase1_gap_dominates_the_payment_error(amplify64):
    """The warning names the fix; it needs the gap to be the largest part and above epsilon."""
    from edgesim.cli import summary

    _, _, result = amplify64
    eps = result["scenario"]["mechanism"]["epsilon"]  # 1e-8
    text = summary(_with_error_parts(result, 5.0, 1e-3, 1e-4))
    assert "error estimate 5.0e+00 (Phase I gap 5.0e+00, Phase II truncation 1.0e-03" in text
    assert "WARNING: Phase I stopped short of the optimum; its gap dominates" in text
    assert 'raise mechanism.phase1_rounds (now 3000) or set it to "theory"' in text
    theory = summary(_with_error_parts(result, 5.0, 1e-3, 1e-4, T1="theory"))
    assert 'set mechanism.phase1_rounds above the 3000 rounds "theory" gave' in theory
    assert "WARNING" not in summary(_with_error_parts(result, 5.0, 6.0, 1e-4))  # truncation
    assert "WARNING" not in summary(_with_error_parts(result, eps / 2, eps / 4, eps / 8))


def test_summary_agent_table_compares_overall_and_local_on_the_same_data(amplify64):
    """Test set: overall = payment + test loss beside the local model's test loss; without
    test losses, both on the training set; the header says which."""
    from edgesim.cli import summary

    _, _, result = amplify64
    a = result["agents"][0]
    assert a["overall_test_loss"] != a["overall_loss"] and a["local_loss"] is not None
    lines = summary(result).splitlines()
    header = next(line for line in lines if line.startswith("  agent "))
    row = next(line for line in lines if line.startswith("      0 "))
    assert "test loss" in header and "losses on the test set" in header
    assert f"{a['test_loss']:10.4f} {a['overall_test_loss']:9.4f}  {a['local_loss']:10.4f}" in row
    no_test = json.loads(json.dumps(result))
    for agent in no_test["agents"]:
        agent["test_loss"] = agent["overall_test_loss"] = agent["local_loss"] = None
    lines = summary(no_test).splitlines()
    header = next(line for line in lines if line.startswith("  agent "))
    row = next(line for line in lines if line.startswith("      0 "))
    assert "train loss" in header and "losses on the training set" in header
    local = a["local_train_loss"]
    assert f"{a['train_loss']:10.4f} {a['overall_loss']:9.4f}  {local:10.4f}" in row


def test_run_whose_phase1_diverges_exits_0_and_names_phase1(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    gamma = ["--set", 'agents.strategy=[{agent=0, kind="amplify", gamma=500}]']
    code, out, err = cli(capsys, "run", AMPLIFY64, *gamma, "--json", out_json)
    assert code == 0 and "Traceback" not in err
    result = json.loads(out_json.read_text())
    assert result["diverged"] is True
    assert result["payments"] == [None, None] and result["budget_total"] is None
    assert result["model"]["global_loss"] is None
    phase1 = result["iterations"]["phase1"]
    assert f"DIVERGED      Phase I after {phase1} rounds: w* is not finite" in out
    assert f"JSON written to {out_json}" in out


def test_summary_names_the_agents_whose_phase2_diverged(amplify64):
    from edgesim.cli import summary

    _, _, result = amplify64
    broken = json.loads(json.dumps(result))
    broken["diverged"] = True
    broken["payments"][1] = broken["agents"][1]["payment"] = None
    broken["agents"][1]["overall_loss"] = broken["budget_total"] = None
    text = summary(broken)
    assert "DIVERGED      Phase II problem of agent 1: its payment is undefined" in text
    broken["payments"][0] = broken["agents"][0]["payment"] = None
    assert "Phase II problems of agents 0, 1: their payments" in summary(broken)


def test_summary_survives_every_number_being_null(amplify64):
    """Any float of the result may be None (NaN or inf): the summary still prints, with '-'."""
    from edgesim.cli import summary

    _, _, result = amplify64
    result = dict(result, best_response={"agent": 0, "objective_kind": "overall"})
    result["best_response"].update(gamma=None, gain=None, opt_out=None)
    result["privacy"] = {"alpha": None, "epsilon_accounted": None, "epsilon_zcdp": None}
    nulled = _null_floats(result)
    nulled["diverged"] = True
    text = summary(nulled)
    assert "DIVERGED      Phase I" in text  # no model: w* was not finite
    assert "global loss -" in text and "gamma -" in text


def test_quick_start_runs_over_a_wireless_cell_and_shows_simulated_time(tmp_path, capsys):
    out = tmp_path / "q.json"
    assert main(["run", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["network"]["fidelity"] == "events"
    radio = result["scenario"]["network"]["radio"]
    t, rounds = result["sim_time_s"], result["iterations"]["phase1"]
    # every Phase I round is a downlink and an uplink, each at least the latency
    assert t["phase1"] >= rounds * 2 * radio["latency_s"]
    assert t["total"] == pytest.approx(t["phase1"] + t["phase2"])
    assert f"{t['total']:.3f} simulated s" in text
    # the same scenario in memory: the same rounds, no time
    assert main(["run", "--set", "network.fidelity=none", "--json", str(out), "--quiet"]) == 0
    memory = json.loads(out.read_text())
    assert memory["iterations"]["phase1"] == rounds and memory["sim_time_s"]["total"] == 0
