"""Network-aware deviations (edgesim.deviations.network_aware): withhold a reply, answer late.

What they select, how a scenario writes them, that a withheld reply and a lost one are the
same to the mechanism, that a late reply is cut under a deadline, and the two effects the
study measures under FFL: withholding the reply to the extra round at w* with T2 = 0, and
reports that change Theorem 1's T2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from edgesim import theory
from edgesim.agents import Population, Strategy
from edgesim.deviations.network_aware import Late, Selection, Withhold
from edgesim.device_view import Request
from edgesim.errors import ScenarioErrors
from edgesim.network.loss import register_loss
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation

T1, T2 = 30, 3
J = 1  # the deviating agent


def scenario(fidelity="none", mechanism=None, network=None, strategy=None, K=4):
    """A small ridge federation (K agents, 50 samples each) running FFL with T1 = 30."""
    return from_dict(
        {
            "seed": 5,
            "data": {"source": "synthetic", "samples": 200, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": K, "strategy": strategy or []},
            "mechanism": {"kind": "ffl", "phase1_rounds": T1, "phase2_rounds": T2}
            | (mechanism or {}),
            "network": {"fidelity": fidelity} | (network or {}),
        }
    )


def request(phase="phase2", round_=4, problem=2, own=(False, False, False), seed=0):
    """A request to three agents (rows 0, 1, 3), answering ``problem``."""
    return Request(
        phase=phase,
        round=round_,
        problem=problem,
        ask="gradient",
        model=None,
        reference=None,
        agents=np.array([0, 1, 3]),
        rng=np.random.default_rng(seed),
        own_problem=np.array(own),
    )


#: Withholds nothing, but is a strategy: the run's reports take the same code path as a
#: deviating run's (an all-truthful ridge run sums Phase I from the data's moments, equal to
#: the reports' sum only to rounding), so comparisons can be exact.
NOTHING = Withhold(Selection(probability=0.0))

# ----------------------------------------------------------------------------- selection


def test_selectors_pick_phases_rounds_and_problems():
    every = Selection()
    assert every.rows(request()).tolist() == [True, True, True]
    assert Selection(phases="phase1").rows(request()) is None
    assert Selection(phases="phase2").rows(request()).all()
    # rounds: inclusive at both ends, -1 open
    assert Selection(round_min=4, round_max=4).rows(request(round_=4)).all()
    assert Selection(round_min=5).rows(request(round_=4)) is None
    assert Selection(round_max=3).rows(request(round_=4)) is None
    assert Selection(round_max=3).rows(request(round_=-1)).all()  # unnumbered: only lo open
    assert Selection(round_min=0).rows(request(round_=-1)) is None
    # problems: 'own' are the rows the problem prices (DP-FFL's), 'others' the rest
    own = (False, True, False)
    assert Selection(problems="own").rows(request(own=own)).tolist() == [False, True, False]
    assert Selection(problems="others").rows(request(own=own)).tolist() == [True, False, True]
    assert Selection(problems="own").rows(request()) is None  # FFL: never in its own
    assert Selection(problems="others").rows(request("phase1", problem=-1)) is None


def test_probability_draws_one_uniform_per_row_from_the_request_stream():
    sel = Selection(probability=0.3)
    rows = [sel.rows(request(seed=s)) for s in range(400)]
    masks = np.array([np.zeros(3, bool) if r is None else r for r in rows])
    expected = np.array([np.random.default_rng(s).random(3) < 0.3 for s in range(400)])
    np.testing.assert_array_equal(masks, expected)  # the same draws, in row order
    # about 30% of 1200 rows: within 4 binomial standard deviations (15.9)
    assert abs(masks.sum() - 360) < 4 * np.sqrt(1200 * 0.3 * 0.7)
    # probability 0 and 1 draw nothing: the stream is untouched
    req = request(seed=7)
    assert (
        Selection(probability=1.0).rows(req).all() and Selection(probability=0.0).rows(req) is None
    )
    assert req.rng.random() == np.random.default_rng(7).random()


def test_late_returns_its_delay_on_selected_rows_only():
    late = Late(0.25, Selection(problems="others"))
    np.testing.assert_array_equal(late.delay_s(request(own=(True, False, False))), [0, 0.25, 0.25])
    assert late.delay_s(request("phase1", problem=-1)) is None
    assert Late(0.0).delay_s(request()) is None


# ----------------------------------------------------------------------------- scenarios


def test_a_scenario_writes_them_inline_and_checks_each_key():
    sc = scenario(
        "batched",
        strategy=[{"agent": 1, "kind": "late", "delay_s": 0.5, "phases": "phase2", "round_min": 2}],
    )
    built = Simulation(sc).population.strategy(1)
    assert built == Late(0.5, Selection(phases="phase2", round_min=2))
    assert built.describe() == "late(0.5s,phase2,r2-)"
    w = Simulation(scenario(strategy=[{"agent": 2, "kind": "withhold", "probability": 0.5}]))
    assert w.population.strategy(2) == Withhold(Selection(probability=0.5))

    def error(strategy, fidelity="none"):
        with pytest.raises(ScenarioErrors) as info:
            scenario(fidelity, strategy=[{"agent": 1} | strategy])
        return str(info.value)

    assert error({"kind": "withhold", "probability": 1.5}).startswith(
        "agents.strategy[0].probability: must be in [0, 1], got 1.5"
    )
    assert error({"kind": "late", "delay_s": -1.0}, "events").startswith(
        "agents.strategy[0].delay_s: must be >= 0"
    )
    assert error({"kind": "withhold", "phases": "phase3"}).startswith("agents.strategy[0].phases:")
    assert error({"kind": "withhold", "problems": "mine"}).startswith(
        "agents.strategy[0].problems:"
    )
    assert error({"kind": "withhold", "round_min": -2}).startswith("agents.strategy[0].round_min:")
    assert error({"kind": "withhold", "round_min": 5, "round_max": 3}) == (
        "agents.strategy[0].round_max: must be >= round_min = 5 (or -1: open), got 3"
    )
    # late needs simulated time
    assert error({"kind": "late"}).startswith(
        "agents.strategy[0].kind: 'late' holds replies back in simulated time"
    )
    for fidelity in ("batched", "events"):
        scenario(fidelity, strategy=[{"agent": 1, "kind": "late"}])  # accepted


def test_a_bad_key_exits_2_on_the_command_line(tmp_path, capsys):
    from edgesim.cli import main

    path = tmp_path / "late.toml"
    path.write_text(
        '[agents]\ncount = 4\n[[agents.strategy]]\nagent = 1\nkind = "late"\ndelay_s = 0.5\n'
    )
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "agents.strategy[0].kind" in err[0] and "'batched'" in err[0]


# ------------------------------------------------- a withheld reply is a lost one, to the mechanism


@dataclass(frozen=True)
class LoggedWithhold(Withhold):
    """``withhold``, noting each decision of its one agent in :data:`DECISIONS` (in order)."""

    def withholds(self, request):
        mask = super().withholds(request)
        assert request.agents.tolist() == [J]
        DECISIONS.append((request.phase, mask is not None and bool(mask[0])))
        return mask


DECISIONS: list[tuple[str, bool]] = []  # (phase, withheld) of each request J answered


class ScriptedUplinkLoss:
    """Loses agent J's uplink transmissions whose ordinal (its replies counted from 0) is in
    ``drop``; every other transmission, and every downlink one, gets through. Draws nothing."""

    mean_loss = 0.0
    drop: frozenset = frozenset()
    made: list = []  # the links built, in order: the network builds the uplink first

    def __init__(self, uplink: bool):
        self.uplink = uplink
        self.seen = 0

    def lost(self, endpoints, rng):
        out = np.zeros(len(endpoints), dtype=bool)
        if not self.uplink:
            return out
        for i in np.flatnonzero(np.asarray(endpoints) == J):
            out[i] = self.seen in self.drop
            self.seen += 1
        return out


def _scripted(cfg, n, mean_snr, rng):
    model = ScriptedUplinkLoss(uplink=len(ScriptedUplinkLoss.made) % 2 == 0)
    ScriptedUplinkLoss.made.append(model)
    return model


register_loss("scripted-uplink-test", _scripted, replace=True)


@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_a_withheld_reply_and_a_lost_one_are_the_same_to_the_mechanism(fidelity):
    """Acceptance (issue 29): model, payments, rounds and missing sets equal those of a run whose
    loss model drops exactly the withheld replies; only the network's own counters differ."""
    radio = {"radio": {"loss": "scripted-uplink-test", "arq_max_retries": 0}}
    sim = Simulation(scenario(fidelity, network=radio))
    DECISIONS.clear()
    ScriptedUplinkLoss.made.clear()
    ScriptedUplinkLoss.drop = frozenset()  # loses nothing
    withheld = sim.run_mechanism(
        Population(4, {J: LoggedWithhold(Selection(probability=0.5, round_min=2))})
    )
    decisions = [w for _, w in DECISIONS]
    n = sum(decisions)
    assert 10 < n < len(decisions) - 10  # a real mix, in both phases
    assert {phase for phase, w in DECISIONS if w} == {"phase1", "phase2"}
    ScriptedUplinkLoss.drop = frozenset(np.flatnonzero(decisions).tolist())
    ScriptedUplinkLoss.made.clear()
    lost = sim.run_mechanism(Population(4, {J: NOTHING}))
    up, down = ScriptedUplinkLoss.made
    assert up.seen == len(decisions) and down.seen == 0  # one uplink per request J answered
    a, b = withheld.outcome, lost.outcome
    np.testing.assert_array_equal(a.model, b.model)
    np.testing.assert_array_equal(a.payments, b.payments)
    assert a.phase1_rounds == b.phase1_rounds
    np.testing.assert_array_equal(a.phase2_rounds, b.phase2_rounds)
    assert withheld.counters.rounds == lost.counters.rounds
    ta, tb = withheld.network.trace, lost.network.trace
    for column in ("phase", "round", "problem", "participants", "replies"):
        assert ta.rows[column] == tb.rows[column], column  # the same exchanges, replies used
    # the missing agent is J alone, in the same exchanges: J's reply is lost where withheld
    pa, pb = ta.per_agent(), tb.per_agent()
    assert pa["lost"].tolist() == [0, 0, 0, 0] and pb["lost"].tolist() == [0, n, 0, 0]
    missing = np.asarray(ta.rows["participants"]) - np.asarray(ta.rows["replies"])
    assert missing.sum() == n and missing.max() == 1
    # the network's own counters: a withheld reply is never transmitted, a lost one is
    assert lost.counters.transmissions_up == withheld.counters.transmissions_up + n
    assert lost.counters.messages_up == withheld.counters.messages_up + n
    assert lost.counters.dropped == withheld.counters.dropped + n
    assert pb["transmissions"][J] == pa["transmissions"][J] + n
    assert pb["bytes_up"][J] > pa["bytes_up"][J]


