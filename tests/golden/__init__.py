"""Golden outputs: the JSON of every shipped scenario at a small size, as the code gave it.

``python -m tests.golden`` rewrites the files (after an *intended* change of the
output); ``tests/test_golden.py`` reruns every scenario and compares. A
renovation that moves code without meaning to change results must leave the
files byte-identical: ``python -m tests.golden --check`` says which differ and
exits 1, without writing.
"""

from __future__ import annotations

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


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) every golden file; returns the exit code."""
    check = "--check" in argv
    differ = []
    for path in SHIPPED:
        text = output(path)
        golden = HERE / f"{path.stem}.json"
        if check:
            if not golden.exists() or golden.read_text() != text:
                differ.append(path.stem)
        else:
            golden.write_text(text)
    for name in differ:
        print(f"differs: {name}")
    return 1 if differ else 0
