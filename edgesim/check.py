"""Conformance checks for mechanisms and access schemes, as Gymnasium's ``check_env`` is for environments.

:func:`check_access` checks an access scheme (:mod:`edgesim.network.access`):
its closed forms on a small exchange, then the events and batched fidelities
on a small scenario (see its docstring); a failure raises
:class:`AccessCheckError`. The rest of this docstring is about mechanisms.

:func:`check_mechanism` runs a registered mechanism, or a researcher's own
generator function, on a small ridge problem and checks what every driver of
edgesim relies on:

1. calling it with a :class:`~edgesim.mechanisms.base.ServerContext` returns a
   generator (the server's algorithm, not its result);
2. every step it yields is a :class:`~edgesim.mechanisms.protocol.Gather`;
3. it returns an :class:`~edgesim.mechanisms.base.Outcome` whose model has the
   model's shape and whose payments hold one number per agent;
4. it is deterministic: the same seed gives the same model and payments, bit
   for bit (randomness must come from ``ctx.rng``);
5. it gives the same model and payments in memory as on a lossless network
   in the batched fidelity (the drivers are interchangeable).

A failed check raises :class:`MechanismCheckError` naming the check and what
was found. It sits above the scenario runner (:mod:`edgesim.simulate`), which
runs the mechanism in memory and over the network.
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np

from edgesim import scenario, simulate
from edgesim.config import attach_options, options_class
from edgesim.mechanisms.base import MECHANISMS, Outcome, make_mechanism, register_mechanism
from edgesim.mechanisms.protocol import Gather
from edgesim.network.access import ACCESS_SCHEMES, AccessScheme, register_access
from edgesim.network.cells import Cells
from edgesim.network.links import build_link
from edgesim.network.radio import RadioConfig
from edgesim.simulate import Simulation

_names = itertools.count()


class MechanismCheckError(AssertionError):
    """A mechanism broke a rule every driver relies on; the message says which and how."""


def _checked(name: str, mechanism):
    """Wrap ``mechanism`` so each yielded step and the outcome are checked as it runs."""

    def checked(ctx):
        gen = mechanism(ctx)
        if not inspect.isgenerator(gen):
            raise MechanismCheckError(
                f"{name}: calling it must return a generator (a function that yields Gather"
                f" steps), got {type(gen).__name__}"
            )
        try:
            step = next(gen)
            while True:
                if not isinstance(step, Gather):
                    raise MechanismCheckError(
                        f"{name}: every yielded step must be a Gather, got {type(step).__name__}"
                    )
                step = gen.send((yield step))
        except StopIteration as stop:
            out = stop.value
        _check_outcome(name, out, ctx)
        return out

    return checked


def _check_outcome(name: str, out, ctx) -> None:
    if not isinstance(out, Outcome):
        raise MechanismCheckError(
            f"{name}: it must return an Outcome (edgesim.mechanisms.base.Outcome), got"
            f" {type(out).__name__}"
        )
    model = np.asarray(out.model)
    if model.shape != ctx.w0.shape:
        raise MechanismCheckError(
            f"{name}: Outcome.model must have the model's shape {ctx.w0.shape}, got {model.shape}"
        )
    pay = np.asarray(out.payments)
    if pay.shape != (ctx.K,) or not np.issubdtype(pay.dtype, np.number):
        raise MechanismCheckError(
            f"{name}: Outcome.payments must hold one number per agent, shape ({ctx.K},),"
            f" got shape {pay.shape} of {pay.dtype}"
        )


def _problem(kind: str, K: int, seed: int, fidelity: str) -> dict:
    """Return the small scenario the check runs (ridge, synthetic data, short phases)."""
    return {
        "seed": seed,
        "data": {"source": "synthetic", "samples": 20 * K, "features": 3},
        "model": {"kind": "ridge", "l2": 0.1},
        "agents": {"count": K},
        "mechanism": {"kind": kind, "phase1_rounds": 20, "phase2_rounds": 3, "exact_vcg": False},
        "network": {"fidelity": fidelity},
        "output": {"local_baseline": False},
    }


def check_mechanism(mechanism, *, agents: int = 4, seed: int = 0) -> dict:
    """Check a mechanism (a registered name, or a generator function ``f(ctx)``).

    Runs it on a ridge problem of ``agents`` agents (20 samples each) three
    times: twice in memory (determinism) and once on a lossless network in the
    batched fidelity. Returns a report ``{"mechanism", "steps", "phase1_rounds",
    "payments"}`` (steps yielded in one run; payments in loss units). Raises
    :class:`MechanismCheckError` at the first broken rule (module docstring).
    """
    if isinstance(mechanism, str):
        if mechanism not in MECHANISMS:
            raise MechanismCheckError(f"no mechanism is registered as {mechanism!r}")
        name, fn = mechanism, make_mechanism(mechanism)
    elif callable(mechanism):
        name, fn = getattr(mechanism, "__name__", repr(mechanism)), mechanism
    else:
        raise MechanismCheckError(f"expected a mechanism name or function, got {mechanism!r}")
    # A registered name runs under its own name, so that its 'auto' settings (dp-ffl's
    # clipping and secure aggregation) resolve as in a real run; a function under an alias.
    kind = name if isinstance(mechanism, str) else f"check-mechanism-{next(_names)}"
    original = MECHANISMS.get(kind)
    wrapped = _checked(name, fn)
    attach_options(wrapped, options_class(fn))  # the wrapper reads the mechanism's own options
    register_mechanism(kind, wrapped, replace=True)
    steps = []
    try:
        runs = []
        for fidelity in ("none", "none", "batched"):
            sim = Simulation(scenario.from_dict(_problem(kind, agents, seed, fidelity)))
            run = sim.run_mechanism()
            runs.append(run)
            steps.append(sum(run.counters.rounds.values()))
    finally:
        if original is None:
            del MECHANISMS[kind]
        else:
            MECHANISMS[kind] = original
    first, again, network = (r.outcome for r in runs)
    for what, other in (("twice with the same seed", again), ("on a lossless network", network)):
        for field in ("model", "payments"):
            a, b = np.asarray(getattr(first, field)), np.asarray(getattr(other, field))
            if not np.array_equal(a, b, equal_nan=True):
                raise MechanismCheckError(
                    f"{name}: run {what}, Outcome.{field} differs (max |difference| ="
                    f" {float(np.nanmax(np.abs(a - b))):.3g}); draw randomness from ctx.rng only,"
                    " and use only what the replies carry"
                )
    return {
        "mechanism": name,
        "steps": steps[0],
        "phase1_rounds": first.phase1_rounds,
        "payments": np.asarray(first.payments).tolist(),
    }


# ---------------------------------------------------------------------------- access schemes


class AccessCheckError(AssertionError):
    """An access scheme broke a rule the server relies on; the message says which and how."""


def _access_radio(kind: str) -> dict:
    """Return the ``[network.radio]`` table the check runs ``kind`` on: the fixed link model,
    or the Shannon model when the scheme refuses the fixed one (proportional fair)."""
    for radio in ({"access": kind}, {"access": kind, "model": "shannon", "shadowing_db": 0.0}):
        errs = [
            e for e in RadioConfig(**radio).cross_check() if e.key.endswith((".model", ".access"))
        ]
        if not errs:
            return radio
    errs = RadioConfig(access=kind).cross_check()
    raise AccessCheckError(f"{kind}: no radio table to run it on: {errs[0]}")


def _contract(name: str, what: str, done, arrive, work) -> None:
    """Check one closed form's times: int64, aligned, not before arrival + work (alone)."""
    done = np.asarray(done)
    if done.dtype != np.int64:
        raise AccessCheckError(f"{name}: {what} must return int64 ns, got {done.dtype}")
    if done.shape != arrive.shape:
        raise AccessCheckError(
            f"{name}: {what} must return one time per message, shape {arrive.shape}, got"
            f" {done.shape}"
        )
    early = np.flatnonzero(done < arrive + work)
    if early.size:
        i = int(early[0])
        kind = "before it arrived" if done[i] < arrive[i] else "faster than the channel alone"
        raise AccessCheckError(
            f"{name}: {what}: message {i} is through {kind} (arrives at {int(arrive[i])} ns with"
            f" {int(work[i])} ns of work alone, through at {int(done[i])} ns)"
        )


