"""Start-up: what a small run imports (issue 32, item 2).

A small run is mostly start-up: a module imported by every run but used by few (the
plotting, the sweeps' runner, SimPy for a run in memory, scipy.stats for the paper's
data) costs every run its import time. A fresh interpreter runs the CLI and the Python
API on tiny in-memory scenarios, then lists what it imported: none of :data:`UNUSED`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Modules an in-memory run of paper-fig1 or the quick start must not import.
UNUSED = (
    "matplotlib",
    "networkx",
    "scipy.stats",
    "simpy",
    "numba",
    "dp_accounting",
    "sklearn",
    "urllib.request",
    "tarfile",
    "edgesim.canary",
    "edgesim.network.build",
    "edgesim.network.server",
    "edgesim.sweeps.runner",
    "edgesim.sweeps.plots",
    "edgesim.sweeps.tables",
    "edgesim.learning.data.images",
    "edgesim.plan",
)

SCRIPT = """
import json, sys
from edgesim.cli import main
fig1 = sys.argv[1]
small = ["--set", "mechanism.phase1_rounds=20", "--set", "best_response.enabled=false",
         "--set", "mechanism.local_rounds=50"]
codes = [
    main(["run", fig1, *small, "--set", "data.test_samples=50", "--quiet", "--json", sys.argv[2]]),
    main(["run", *small, "--set", "agents.count=4", "--set", "data.samples=80",
          "--set", "network.fidelity=none", "--quiet"]),
]
import edgesim
result = edgesim.run("paper-fig1", ["mechanism.phase1_rounds=5", "best_response.enabled=false"])
print(json.dumps({"codes": codes, "loss": result.model.global_loss,
                  "modules": sorted(sys.modules)}))
"""


def in_fresh_interpreter(script: str, *args: str) -> dict:
    """Run ``script`` with ``args`` in a fresh interpreter; returns the JSON of its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_small_runs_import_nothing_they_do_not_use(tmp_path):
    """The CLI (paper-fig1 and the quick start, in memory) and ``edgesim.run`` run, and import
    none of :data:`UNUSED` (neither a module nor anything inside it)."""
    fig1 = str(ROOT / "scenarios" / "paper-fig1.toml")
    got = in_fresh_interpreter(SCRIPT, fig1, str(tmp_path / "out.json"))
    assert got["codes"] == [0, 0]
    assert json.loads((tmp_path / "out.json").read_text())["K"] == 2
    assert got["loss"] > 0
    loaded = [m for m in got["modules"] if any(m == u or m.startswith(u + ".") for u in UNUSED)]
    assert loaded == []


RIDGE_SCRIPT = """
import json, sys
from edgesim.cli import main
code = main(["run", sys.argv[1], "--set", "agents.count=10", "--set", "network.fidelity=none",
             "--quiet", "--json", sys.argv[2]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_a_ridge_run_on_synthetic_data_imports_neither_scipy_nor_cryptography(tmp_path):
    """comm-vs-k at K = 10 in memory (ridge: closed-form reference, equal agent blocks) needs
    neither scipy (about a quarter of a second: log_softmax is edgesim's own) nor the
    ``cryptography`` package (secure aggregation only), and still writes its result."""
    scenario = str(ROOT / "scenarios" / "comm-vs-k.toml")
    got = in_fresh_interpreter(RIDGE_SCRIPT, scenario, str(tmp_path / "out.json"))
    assert got["code"] == 0
    assert json.loads((tmp_path / "out.json").read_text())["K"] == 10
    assert [m for m in got["modules"] if m.split(".")[0] in ("scipy", "cryptography")] == []


LAZY_SCRIPT = """
import json, sys
from edgesim.cli import main
path, sets = sys.argv[1], sys.argv[2:]
overrides = [x for s in sets for x in ("--set", s)]
code = main(["run", path, *overrides, "--quiet", "--json", "/dev/null"])
imported = sorted(m for m in ("scipy.special", "scipy.optimize") if m in sys.modules)
from edgesim.plan_wall import lazy_modules
from edgesim.scenario import load
print(json.dumps({"code": code, "imported": imported,
                  "planned": lazy_modules(load(path, sets), 0)}))
"""


def test_the_plan_counts_the_imports_a_run_makes():
    """``edgesim.plan_wall.lazy_modules`` (whose import costs the plan adds) names exactly the
    scipy modules a small run imports where it first needs them, in a fresh interpreter:
    none for ridge on synthetic data, scipy.special for the paper's data (its truncated
    normal draws), both for DP-FFL (the privacy accounting's optimiser)."""
    small = ["mechanism.phase1_rounds=5", "network.fidelity=none"]
    cases = {
        "comm-vs-k.toml": ([*small, "agents.count=10"], []),
        "paper-fig1.toml": ([*small, "best_response.enabled=false"], ["scipy.special"]),
        "dp-ffl-privacy.toml": (["network.fidelity=none"], ["scipy.special", "scipy.optimize"]),
    }
    for name, (sets, expected) in cases.items():
        got = in_fresh_interpreter(LAZY_SCRIPT, str(ROOT / "scenarios" / name), *sets)
        assert got["code"] == 0, name
        assert got["imported"] == sorted(expected), name
        assert got["planned"] == expected, name


def test_lazy_sweeps_package_exports_every_name():
    """``edgesim.sweeps`` imports its modules on first use: every name of ``__all__`` (and each
    submodule) resolves, and importing the package loads none of them."""
    code = (
        "import sys, edgesim.sweeps as s\n"
        "before = sorted(m for m in sys.modules if m.startswith('edgesim.sweeps.'))\n"
        "names = {n: getattr(s, n).__module__ if callable(getattr(s, n)) else 'value'"
        " for n in s.__all__}\n"
        "mods = [getattr(s, m).__name__ for m in ('executors', 'plots', 'runner', 'store',"
        " 'tables', 'worker', 'errors')]\n"
        "import json; print(json.dumps([before, names, mods, sorted(dir(s))]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    before, names, mods, listed = json.loads(proc.stdout)
    assert before == []
    assert names["write_atomic"] == "edgesim.sweeps.store"
    assert names["run_sweep"] == "edgesim.sweeps.runner"
    assert names["SweepError"] == "edgesim.sweeps.errors"
    assert names["LOCK"] == "value"
    assert len(names) == 25 and set(names) <= set(listed)
    assert mods[2] == "edgesim.sweeps.runner"


SPIN_SCRIPT = """
import json, os, sys
import edgesim.cli as cli
before = "numpy" in sys.modules
code = cli.main(["validate", sys.argv[1]])
import numpy
print(json.dumps({"numpy_before": before, "code": code,
                  "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
                  "again": cli.shorten_blas_spin()}))
"""


def test_the_command_shortens_the_blas_threads_spin_before_numpy_loads():
    """``edgesim`` sets OpenBLAS's idle spin (``OPENBLAS_THREAD_TIMEOUT``) before numpy loads
    its OpenBLAS, which reads it then: importing ``edgesim.cli`` must not load numpy, and a
    value the user set (or GOTO's) is kept."""
    scenario = str(ROOT / "scenarios" / "quickstart.toml")

    def spin(**env_vars):
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")
        }
        proc = subprocess.run(
            [sys.executable, "-c", SPIN_SCRIPT, scenario],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
            env={**env, **env_vars},
        )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    got = spin()
    assert got == {"numpy_before": False, "code": 0, "timeout": "20", "again": False}
    assert spin(OPENBLAS_THREAD_TIMEOUT="7")["timeout"] == "7"
    assert spin(GOTO_THREAD_TIMEOUT="7")["timeout"] is None