def test_withholding_is_the_same_in_memory_batched_and_events():
    """Determinism, and events = batched (= in memory) for a strategy that delays nothing."""
    strategy = [{"agent": J, "kind": "withhold", "probability": 0.4, "problems": "others"}]
    runs = [Simulation(scenario(f, strategy=strategy)).run_mechanism() for f in FIDELITIES]
    runs.append(Simulation(scenario("events", strategy=strategy)).run_mechanism())  # again
    for run in runs[1:]:
        np.testing.assert_array_equal(run.outcome.model, runs[0].outcome.model)
        np.testing.assert_array_equal(run.outcome.payments, runs[0].outcome.payments)
        np.testing.assert_array_equal(run.outcome.phase2_rounds, runs[0].outcome.phase2_rounds)
        assert run.counters.messages_up == runs[0].counters.messages_up
    nothing = [{"agent": J, "kind": "withhold", "probability": 0.0}]
    truthful = Simulation(scenario(strategy=nothing)).run_mechanism().outcome
    np.testing.assert_array_equal(truthful.model, runs[0].outcome.model)  # Phase I untouched
    assert (truthful.payments != runs[0].outcome.payments).sum() == 3  # the others' problems


FIDELITIES = ("none", "batched", "events")

# ----------------------------------------------------------------------------- late


