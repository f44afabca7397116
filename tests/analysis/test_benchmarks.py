"""The benchmarks' shared parts (analysis/benchmarks/): instrumentation, scenario, network parts.

The benchmarks run as scripts with their own folder on ``sys.path``, so the
tests put it there too. Each full benchmark takes minutes; these tests run
their parts at a few devices.
"""

import itertools
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "analysis" / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    """Put analysis/benchmarks/ on sys.path; returns its folder."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return BENCHMARKS


@pytest.fixture
def child_env(monkeypatch):
    """Let child processes import edgesim from this checkout (PYTHONPATH); returns None."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture
def instrument(bench, monkeypatch):
    """The instrument module, its clock replaced by one that advances 1 s per reading."""
    import instrument

    ticks = itertools.count()
    monkeypatch.setattr(
        instrument, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks)))
    )
    return instrument


def test_accumulate_adds_one_tick_per_call(instrument):
    class Owner:
        def double(self, x):
            return 2 * x

    acc: dict = {}
    instrument.accumulate(Owner, "double", acc)
    results = [Owner().double(x) for x in (1, 2, 3)]
    assert results == [2, 4, 6]
    assert acc["double"] == [3, 3.0]  # each call reads the clock twice: 1 s each


def test_accumulate_times_a_generator_between_its_yields_only(instrument):
    def process(n):
        got = []
        for i in range(n):
            got.append((yield i))
        return got

    acc: dict = {}
    holder = type("Holder", (), {"process": staticmethod(process)})
    instrument.accumulate(holder, "process", acc, generator=True)
    g = holder.process(4)
    sent = [next(g)]
    with pytest.raises(StopIteration) as stop:
        while True:
            sent.append(g.send(f"reply {sent[-1]}"))
    assert sent == [0, 1, 2, 3]
    assert stop.value.value == ["reply 0", "reply 1", "reply 2", "reply 3"]
    # one call; 4 yields and the return: 5 resumptions of 1 s each (the waits in between are
    # not counted, though the fake clock ticked there too)
    assert acc["process"] == [1, 5.0]


