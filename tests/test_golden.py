"""Every shipped scenario still gives its golden JSON (tests/golden): a refactoring that moves
code must not move results. Numbers are compared to 1e-9 relative, so that a newer BLAS does not
fail it; ``python -m tests.golden --check`` compares the bytes."""

from __future__ import annotations

import json

import pytest

from tests.golden import HERE, SHIPPED, differences, output


def test_every_shipped_scenario_has_a_golden_file():
    assert {p.stem for p in SHIPPED} == {p.stem for p in HERE.glob("*.json")}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_gives_its_golden_json(path):
    golden = json.loads((HERE / f"{path.stem}.json").read_text())
    assert differences(golden, json.loads(output(path))) == []


def test_differences_names_each_change_and_allows_added_keys_only_when_asked():
    golden = {"a": 1.0, "b": [1, {"c": "x"}], "d": True}
    assert differences(golden, {**golden, "e": 2}, added=True) == []
    assert differences(golden, {**golden, "e": 2}) == [".e: added"]
    assert differences(golden, {**golden, "a": 1.0 + 1e-12}) == []  # BLAS-level noise
    assert differences(golden, {**golden, "a": 1.001}, added=True) == [".a: 1.0 != 1.001"]
    changed = {"a": 1.0, "b": [1, {"c": "y", "z": 0}], "d": 1}
    assert differences(golden, changed, added=True) == [".b[1].c: 'x' != 'y'", ".d: True != 1"]
    assert differences(golden, {"a": 1.0, "b": [1]}, added=True) == [
        ".d: missing",
        ".b: a list of 2 became [1]",
    ]