def test_a_late_reply_is_cut_under_a_deadline_as_if_withheld():
    """Under a 1 s deadline, a Phase II reply held back 2 s is cut: to the mechanism the run is
    the one where those replies are withheld; without the deadline nothing is missing."""
    deadline = {"round_policy": "deadline", "deadline_s": 1.0}
    sim = Simulation(scenario("batched", network=deadline))
    late = sim.run_mechanism(Population(4, {J: Late(2.0, Selection(phases="phase2"))}))
    held = sim.run_mechanism(Population(4, {J: Withhold(Selection(phases="phase2"))}))
    np.testing.assert_array_equal(late.outcome.model, held.outcome.model)
    np.testing.assert_array_equal(late.outcome.payments, held.outcome.payments)
    np.testing.assert_array_equal(late.outcome.phase2_rounds, held.outcome.phase2_rounds)
    cut = late.network.trace.per_agent()["cut"]
    asked = sum(late.outcome.phase2_rounds) - late.outcome.phase2_rounds[J]  # J's requests
    assert cut.tolist() == [0, asked, 0, 0]
    assert held.network.trace.per_agent()["cut"].tolist() == [0, 0, 0, 0]
    # every Phase II round J is asked in waits out the deadline (it closes at 1 s)
    phase = np.asarray(late.network.trace.rows["phase"])
    length = np.subtract(late.network.trace.rows["end_s"], late.network.trace.rows["start_s"])
    asks_j = phase == "phase2"
    asks_j &= np.asarray(late.network.trace.rows["problem"]) != J
    np.testing.assert_allclose(length[asks_j], 1.0, rtol=0, atol=1e-9)
    assert length[~asks_j].max() < 0.1
    # wait-all: the late replies arrive, the mechanism's run is the truthful one
    waited = Simulation(scenario("batched")).run_mechanism(
        Population(4, {J: Late(2.0, Selection(phases="phase2"))})
    )
    truthful = Simulation(scenario("batched")).run_mechanism(Population(4, {J: NOTHING}))
    np.testing.assert_array_equal(waited.outcome.payments, truthful.outcome.payments)
    extra = waited.network.time_by_phase()["phase2"] - truthful.network.time_by_phase()["phase2"]
    assert extra >= 2.0 * asked - 1e-6


