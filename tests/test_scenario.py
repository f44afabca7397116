"""Tests of edgesim.scenario: loading, validation, error reports, --set overrides, reference."""

from __future__ import annotations

import dataclasses

import pytest

from edgesim import scenario as scn
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.scenario import Scenario, from_dict, load, parse_override, reference_rows, set_dotted
from tests.helpers import write

#: The keys docs/scenarios.md fixes (scripts outside the package rely on them).
FIXED_KEYS = [
    "seed",
    "data.source",
    "data.path",
    "data.samples",
    "data.mean_shift",
    "data.partition.kind",
    "data.partition.delta",
    "model.kind",
    "model.l2",
    "model.intercept",
    "agents.count",
    "agents.weights",
    "agents.strategy",
    "mechanism.kind",
    "mechanism.phase1_rounds",
    "mechanism.phase2_rounds",
    "mechanism.epsilon",
    "mechanism.clusters",
    "mechanism.alpha",
    "mechanism.beta",
    "mechanism.calibration",
    "mechanism.payment_rule",
    "mechanism.exact_vcg",
    "network.fidelity",
]
FIXED_STRATEGY_KEYS = ["agent", "kind", "gamma"]

SMALL = """\
seed = 4
[data]
source = "synthetic"
samples = 200
[agents]
count = 4
[mechanism]
kind = "ffl"
phase1_rounds = 50
phase2_rounds = 3
"""


def errors_of(raw: dict) -> list[ScenarioError]:
    with pytest.raises(ScenarioErrors) as info:
        from_dict(raw)
    return info.value.errors


def one_error(raw: dict) -> ScenarioError:
    errs = errors_of(raw)
    assert len(errs) == 1, [str(e) for e in errs]
    return errs[0]


def get(sc, dotted: str):
    node = sc
    for part in dotted.split("."):
        node = getattr(node, part)
    return node


# ---------------------------------------------------------------------------- defaults, keys


def test_defaults_load():
    sc = from_dict({})
    assert isinstance(sc, Scenario)
    assert sc.seed == 0
    assert sc.agents.count == 10
    assert sc.model.intercept is True
    assert sc.mechanism.kind == "ffl"
    assert sc.data.partition.kind == "label-skew"
    assert sc.agents.strategy == []


def test_quickstart_loads():
    sc = load(None)
    assert sc.mechanism.kind == "ffl"
    assert sc.agents.count == 10
    assert sc.agents.strategy[0].kind == "amplify" and sc.agents.strategy[0].gamma == 4.0


