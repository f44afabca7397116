"""``bench_plan.py --write``: the measurements behind ``edgesim/wall_costs.py`` (plan_table.py).

Each cost is the least-squares fit (non-negative, relative errors) of measured
seconds against the counts that :mod:`edgesim.plan` multiplies it by, so that
the plan's estimate is the table's costs times its own counts:

- ``NETWORK`` (:func:`network_table`): what the simulated network adds to a run, per
  exchange, per recipient and per cell an exchange reaches. A trivial mechanism
  (``Gather(ask="loss")`` answered by a stub that computes nothing,
  ``network_messages.StubSide``) runs over a fresh network in each fidelity,
  access scheme and link class, less the same mechanism in memory, at
  (K, cells) = (32, 1), (256, 1), (1024, 1) and (1024, 32). Three kinds of exchange:
  ``steady`` (to every agent, lossless), ``others`` (to all but one agent, lossless:
  a Phase II problem's) and ``general`` (to all but one, 5 % Bernoulli loss with
  ARQ: planned afresh). Link classes: ``equal`` (the fixed link, fixed compute
  time: every message of an exchange at one instant), ``rates`` (Shannon rates by
  distance) and ``staggered`` (the fixed link, shifted-exponential compute times).
- ``IMPORT_S`` (:func:`import_table`): the modules a run imports where it first needs
  them (scipy.special, then scipy's optimisers, which import it), each in fresh processes
  that imported edgesim's plan and run and the modules before it.
- ``START_S`` (:func:`start_table`): what a network costs once in a fresh process
  (imports, compiled code loaded): six tiny runs' first ``run_mechanism`` less their
  second (:func:`start_scenarios`), in fresh child processes.
- ``MEMORY`` (:func:`memory_table`): the in-memory driver and the mechanism's own
  work, reports excluded, per exchange and per recipient, for each built-in
  gradient mechanism's rounds and problems' rounds: four runs each of synthetic
  logistic regression (10 samples of d = 10 per agent) at two K and two shapes
  (Phase I heavy, Phase II heavy), timed less the agents' gradient and loss passes
  inside them (``agent_grads``, ``agent_losses``, wrapped and timed).
- ``OUTPUT`` (:func:`output_table`): a run's output, per run and per agent, written as
  JSON or as a sidecar: ``simulate.run`` less ``run_mechanism``, plus writing the
  files, less the four per-agent passes the plan counts apart, at K = 100, 2 000 and
  16 000.
- ``SECAGG_WORD_S``: the masks' cost per word, from ``edgesim.network.secagg.config``
  (``bench_secagg.py --fit`` measures it): copied, not measured here.

Each measurement is the least of ``REPEATS`` runs, in CPU seconds of the process
(:data:`clock`): on a machine shared with other work a run's wall time includes the
time other processes hold the cores, its CPU time does not; on an idle machine the
two agree for the one-threaded driver. The fits are least squares on relative
errors, non-negative; the script prints each.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import numpy as np
from network_messages import N_PARAMS, StubSide
from scipy.optimize import nnls

from edgesim import scenario
from edgesim.mechanisms.in_memory import run_in_memory
from edgesim.mechanisms.protocol import Gather
from edgesim.network.build import Network
from edgesim.network.compute import ComputeConfig
from edgesim.network.config import NetworkConfig
from edgesim.network.radio import RadioConfig
from edgesim.network.server import NetworkServer
from edgesim.network.topology import TopologyConfig

REPEATS = 2
#: (K, devices per cell): one cell of 32, 256 and 1024 devices, and 32 cells of 32.
NETWORK_POINTS = ((32, "off"), (256, "off"), (1024, "off"), (1024, 32))
NETWORK_POINTS_QUICK = ((32, "off"), (256, "off"), (256, 32))
#: The clock of every measurement: this process's CPU seconds, which a loaded machine does not
#: inflate (the driver is one thread; the passes subtracted are timed on the same clock).
clock = time.process_time
ACCESS = ("round-robin", "ofdma", "tdma", "wifi", "proportional-fair")
KINDS = ("steady", "others", "general")
LINKS = ("equal", "rates", "staggered")
#: Seconds each network measurement aims at (the rounds are set from a short first run).
TARGET_S = 0.25
TARGET_S_QUICK = 0.08
MECHANISMS = ("fedavg", "ffl", "dp-ffl", "vcg-federated")


# ----------------------------------------------------------------------------- fitting


def fit(rows: list[list[float]], seconds: list[float]) -> tuple[float, ...]:
    """Return the non-negative coefficients c minimising sum ((rows c - s) / s)^2: relative
    errors, so that the small points count as much as the large ones."""
    A = np.asarray(rows, dtype=float)
    s = np.asarray(seconds, dtype=float)
    scale = 1.0 / np.maximum(s, 1e-9)
    coef, _ = nnls(A * scale[:, None], s * scale)
    return tuple(float(x) for x in coef)


# ----------------------------------------------------------------------------- network


def network_config(fidelity: str, access: str, link: str, kind: str, per_cell) -> NetworkConfig:
    """Return the measured network: ``access`` on the fixed link with a fixed compute time
    (``equal``), on Shannon rates (``rates``) or on the fixed link with shifted-exponential
    compute times (``staggered``); 5 % Bernoulli loss for the ``general`` kind; ``per_cell``
    devices per cell."""
    lossy = kind == "general"
    radio = RadioConfig(
        model="shannon" if link == "rates" else "fixed",
        access=access,
        loss="bernoulli" if lossy else "none",
        loss_prob=0.05 if lossy else 0.0,
    )
    compute = ComputeConfig(model="shifted-exponential" if link == "staggered" else "fixed")
    return NetworkConfig(
        fidelity=fidelity,
        radio=radio,
        topology=TopologyConfig(devices_per_cell=per_cell),
        compute=compute,
    )


def stub_mechanism(K: int, rounds: int, everyone: bool):
    """Yield ``rounds`` Gathers of a loss, to every agent or to all but one (round t leaves out
    agent t mod K); returns None."""
    w = np.zeros(N_PARAMS)
    agents = np.arange(K)
    for t in range(rounds):
        yield (
            Gather(w, ask="loss")
            if everyone
            else Gather(w, ask="loss", agents=np.delete(agents, t % K))
        )


def _network_once(cfg: NetworkConfig, K: int, rounds: int, everyone: bool) -> float:
    net = Network(cfg, np.full(K, 10), np.random.SeedSequence(1))
    srv = NetworkServer(net, StubSide(), np.arange(K))
    t0 = clock()
    srv.run(stub_mechanism(K, rounds, everyone))
    return clock() - t0


def _memory_once(K: int, rounds: int, everyone: bool) -> float:
    t0 = clock()
    run_in_memory(stub_mechanism(K, rounds, everyone), StubSide(), K)
    return clock() - t0


def network_costs(fidelity, access, link, kind, points, target_s) -> tuple[float, float, float]:
    """Return (per exchange, per recipient, per cell and exchange) seconds the network adds, fitted
    over ``points`` (K, devices per cell); raises what building the network raises."""
    everyone = kind == "steady"
    rows, seconds = [], []
    for K, per_cell in points:
        cfg = network_config(fidelity, access, link, kind, per_cell)
        cells = cfg.topology.cells(K)
        pilot = _network_once(cfg, K, 3, everyone) / 3
        rounds = int(min(2000, max(3, target_s / max(pilot, 1e-6))))
        net = min(_network_once(cfg, K, rounds, everyone) for _ in range(REPEATS))
        mem = min(_memory_once(K, rounds, everyone) for _ in range(REPEATS))
        recipients = K if everyone else K - 1
        rows.append([rounds, rounds * recipients, rounds * cells])
        seconds.append(max(net - mem, 1e-9))
    return fit(rows, seconds)


def network_table(quick: bool = False, log=print) -> dict:
    """Return ``NETWORK``: fidelity -> access -> link class -> kind -> (exchange, recipient,
    cell) seconds. A combination the network refuses (proportional fair in batched, on the
    fixed link) copies the nearest one measured, and says so in ``log``."""
    points = NETWORK_POINTS_QUICK if quick else NETWORK_POINTS
    target = TARGET_S_QUICK if quick else TARGET_S
    table: dict = {}
    for fidelity in ("batched", "events"):
        table[fidelity] = {}
        for access in ACCESS:
            table[fidelity][access] = by_link = {}
            for link in LINKS:
                by_link[link] = {}
                for kind in KINDS:
                    try:
                        costs = network_costs(fidelity, access, link, kind, points, target)
                    except Exception as err:  # noqa: BLE001 - the network refuses it: copied
                        log(f"  {fidelity} {access} {link} {kind}: not built ({err}); copied")
                        costs = None
                    by_link[link][kind] = costs
                    if costs is not None:
                        log(f"  {fidelity:8s} {access:18s} {link:8s} {kind:8s} " + _text(costs))
    return _fill_gaps(table)


def _fill_gaps(table: dict) -> dict:
    """Replace the unmeasured (None) entries: another link class's, else the same fidelity's
    round-robin, else the other fidelity's."""
    for fidelity, by_access in table.items():
        other = table["events" if fidelity == "batched" else "batched"]
        for access, by_link in by_access.items():
            for link, kinds in by_link.items():
                for kind, costs in kinds.items():
                    if costs is not None:
                        continue
                    for cand in (
                        *(by_link[x][kind] for x in LINKS if x != link),
                        by_access["round-robin"][link][kind],
                        other[access][link][kind],
                        other["round-robin"][link][kind],
                    ):
                        if cand is not None:
                            kinds[kind] = cand
                            break
    return table


