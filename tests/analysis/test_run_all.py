"""run_all.py knows every figure script in analysis/."""

from pathlib import Path

from analysis import run_all

NOT_FIGURES = {
    "__init__",
    "common",
    "run_all",
    "payment_rules",
    "paper_eval",
    "comm_time",
    "comm_broadcast",
}


def test_run_all_lists_every_figure_script():
    here = Path(run_all.__file__).parent
    modules = {p.stem for p in here.glob("*.py")}
    packages = {p.parent.name for p in here.glob("*/__init__.py")}  # e.g. network_effects/
    scripts = (modules | packages) - NOT_FIGURES
    assert scripts == set(run_all.FIGURES)
