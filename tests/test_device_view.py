"""What a strategy sees (edgesim.device_view) and what it may do: report, withhold, delay."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from edgesim.agents import Population, Strategy
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation

T1, T2 = 30, 3


def scenario(fidelity: str = "none", mechanism: str = "ffl", K: int = 4):
    """A small ridge federation; FFL with fixed rounds; a lossless network when simulated."""
    return from_dict(
        {
            "seed": 5,
            "data": {"source": "synthetic", "samples": 200, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": K},
            "mechanism": {"kind": mechanism, "phase1_rounds": T1, "phase2_rounds": T2},
            "network": {"fidelity": fidelity},
        }
    )


class Recorder(Strategy):
    """Truthful, but keeps every request it is handed and checks its own rows against them."""

    kind = "recorder"
    remembers = True

    def __init__(self):
        self.seen = []

    def report(self, request, rows):
        self.seen.append((request, rows.copy()))
        return rows


def test_a_strategy_sees_the_request_the_device_answers():
    rec = Recorder()
    sim = Simulation(scenario())
    sim.run_mechanism(Population(4, {1: rec}))
    phase1 = [r for r, _ in rec.seen if r.phase == "phase1"]
    phase2 = [r for r, _ in rec.seen if r.phase == "phase2"]
    # Phase I: rounds 0..T1-1, then FFL's extra round at w* = w[T1]
    assert [r.round for r in phase1] == [*range(T1), T1]
    assert all(r.ask == "gradient" and r.problem == -1 for r in phase1)
    assert np.array_equal(phase1[0].model, np.zeros_like(phase1[0].model))  # w[0] = 0
    # Phase II: agent 1 answers the other agents' problems, never its own (Alg. 1, line 10)
    assert sorted({r.problem for r in phase2}) == [0, 2, 3]
    assert not any(r.own_problem.any() for r in phase2)
    for k in (0, 2, 3):  # rounds 1, 2, ... of each problem's own descent (T2 and more)
        rounds = [r.round for r in phase2 if r.problem == k]
        assert rounds == list(range(1, len(rounds) + 1)) and len(rounds) >= T2 - 1
    # its own truthful rows, recomputed from its own data alone at the model it was sent
    for req, rows in rec.seen[::7]:
        assert req.agents.tolist() == [1]
        np.testing.assert_allclose(req.own.gradients(req.model), rows, rtol=1e-12, atol=1e-14)
    # its history holds its earlier reports, in order
    last = rec.seen[-1][0]
    assert len(last.history) == len(rec.seen)
    np.testing.assert_array_equal(last.history[3].rows, rec.seen[3][1])


def test_dpffl_loss_changes_say_whose_payment_they_price():
    rec = Recorder()
    sim = Simulation(scenario(mechanism="dp-ffl"))
    sim.run_mechanism(Population(4, {2: rec}))
    changes = [r for r, _ in rec.seen if r.ask == "loss_change"]
    assert changes and all(r.reference is not None for r in changes)
    # every agent reports in every cluster's problem; exactly one problem prices agent 2
    assert sum(bool(r.own_problem[0]) for r in changes) == 1


def test_own_problem_may_be_given_as_a_function_read_once():
    """``Request.own_problem`` given as a function is called on its first read only (a
    strategy that never reads it costs nothing); an array is kept as it is."""
    from edgesim.device_view import Request

    calls = []

    def own():
        calls.append(1)
        return np.array([True, False])

    req = Request("phase2", 1, 0, "gradient", None, None, np.arange(2), None, own)
    assert calls == []
    assert req.own_problem.tolist() == [True, False] and req.own_problem is req.own_problem
    assert calls == [1]
    given = np.array([False, True])
    assert (
        Request("phase1", 0, -1, "loss", None, None, np.arange(2), None, given).own_problem is given
    )
    with pytest.raises(TypeError):
        Request("phase1", 0, -1, "loss", None, None, np.arange(2), None)  # still required


@dataclass(frozen=True)
class WithholdPhase2(Strategy):
    """Withhold every Phase II reply in the problems listed."""

    problems: tuple = ()
    kind = "withhold-test"
    may_withhold = True

    def withholds(self, request):
        if request.phase == "phase2" and request.problem in self.problems:
            return np.ones(request.agents.size, dtype=bool)
        return None


@pytest.mark.parametrize("fidelity", ["none", "batched", "events"])
def test_a_withheld_reply_is_missing_to_the_mechanism(fidelity):
    pop = Population(4, {1: WithholdPhase2((0, 3))})
    sim = Simulation(scenario(fidelity))
    run = sim.run_mechanism(pop)
    truthful = sim.run_mechanism(Population(4, {1: WithholdPhase2(())}))  # withholds nothing
    pay, pay0 = run.outcome.payments, truthful.outcome.payments
    np.testing.assert_array_equal(run.outcome.model, truthful.outcome.model)  # Phase I as is
    assert pay[1] == pay0[1] and pay[2] == pay0[2]  # problems 1, 2 untouched
    assert pay[0] != pay0[0] and pay[3] != pay0[3]  # problems 0, 3 lost agent 1's reports
    # messages: each Phase II round of problem k is one exchange with the 3 others; agent 1
    # sends no reply in problems 0 and 3
    rounds = run.outcome.phase2_rounds
    sent = run.counters.messages_up - (T1 + 1) * 4
    assert sent == 3 * sum(rounds) - rounds[0] - rounds[3]
    # an incomplete round ends the problem's stopping check (it cannot be judged), so the
    # withheld problems stop at T2 where the truthful ones ran on: the study measures this
    assert rounds[0] == rounds[3] == T2 < min(truthful.outcome.phase2_rounds[[0, 3]])
    if fidelity == "none":
        return
    none = Simulation(scenario("none")).run_mechanism(pop)  # same to the mechanism
    np.testing.assert_array_equal(none.outcome.payments, pay)


@dataclass(frozen=True)
class HoldBack(Strategy):
    """Hold every reply back ``seconds``."""

    seconds: float = 0.0
    kind = "hold-test"
    may_delay = True

    def delay_s(self, request):
        return np.full(request.agents.size, self.seconds)


@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_a_held_back_reply_delays_the_round_by_that_much(fidelity):
    sc = from_dict(
        {
            "seed": 5,
            "data": {"source": "synthetic", "samples": 200, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": 4},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 5},
            "network": {"fidelity": fidelity},
        }
    )
    sim = Simulation(sc)
    base = sim.run_mechanism(Population(4)).network.time_by_phase()["phase1"]
    held = sim.run_mechanism(Population(4, {2: HoldBack(0.25)})).network.time_by_phase()
    # wait-all rounds: each of the 5 rounds waits for the held-back reply, which leaves
    # 0.25 s after its device computed it: at least 0.25 s, at most 0.25 s more than before
    assert 5 * 0.25 < held["phase1"] <= base + 5 * 0.25 + 1e-9


@pytest.mark.parametrize("fidelity", ["none", "batched"])
def test_an_all_truthful_run_calls_no_strategy_hook(monkeypatch, fidelity):
    def hook(*args, **kwargs):
        raise AssertionError("a strategy hook was called in an all-truthful run")

    for name in ("report", "withholds", "delay_s", "gradients", "losses"):
        monkeypatch.setattr(Strategy, name, hook)
    monkeypatch.setattr("edgesim.device_view.Request.__init__", hook)
    run = Simulation(scenario(fidelity)).run_mechanism()
    assert run.outcome.phase1_rounds == T1 and np.isfinite(run.outcome.payments).all()