def _text(costs) -> str:
    names = ("exchange", "recipient", "cell")
    return ", ".join(f"{n} {c * 1e6:8.2f} us" for n, c in zip(names, costs, strict=False))


# ----------------------------------------------------------------------------- memory


def memory_scenario(kind: str, K: int, T1: int, T2: int, fidelity="none", **extra):
    """Return the memory calibration's scenario: synthetic logistic regression, 10 samples of
    d = 10 per agent, ``kind`` with T1 and T2 rounds, no stopping check, no references."""
    mech = {
        "kind": kind,
        "phase1_rounds": T1,
        "phase2_rounds": T2,
        "phase2_check": False,
        "exact_vcg": False,
        "clusters": 4,
    }
    return scenario.from_dict(
        {
            "name": f"calibrate-{kind}",
            "seed": 0,
            "data": {"source": "synthetic", "samples": 10 * K, "features": 10},
            "model": {"kind": "logistic"},
            "agents": {"count": K},
            "mechanism": mech,
            "network": {"fidelity": fidelity},
            "output": {"local_baseline": False, **extra},
        }
    )


def timed_calls(owner, name: str, acc: dict) -> None:
    """Replace ``owner.name`` by a wrapper adding its calls' :data:`clock` seconds to
    ``acc[name]``; returns None (``del owner.name`` restores a class's method)."""
    fn = getattr(owner, name)
    acc[name] = 0.0

    def wrapper(*args, **kwargs):
        t0 = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name] += clock() - t0

    setattr(owner, name, wrapper)


