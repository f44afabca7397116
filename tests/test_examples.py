"""Every script in examples/ runs, and what it prints and returns matches an independent expectation.

Each example defines ``main(argv) -> result``; the test loads the file as a
script would (``runpy``), calls ``main`` with small arguments, and checks its
result against a closed form, a theorem of the paper or a second route to the
same numbers. The registries an example adds to are restored afterwards.
"""

from __future__ import annotations

import math
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import edgesim
from edgesim.agents import STRATEGIES
from edgesim.mechanisms import MECHANISMS
from edgesim.network.access import ACCESS_SCHEMES
from edgesim.network.links import LINKS

REPO = Path(__file__).parents[1]
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.py") if p.name != "__init__.py")


@pytest.fixture
def registries():
    """Restore the registries of mechanisms, strategies, links and access schemes after the test."""
    saved = [(reg, dict(reg)) for reg in (MECHANISMS, STRATEGIES, LINKS, ACCESS_SCHEMES)]
    yield
    for reg, before in saved:
        reg.clear()
        reg.update(before)


def printed(pattern: str, out: str) -> list[float]:
    """Return the numbers the regex ``pattern``'s first group matched in ``out``, in order."""
    return [float(x) for x in re.findall(pattern, out)]


def check_bursty_link(ratio, out, tmp_path, module):
    # The chain is jammed a fraction P_JAM / (P_JAM + P_CLEAR) of the messages (its
    # stationary law), so the mean airtime factor is 1 + (SLOWDOWN - 1) that fraction.
    jammed = module["P_JAM"] / (module["P_JAM"] + module["P_CLEAR"])
    assert ratio == pytest.approx(1 + (module["SLOWDOWN"] - 1) * jammed, abs=0.12)
    assert printed(r"ratio (\d+\.\d+)", out) == [round(ratio, 3)]


def check_my_access_scheme(out_dict, out, tmp_path, module):
    assert out_dict["check"]["access"] == "ShortestFirst"
    tdma, plain, grant = (out_dict[k].sim_time_s.total for k in ("tdma", "no-grant", "grant"))
    # Equal messages: smallest-first serves in arrival order, as TDMA (first come) does.
    assert plain == tdma
    assert out_dict["no-grant"].to_dict()["agents"] == out_dict["tdma"].to_dict()["agents"]
    # Every message waits its grant g, then goes as before: 2 g more per round (down and up).
    rounds = out_dict["grant"].iterations.phase1
    assert grant == pytest.approx(tdma + rounds * 2 * 0.002, rel=1e-12)
    assert printed(r"rounds: (\d+\.\d+) s", out) == [round(t, 6) for t in (tdma, plain, grant)]


def check_my_mechanism(out_dict, out, tmp_path, module):
    report = out_dict["check"]
    assert report["steps"] > 0 and report["payments"] == [0.0] * 4
    fedavg, nesterov = out_dict["fedavg"], out_dict["nesterov"]
    assert nesterov.mechanism_info.momentum == pytest.approx(
        (math.sqrt(nesterov.constants.L_g / nesterov.constants.mu) - 1)
        / (math.sqrt(nesterov.constants.L_g / nesterov.constants.mu) + 1)
    )
    # Same problem, same rounds: acceleration ends much closer to the optimum w^o.
    assert nesterov.model.optimum_loss == fedavg.model.optimum_loss
    assert 0 <= nesterov.model.optimality_gap < fedavg.model.optimality_gap / 4
    gaps = printed(r"optimality gap (\S+)", out)
    assert gaps == pytest.approx([fedavg.model.optimality_gap, nesterov.model.optimality_gap], 1e-3)


def check_my_strategy(results, out, tmp_path, module):
    agent, name = module["AGENT"], module["NAME"]

    def mine(mechanism, label):
        return results[mechanism, label].agents[agent]

    assert mine("ffl", name).strategy == f"{name}(gamma=4)"
    # FedAvg charges nothing: amplifying pulls the model the agent's way (Sec. III-B).
    assert mine("fedavg", name).train_loss < mine("fedavg", "truthful").train_loss
    assert mine("fedavg", name).payment == 0.0
    # FFL is faithful (Sec. V, Prop. 5): the overall loss is lowest when truthful.
    assert mine("ffl", name).overall_loss > mine("ffl", "truthful").overall_loss
    assert mine("ffl", name).payment > mine("ffl", "truthful").payment
    overall = printed(r"(\d+\.\d+)\n", out)
    assert overall == pytest.approx([results[k].agents[agent].overall_loss for k in results], 1e-4)


