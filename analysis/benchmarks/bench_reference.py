"""The references' cost: edgesim/reference.py's model against measurements, and "auto" on the
wide one-round FedAvg of issue 27.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_reference.py              # part 2, about 5 minutes on 2 cores
    python analysis/benchmarks/bench_reference.py --quick      # part 2 at d = 2 000, seconds
    python analysis/benchmarks/bench_reference.py --calibrate  # part 1, about 2 minutes

Part 1 (``--calibrate``) times each unit cost of the model in
``edgesim/reference.py`` on a grid of shapes (best of a few repeats, this
process): one logistic evaluation of F and its gradient (single thread, as the
L-BFGS-B solves run), one all-agents gradient, one round of local learning, a
closed-form ridge solve, the batched ridge reference, the driver's cost per
exchange and message, and the data's setup. It prints each measurement beside
the model's prediction and the least-squares coefficients (relative error) that
the module's constants were set from. Then it times whole references beside
their predictions: exact VCG (``vcg_payments``), w^o alone
(``reference.optimum``), and local learning (per round, at its actual rounds).
Target: every whole reference within 3x of its prediction; "auto" compares a
share with 50 %, so a factor of 3 moves the decision only for a reference
between a quarter and three quarters of the run.

Part 2 runs the one-round FedAvg of issue 27 (logistic, K = 40, 400 samples,
12 498 features, 8 classes, events fidelity, the quick start's other settings,
no local baseline) twice, each in a fresh subprocess timed from the scenario to
the result: with ``exact_vcg = true`` (what "auto" did before it decided on cost:
K = 40 <= 500) and with ``exact_vcg = "auto"`` (now: FedAvg has no payments, so
w^o alone). It checks that both give the same optimum, and prints both wall
times and their ratio. Target: "auto" at least 3x faster.

Always exits with status 0; prints PASS/FAIL lines.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from instrument import argument_parser, best_time, report_to_parent, run_child, verdict
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

from edgesim import reference, scenario
from edgesim.learning.local import local_models
from edgesim.mechanisms import vcg
from edgesim.simulate import Simulation, run

CHILD_TAG = "BENCH_REFERENCE_JSON "
SPEEDUP_TARGET = 3.0
WITHIN = 3.0
#: The wide one-round FedAvg of issue 27 (its K, samples, features, classes, rounds, fidelity).
WIDE = [
    "agents.count=40",
    "agents.strategy=[]",
    "data.samples=400",
    "data.features=12498",
    "data.classes=8",
    "mechanism.kind=fedavg",
    "mechanism.phase1_rounds=1",
    "network.fidelity=events",
    "output.local_baseline=false",
]
# (K, n, d, classes): logistic shapes, and (K, n, d): ridge shapes of part 1.
LOGISTIC = [
    (10, 2000, 10, 3),
    (100, 2000, 20, 3),
    (1000, 10_000, 20, 3),
    (10_000, 100_000, 20, 3),
    (300, 6000, 20, 10),
    (20, 2000, 200, 5),
    (40, 400, 2000, 8),
    (40, 400, 12_498, 8),
]
RIDGE = [
    (10, 2000, 10),
    (100, 2000, 20),
    (1000, 10_000, 20),
    (10_000, 100_000, 20),
    (100_000, 1_000_000, 20),
    (20, 2000, 100),
    (40, 4000, 1000),
]
#: Whole references timed in part 1: (label, overrides).
WHOLE = [
    ("logistic K=10 d=10", ["agents.count=10", "data.samples=2000", "data.features=10"]),
    ("logistic K=100 d=20", ["agents.count=100", "data.samples=2000", "data.features=20"]),
    ("logistic K=20 d=200 C=5", ["agents.count=20", "data.samples=2000", "data.features=200",
                                 "data.classes=5"]),
    ("logistic K=40 d=2000 C=8", ["agents.count=40", "data.samples=400", "data.features=2000",
                                  "data.classes=8"]),
    ("ridge K=1000 d=20 (batched)", ["model.kind=ridge", "agents.count=1000",
                                     "data.samples=10000", "data.features=20"]),
    ("ridge K=60 d=1000 (per problem)", ["model.kind=ridge", "agents.count=60",
                                         "data.samples=3000", "data.features=1000"]),
]  # fmt: skip


def best(fn, repeats: int = 3) -> float:
    """Return the least wall seconds of ``repeats`` calls of ``fn`` (:func:`best_time`)."""
    return best_time(fn, repeats)[0]


def simulation(overrides: list[str]) -> tuple[Simulation, object, object, float]:
    """Return (the simulation, its server context, its design, the setup's seconds)."""
    sc = scenario.load(None, ["agents.strategy=[]", "network.fidelity=none",
                              "output.local_baseline=false", *overrides])  # fmt: skip
    t0 = time.perf_counter()
    sim = Simulation(sc)
    ctx, design = sim.server_context(sim.population.participants(), np.random.default_rng(0))
    return sim, ctx, design, time.perf_counter() - t0


def fit(rows: list[tuple[list[float], float]], names: list[str]) -> str:
    """Return the non-negative least-squares coefficients of measured ~ features, in
    relative error (each row divided by its measurement), as ``name = value`` text."""
    A = np.array([[f / m for f in feats] for feats, m in rows])
    coef, _ = nnls(A, np.ones(len(rows)))
    return ", ".join(f"{n} = {c:.2g}" for n, c in zip(names, coef, strict=True))


def line(label: str, measured: float, predicted: float) -> None:
    """Print one measurement beside its prediction."""
    ratio = measured / predicted
    print(
        f"  {label:<40s} {measured * 1e3:10.2f} ms  model {predicted * 1e3:10.2f} ms  {ratio:5.2f}x"
    )


def calibrate() -> bool:
    """Part 1; returns whether every whole reference is within WITHIN of its prediction."""
    evals, passes, each, solves, batched, setups = [], [], [], [], [], []
    print("unit costs (measured, the model's prediction, measured / model):")
    for K, n, d, C in LOGISTIC:
        sim, ctx, design, setup = simulation(
            [f"agents.count={K}", f"data.samples={n}", f"data.features={d}", f"data.classes={C}"]
        )
        s = reference.problem_shape(sim.scenario)
        m, w = sim.model, np.full(s.params, 0.01)
        with threadpool_limits(1):
            t = best(lambda m=m, w=w, design=design, ctx=ctx: m.loss_and_grad(w, design, ctx.p))
        line(f"eval     K={K} n={n} P={s.params}", t, reference.evaluation_s(s))
        evals.append(([1.0, n, n * s.params, K * s.params], t))
        t = best(lambda m=m, w=w, design=design: m.agent_grads(w, design))
        line(f"pass     K={K} n={n} P={s.params}", t, reference.report_pass_s(s))
        passes.append(([1.0, n, n * s.params, K * s.params], t))
        W = np.full((K, s.params), 0.01)
        t = best(lambda m=m, W=W, design=design: m.agent_grads_each(W, design), 2)
        line(f"each     K={K} n={n} P={s.params}", t, reference.local_round_s(s))
        each.append(([1.0, n, n * s.params], t))
        setups.append(([1.0, (s.n + s.n_test) * s.d, s.n * s.dprime], setup))
    for K, n, d in RIDGE:
        sim, ctx, design, setup = simulation(
            ["model.kind=ridge", f"agents.count={K}", f"data.samples={n}", f"data.features={d}"]
        )
        s = reference.problem_shape(sim.scenario)
        m, w, dp = sim.model, np.full(s.params, 0.01), s.dprime
        t = best(lambda m=m, design=design, ctx=ctx: m.solve(design, ctx.p))
        line(f"solve    K={K} n={n} d'={dp}", t, reference.optimum_s(s))
        solves.append(([1.0, n * dp, n * dp * dp], t))
        t = best(lambda m=m, w=w, design=design: m.agent_grads(w, design))
        line(f"pass     K={K} n={n} d'={dp}", t, reference.report_pass_s(s))
        if K * dp * dp <= vcg.RIDGE_BATCH_MAX and dp <= 100:  # wider: (rows, d'^2) products
            t = best(lambda m=m, design=design, ctx=ctx: vcg.vcg_payments(m, design, ctx.p), 1)
            line(f"batched  K={K} n={n} d'={dp}", t, reference.exact_vcg_s(s))
            batched.append(([1.0, n * dp * dp, K * dp**3], t))
        setups.append(([1.0, (s.n + s.n_test) * s.d, s.n * s.dprime], setup))
    exchange, message = [], []
    for fidelity in ("none", "batched", "events"):
        for K in (10, 100, 1000, 5000):
            sim, *_ = simulation(["model.kind=ridge", "mechanism.kind=fedavg", f"agents.count={K}",
                                  f"data.samples={10 * K}", "data.features=2",
                                  "mechanism.phase1_rounds=20", f"network.fidelity={fidelity}"])  # fmt: skip
            sim.run_mechanism()
            t = best(sim.run_mechanism)
            msgs = 2 * 20 * K
            predicted = 20 * reference.EXCHANGE_S[fidelity] + msgs * reference.MESSAGE_S[fidelity]
            line(f"network  {fidelity} K={K} (20 rounds)", t, predicted)
            (exchange if fidelity == "none" else message).append(([20.0, msgs], t))
    print("least-squares coefficients (relative error):")
    print("  EVAL_S:     " + fit(evals, ["call", "row", "row x param", "agent x param"]))
    print("  PASS_S:     " + fit(passes, ["call", "row", "row x param", "agent x param"]))
    print("  EACH_S:     " + fit(each, ["call", "row", "row x param"]))
    print("  RIDGE_SOLVE_S: " + fit(solves, ["call", "row x d'", "row x d'^2"]))
    print("  RIDGE_BATCHED_S: " + fit(batched, ["call", "row x d'^2", "agent x d'^3"]))
    print("  network, none: " + fit(exchange, ["exchange", "message"]))
    print("  network, batched and events: " + fit(message, ["exchange", "message"]))
    print("  SETUP_S:    " + fit(setups, ["call", "draw", "row x d'"]))

    print("whole references (measured, predicted, measured / predicted):")
    ok = True
    for label, overrides in WHOLE:
        sim, ctx, design, _ = simulation(overrides)
        s = reference.problem_shape(sim.scenario)
        m = sim.model
        with np.errstate(all="ignore"):
            t = best(lambda m=m, design=design, ctx=ctx: vcg.vcg_payments(m, design, ctx.p), 1)
        p = reference.exact_vcg_s(s)
        line(f"exact VCG  {label}", t, p)
        ok &= 1 / WITHIN <= t / p <= WITHIN
        t = best(lambda m=m, design=design, ctx=ctx: reference.optimum(m, design, ctx.p), 1)
        p = reference.optimum_s(s)
        line(f"optimum    {label}", t, p)
        ok &= 1 / WITHIN <= t / p <= WITHIN
        t0 = time.perf_counter()
        _, rounds = local_models(m, design, 200)
        t = time.perf_counter() - t0
        p = 1.1 * rounds * reference.local_round_s(s)
        line(f"local ({rounds} rounds) {label}", t, p)
        ok &= 1 / WITHIN <= t / p <= WITHIN
    print(f"{verdict(ok)}: every whole reference within {WITHIN:g}x of its prediction")
    return ok


def child(setting: str, features: int) -> None:
    """Run the wide FedAvg with ``mechanism.exact_vcg = setting``; print its measurements."""
    over = [o for o in WIDE if not o.startswith("data.features")]
    t0 = time.perf_counter()
    sc = scenario.load(None, [*over, f"data.features={features}", f"mechanism.exact_vcg={setting}"])
    result = run(sc)
    wall = time.perf_counter() - t0
    m = result["model"]
    out = {
        "wall_s": wall,
        "optimum_loss": m.get("optimum_loss"),
        "global_loss": m["global_loss"],
        "exact_vcg": m["exact_vcg"],
        "predicted_exact_vcg_s": reference.reference_plan(sc).exact_vcg_s,
        "predicted_optimum_s": reference.reference_plan(sc).optimum_s,
    }
    report_to_parent(CHILD_TAG, out)


def wide(features: int) -> bool:
    """Part 2; returns whether "auto" is at least SPEEDUP_TARGET times faster than true."""
    print(f"one-round FedAvg, logistic, K = 40, 400 samples, d = {features}, 8 classes, events:")
    got = {}
    for setting in ("true", "auto"):
        cmd = [sys.executable, __file__, "--child", setting, "--features", str(features)]
        r, _ = run_child(cmd, CHILD_TAG, f"exact_vcg = {setting}")
        if r is None:
            return False
        got[setting] = r
        print(f"  exact_vcg = {setting:<5s} {r['wall_s']:8.1f} s   {r['exact_vcg']['reason']}")
    old, new = got["true"], got["auto"]
    print(
        f"  predicted: exact VCG {new['predicted_exact_vcg_s']:.3g} s, w^o alone"
        f" {new['predicted_optimum_s']:.3g} s (the reference machine)"
    )
    same = abs(old["optimum_loss"] - new["optimum_loss"]) <= 1e-9 * abs(old["optimum_loss"])
    print(f"{verdict(same)}: the same optimum ({old['optimum_loss']!r}, {new['optimum_loss']!r})")
    ratio = old["wall_s"] / new["wall_s"]
    ok = ratio >= SPEEDUP_TARGET
    print(f'{verdict(ok)}: "auto" {ratio:.2f}x faster than exact_vcg = true (target >= 3x)')
    return ok and same


def main(argv=None) -> int:
    ap = argument_parser(__doc__)
    ap.add_argument("--calibrate", action="store_true", help="part 1: the cost model's units")
    ap.add_argument("--quick", action="store_true", help="part 2 at d = 2 000 (seconds)")
    ap.add_argument("--features", type=int, default=12_498, help="part 2's d")
    ap.add_argument("--child", choices=("true", "auto"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.features)
        return 0
    if args.calibrate:
        calibrate()
    else:
        wide(2000 if args.quick else args.features)
    return 0


if __name__ == "__main__":
    sys.exit(main())