def _timed_mechanism(sc) -> tuple[float, float]:
    """Return (the mechanism's seconds, the seconds of its gradient and loss passes), the run
    with the least difference of REPEATS."""
    from edgesim.simulate import Simulation

    best = (math.inf, 0.0)
    sim = Simulation(sc)
    sim.server_context(sim.population.participants(), np.random.default_rng(0))  # L_g, once
    for _ in range(REPEATS):
        acc: dict = {}
        timed_calls(sim.model, "agent_grads", acc)
        timed_calls(sim.model, "agent_losses", acc)
        t0 = clock()
        sim.run_mechanism()
        total = clock() - t0
        passes = acc["agent_grads"] + acc["agent_losses"]
        del sim.model.agent_grads, sim.model.agent_losses  # the class's methods again
        if total - passes < best[0] - best[1]:
            best = (total, passes)
    return best


def memory_costs(kind: str, quick: bool = False, rounds: tuple | None = None) -> dict:
    """Return ``MEMORY[kind]``: ``round`` and ``problem`` -> (per exchange, per recipient)
    seconds, fitted over four runs (two K, Phase I heavy and Phase II heavy).

    ``rounds``: the round costs when they are known (FFL's Phase I and vcg-federated's
    trainings descend as FedAvg does): then only the problems' costs are fitted, on what the
    rounds leave. Otherwise (FedAvg; DP-FFL, whose rounds are summed securely) both.
    """
    from edgesim import plan as planner

    Ks = (16, 96) if quick else (32, 256)
    shapes = ((40, 1), (3, 8)) if kind != "vcg-federated" else ((6, 6), (2, 2))
    rows, seconds = [], []
    for K in Ks:
        for T1, T2 in shapes:
            sc = memory_scenario(kind, K, T1, T2)
            w = planner.plan(sc)["work"]
            total, passes = _timed_mechanism(sc)
            rows.append([w["round_exchanges"], w["round_recipients"], w["problem_exchanges"],
                         w["problem_recipients"]])  # fmt: skip
            seconds.append(max(total - passes, 1e-9))
    if kind == "fedavg":  # rounds only
        r = fit([row[:2] for row in rows], seconds)
        return {"round": r, "problem": r}
    if rounds is not None:
        left = [
            s - rounds[0] * row[0] - rounds[1] * row[1]
            for row, s in zip(rows, seconds, strict=True)
        ]
        keep = [i for i, x in enumerate(left) if x > 0]
        return {
            "round": rounds,
            "problem": fit([rows[i][2:] for i in keep], [left[i] for i in keep]),
        }
    coef = fit(rows, seconds)
    return {"round": coef[:2], "problem": coef[2:]}


