"""Every shipped scenario still gives its golden JSON (tests/golden): a refactoring that moves
code must not move results. Numbers are compared to 1e-9 relative, so that a newer BLAS does not
fail it; ``python -m tests.golden --check`` compares the bytes."""

from __future__ import annotations

import json
import math

import pytest

from tests.golden import HERE, SHIPPED, output


def _same(a, b, where: str = "") -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys differ"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_every_shipped_scenario_has_a_golden_file():
    assert {p.stem for p in SHIPPED} == {p.stem for p in HERE.glob("*.json")}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_gives_its_golden_json(path):
    golden = json.loads((HERE / f"{path.stem}.json").read_text())
    _same(golden, json.loads(output(path)), path.stem)
