"""The layering contracts of pyproject.toml ([tool.importlinter]) hold: lint-imports passes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).parents[1]


def test_import_layers_hold():
    exe = shutil.which("lint-imports")
    assert exe, "lint-imports missing: pip install -e '.[dev]' installs import-linter"
    done = subprocess.run([exe], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def test_the_facade_is_imported_by_no_module_of_the_package():
    """Only users import ``edgesim`` itself: inside the package, modules import modules."""
    for path in (REPO / "edgesim").rglob("*.py"):
        if path.name == "__init__.py" and path.parent.name == "edgesim":
            continue
        text = path.read_text()
        assert "\nimport edgesim\n" not in text, path
        assert "from edgesim import __version__" not in text, path


def test_long_modules_say_why_they_are_one_piece():
    """Modules of edgesim/ and analysis/ over 500 lines say in their docstring why they are one."""
    import ast

    for path in [*(REPO / "edgesim").rglob("*.py"), *(REPO / "analysis").rglob("*.py")]:
        text = path.read_text()
        if len(text.splitlines()) <= 500:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert "on purpose" in doc, f"{path.relative_to(REPO)}: over 500 lines, no reason given"


def test_tests_share_helpers_not_conftest():
    """conftest.py is pytest's (fixtures); what tests import lives in tests/helpers.py."""
    needle = "from tests." + "conftest import"  # written apart: this file names it
    for path in (REPO / "tests").rglob("*.py"):
        assert needle not in path.read_text(), path
