"""Options declared by the part that reads them: a plugin mechanism's and a strategy's own keys.

A mechanism registered with ``options=`` gets a ``[mechanism.<name>]``
sub-table, validated like every key (range, "did you mean", only read with
its own kind); a strategy's options are keys of its ``[[agents.strategy]]``
table. The echoed scenario (the run's JSON) writes the same layout and loads
back; deprecated flat keys move into the sub-table with a FutureWarning.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import pytest

import edgesim
import edgesim.scenario
from edgesim.agents import STRATEGIES, Amplify, AmplifyOptions, StrategyConfig, make_strategy
from edgesim.config import field_errors, option, resolved_options
from edgesim.errors import ScenarioErrors
from edgesim.mechanisms import MECHANISMS
from edgesim.mechanisms.base import MechanismConfig
from edgesim.mechanisms.fedavg import fedavg
from edgesim.scenario import AgentsConfig, Scenario, from_dict, load

BASE = """\
seed = 1
[data]
source = "synthetic"
samples = 120
[model]
kind = "ridge"
[agents]
count = 3
[mechanism]
kind = "short-fedavg"
phase1_rounds = 12
"""


@dataclass(frozen=True)
class ShortOptions:
    """short-fedavg's options: run a fraction of the Phase I rounds."""

    fraction: float = option(1.0, "share of phase1_rounds to run", gt=0.0, le=1.0)
    label: str = option("short", "a label", choices=("short", "shorter"))
    flat_aliases = {"short_fraction": "fraction"}


def short_fedavg(ctx):
    """FedAvg over ``fraction`` x phase1_rounds rounds (the fraction read from its own options)."""
    opts = resolved_options(ctx.cfg, "options")
    ctx.cfg = dataclasses.replace(ctx.cfg, phase1_rounds=int(ctx.cfg.phase1_rounds * opts.fraction))
    return (yield from fedavg(ctx))


def other_mechanism(ctx):
    """A second registered mechanism with options (whose sub-table is refused beside another kind)."""
    return (yield from fedavg(ctx))


@dataclass(frozen=True)
class OtherOptions:
    """other-mech's options."""

    depth: int = option(2, "a depth", ge=1)


@dataclass(frozen=True)
class ScaleOptions:
    """scale-report's option."""

    factor: float = option(0.5, "the factor multiplying every gradient report", gt=0.0)


@pytest.fixture(autouse=True)
def registered():
    edgesim.register_mechanism("short-fedavg", short_fedavg, options=ShortOptions)
    edgesim.register_mechanism("other-mech", other_mechanism, options=OtherOptions)
    edgesim.register_strategy(
        "scale-report",
        lambda cfg: Amplify(resolved_options(cfg, "options").factor),
        options=ScaleOptions,
    )
    yield
    for name in ("short-fedavg", "other-mech"):
        MECHANISMS.pop(name)
    STRATEGIES.pop("scale-report")


def _load(tmp_path, text: str):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load(path)


def _errors(tmp_path, text: str) -> list:
    with pytest.raises(ScenarioErrors) as err:
        _load(tmp_path, text)
    return err.value.errors


def test_a_mechanism_reads_its_options_from_its_sub_table(tmp_path):
    sc = _load(tmp_path, BASE + '[mechanism.short-fedavg]\nfraction = 0.25\nlabel = "shorter"\n')
    assert sc.mechanism.options == ShortOptions(fraction=0.25, label="shorter")
    assert edgesim.run(sc)["iterations"]["phase1"] == 3  # 12 x 0.25
    assert edgesim.run(_load(tmp_path, BASE))["iterations"]["phase1"] == 12  # the default 1.0


def test_a_bad_option_value_names_its_key_and_line(tmp_path):
    (e,) = _errors(tmp_path, BASE + "[mechanism.short-fedavg]\nfraction = 1.5\n")
    assert e.key == "mechanism.short-fedavg.fraction"
    assert e.message == "must be in (0, 1], got 1.5" and e.line == 13


def test_an_unknown_option_gets_did_you_mean(tmp_path):
    (e,) = _errors(tmp_path, BASE + "[mechanism.short-fedavg]\nfractoin = 0.5\n")
    assert e.key == "mechanism.short-fedavg.fractoin"
    assert "did you mean 'mechanism.short-fedavg.fraction'?" in e.message


def test_a_sub_table_of_another_part_is_refused(tmp_path):
    (e,) = _errors(tmp_path, BASE + "[mechanism.other-mech]\ndepth = 3\n")
    assert e.key == "mechanism.other-mech"
    assert "only read with kind = 'other-mech', not with kind = 'short-fedavg'" in e.message


def test_a_misspelt_sub_table_gets_did_you_mean(tmp_path):
    (e,) = _errors(tmp_path, BASE + "[mechanism.short-fedav]\nfraction = 0.5\n")
    assert (
        e.key == "mechanism.short-fedav" and "did you mean 'mechanism.short-fedavg'?" in e.message
    )