def test_scenario_is_frozen():
    sc = from_dict({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.seed = 3  # type: ignore[misc]


@pytest.mark.parametrize("key", FIXED_KEYS)
def test_fixed_key_exists(key):
    get(from_dict({}), key)  # AttributeError if the key is missing
    assert key in {row[0] for row in reference_rows()}


def test_fixed_strategy_keys_exist():
    raw = {"agents": {"count": 3, "strategy": [{"agent": 2, "kind": "amplify", "gamma": 3.5}]}}
    s = from_dict(raw).agents.strategy[0]
    assert (s.agent, s.kind, s.gamma) == (2, "amplify", 3.5)
    keys = {row[0] for row in reference_rows()}
    for k in FIXED_STRATEGY_KEYS:
        assert f"agents.strategy[].{k}" in keys


def test_fixed_key_choices_accepted():
    for kind in ("fedavg", "ffl", "dp-ffl", "local", "vcg"):
        assert from_dict({"mechanism": {"kind": kind}}).mechanism.kind == kind
    for src in ("synthetic", "paper-linear", "npz", "digits", "mnist"):
        assert f"'{src}'" in str(one_error({"data": {"source": 1}}))
    assert from_dict({"mechanism": {"phase2_rounds": "theory"}}).mechanism.phase2_rounds == "theory"
    assert from_dict({"mechanism": {"exact_vcg": False}}).mechanism.exact_vcg is False
    m = from_dict({"mechanism": {"calibration": "accountant", "payment_rule": "paper"}}).mechanism
    assert (m.calibration, m.payment_rule) == ("accountant", "paper")


def test_int_given_for_float_becomes_float():
    sc = from_dict({"model": {"l2": 1}})
    assert sc.model.l2 == 1.0 and isinstance(sc.model.l2, float)


def test_to_dict_is_plain_and_resolved():
    d = from_dict({"agents": {"count": 3}}).to_dict()
    assert d["agents"]["count"] == 3
    assert d["mechanism"]["phase1_rounds"] == 200  # default filled in
    assert d["data"]["partition"]["delta"] == 0.05


# ---------------------------------------------------------------------------- single errors


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ({"agents": {"count": "ten"}}, "agents.count", ["integer", "'ten'"]),
        ({"agents": {"count": 2.5}}, "agents.count", ["integer", "2.5"]),
        ({"agents": {"count": True}}, "agents.count", ["integer", "true"]),
        ({"model": {"l2": "small"}}, "model.l2", ["number"]),
        ({"model": {"intercept": 1}}, "model.intercept", ["true or false"]),
        ({"seed": 1.5}, "seed", ["integer"]),
        ({"data": 3}, "data", ["table"]),
        ({"agents": {"strategy": 3}}, "agents.strategy", ["[[agents.strategy]]"]),
        ({"mechanism": {"phase1_rounds": 2.5}}, "mechanism.phase1_rounds", ["'theory'", "integer"]),
        ({"mechanism": {"exact_vcg": 3}}, "mechanism.exact_vcg", ["true", "false", "'auto'"]),
    ],
)
def test_type_errors(raw, key, words):
    e = one_error(raw)
    assert e.key == key
    for w in words:
        assert w in e.message


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ({"agents": {"count": 0}}, "agents.count", [">= 1", "0"]),
        ({"agents": {"count": -4}}, "agents.count", [">= 1", "-4"]),
        ({"model": {"l2": 0}}, "model.l2", ["> 0"]),
        ({"model": {"l2": -0.5}}, "model.l2", ["> 0", "-0.5"]),
        ({"data": {"partition": {"delta": 1.5}}}, "data.partition.delta", ["[0, 1]", "1.5"]),
        ({"data": {"partition": {"delta": -0.1}}}, "data.partition.delta", ["[0, 1]"]),
        ({"mechanism": {"beta": 1.2}}, "mechanism.beta", ["(0, 1)", "1.2"]),
        ({"mechanism": {"alpha": 0}}, "mechanism.alpha", ["> 0"]),
        ({"mechanism": {"epsilon": float("nan")}}, "mechanism.epsilon", ["finite"]),
        ({"mechanism": {"epsilon": float("inf")}}, "mechanism.epsilon", ["finite"]),
        ({"mechanism": {"phase1_rounds": -1}}, "mechanism.phase1_rounds", [">= 0"]),
        ({"data": {"samples": -5}}, "data.samples", [">= 0"]),
        ({"seed": -1}, "seed", [">= 0"]),
    ],
)
def test_range_errors(raw, key, words):
    e = one_error(raw)
    assert e.key == key
    for w in words:
        assert w in e.message, e.message


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ({"data": {"source": "synthtic"}}, "data.source", ["'synthtic'", "'synthetic'", "'npz'"]),
        ({"data": {"source": "csv"}}, "data.source", ["'csv'", "'paper-linear'", "'mnist'"]),
        ({"mechanism": {"kind": "ffll"}}, "mechanism.kind", ["'ffll'", "'ffl'", "'dp-ffl'"]),
        ({"mechanism": {"kind": "magic"}}, "mechanism.kind", ["'magic'", "'fedavg'", "'vcg'"]),
        ({"mechanism": {"phase1_rounds": "thoery"}}, "mechanism.phase1_rounds", ["'theory'"]),
        ({"mechanism": {"calibration": "tight"}}, "mechanism.calibration", ["'accountant'"]),
        ({"mechanism": {"payment_rule": "riemann"}}, "mechanism.payment_rule", ["'trapezoid'"]),
        ({"model": {"kind": "svm"}}, "model.kind", ["'ridge'", "'logistic'"]),
        ({"agents": {"weights": "size"}}, "agents.weights", ["'equal'", "'samples'"]),
        ({"mechanism": {"exact_vcg": "yes"}}, "mechanism.exact_vcg", ["true", "'auto'"]),
        (
            {"agents": {"count": 3, "strategy": [{"agent": 1, "kind": "amplfy"}]}},
            "agents.strategy[0].kind",
            ["'amplfy'", "did you mean 'amplify'", "'opt-out'"],
        ),
    ],
)
def test_choice_errors(raw, key, words):
    e = one_error(raw)
    assert e.key == key
    for w in words:
        assert w in e.message, e.message