def memory_table(quick: bool = False, log=print) -> dict:
    """Return ``MEMORY``: mechanism kind -> ``round``/``problem`` -> (exchange, recipient) s."""
    table: dict = {}
    for kind in MECHANISMS:  # FedAvg first: its rounds are FFL's and vcg-federated's
        descends = kind in ("ffl", "vcg-federated")
        table[kind] = memory_costs(kind, quick, table["fedavg"]["round"] if descends else None)
        log(f"  {kind:14s} round: {_text(table[kind]['round'])}; problem:"
            f" {_text(table[kind]['problem'])}")  # fmt: skip
    return table


# ----------------------------------------------------------------------------- start


START_CHILD = """
import time, sys
sys.path.insert(0, {here!r})
from plan_calibration import start_scenarios
from edgesim.simulate import Simulation
sims = [Simulation(sc) for sc in start_scenarios({fidelity!r})]
t0 = time.process_time()
for sim in sims:
    sim.run_mechanism()
t1 = time.process_time()
for sim in sims:
    sim.run_mechanism()
t2 = time.process_time()
print((t1 - t0) - (t2 - t1))
"""


def start_scenarios(fidelity: str) -> list:
    """Return tiny FedAvg and FFL scenarios over the three link classes, lossless and lossy, in
    ``fidelity``: between them they take every path of the network a run can load lazily."""
    out = []
    for radio, compute in (
        ({"model": "fixed"}, {"model": "fixed"}),
        ({"model": "shannon", "loss": "bernoulli", "loss_prob": 0.1}, {"model": "fixed"}),
        ({"loss": "bernoulli", "loss_prob": 0.1}, {"model": "shifted-exponential"}),
    ):
        for kind in ("fedavg", "ffl"):
            sc = memory_scenario(kind, 64, 2, 2, fidelity=fidelity)
            table = sc.to_dict()
            table["network"].update(radio=radio, compute=compute)
            out.append(scenario.from_dict(table))
    return out


