"""The README's scenario reference is the one generated from the dataclasses."""

from pathlib import Path

from edgesim.scenario import reference_markdown


def test_readme_scenario_reference_is_current():
    text = (Path(__file__).parents[1] / "README.md").read_text()
    start = text.index("<!-- scenario-reference:start -->\n") + len(
        "<!-- scenario-reference:start -->\n"
    )
    end = text.index("<!-- scenario-reference:end -->")
    assert text[start:end] == reference_markdown(), "run: python -m edgesim.scenario"


def test_readme_quick_start_is_two_commands():
    text = (Path(__file__).parents[1] / "README.md").read_text()
    assert "pip install -e '.[dev]' && edgesim run" in text
    assert "pip install -e '.[dev]' && pytest" in text
    ci = (Path(__file__).parents[1] / ".ci" / "run").read_text()
    assert "pip install -e '.[dev]' && pytest" in ci