# ----------------------------------------------------------------------------- the two effects


def test_withholding_the_reply_at_w_star_with_t2_zero_zeroes_every_payment():
    """Issue 29's first effect: with T2 = 0, each problem runs only while its stopping rule fails
    at w*; a missing reply in the extra round at w* (Phase I's round T1) makes that round
    incomplete, the rule cannot be judged and counts as met: every problem is marked converged,
    no Phase II round runs, every payment is 0. Phase I is untouched, so the withholder's
    overall loss falls by exactly its truthful payment."""
    sim = Simulation(scenario(mechanism={"phase2_rounds": 0}))
    truthful = sim.run_mechanism(Population(4, {J: NOTHING}))
    at_w_star = Withhold(Selection(phases="phase1", round_min=T1, round_max=T1))
    run = sim.run_mechanism(Population(4, {J: at_w_star}))
    np.testing.assert_allclose(
        truthful.outcome.payments, [1.426616, 0.112388, 2.078065, 0.111851], rtol=1e-5
    )
    assert truthful.outcome.phase2_rounds.tolist() == [18, 9, 13, 10]
    assert run.outcome.payments.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert run.outcome.phase2_rounds.tolist() == [0, 0, 0, 0]
    assert run.counters.rounds == {"phase1": T1 + 1, "phase2": 0}
    np.testing.assert_array_equal(run.outcome.model, truthful.outcome.model)
    # the messages: T1 + 1 rounds to all 4 agents, one reply (J's at w*) missing; the truthful
    # run's Phase II problems ask the 3 others each round
    assert run.counters.messages_up == 4 * (T1 + 1) - 1
    assert truthful.counters.messages_up == 4 * (T1 + 1) + 3 * 50
    # the withholder gains its whole truthful payment, P_J = 0.1124 (its model is unchanged)
    gain = truthful.outcome.payments[J] - run.outcome.payments[J]
    assert gain == truthful.outcome.payments[J] > 0.11


@dataclass(frozen=True)
class ScaleAtWStar(Strategy):
    """Report ``factor`` times the true gradient at w* (FFL's extra round), truthfully elsewhere."""

    factor: float = 1.0
    kind = "scale-at-w*-test"

    def report(self, request, rows):
        if request.phase == "phase1" and request.round == T1:
            return self.factor * rows
        return rows