def start_seconds(fidelity: str) -> float:
    """Return what a network of ``fidelity`` costs once per process (CPU seconds, least of
    REPEATS fresh processes): the first runs of :func:`start_scenarios` less their second."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = START_CHILD.format(here=here, fidelity=fidelity)
    best = math.inf
    for _ in range(REPEATS):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        best = min(best, max(float(out.stdout.split()[-1]), 0.0))
    return best


def start_table(log=print) -> dict:
    """Return ``START_S``: fidelity -> seconds a network costs once in a fresh process."""
    table = {f: start_seconds(f) for f in ("batched", "events")}
    log("  " + ", ".join(f"{f} {s * 1e3:.0f} ms" for f, s in table.items()))
    return table


IMPORT_CHILD = """
import sys, time
import edgesim.plan, edgesim.simulate
for before in {before!r}:
    __import__(before)
t0 = time.process_time()
import {module}
print(time.process_time() - t0)
"""
#: The modules edgesim imports where a run first needs them (edgesim.plan_wall.lazy_modules),
#: each importing the ones before it: scipy.optimize imports scipy.special, which imports
#: scipy's array-API layer (most of the cost). Each is measured after those before it, so
#: the table's entries add up.
LAZY_MODULES = ("scipy.special", "scipy.optimize")


def import_table(log=print) -> dict:
    """Return ``IMPORT_S``: module -> CPU seconds of importing it in a fresh process that has
    imported ``edgesim.plan``, ``edgesim.simulate`` and the modules before it in
    :data:`LAZY_MODULES` (least of REPEATS processes)."""
    table = {}
    for i, module in enumerate(LAZY_MODULES):
        child = IMPORT_CHILD.format(module=module, before=LAZY_MODULES[:i])
        runs = [
            subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
            for _ in range(REPEATS)
        ]
        table[module] = min(float(r.stdout.split()[-1]) for r in runs)
    log("  " + ", ".join(f"{m} {s * 1e3:.0f} ms" for m, s in table.items()))
    return table


# ----------------------------------------------------------------------------- output


def _output_seconds(K: int, per_agent: str) -> float:
    """Seconds of a FedAvg run's output at K agents: ``run`` less the mechanism, plus the files
    ``edgesim run --json`` writes (least of REPEATS)."""
    import tempfile

    from bench_plan import write_run_files

    from edgesim.simulate import Simulation, run

    sc = memory_scenario("fedavg", K, 2, 0, per_agent=per_agent)
    best = math.inf
    for _ in range(REPEATS):
        sim = Simulation(sc)
        acc: dict = {}
        timed_calls(sim, "run_mechanism", acc)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = clock()
            result = run(sc, sim)
            write_run_files(result, sim, os.path.join(tmp, "r.json"))
            elapsed = clock() - t0
        best = min(best, elapsed - acc["run_mechanism"])
    return best


def output_table(quick: bool = False, log=print) -> dict:
    """Return ``OUTPUT``: ``run_s`` and, per agent, ``json_agent_s`` and ``sidecar_agent_s``,
    less the four per-agent passes the plan counts apart."""
    from edgesim.plan_wall import EACH_PASSES
    from edgesim.reference import local_round_s, problem_shape

    Ks = (100, 4000) if quick else (100, 2000, 16000)
    out = {}
    for mode, key in (("json", "json_agent_s"), ("npz", "sidecar_agent_s")):
        rows, seconds = [], []
        for K in Ks:
            shape = problem_shape(memory_scenario("fedavg", K, 2, 0))
            s = _output_seconds(K, mode) - EACH_PASSES * local_round_s(shape)
            rows.append([1.0, K])
            seconds.append(max(s, 1e-6))
        run_s, per = fit(rows, seconds)
        out.setdefault("run_s", run_s)
        out[key] = per
        log(f"  output {mode}: per run {run_s * 1e3:.2f} ms, per agent {per * 1e6:.2f} us")
    return out
