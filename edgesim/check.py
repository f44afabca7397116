"""A conformance check for mechanisms, as Gymnasium's ``check_env`` is for environments.

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

from edgesim import scenario
from edgesim.mechanisms.base import MECHANISMS, Outcome, make_mechanism, register_mechanism
from edgesim.mechanisms.protocol import Gather
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
    register_mechanism(kind, _checked(name, fn), replace=True)
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