def test_reports_at_w_star_set_theorem_1s_t2():
    """Issue 29's second effect: with phase2_rounds = 'theory', T2 is Theorem 1's, computed from
    the largest gradient norm reported at w*; the agent holding it shortens every payment
    problem by reporting less (or withholding), and lengthens them by reporting more."""
    sc = scenario(mechanism={"phase2_rounds": "theory", "phase2_check": False})
    sim = Simulation(sc)
    truthful = sim.run_mechanism(Population(4, {2: NOTHING}))
    w = truthful.outcome.model
    norms = np.linalg.norm(sim.model.agent_grads(w, truthful.design), axis=1)
    assert int(np.argmax(norms)) == 2  # agent 2 reports the largest gradient at w*
    m = sc.mechanism

    def T2_of(L_f):  # Theorem 1's rule on the reported bound (an independent computation)
        return theory.phase2_rounds(4, L_f, m.theory_delta, truthful.mu, truthful.L_g, m.epsilon)

    assert truthful.outcome.info["T2_target"] == T2_of(norms.max()) == 375
    expected = {
        0.0: T2_of(np.delete(norms, 2).max()),
        0.5: T2_of(max(np.delete(norms, 2).max(), 0.5 * norms[2])),
        2.0: T2_of(2.0 * norms[2]),
    }
    assert expected == {0.0: 361, 0.5: 361, 2.0: 412}
    for factor, T2_target in expected.items():
        run = sim.run_mechanism(Population(4, {2: ScaleAtWStar(factor)}))
        np.testing.assert_array_equal(run.outcome.model, w)  # Phase I as is
        assert run.outcome.info["T2_target"] == T2_target
        assert run.outcome.phase2_rounds.tolist() == [T2_target] * 4  # every problem
    # withholding the reply at w* removes the norm as reporting 0 does
    hidden = sim.run_mechanism(
        Population(4, {2: Withhold(Selection(phases="phase1", round_min=T1, round_max=T1))})
    )
    assert hidden.outcome.info["T2_target"] == 361


@pytest.mark.parametrize(
    ("tables", "where"),
    [({"network": {"radio": {"access": "wifi", "model": "fixed"}}}, "on a 'wifi' cell")],
)
@pytest.mark.parametrize("kind", ["withhold", "late"])
def test_unmodelled_network_deviations_are_refused_naming_the_strategy(tables, where, kind):
    raw = {
        "agents": {"count": 4, "strategy": [{"agent": 1, "kind": kind}]},
        "network": {"fidelity": "batched"},
    }
    for table, values in tables.items():
        raw.setdefault(table, {}).update(values)
    with pytest.raises(ScenarioErrors) as caught:
        from_dict(raw)
    (e,) = caught.value.errors
    assert e.key == "agents.strategy[0].kind" and where in e.message
    raw["network"]["fidelity"] = "none"  # in memory both are modelled (late: no time at all)
    if kind == "withhold":
        from_dict(raw)


@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_a_withheld_masked_input_is_a_dropout_of_the_secure_aggregation(fidelity):
    def run(fid: str, probability: float):
        sc = from_dict(
            {
                "seed": 6,
                "data": {"source": "synthetic", "samples": 160, "features": 3},
                "model": {"kind": "ridge", "l2": 0.1},
                "agents": {
                    "count": 5,
                    "strategy": [{"agent": 2, "kind": "withhold", "probability": probability}],
                },
                "mechanism": {"kind": "dp-ffl", "phase1_rounds": 20, "phase2_rounds": 2},
                "network": {"fidelity": fid},
            }
        )
        return Simulation(sc).run_mechanism()

    # in memory the server sums the others' reports; over the network agent 2's masked input
    # never arrives and the session recovers its masks from the others' shares: same sum
    net, memory = run(fidelity, 0.5), run("none", 0.5)
    np.testing.assert_array_equal(net.outcome.model, memory.outcome.model)
    np.testing.assert_array_equal(net.outcome.payments, memory.outcome.payments)
    truthful = run(fidelity, 0.0)
    assert not np.array_equal(net.outcome.model, truthful.outcome.model)
    # agent 2 sends fewer messages: some of its masked inputs were withheld
    sent = net.network.trace.agent_messages_up
    assert sent[2] < truthful.network.trace.agent_messages_up[2]
    assert sent[1] == truthful.network.trace.agent_messages_up[1]
