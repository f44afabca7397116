"""One validation on every path: a bad scenario is refused with the same key and text however built.

Each case is one invalid scenario written five ways: typed objects passed to
``edgesim.run``, a dict to ``edgesim.load_scenario``, a TOML file, ``--set``
overrides on ``edgesim run`` (exit 2), and a point of a ``[sweep]`` table.
The TOML path may add the line, ``--set`` its origin, a sweep point its
``[sweep]`` line; the key and the message are the same on all five.
"""

from __future__ import annotations

import tomllib

import pytest

import edgesim
from edgesim.agents import StrategyConfig
from edgesim.cli import main
from edgesim.errors import ScenarioErrors
from edgesim.mechanisms.base import MechanismConfig
from edgesim.network.availability import AvailabilityConfig
from edgesim.network.config import NetworkConfig
from edgesim.network.radio import RadioConfig
from edgesim.scenario import AgentsConfig, Scenario
from edgesim.scenario.keys import set_dotted


def _wifi_churn():
    return Scenario(
        network=NetworkConfig(
            radio=RadioConfig(access="wifi"), availability=AvailabilityConfig(model="markov")
        )
    )


def _clusters_above_k():
    return Scenario(
        agents=AgentsConfig(count=3), mechanism=MechanismConfig(kind="dp-ffl", clusters=5)
    )


def _snr_loss_on_a_fixed_link():
    return Scenario(network=NetworkConfig(radio=RadioConfig(model="fixed", loss="snr")))


def _gamma_on_a_noisy_agent():
    return Scenario(
        agents=AgentsConfig(count=3, strategy=[StrategyConfig(agent=1, kind="noisy", gamma=2.0)])
    )


#: (typed scenario, the same as ``--set`` items, the key refused, words its message holds).
CASES = {
    "wifi-churn": (
        _wifi_churn,
        ['network.radio.access="wifi"', 'network.availability.model="markov"'],
        "network.availability.model",
        "churn",
    ),
    "clusters-above-K": (
        _clusters_above_k,
        ["agents.count=3", 'mechanism.kind="dp-ffl"', "mechanism.clusters=5"],
        "mechanism.clusters",
        "must be <= agents.count = 3, got 5",
    ),
    "snr-loss-fixed-link": (
        _snr_loss_on_a_fixed_link,
        ['network.radio.model="fixed"', 'network.radio.loss="snr"'],
        "network.radio.loss",
        "needs model = 'shannon'",
    ),
    "gamma-on-noisy": (
        _gamma_on_a_noisy_agent,
        ["agents.count=3", 'agents.strategy=[{agent = 1, kind = "noisy", gamma = 2.0}]'],
        "agents.strategy[0].gamma",
        "only used by kind = 'amplify', not by kind = 'noisy'",
    ),
}


def _as_dict(items: list[str]) -> dict:
    raw: dict = {}
    for item in items:
        key, _, value = item.partition("=")
        set_dotted(raw, key, tomllib.loads(f"v = {value}")["v"])
    return raw


def _only(errs: ScenarioErrors):
    assert len(errs.errors) == 1, [str(e) for e in errs.errors]
    return errs.errors[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_bad_scenario_is_refused_alike_on_every_path(case, tmp_path, capsys):
    typed, items, key, words = CASES[case]

    with pytest.raises(ScenarioErrors) as typed_err:
        edgesim.run(typed())
    e = _only(typed_err.value)
    assert e.key == key and words in e.message
    expected = (e.key, e.message)
    assert str(e) == f"{key}: {e.message}"

    with pytest.raises(ScenarioErrors) as dict_err:
        edgesim.load_scenario(_as_dict(items))
    e = _only(dict_err.value)
    assert (e.key, e.message) == expected and str(e) == f"{key}: {e.message}"

    path = tmp_path / "bad.toml"
    path.write_text("".join(f"{item.replace('=', ' = ', 1)}\n" for item in items))
    with pytest.raises(ScenarioErrors) as toml_err:
        edgesim.load_scenario(path)
    e = _only(toml_err.value)
    assert (e.key, e.message) == expected and e.line is not None
    assert str(e) == f"{key} (line {e.line}): {e.message}"

    base = tmp_path / "base.toml"
    base.write_text("seed = 0\n")
    capsys.readouterr()
    args = ["run", str(base), "--quiet", *(a for item in items for a in ("--set", item))]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"edgesim: error: {key} (from --set): {expected[1]}"]

    # a sweep point: the last key swept over one value, the others set in the file
    *fixed, last = items
    swept_key, _, value = last.partition("=")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        "".join(f"{item.replace('=', ' = ', 1)}\n" for item in fixed)
        + f'[sweep]\n"{swept_key}" = [{value}]\n'
    )
    with pytest.raises(ScenarioErrors) as sweep_err:
        edgesim.load_sweep(sweep)
    e = _only(sweep_err.value)
    assert (e.key, e.message) == expected
    assert str(e).startswith(f"{key} (") and str(e).endswith(f"): {expected[1]}")


def test_a_valid_typed_scenario_runs_as_its_loaded_twin():
    typed = Scenario(
        agents=AgentsConfig(count=3, strategy=[StrategyConfig(agent=1, kind="amplify", gamma=2.0)]),
        mechanism=MechanismConfig(kind="fedavg", phase1_rounds=5),
    )
    loaded = edgesim.load_scenario(
        {
            "agents": {"count": 3, "strategy": [{"agent": 1, "kind": "amplify", "gamma": 2.0}]},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 5},
        }
    )
    assert typed == loaded
    assert edgesim.run(typed).to_json() == edgesim.run(loaded).to_json()


def test_building_the_network_trusts_the_validated_scenario(monkeypatch):
    """Network() looks its parts up and builds them; it never re-runs a table's checks."""
    import numpy as np

    from edgesim import config
    from edgesim.network.build import Network
    from edgesim.network.compute import ComputeConfig

    cfg = edgesim.load_scenario({"network": {"fidelity": "events"}}).network

    def refuse(*args, **kwargs):
        raise AssertionError("a check ran while building the network")

    monkeypatch.setattr(RadioConfig, "cross_check", refuse)
    monkeypatch.setattr(ComputeConfig, "cross_check", refuse)
    monkeypatch.setattr(config, "field_errors", refuse)
    net = Network(cfg, np.full(4, 10), np.random.SeedSequence(0))
    assert net.uplink is not None and net.downlink is not None and net.compute is not None