def test_choice_error_suggests_closest():
    e = one_error({"mechanism": {"phase1_rounds": "thoery"}})
    assert "did you mean 'theory'" in e.message


@pytest.mark.parametrize(
    ("raw", "key", "suggestion"),
    [
        ({"agnets": {"count": 3}}, "agnets", "'agents'"),
        ({"mechanism": {"epsiln": 0.1}}, "mechanism.epsiln", "'mechanism.epsilon'"),
        ({"data": {"partition": {"detla": 0.5}}}, "data.partition.detla", "'data.partition.delta'"),
        (
            {"agents": {"count": 3, "strategy": [{"agent": 0, "kind": "amplify", "gama": 2}]}},
            "agents.strategy[0].gama",
            "'agents.strategy[0].gamma'",
        ),
    ],
)
def test_unknown_key_suggests(raw, key, suggestion):
    e = one_error(raw)
    assert e.key == key
    assert "unknown key" in e.message
    assert f"did you mean {suggestion}" in e.message


def test_unknown_key_without_close_match_lists_keys():
    e = one_error({"model": {"zzzzzz": 1}})
    assert e.key == "model.zzzzzz"
    assert "l2" in e.message and "intercept" in e.message


def test_strategy_needs_agent_and_kind():
    errs = errors_of({"agents": {"count": 3, "strategy": [{"gamma": 2.0}]}})
    assert {e.key for e in errs} == {"agents.strategy[0].agent", "agents.strategy[0].kind"}


def test_strategy_parameter_of_another_kind_rejected():
    e = one_error(
        {"agents": {"count": 3, "strategy": [{"agent": 0, "kind": "truthful", "gamma": 2}]}}
    )
    assert e.key == "agents.strategy[0].gamma"
    assert "'amplify'" in e.message


def test_strategy_module_class_import_error_is_one_error():
    raw = {"agents": {"count": 3, "strategy": [{"agent": 0, "kind": "no_such_mod_xyz:Cls"}]}}
    e = one_error(raw)
    assert e.key == "agents.strategy[0].kind"
    assert "no_such_mod_xyz:Cls" in e.message


def test_messages_are_one_line():
    errs = errors_of(
        {
            "agnets": 1,
            "data": {"source": "x", "partition": {"delta": 3}},
            "mechanism": {"kind": "nope", "beta": 2},
        }
    )
    for e in errs:
        assert "\n" not in str(e)
        assert str(e).startswith(e.key)


# ---------------------------------------------------------------------------- several at once


def test_several_errors_reported_in_one_pass():
    raw = {
        "agnets": 3,
        "data": {"source": "synthtic", "partition": {"delta": 1.5}},
        "model": {"l2": -1},
        "agents": {"count": 3, "strategy": [{"agent": 1, "kind": "amplfy"}]},
        "mechanism": {"kind": "nope", "phase1_rounds": "thoery", "beta": 1.2, "epsiln": 1},
    }
    keys = {e.key for e in errors_of(raw)}
    assert keys == {
        "agnets",
        "data.source",
        "data.partition.delta",
        "model.l2",
        "agents.strategy[0].kind",
        "mechanism.kind",
        "mechanism.phase1_rounds",
        "mechanism.beta",
        "mechanism.epsiln",
    }


def test_cross_rules_skip_keys_already_wrong():
    # agents.count is wrong, so "agent 5 >= count" would only compare with a stand-in default
    errs = errors_of({"agents": {"count": 0, "strategy": [{"agent": 5, "kind": "amplify"}]}})
    assert [e.key for e in errs] == ["agents.count"]


def test_file_errors_have_lines(tmp_path):
    p = write(
        tmp_path,
        """\
        # a scenario with mistakes
        seed = 1
        agnets = 3

        [data]
        source = "synthtic"
        partition = { kind = "iid", delta = 1.5 }
        heterogenity = 1

        [model.extra]
        zz = 0

        [agents]
        count = 4

        [[agents.strategy]]
        agent = 0
        kind = "amplify"

        [[agents.strategy]]   # the second entry
        agent = 9
        kind = "amplfy"

        [[agents.strategy]]
        kind = "noisy"

        [mechanism]
        "beta" = 1.2
        epsiln = 0.1
        """,
    )
    with pytest.raises(ScenarioErrors) as info:
        load(p)
    got = {e.key: e.line for e in info.value.errors}
    assert got["agnets"] == 3
    assert got["data.source"] == 6
    assert got["data.partition.delta"] == 7
    assert got["data.heterogenity"] == 8
    assert got["model.extra"] == 10
    assert got["agents.strategy[1].agent"] == 21
    assert got["agents.strategy[1].kind"] == 22
    assert got["agents.strategy[2].agent"] == 24  # missing: the entry's header
    assert got["mechanism.beta"] == 28
    assert got["mechanism.epsiln"] == 29
    msgs = [str(e) for e in info.value.errors]
    assert "agents.strategy[1].kind (line 22): " in "\n".join(msgs)
    lines = [e.line for e in info.value.errors]
    assert lines == sorted(lines)  # reported in file order