def test_best_time_is_the_least_of_the_repeats(bench, monkeypatch):
    import instrument

    clock = iter([0.0, 3.0, 10.0, 11.5, 20.0, 22.0])  # calls of 3 s, 1.5 s and 2 s
    monkeypatch.setattr(instrument, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    calls = itertools.count(1)
    assert instrument.best_time(lambda: next(calls), 3) == (1.5, 3)
    clock = iter([0.0, 5.0, 5.0, 6.0])  # one warm-up call (untimed), then 5 s and 1 s
    assert instrument.best_time(lambda: next(calls), 2, warm_up=True) == (1.0, 6)


def test_epsilon_defaults_to_one_tenth_and_to_one_in_quick_mode(bench):
    from instrument import add_epsilon, argument_parser, epsilon

    ap = argument_parser("The benchmark.\n\nMore.")
    ap.add_argument("--quick", action="store_true")
    add_epsilon(ap)
    assert ap.description == "The benchmark."
    assert epsilon(ap.parse_args([])) == 0.1
    assert epsilon(ap.parse_args(["--quick"])) == 1.0
    assert epsilon(ap.parse_args(["--quick", "--epsilon", "0.25"])) == 0.25


def test_child_line_reaches_the_parent(bench, child_env, capsys):
    from instrument import report_to_parent, run_child

    code = "import sys; sys.path.insert(0, sys.argv[1]); import instrument; "
    code += "instrument.report_to_parent('TAG ', {'K': 7, 'x': [1.5, None]})"
    r, proc = run_child([sys.executable, "-c", code, str(BENCHMARKS)], "TAG ", "child")
    assert r == {"K": 7, "x": [1.5, None]} and proc.returncode == 0
    r, proc = run_child([sys.executable, "-c", "raise SystemExit(3)"], "TAG ", "the child")
    assert r is None and proc.returncode == 3
    assert "the child failed (exit 3):" in capsys.readouterr().out
    report_to_parent("TAG ", {"a": 1})
    assert capsys.readouterr().out == 'TAG {"a": 1}\n'


def test_scale_scenario_is_ten_samples_of_twenty_features_per_agent(bench):
    from scale_scenario import ffl_scale_scenario

    from edgesim import scenario

    tables = ffl_scale_scenario(300, epsilon=0.5, output={"per_agent": "npz"})
    sc = scenario.from_dict(tables)
    assert (sc.agents.count, sc.data.samples, sc.data.features) == (300, 3000, 20)
    assert (sc.model.kind, sc.model.l2, sc.mechanism.epsilon) == ("ridge", 10.0, 0.5)
    assert (sc.output.local_baseline, sc.output.per_agent) == (False, "npz")
    assert "network" not in tables  # the default network unless one is given


@pytest.mark.parametrize("network", ["default", "stragglers", "wifi"])
def test_events_and_batched_agree_on_the_trivial_mechanism(bench, network):
    from network_messages import network_run, rounds_for

    K, rounds = 12, 3
    events = network_run(K, rounds, "events", network=network)
    batched = network_run(K, rounds, "batched", network=network)
    assert events["delivered"] == 2 * K * rounds  # a download and a reply per device per round
    assert events["dropped"] == 0
    assert events["sim_ns"] == batched["sim_ns"] > 0
    assert events["counters"] == batched["counters"]
    assert rounds_for(1000, 100_000) == 50 and rounds_for(10**4, 100) == 2


def test_bare_baselines_run_the_events_they_are_asked_for(bench):
    from network_messages import bare_loop, bare_processes

    assert 0 < bare_loop(1000) < 5
    assert 0 < bare_processes(10, 100) < 5


def test_network_ffl_child_splits_its_time(bench, child_env):
    from instrument import run_child
    from network_ffl import CHILD_TAG, FFL_NETWORKS

    script = str(BENCHMARKS / "network_ffl.py")
    cmd = [sys.executable, script, "40", "--epsilon", "1.0", "--network", "one cell, per-device"]
    r, _ = run_child(cmd, CHILD_TAG, "FFL child")
    assert r is not None
    rounds = r["comm"]["rounds"]
    assert r["calls"]["exchange"][0] == rounds["phase1"] + rounds["phase2"] > 0
    assert r["calls"]["run_mechanism"][0] == 1
    # Phase I asks all 40 agents, each Phase II round the 39 others of one agent
    assert r["comm"]["messages_down"] == 40 * rounds["phase1"] + 39 * rounds["phase2"]
    assert 0 < r["build_s"] < r["wall_s"]
    assert r["calls"]["run_mechanism"][1] < r["wall_s"] - r["build_s"]
    assert set(FFL_NETWORKS) >= {"one cell, per-device", "cells of 100"}


def test_bench_lte_quick_prints_ratios_over_the_same_messages(bench, child_env):
    import re
    import subprocess

    from bench_lte import NETWORKS, lte_scenario

    from edgesim import scenario

    models = {n: scenario.from_dict(lte_scenario("ffl", 20, "events", n)) for n in NETWORKS}
    assert {n: sc.network.radio.model for n, sc in models.items()} == {
        "default": "fixed",
        "lte": "lte",
    }
    cmd = [sys.executable, str(BENCHMARKS / "bench_lte.py"), "--quick", "--repeats", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    ratios = re.findall(r"ratio lte / default per message: (\d+\.\d+)x", out)
    assert len(ratios) == 3 and all(float(r) > 0 for r in ratios)
    counts = re.findall(r"messages: default ([\d,]+), lte ([\d,]+) \(equal: True\)", out)
    assert len(counts) == 3 and all(d == lte for d, lte in counts)
    # FedAvg's 200 rounds: a download and a reply per device per round (K = 1000, then 20)
    assert [d for d, _ in counts[:2]] == [f"{2 * 200 * 1000:,}", f"{2 * 200 * 20:,}"]
    assert len(re.findall(r"^(PASS|FAIL): ", out, re.M)) == 6


def test_bench_secagg_quick_recovers_the_exact_sum_in_every_run(bench, child_env):
    import re
    import subprocess

    from bench_secagg import RUNS

    cmd = [sys.executable, str(BENCHMARKS / "bench_secagg.py"), "--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    # n = 24: k = ceil(2 log2 24) = 10, t = floor(11 / 2) + 1 = 6; round(0.05 * 24) = 1 drops
    runs = re.findall(
        r"k = (\d+), t = (\d+), (\d+) survivors, (\d+) keys reconstructed; exact sum: (\w+)", out
    )
    assert runs == [("10", "6", "23", "1", "True")] * len(RUNS)
    agreements = re.findall(r"\(([\d,]+) agreements", out)
    assert len(set(agreements)) == 1  # every profile does the same agreements
    assert re.search(r"key agreement x25519 / ffdhe2048 \d+\.\d+x faster", out)
    assert re.search(r"PRG: ChaCha20 \d+\.\d+ s vs SHAKE-128 \d+\.\d+ s", out)
    assert len(re.findall(r"^(PASS|FAIL): ", out, re.M)) == 3


def test_bench_deviate_quick_searches_two_parameters_within_its_budget(bench, child_env):
    import re
    import subprocess

    cmd = [sys.executable, str(BENCHMARKS / "bench_deviate.py"), "--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    runs = re.findall(r"over target_scale, target_shift \(quick\): (\d+) runs in (\d+\.\d) s", out)
    assert len(runs) == 1 and runs[0][0] == "9"  # a 2 x 2 grid, then Nelder-Mead to the budget
    bound = re.search(r"regret (\S+), bound (\S+)", out)
    assert float(bound[1]) <= float(bound[2])  # FFL: pretending other data gains at most the bound
    assert len(re.findall(r"^(PASS|FAIL): ", out, re.M)) == 1


def test_bench_strategy_cost_quick_compares_with_the_base_commit(bench):
    import re
    import subprocess

    cmd = [sys.executable, str(BENCHMARKS / "bench_strategy_cost.py"), "--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert re.search(r"all truthful, K = 2000, batched, best of 2: .* at 4f4280d: \d", out), out
    assert len(re.findall(r"^one deviator, K = 20000, in memory", out, re.M)) == 2, out
    assert "failed" not in out
