"""Golden outputs: the JSON of every shipped scenario at a small size, as the code gave it.

``python -m tests.golden`` rewrites the files (after an *intended* change of the
output); ``tests/test_golden.py`` reruns every scenario and compares. A
renovation that moves code without meaning to change results must leave the
files byte-identical: ``python -m tests.golden --check`` says which differ and
exits 1, without writing. A change that only *adds* output (new keys, in the
results or in the resolved scenario) checks with ``python -m tests.golden
--added``: every key of a golden file must still be there with the same value
(numbers to 1e-9 relative); keys the golden file lacks are allowed. It prints
each difference and exits 1, without writing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from edgesim import scenario
from edgesim.output import to_json
from edgesim.simulate import run

HERE = Path(__file__).parent
SHIPPED = sorted((HERE.parents[1] / "scenarios").glob("*.toml"))
#: Small sizes: a few rounds, few samples, no best-response search, short local learning.
SMALL = [
    "mechanism.phase1_rounds=15",
    "mechanism.phase2_rounds=2",
    "mechanism.local_rounds=100",
    "best_response.enabled=false",
]
SIZES = {
    "comm-vs-k": ["agents.count=10", "data.samples=100"],
    "churn-deadline": ["agents.count=10", "data.samples=500"],
    "dp-ffl-privacy": ["data.samples=500"],
    "paper-fig3-samples": ["data.samples=300"],
    "paper-fig4-noniid": ["data.samples=300"],
    "paper-fig5-privacy": ["data.samples=300"],
}


def output(path: Path) -> str:
    """Return the JSON text of the shipped scenario ``path`` at its golden size (version blanked)."""
    sc = scenario.load(path, [*SMALL, *SIZES.get(path.stem, [])])
    result = run(sc)
    result["edgesim_version"] = "-"
    return to_json(result)


def differences(golden, new, added: bool = False, where: str = "") -> list[str]:
    """Return where ``new`` departs from ``golden`` (JSON data), one line per place.

    Numbers compare to 1e-9 relative (1e-12 absolute), so a newer BLAS does not
    count; with ``added`` a key that ``golden`` lacks is allowed.
    """
    if isinstance(golden, dict):
        if not isinstance(new, dict):
            return [f"{where}: {golden!r} became {new!r}"]
        lost = [f"{where}.{k}: missing" for k in golden if k not in new]
        extra = [] if added else [f"{where}.{k}: added" for k in new if k not in golden]
        same = [differences(golden[k], new[k], added, f"{where}.{k}") for k in golden if k in new]
        return lost + extra + [line for lines in same for line in lines]
    if isinstance(golden, list):
        if not isinstance(new, list) or len(golden) != len(new):
            return [f"{where}: a list of {len(golden)} became {new!r:.60}"]
        pairs = zip(golden, new, strict=True)
        return [
            line
            for i, (a, b) in enumerate(pairs)
            for line in differences(a, b, added, f"{where}[{i}]")
        ]
    number = (int, float)
    if isinstance(golden, float) and isinstance(new, number) and not isinstance(new, bool):
        return (
            []
            if math.isclose(golden, new, rel_tol=1e-9, abs_tol=1e-12)
            else [f"{where}: {golden} != {new}"]
        )
    return (
        [] if golden == new and type(golden) is type(new) else [f"{where}: {golden!r} != {new!r}"]
    )


def main(argv: list[str]) -> int:
    """Write every golden file, or compare (``--check``: bytes; ``--added``: values, new keys
    allowed) without writing; returns the exit code (1 when a file differs)."""
    check, added = "--check" in argv, "--added" in argv
    differ = []
    for path in SHIPPED:
        text = output(path)
        golden = HERE / f"{path.stem}.json"
        if added:
            if not golden.exists():
                differ.append(f"{path.stem}: no golden file")
                continue
            lines = differences(json.loads(golden.read_text()), json.loads(text), added=True)
            differ.extend(f"{path.stem}{line}" for line in lines)
        elif check:
            if not golden.exists() or golden.read_text() != text:
                differ.append(path.stem)
        else:
            golden.write_text(text)
    for line in differ:
        print(f"differs: {line}")
    return 1 if differ else 0