def test_file_not_found_and_bad_toml(tmp_path):
    with pytest.raises(ScenarioErrors) as info:
        load(tmp_path / "missing.toml")
    assert info.value.errors[0].key == "scenario" and "not found" in str(info.value)
    p = write(tmp_path, "seed = [\n")
    with pytest.raises(ScenarioErrors) as info:
        load(p)
    (e,) = info.value.errors
    assert e.key == "scenario" and "invalid TOML" in e.message and "\n" not in str(e)
    p = write(tmp_path, "seed = 1\nname = 'x'\nseed = 2\n")
    with pytest.raises(ScenarioErrors) as info:
        load(p)
    assert info.value.errors[0].line == 3
    p = tmp_path / "latin1.toml"
    p.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ScenarioErrors, match="UTF-8"):
        load(p)


# ---------------------------------------------------------------------------- --set


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("agents.count=20", "agents.count", 20),
        ("model.l2=0.5", "model.l2", 0.5),
        ("mechanism.epsilon=1e-4", "mechanism.epsilon", 1e-4),
        ("mechanism.kind=dp-ffl", "mechanism.kind", "dp-ffl"),
        ("data.source=npz", "data.source", "npz"),
        ('name="two words"', "name", "two words"),
        ("model.intercept=false", "model.intercept", False),
        ("data.paper_sizes=[10, 20]", "data.paper_sizes", [10, 20]),
        (" agents.count = 7 ", "agents.count", 7),
        ("data.path=", "data.path", ""),
    ],
)
def test_parse_override(text, key, value):
    k, v = parse_override(text)
    assert k == key
    assert v == value and type(v) is type(value)


@pytest.mark.parametrize("text", ["agents.count", "=3", ""])
def test_parse_override_bad(text):
    with pytest.raises(ScenarioError) as info:
        parse_override(text)
    assert info.value.key == "--set"


def test_set_dotted_creates_tables_and_indexes():
    raw = {"agents": {"count": 3}}
    set_dotted(raw, "data.partition.delta", 0.5)
    set_dotted(raw, "agents.strategy[0].kind", "amplify")
    set_dotted(raw, "agents.strategy[0].agent", 1)
    assert raw == {
        "agents": {"count": 3, "strategy": [{"kind": "amplify", "agent": 1}]},
        "data": {"partition": {"delta": 0.5}},
    }
    with pytest.raises(ScenarioError, match="not a table"):
        set_dotted(raw, "agents.count.x", 1)
    with pytest.raises(ScenarioError, match="entries"):
        set_dotted(raw, "agents.strategy[5].kind", "amplify")


def test_overrides_of_nested_keys(tmp_path):
    p = write(tmp_path, SMALL)
    sc = load(
        p,
        [
            "agents.count=5",
            "data.partition.kind=iid",
            "data.partition.delta=0.7",
            "mechanism.kind=dp-ffl",
            "mechanism.clusters=2",
            "model.intercept=false",
            "agents.strategy[0]={agent = 4, kind = 'amplify', gamma = 2.5}",
        ],
        seed=11,
    )
    assert sc.agents.count == 5
    assert sc.data.partition.kind == "iid" and sc.data.partition.delta == 0.7
    assert sc.data.samples == 200  # untouched keys of the same table stay
    assert sc.mechanism.kind == "dp-ffl" and sc.mechanism.clusters == 2
    assert sc.mechanism.phase1_rounds == 50
    assert sc.model.intercept is False
    assert sc.agents.strategy[0].agent == 4 and sc.agents.strategy[0].gamma == 2.5
    assert sc.seed == 11