def check_python_scenario(res, out, tmp_path, module):
    # The same scenario written as the TOML's dict: the same Scenario, the same bytes out.
    raw = {
        "name": "python-scenario",
        "seed": 4,
        "data": {"source": "synthetic", "samples": 640, "features": 5, "classes": 3},
        "model": {"kind": "logistic", "l2": 0.1},
        "agents": {"count": 8, "strategy": [{"agent": 2, "kind": "amplify", "gamma": 4.0}]},
        "mechanism": {"kind": "ffl", "phase1_rounds": 150, "phase2_rounds": 5},
        "network": {
            "fidelity": "batched",
            "radio": {
                "bandwidth_bps": 20e6,
                "latency_s": 0.004,
                "access": "ofdma",
                "resource_blocks": 4,
            },
        },
        "output": {"local_baseline": False},
    }
    assert module["scenario"](8) == edgesim.load_scenario(raw)
    assert res.to_json() == edgesim.run(raw).to_json()
    assert res.agents[2].strategy == "amplify(gamma=4)"
    assert printed(r"simulated time\s+(\d+\.\d+)", out) == [round(res.sim_time_s.total, 4)]


def check_sweep_table_plot(rows, out, tmp_path, module):
    T1 = module["SCENARIO"]["mechanism"]["phase1_rounds"]
    assert len(rows) == 6
    for r in rows:
        K, up = r["agents.count"], r["communication.messages_up"]
        if r["mechanism.kind"] == "fedavg":
            assert up == T1 * K  # one gradient per agent and round
        else:  # Alg. 1: T1 rounds, one shared round at w*, Phase II among the K - 1 others
            assert up == K * (T1 + 1) + (K - 1) * r["iterations.phase2_total"]
    csv_lines = (tmp_path / "messages.csv").read_text().splitlines()
    assert len(csv_lines) == 7 and csv_lines[0].startswith("mechanism.kind,agents.count")
    assert (tmp_path / "messages.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert printed(r"\n(?:fedavg|ffl)\s+\d+\s+(\d+)", out) == [
        r["communication.messages_up"] for r in rows
    ]


def check_wifi_vs_cellular(results, out, tmp_path, module):
    L, c = module["LATENCY_S"], module["COMPUTE_S"]
    bits = 8 * (module["MODEL_BYTES"] + 64)  # each message: the payload and a 64-byte header
    cellular, wifi = results["cellular"], results["wi-fi"]
    K, T = cellular.K, cellular.iterations.phase1
    # Round robin, K equal messages arriving together: all done at K S 8 / rate, both ways.
    expected = T * (2 * (K * bits / module["CELLULAR_BPS"] + L) + c)
    assert cellular.sim_time_s.total == pytest.approx(expected, rel=1e-9)
    assert wifi.sim_time_s.total > cellular.sim_time_s.total
    # One device: the medium gives it 59.2 Mbit/s at MCS 7 (docs/network.md, Bianchi n = 1).
    lone = module["main"](["1"])["wi-fi"]
    T = lone.iterations.phase1
    assert lone.sim_time_s.total == pytest.approx(T * (2 * (bits / 59.2e6 + L) + c), rel=2e-3)
    ratio = printed(r"takes (\d+\.\d+) times", out)[0]
    assert ratio == round(wifi.sim_time_s.total / cellular.sim_time_s.total, 3)


CHECKS = {
    "bursty_link": (check_bursty_link, ["400"]),
    "my_access_scheme": (check_my_access_scheme, ["2"]),
    "my_mechanism": (check_my_mechanism, []),
    "my_strategy": (check_my_strategy, []),
    "python_scenario": (check_python_scenario, []),
    "sweep_table_plot": (check_sweep_table_plot, ["{tmp}"]),
    "wifi_vs_cellular": (check_wifi_vs_cellular, ["6"]),
}


def test_every_example_is_checked():
    assert [p.stem for p in EXAMPLES] == sorted(CHECKS)
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_and_prints_what_it_says(path, tmp_path, capsys, registries):
    module = runpy.run_path(str(path))  # as `python examples/x.py` loads it, main not yet called
    doc = module["__doc__"]
    assert doc and "print" in doc and f"python examples/{path.name}" in doc
    check, argv = CHECKS[path.stem]
    result = module["main"]([a.format(tmp=tmp_path) for a in argv])
    check(result, capsys.readouterr().out, tmp_path, module)


def test_an_example_runs_as_a_script_and_writes_under_the_working_folder(tmp_path):
    """Run from another folder, with no argument: the files go to ./out/, not into the repository."""
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "sweep_table_plot.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},  # edgesim importable from any folder
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "sweep_table_plot" / "messages.png").exists()
    assert "ffl          8" in done.stdout
