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