def test_override_errors_name_their_origin(tmp_path):
    p = write(tmp_path, SMALL)
    with pytest.raises(ScenarioErrors) as info:
        load(p, ["agents.count=0", "agnets.count=3"], seed=-2)
    msgs = {e.key: str(e) for e in info.value.errors}
    assert set(msgs) == {"agents.count", "agnets", "seed"}
    assert "(from --set)" in msgs["agents.count"] and "line" not in msgs["agents.count"]
    assert "(from --seed)" in msgs["seed"]
    assert "did you mean 'agents'" in msgs["agnets"]


def test_override_malformed_reported_with_others(tmp_path):
    p = write(tmp_path, SMALL)
    with pytest.raises(ScenarioErrors) as info:
        load(p, ["nonsense", "also-bad"])
    assert [e.key for e in info.value.errors] == ["--set", "--set"]


# ---------------------------------------------------------------------------- cross-field rules


def test_clusters_above_count():
    e = one_error({"agents": {"count": 4}, "mechanism": {"kind": "dp-ffl", "clusters": 5}})
    assert e.key == "mechanism.clusters" and "4" in e.message


def test_strategy_agent_out_of_range():
    e = one_error({"agents": {"count": 4, "strategy": [{"agent": 4, "kind": "amplify"}]}})
    assert e.key == "agents.strategy[0].agent"
    assert "< agents.count = 4" in e.message


def test_duplicate_strategy_agent():
    s = [{"agent": 1, "kind": "amplify"}, {"agent": 1, "kind": "opt-out"}]
    e = one_error({"agents": {"count": 3, "strategy": s}})
    assert e.key == "agents.strategy" and "[1]" in e.message


def test_everyone_opting_out_rejected():
    s = [{"agent": k, "kind": "opt-out"} for k in range(2)]
    e = one_error({"agents": {"count": 2, "strategy": s}})
    assert e.key == "agents.strategy" and "opt" in e.message


def test_paper_linear_needs_two_agents():
    e = one_error(
        {"data": {"source": "paper-linear"}, "model": {"kind": "ridge"}, "agents": {"count": 3}}
    )
    assert e.key == "agents.count" and "2" in e.message


def test_paper_linear_needs_ridge():
    e = one_error({"data": {"source": "paper-linear"}, "agents": {"count": 2}})
    assert e.key == "model.kind" and "'ridge'" in e.message
    assert from_dict(
        {"data": {"source": "paper-linear"}, "model": {"kind": "ridge"}, "agents": {"count": 2}}
    )


def test_npz_missing_file_names_data_path(tmp_path):
    e = one_error({"data": {"source": "npz", "path": str(tmp_path / "nope.npz")}})
    assert e.key == "data.path" and "nope.npz" in e.message
    e = one_error({"data": {"source": "npz"}})
    assert e.key == "data.path"


def test_best_response_cross_rules():
    errs = errors_of(
        {
            "agents": {"count": 3},
            "best_response": {"enabled": True, "agent": 3, "gamma_min": 5.0, "gamma_max": 2.0},
        }
    )
    assert {e.key for e in errs} == {"best_response.agent", "best_response.gamma_max"}


def test_too_few_samples_for_agents():
    e = one_error({"data": {"samples": 3}, "agents": {"count": 5}})
    assert e.key == "data.samples"


# ---------------------------------------------------------------------------- reference


def _leaf_keys(cls, prefix=""):
    """Every key a scenario file may hold, a built-in part's options under its sub-table."""
    import typing

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.metadata.get("part_options"):
            for name, part in f.metadata["registry"].items():
                options = getattr(part, "options", None)
                if options is not None and options.__module__.startswith("edgesim."):
                    sub = prefix if f.metadata["inline"] else f"{prefix}{name}."
                    yield from _leaf_keys(options, sub)
        elif f.metadata.get("section"):
            yield from _leaf_keys(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}"


def test_reference_rows_cover_every_leaf_key():
    rows = reference_rows()
    keys = [r[0] for r in rows]
    assert len(keys) == len(set(keys))
    expected = set(_leaf_keys(Scenario))
    expected |= {f"agents.strategy[].{k}" for k in _leaf_keys(scn.StrategyConfig)}
    assert set(keys) == expected
    for key, default, allowed, doc in rows:
        assert doc, f"{key} has no documentation"
        assert isinstance(default, str) and isinstance(allowed, str)
    by_key = {r[0]: r for r in rows}
    assert "dp-ffl" in by_key["mechanism.kind"][2]
    assert by_key["model.intercept"][1] == "true"
    assert by_key["agents.strategy[].agent"][1] == "(required)"
    assert "[0, 1]" in by_key["data.partition.delta"][2]