def test_a_flat_alias_moves_into_the_sub_table_with_a_warning(tmp_path):
    text = BASE.replace("phase1_rounds = 12\n", "phase1_rounds = 12\nshort_fraction = 0.5\n")
    with pytest.warns(
        FutureWarning,
        match=r"mechanism\.short_fraction is deprecated; write"
        r" \[mechanism\.short-fedavg\] fraction",
    ):
        sc = _load(tmp_path, text)
    assert sc.mechanism.options == ShortOptions(fraction=0.5)
    with pytest.warns(FutureWarning):
        (e,) = _errors(tmp_path, text.replace("0.5", "2.0"))
    assert e.key == "mechanism.short_fraction" and e.message == "must be in (0, 1], got 2.0"


def test_the_echoed_scenario_writes_the_sub_table_and_loads_back(tmp_path):
    text = BASE + (
        '[[agents.strategy]]\nagent = 2\nkind = "scale-report"\nfactor = 0.25\n'
        '[[agents.strategy]]\nagent = 0\nkind = "amplify"\ngamma = 3.0\n'
        "[mechanism.short-fedavg]\nfraction = 0.5\n"
    )
    sc = _load(tmp_path, text)
    echo = json.loads(edgesim.run(sc).to_json())["scenario"]
    assert echo["mechanism"]["short-fedavg"] == {"fraction": 0.5, "label": "short"}
    assert "options" not in echo["mechanism"]
    assert echo["agents"]["strategy"] == [
        {"agent": 2, "kind": "scale-report", "factor": 0.25},
        {"agent": 0, "kind": "amplify", "gamma": 3.0, "phases": "all", "problems": "all"},
    ]
    assert from_dict(echo) == sc
    # a built-in mechanism declares no options: no sub-table, and the default echo loads back
    plain = from_dict({})
    assert "ffl" not in plain.to_dict()["mechanism"] and from_dict(plain.to_dict()) == plain


def test_a_strategy_reads_its_inline_options(tmp_path):
    text = BASE + '[[agents.strategy]]\nagent = 1\nkind = "scale-report"\nfactor = 0.25\n'
    sc = _load(tmp_path, text)
    assert make_strategy(sc.agents.strategy[0]).gamma == 0.25
    (e,) = _errors(tmp_path, text.replace("factor = 0.25", "factr = 0.25"))
    assert e.key == "agents.strategy[0].factr" and "did you mean 'agents.strategy[0].factor'?" in (
        e.message
    )
    (e,) = _errors(tmp_path, text.replace("factor = 0.25", "factor = -1"))
    assert (e.key, e.message) == ("agents.strategy[0].factor", "must be > 0, got -1.0")
    (e,) = _errors(tmp_path, text.replace("factor = 0.25", "gamma = 2.0"))
    assert e.key == "agents.strategy[0].gamma"
    assert e.message == "only used by kind = 'amplify', not by kind = 'scale-report'; remove it"


def test_typed_options_are_checked_against_the_chosen_part():
    bad = Scenario(mechanism=MechanismConfig(kind="short-fedavg", options=OtherOptions()))
    (e,) = bad.errors()
    assert e.key == "mechanism.options"
    assert "expected ShortOptions (the options of kind = 'short-fedavg'), got OtherOptions" in (
        e.message
    )
    out_of_range = MechanismConfig(kind="short-fedavg", options=ShortOptions(fraction=0.0))
    (e,) = field_errors(out_of_range, "mechanism")
    assert (e.key, e.message) == ("mechanism.short-fedavg.fraction", "must be in (0, 1], got 0.0")
    assert resolved_options(MechanismConfig(kind="short-fedavg"), "options") == ShortOptions()
    assert resolved_options(MechanismConfig(kind="ffl"), "options") is None


def test_strategy_shortcuts_and_options_agree():
    by_shortcut = StrategyConfig(agent=0, kind="amplify", gamma=2.0)
    by_options = StrategyConfig(agent=0, kind="amplify", options=AmplifyOptions(gamma=2.0))
    assert by_shortcut == by_options and by_options.gamma == 2.0
    assert make_strategy(by_shortcut).gradients(np.ones(2), "phase1", None).tolist() == [2.0, 2.0]
    clash = StrategyConfig(agent=0, kind="amplify", gamma=3.0, options=AmplifyOptions(gamma=2.0))
    sc = Scenario(agents=AgentsConfig(count=2, strategy=[clash]))
    (e,) = sc.errors()
    assert e.key == "agents.strategy[0].gamma" and "contradicts" in e.message


@pytest.mark.parametrize("name", sorted(edgesim.scenario.shipped_scenarios()))
def test_every_shipped_scenario_echo_loads_back(name):
    sc = load(name)
    assert from_dict(sc.to_dict()) == sc
