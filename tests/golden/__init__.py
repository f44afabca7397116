"""Golden outputs: the JSON of every shipped scenario at a small size, as the code gave it.

``python -m tests.golden`` rewrites the files (after an *intended* change of the output;
``python -m tests.golden quickstart`` only that scenario's); ``tests/test_golden.py`` reruns
every scenario and compares. A renovation that moves code without meaning to change results
must leave the files byte-identical: ``python -m tests.golden --check`` says which differ
and exits 1, without writing. A change that only *adds* output (new keys, in the results or
in the resolved scenario) checks with ``python -m tests.golden --added``: every key of a
golden file must still be there with the same value (numbers to 1e-9 relative); keys the
golden file lacks are allowed. It prints each difference and exits 1, without writing.
``--against REV`` compares the golden files of git revision ``REV`` with today's output the
same way, after rewriting the old echoed scenario in today's layout (:func:`upgrade_echo`):
what a renovation that changed the echo's layout (issue 28: an access scheme's options
became a sub-table) must pass.
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


def upgrade_echo(echo: dict) -> dict:
    """Return an echoed scenario of an older layout in today's (plain data).

    The flat ``[network.radio]`` keys that became an access scheme's options
    are dropped when they hold their default (the old echo wrote every one),
    so the loader moves only those that mattered; a strategy's keys its kind
    does not read are dropped likewise; the rest loads and echoes as today.
    """
    import copy
    import dataclasses
    import warnings

    from edgesim.agents import STRATEGIES
    from edgesim.config import options_class
    from edgesim.network.access import ACCESS_SCHEMES

    echo = copy.deepcopy(echo)
    radio = echo.get("network", {}).get("radio", {})
    for scheme in ACCESS_SCHEMES.values():
        opts = options_class(scheme)
        if opts is None:
            continue
        defaults = {f.name: f.default for f in dataclasses.fields(opts)}
        for old, new in scheme.flat_aliases.items():
            if old in radio and radio[old] == defaults[new]:
                del radio[old]
    for table in echo.get("agents", {}).get("strategy", []):
        opts = options_class(STRATEGIES.get(table.get("kind")))
        read = {f.name for f in dataclasses.fields(opts)} if opts else set()
        for key in ("gamma", "noise_std"):
            if key not in read:
                table.pop(key, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return scenario.from_dict(echo).to_dict()


def _old_golden(rev: str, stem: str) -> dict | None:
    """Return golden file ``stem`` as committed at git revision ``rev`` (None when absent)."""
    import subprocess

    rel = (HERE / f"{stem}.json").relative_to(HERE.parents[1]).as_posix()
    done = subprocess.run(
        ["git", "show", f"{rev}:{rel}"], cwd=HERE.parents[1], capture_output=True, text=True
    )
    return json.loads(done.stdout) if done.returncode == 0 else None


def main(argv: list[str]) -> int:
    """Write every golden file, or compare (``--check``: bytes; ``--added``: values, new keys
    allowed) without writing; returns the exit code (1 when a file differs). Scenario names
    among the arguments (``lossy-wifi``) limit it to those files."""
    check, added = "--check" in argv, "--added" in argv
    against = argv[argv.index("--against") + 1] if "--against" in argv else None
    names = {a for a in argv if not a.startswith("--") and a != against}
    unknown = names - {p.stem for p in SHIPPED}
    if unknown:
        print(f"no shipped scenario named {', '.join(sorted(unknown))}")
        return 2
    differ = []
    for path in [p for p in SHIPPED if not names or p.stem in names]:
        text = output(path)
        golden = HERE / f"{path.stem}.json"
        if against:
            old = _old_golden(against, path.stem)
            if old is None:
                differ.append(f"{path.stem}: no golden file at {against}")
                continue
            old["scenario"] = upgrade_echo(old["scenario"])
            lines = differences(old, json.loads(text), added=True)
            differ.extend(f"{path.stem}{line}" for line in lines)
        elif added:
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