# ---------------------------------------------------------------------------- include


def test_include_merges_key_by_key_keeping_siblings(tmp_path):
    write(
        tmp_path,
        """\
        seed = 3
        [data]
        source = "synthetic"
        samples = 300
        partition = { kind = "label-skew", delta = 0.4 }
        [agents]
        count = 5
        [[agents.strategy]]
        agent = 1
        kind = "amplify"
        gamma = 2.0
        [mechanism]
        kind = "ffl"
        phase1_rounds = 40
        """,
        "base.toml",
    )
    p = write(
        tmp_path,
        """\
        include = "base.toml"
        [data.partition]
        delta = 0.9
        [mechanism]
        phase2_rounds = 4
        """,
    )
    sc = load(p)
    assert sc.seed == 3 and sc.data.samples == 300 and sc.agents.count == 5
    assert sc.data.partition.kind == "label-skew" and sc.data.partition.delta == 0.9
    assert sc.mechanism.kind == "ffl" and sc.mechanism.phase1_rounds == 40
    assert sc.mechanism.phase2_rounds == 4
    assert sc.agents.strategy[0].gamma == 2.0


def test_include_chain_lists_and_arrays_of_tables_replace(tmp_path):
    (tmp_path / "common").mkdir()
    write(tmp_path, "[agents]\ncount = 6\n[model]\nl2 = 0.3\n", "common/a.toml")
    write(
        tmp_path,
        'include = "a.toml"\n[agents]\ncount = 4\n'
        '[[agents.strategy]]\nagent = 0\nkind = "opt-out"\n'
        '[[agents.strategy]]\nagent = 1\nkind = "amplify"\ngamma = 3.0\n',
        "common/b.toml",
    )
    write(tmp_path, "[model]\nintercept = false\n", "c.toml")
    p = write(
        tmp_path,
        'include = ["common/b.toml", "c.toml"]\n'
        '[[agents.strategy]]\nagent = 2\nkind = "noisy"\nnoise_std = 0.1\n',
    )
    sc = load(p)
    assert sc.agents.count == 4 and sc.model.l2 == 0.3 and sc.model.intercept is False
    assert [(s.agent, s.kind) for s in sc.agents.strategy] == [(2, "noisy")]


def test_include_cycle_and_missing_file_are_reported(tmp_path):
    write(tmp_path, 'include = "b.toml"\nseed = 1\n', "a.toml")
    write(tmp_path, 'seed = 2\ninclude = "a.toml"\n', "b.toml")
    with pytest.raises(ScenarioErrors) as info:
        load(tmp_path / "a.toml")
    (e,) = info.value.errors
    assert e.key == "include" and "cycle: a.toml -> b.toml -> a.toml" in str(e)
    assert "(b.toml line 2)" in str(e)
    p = write(tmp_path, 'include = ["nope.toml", 3]\n', "c.toml")
    with pytest.raises(ScenarioErrors) as info:
        load(p)
    (e,) = info.value.errors
    assert "file names" in str(e) and "(line 1)" in str(e)
    p = write(tmp_path, 'include = "nope.toml"\n', "d.toml")
    with pytest.raises(ScenarioErrors, match="nope.toml: file not found"):
        load(p)


def test_errors_in_an_included_file_name_it_and_its_line(tmp_path):
    write(tmp_path, "[model]\nkind = 'ridge'\nl2 = -1\n[agents]\ncoutn = 3\n", "base.toml")
    p = write(tmp_path, 'include = "base.toml"\nseed = -1\n')
    with pytest.raises(ScenarioErrors) as info:
        load(p)
    got = [str(e) for e in info.value.errors]
    assert got[0].startswith("seed (line 2): ")  # the scenario's own file first
    assert got[1].startswith("model.l2 (base.toml line 3): ")
    assert got[2].startswith(
        "agents.coutn (base.toml line 5): unknown key (did you mean 'agents.count'?)"
    )


def test_quickstart_is_shipped_identical_and_by_name():
    from pathlib import Path

    shipped = scn.shipped_scenarios()
    repo = Path(__file__).parents[1]
    assert (repo / "scenarios" / "quickstart.toml").read_bytes() == scn.QUICKSTART.read_bytes()
    assert {"quickstart", "paper-fig1", "comm-vs-k"} <= set(shipped)
    assert load("paper-fig1").name == "paper-fig1"