def _check_closed_forms(name: str, kind: str, radio: dict, seed: int) -> int:
    """Call the scheme's closed forms on a small exchange in two cells; returns the messages."""
    cfg = RadioConfig(**radio)
    m = 12
    rng = np.random.default_rng(seed)
    distance = np.linspace(50.0, 400.0, m)
    up, down = (build_link(cfg, d, distance, rng) for d in ("up", "down"))
    cells = Cells(cfg, np.arange(m) % 2, up, down)
    dev = np.arange(m)
    sizes = np.asarray(rng.integers(1_000, 60_000, m), dtype=np.int64)
    arrive = np.asarray(rng.permutation(m) * 1_000_003, dtype=np.int64)  # distinct instants
    if cells.joint:
        down_work = cells.medium_work_ns(sizes, down.airtime_ns(dev, sizes))
        up_work = cells.medium_work_ns(sizes, up.airtime_ns(dev, sizes))
        offset = np.full(m, 2_000_000, dtype=np.int64)
        sends = np.arange(m) % 3 != 0
        d, u = cells.joint_ns(dev, arrive, down_work, offset, up_work, sends)
        _contract(name, "joint_ns's downlinks", d, arrive, down_work)
        u = np.asarray(u)
        _contract(
            name,
            "joint_ns's uplinks",
            np.where(sends, u, d),
            d,
            np.where(sends, offset + up_work, 0),
        )
        if (u[~sends] != -1).any():
            raise AccessCheckError(f"{name}: joint_ns must give -1 to a device that sends nothing")
        return m
    for direction, link in (("up", up), ("down", down)):
        t = link.send(dev, sizes, np.random.default_rng(seed))
        work = t.attempts * t.airtime_ns
        done = cells.through_ns(direction, dev, sizes, arrive, t, np.random.default_rng(seed))
        _contract(name, f"through_ns ({direction})", done, arrive, work)
        again = cells.through_ns(direction, dev, sizes, arrive, t, np.random.default_rng(seed))
        if not np.array_equal(done, again):
            raise AccessCheckError(
                f"{name}: through_ns is not deterministic: the same messages and seed gave"
                " other times (draw randomness from the rng it is given only)"
            )
        if not cells.scheme.draws:
            order = np.random.default_rng(seed + 1).permutation(m)
            shuffled = cells.through_ns(
                direction, dev[order], sizes[order], arrive[order], t.take(order), None
            )
            if not np.array_equal(shuffled, done[order]):
                raise AccessCheckError(
                    f"{name}: through_ns's times are not aligned with the messages: the same"
                    " messages given in another order got other times"
                )
    return m


