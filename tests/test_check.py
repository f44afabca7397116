"""check_mechanism: every built-in passes; broken toys fail with a message that says why."""

from __future__ import annotations

import numpy as np
import pytest

import edgesim
from edgesim.check import MechanismCheckError
from edgesim.mechanisms import MECHANISMS
from edgesim.mechanisms.base import Outcome
from edgesim.mechanisms.protocol import Gather
from edgesim.scenario import BUILTIN_MECHANISMS


@pytest.mark.parametrize("name", BUILTIN_MECHANISMS)
def test_every_builtin_mechanism_passes(name):
    report = edgesim.check_mechanism(name)
    assert report["mechanism"] == name and len(report["payments"]) == 4
    assert report["steps"] >= (0 if name in ("local", "vcg") else 20)


def _one_round(ctx):
    r = yield Gather(ctx.w0, ask="gradient")
    return Outcome(ctx.w0 - 0.1 * (ctx.p @ r.values), np.zeros(ctx.K), phase1_rounds=1)


def yields_a_dict(ctx):
    yield {"model": ctx.w0}
    return Outcome(ctx.w0, np.zeros(ctx.K))


def pays_one_agent_too_few(ctx):
    out = yield from _one_round(ctx)
    out.payments = np.zeros(ctx.K - 1)
    return out


_unseeded = np.random.default_rng()


def draws_from_its_own_stream(ctx):
    out = yield from _one_round(ctx)
    out.payments = _unseeded.standard_normal(ctx.K)  # not ctx.rng: not reproducible
    return out


def not_a_generator(ctx):
    return Outcome(ctx.w0, np.zeros(ctx.K))


@pytest.mark.parametrize(
    "toy, words",
    [
        (yields_a_dict, "must be a Gather, got dict"),
        (pays_one_agent_too_few, "one number per agent, shape (4,), got shape (3,)"),
        (draws_from_its_own_stream, "twice with the same seed, Outcome.payments differs"),
        (not_a_generator, "must return a generator"),
    ],
)
def test_broken_mechanisms_fail_with_a_clear_message(toy, words):
    with pytest.raises(MechanismCheckError, match="^" + toy.__name__) as err:
        edgesim.check_mechanism(toy)
    assert words in str(err.value)
    assert not any(k.startswith("check-mechanism") for k in MECHANISMS)  # cleaned up


def test_a_correct_user_mechanism_passes_and_registering_a_taken_name_raises():
    assert edgesim.check_mechanism(_one_round)["steps"] == 1
    with pytest.raises(ValueError, match="'ffl' is already registered; pass replace=True"):
        edgesim.register_mechanism("ffl", _one_round)
    edgesim.register_mechanism("test-one-round", _one_round)
    edgesim.register_mechanism("test-one-round", _one_round)  # the same object: harmless
    try:
        edgesim.register_mechanism("test-one-round", yields_a_dict, replace=True)
        assert MECHANISMS["test-one-round"] is yields_a_dict
    finally:
        del MECHANISMS["test-one-round"]


def test_a_registered_mechanism_is_checked_with_its_own_auto_settings(monkeypatch):
    """dp-ffl runs with its clipping and secure aggregation on, as in a real run."""
    from edgesim.mechanisms.driver import AgentSide

    seen = []
    original = AgentSide.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(self.clip_norm)

    monkeypatch.setattr(AgentSide, "__init__", spy)
    edgesim.check_mechanism("dp-ffl")
    assert seen == [1.0, 1.0, 1.0]
    assert MECHANISMS["dp-ffl"].__name__ == "dp_ffl"  # the original is back in the registry