def test_round_trip_of_a_resolved_scenario_keeps_its_run_id(tmp_path):
    sc = load(write(tmp_path, SMALL))
    raw = sc.to_dict()
    assert scn.run_id(from_dict(raw)) == scn.run_id(sc)
    assert scn.run_id(load(write(tmp_path, SMALL), ["seed=5"])) != scn.run_id(sc)


def test_mechanism_module_function_kind():
    e = one_error({"mechanism": {"kind": "no_such_mod_xyz:mech"}})
    assert e.key == "mechanism.kind" and "cannot import" in e.message
    e = one_error({"mechanism": {"kind": "math:pi"}})
    assert e.key == "mechanism.kind" and "not a class or function" in e.message
    sc = from_dict({"mechanism": {"kind": "edgesim.mechanisms.fedavg:fedavg"}})
    assert sc.mechanism.kind in scn.MECHANISMS


# ---------------------------------------------------------------------------- fuzzing

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

GOOD = {
    "seed": 2,
    "name": "fuzz",
    "data": {"source": "synthetic", "samples": 200, "partition": {"kind": "iid", "delta": 0.5}},
    "model": {"kind": "ridge", "l2": 0.1, "intercept": True},
    "agents": {"count": 4, "strategy": [{"agent": 1, "kind": "amplify", "gamma": 2.0}]},
    "mechanism": {"kind": "ffl", "phase1_rounds": 30, "clusters": 2, "beta": 0.01},
    "best_response": {"enabled": False, "gamma_max": 8.0},
    "output": {"local_baseline": False},
    "sweep": {"seed": [0, 1], "agents.count": [3, 4]},
}

WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _get_parent(raw, path):
    node = raw
    for p in path[:-1]:
        node = node[p]
    return node


@st.composite
def mutated(draw):
    import copy

    raw = copy.deepcopy(GOOD)
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(raw))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _get_parent(raw, path)
        action = draw(st.sampled_from(["delete", "replace", "unknown", "scale"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["cuont", "zz", "l22", "kind_", "sweep"]))] = draw(WEIRD)
        elif action == "scale" and isinstance(parent[path[-1]], (int, float)):
            parent[path[-1]] = parent[path[-1]] * draw(st.sampled_from([-1, 0, 1000, 10**9]))
        else:
            parent[path[-1]] = draw(WEIRD)
    return raw


def _toml(raw) -> str:
    """A tiny TOML writer for the fuzzer (inline tables only; NaN/inf written as TOML does)."""
    import json
    import math

    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return '"none"'  # TOML has no null
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            return repr(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return "{" + ", ".join(f"{json.dumps(str(k))} = {val(x)}" for k, x in v.items()) + "}"

    return "".join(f"{json.dumps(str(k))} = {val(v)}\n" for k, v in raw.items())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fuzzed_dicts_load_or_raise_scenario_errors(raw):
    try:
        scn.load_sweep(raw)
    except ScenarioErrors as errs:
        assert errs.errors
        for e in errs.errors:
            assert isinstance(e, ScenarioError)
            assert "\n" not in str(e) and str(e).strip()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fuzzed_files_validate_or_exit_2_one_line_per_error(tmp_path_factory, raw):
    import contextlib
    import io

    from edgesim.cli import main

    p = tmp_path_factory.mktemp("fuzz") / "f.toml"
    p.write_text(_toml(raw))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["validate", str(p)])
    assert code in (0, 2)
    lines = err.getvalue().splitlines()
    assert (code == 0) == (not lines)
    assert "Traceback" not in err.getvalue()
    for line in lines:
        assert line.startswith(f"{p}: ") and len(line) > len(f"{p}: ")


def test_dp_ffl_public_bound_needs_the_feature_clip():
    e = one_error({"mechanism": {"kind": "dp-ffl", "feature_bound": "off"}})
    assert e.key == "mechanism.feature_bound" and "public_smoothness" in e.message
    # stated in public, or another mechanism: no feature clip needed
    from_dict({"mechanism": {"kind": "dp-ffl", "feature_bound": "off", "public_smoothness": 4.0}})
    from_dict({"mechanism": {"kind": "ffl", "feature_bound": "off"}})