def _access_problem(kind: str, radio: dict, fidelity: str, seed: int, agents: int) -> dict:
    """Return the small scenario the check runs: FedAvg on ridge, two cells, a lossy link."""
    return {
        "seed": seed,
        "data": {"source": "synthetic", "samples": 20 * agents, "features": 3},
        "model": {"kind": "ridge", "l2": 0.1},
        "agents": {"count": agents},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 3, "exact_vcg": False},
        "network": {
            "fidelity": fidelity,
            "radio": {**radio, "loss": "bernoulli", "loss_prob": 0.2},
            "topology": {"access_points": 2},
            "compute": {"seconds": 0.01},
        },
        "output": {"local_baseline": False},
    }


def check_access(scheme, *, agents: int = 6, seed: int = 0) -> dict:
    """Check an access scheme (a registered name, or an :class:`AccessScheme` subclass).

    Calls its closed forms on a small exchange in two cells and checks that
    their times are int64, one per message and aligned with the messages
    (giving them in another order permutes the times, for a scheme that
    draws nothing), never before a message's arrival nor faster than its
    work alone, and deterministic; then runs a small FedAvg scenario
    (``agents`` agents in two cells, a lossy link) in the ``events``
    fidelity and, when the scheme is ``batched``, in ``batched``, which must
    give the same output, bit for bit. Returns a report ``{"access", "joint",
    "batched", "messages", "sim_time_s"}`` (messages given to the closed
    forms; the events run's simulated seconds). Raises
    :class:`AccessCheckError` at the first broken rule.
    """
    if isinstance(scheme, str):
        if scheme not in ACCESS_SCHEMES:
            raise AccessCheckError(f"no access scheme is registered as {scheme!r}")
        name, cls = scheme, ACCESS_SCHEMES[scheme]
    elif isinstance(scheme, type):
        name, cls = scheme.__name__, scheme
    else:
        raise AccessCheckError(f"expected an access scheme name or class, got {scheme!r}")
    if not (isinstance(cls, type) and issubclass(cls, AccessScheme)):
        raise AccessCheckError(f"{name}: an access scheme must subclass AccessScheme, got {cls!r}")
    kind = name if isinstance(scheme, str) else f"check-access-{next(_names)}"
    if kind not in ACCESS_SCHEMES:
        register_access(kind, cls)
    try:
        radio = _access_radio(kind)
        messages = _check_closed_forms(name, kind, radio, seed)
        fidelities = ("events", "batched") if cls.batched else ("events",)
        outputs = []
        for fidelity in fidelities:
            out = simulate.run(
                scenario.from_dict(_access_problem(kind, radio, fidelity, seed, agents))
            )
            out["scenario"]["network"]["fidelity"] = out["network"]["fidelity"] = "(either)"
            outputs.append(out)
    finally:
        if kind != name or not isinstance(scheme, str):
            ACCESS_SCHEMES.pop(kind, None)
    if len(outputs) == 2 and outputs[0] != outputs[1]:
        differ = sorted(k for k in outputs[0] if outputs[0][k] != outputs[1].get(k))
        raise AccessCheckError(
            f"{name}: the events and batched fidelities give different results (in {differ});"
            " the closed forms must depend only on the messages they are given"
        )
    return {
        "access": name,
        "joint": cls.joint,
        "batched": cls.batched,
        "messages": messages,
        "sim_time_s": outputs[0]["sim_time_s"]["total"],
    }
