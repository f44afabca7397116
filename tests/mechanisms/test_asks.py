"""What a step asks for is a type: names look it up, and an ask of one's own runs in every driver."""

from __future__ import annotations

import numpy as np
import pytest

import edgesim
from edgesim import scenario
from edgesim.agents import Amplify, Population
from edgesim.learning.models import Ridge
from edgesim.mechanisms.base import Outcome
from edgesim.mechanisms.driver import AgentSide
from edgesim.mechanisms.protocol import (
    ASKS,
    Ask,
    DataAsk,
    Gather,
    GatherMany,
    GradientAsk,
    LocalModelAsk,
    LossAsk,
    LossChangeAsk,
    as_ask,
    payload_bytes,
)
from edgesim.simulate import Simulation, run
from tests.helpers import make_regression


def test_a_name_a_type_or_an_instance_give_the_same_ask():
    for name, cls in [
        ("gradient", GradientAsk),
        ("loss", LossAsk),
        ("loss_change", LossChangeAsk),
        ("data", DataAsk),
        ("local_model", LocalModelAsk),
    ]:
        assert type(Gather(None, ask=name).ask) is cls
        assert Gather(None, ask=cls).ask == Gather(None, ask=cls()).ask == as_ask(name)
        assert cls.name == name
    assert ASKS == ("gradient", "loss", "loss_change", "data", "local_model")
    assert LossAsk() != LossChangeAsk()  # a subclass is another kind of request
    assert type(Gather(None).ask) is GradientAsk  # the default


@pytest.mark.parametrize("bad", ["gradients", "", 3, Population])
def test_an_unknown_ask_is_refused_naming_the_allowed_ones(bad):
    with pytest.raises(ValueError, match=r"unknown ask .*allowed: \('gradient', 'loss'"):
        Gather(None, ask=bad)


def test_upload_sizes_are_the_documented_protocol():
    """HEADER_BYTES = 64; a row of p float64 is 8 p bytes, a scalar 8, data 8 n_k (d + 1)."""
    assert payload_bytes("gradient", 10) == GradientAsk().payload_bytes(10) == 64 + 80
    assert payload_bytes(LossAsk, 10) == payload_bytes("loss_change", 10**6) == 72
    for whole in (DataAsk, LocalModelAsk):
        with pytest.raises(ValueError, match="no fixed payload size"):
            payload_bytes(whole, 10)
    data = make_regression(K=4, d=3)
    model = Ridge(0.1)
    side = AgentSide(model, model.design(data), Population(4), np.random.default_rng(0))
    agents = np.array([2, 0])
    sizes = DataAsk().upload_bytes(side, agents)
    assert sizes.tolist() == [64 + 8 * int(data.n_k[k]) * 4 for k in (2, 0)]
    assert GradientAsk().upload_bytes(side, agents).tolist() == [64 + 8 * 4] * 2  # d + 1 params
    assert LossAsk().upload_bytes(side, agents).tolist() == [72, 72]
    side.model_payload_bytes = 1000  # network.model_bytes: a larger model on the wire
    assert GradientAsk().upload_bytes(side, agents).tolist() == [1064, 1064]
    assert LossAsk().upload_bytes(side, agents).tolist() == [72, 72]


def test_what_a_strategy_does_depends_on_the_ask():
    """An amplifier scales its gradient reports by gamma and leaves its loss reports alone;
    the truthful values are the model's own (computed here independently)."""
    data = make_regression(K=5, d=3)
    model = Ridge(0.1)
    design = model.design(data)
    side = AgentSide(model, design, Population(5, {1: Amplify(4.0)}), np.random.default_rng(0))
    w = np.linspace(-1.0, 1.0, model.n_params(data.d))
    ref = np.linspace(0.5, -0.5, w.size)
    agents = np.array([4, 1, 0])
    true_grads = model.agent_grads(w, design)[agents]
    got = side.reports(Gather(w, ask=GradientAsk), agents)
    np.testing.assert_allclose(got, true_grads * np.array([[1.0], [4.0], [1.0]]), rtol=1e-14)
    losses = model.agent_losses(w, design)
    np.testing.assert_array_equal(side.reports(Gather(w, ask="loss"), agents), losses[agents])
    change = model.agent_losses(ref, design) - losses
    got = side.reports(Gather(w, ask=LossChangeAsk, reference=ref), agents)
    np.testing.assert_array_equal(got, change[agents])
    with pytest.raises(ValueError, match="no per-agent report for ask 'data'"):
        side.reports(Gather(None, ask=DataAsk), agents)


def test_the_flags_say_what_a_driver_and_a_repair_policy_may_do():
    reports = (GradientAsk(), LossAsk(), LossChangeAsk())
    assert all(a.is_report and a.repairable and a.sends_messages for a in reports)
    assert [a.summable for a in reports] == [True, False, False]
    assert not (DataAsk.is_report or DataAsk.repairable) and DataAsk.sends_messages
    assert not (LocalModelAsk.repairable or LocalModelAsk.sends_messages)
    w = np.zeros(3)
    with pytest.raises(ValueError, match="GatherMany parts ask for reports"):
        GatherMany((Gather(w, ask="loss"), Gather(None, ask=DataAsk)))
    GatherMany((Gather(w, ask="loss"), Gather(w, ask=GradientAsk)))  # reports may share


class GradientNormAsk(Ask):
    """An ask of one's own: each agent reports ||grad F_k(model)||, one float64."""

    name = "gradient_norm"

    def payload_bytes(self, n_params):
        return 64 + 8

    def truthful(self, side, step, agents):
        return np.linalg.norm(side.true_gradients(step.model, agents), axis=1)

    def transform(self, strategy, rows, phase, rng):
        return strategy.losses(rows, phase, rng)


def _pay_the_gradient_norms(ctx):
    w = np.full(ctx.w0.shape, 0.5)
    r = yield Gather(w, ask=GradientNormAsk)
    return Outcome(w, r.values.copy(), phase1_rounds=1)


@pytest.mark.parametrize("fidelity", ["none", "batched", "events"])
def test_an_ask_of_ones_own_runs_in_every_driver(fidelity):
    edgesim.register_mechanism("test-gradient-norms", _pay_the_gradient_norms, replace=True)
    sc = scenario.load(
        None,
        [
            "agents.count=4",
            "data.samples=200",
            "mechanism.kind=test-gradient-norms",
            f"network.fidelity={fidelity}",
            "output.local_baseline=false",
        ],
    )
    result = run(sc)
    sim = Simulation(sc)
    w = np.full(sim.model.n_params(sim.data.d), 0.5)
    expect = np.linalg.norm(sim.model.agent_grads(w, sim.design), axis=1)
    np.testing.assert_allclose(result["payments"], expect, rtol=1e-12)
    com = result["communication"]
    assert com["messages_up"] == 4 and com["bytes_up"] == 4 * 72
