"""The architecture holds: the import-linter contracts of pyproject.toml (layers, no simpy
in the maths, no import cycle), no private name or private module reached from another
module, no module over 600 lines (docs/architecture.md states the rules)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
SCANNED = ("edgesim", "analysis")
MAX_LINES = 600


def _contracts() -> list[dict]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_import_contracts_hold():
    """lint-imports keeps every contract of pyproject.toml (layers, no simpy, no cycles)."""
    exe = shutil.which("lint-imports")
    assert exe, "lint-imports missing: pip install -e '.[dev]' installs import-linter"
    done = subprocess.run([exe], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(_contracts())} kept, 0 broken" in done.stdout, done.stdout


def test_a_contract_forbids_import_cycles_in_all_of_edgesim():
    """The acyclic contract covers the whole package, at every depth."""
    (acyclic,) = [c for c in _contracts() if c["type"] == "acyclic_siblings"]
    assert acyclic["ancestors"] == ["edgesim"]
    assert "depth" not in acyclic and "skip_descendants" not in acyclic
    assert "ignore_imports" not in acyclic


def test_no_import_cycle_among_the_modules_of_edgesim():
    """No cycle among edgesim's modules, function-local imports included: the contract
    compares siblings, this also sees a module and its own package's ``__init__``."""
    import grimp
    import networkx as nx

    graph = grimp.build_graph("edgesim", cache_dir=None)
    edges = nx.DiGraph(
        (m, imported)
        for m in graph.modules
        for imported in graph.find_modules_directly_imported_by(m)
    )
    cycles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert cycles == []


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
    for path in [*(REPO / "edgesim").rglob("*.py"), *(REPO / "analysis").rglob("*.py")]:
        text = path.read_text()
        if len(text.splitlines()) <= 500:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert "on purpose" in doc, f"{path.relative_to(REPO)}: over 500 lines, no reason given"


def test_no_module_is_over_600_lines():
    """No module of edgesim/ or analysis/ is over 600 lines, whatever its docstring says."""
    long = {
        str(path.relative_to(REPO)): n
        for top in SCANNED
        for path in (REPO / top).rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_tests_share_helpers_not_conftest():
    """conftest.py is pytest's (fixtures); what tests import lives in tests/helpers.py."""
    needle = "from tests." + "conftest import"  # written apart: this file names it
    for path in (REPO / "tests").rglob("*.py"):
        assert needle not in path.read_text(), path


# -- No private name crosses a module boundary ---------------------------------------------
#
# A name with one leading underscore is its module's own: no other module imports it
# (``from m import _name``) or reads it (``m._name``). A module whose name starts with an
# underscore is its package's own: only that package's ``__init__`` (and modules inside the
# private module itself) import it. Dunder names (``__version__``, ``__main__``) are public.
# What a name is imported *as* does not matter: ``import numpy as _np`` is fine.


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(importer: str, name: str, known: dict) -> str:
    """``name`` as imported by ``importer``: itself, or a script's sibling (analysis/benchmarks
    run as scripts, their folder on sys.path)."""
    sibling = importer.rpartition(".")[0] + "." + name
    return name if name in known or sibling not in known else sibling


def _private_module_problem(importer: str, is_init: bool, imported: str) -> str | None:
    parts = imported.split(".")
    for i, part in enumerate(parts):
        private = ".".join(parts[: i + 1])
        if not _is_private(part) or importer == private or importer.startswith(private + "."):
            continue
        if not (is_init and importer == ".".join(parts[:i])):
            return f"imports the private module {private}"
    return None


def _boundary_crossings(root: Path, packages: tuple[str, ...]) -> list[str]:
    """``path:line: what`` for every private name or private module reached from another module.

    AST, not text: ``from m import _x`` (relative imports resolved), ``m._x`` where ``m`` names
    a module of ``packages`` (through ``import a.b``, ``import a.b as m``, ``from a import b``),
    and imports of private modules, anywhere in a file (function-local imports too).
    """
    known = {
        _module_name(root, p): p for top in packages for p in sorted((root / top).rglob("*.py"))
    }
    found = set()
    for importer, path in known.items():
        is_init = path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        modules = {}  # a local name -> the module of `packages` it is bound to

        where = path.relative_to(root)

        def note(node, what, _where=where):
            found.add(f"{_where}:{node.lineno}: {what}")

        def check_module(node, imported, _importer=importer, _is_init=is_init):
            if problem := _private_module_problem(_importer, _is_init, imported):
                note(node, problem)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _absolute(importer, alias.name, known)
                    if target.split(".")[0] not in packages and target not in known:
                        continue
                    check_module(node, target)
                    if alias.asname:
                        modules[alias.asname] = target
                    else:
                        modules[alias.name.split(".")[0]] = target.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = importer.split(".")[: None if is_init else -1]
                    base = base[: len(base) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = _absolute(importer, node.module, known)
                if source not in known:
                    continue
                check_module(node, source)
                for alias in node.names:
                    if (full := f"{source}.{alias.name}") in known:
                        check_module(node, full)
                        modules[alias.asname or alias.name] = full
                    elif _is_private(alias.name):
                        note(node, f"imports the private name {full}")
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            chain, value = [], node
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in modules:
                continue
            module = modules[value.id]
            for attr in reversed(chain):
                if f"{module}.{attr}" in known:
                    module = f"{module}.{attr}"
                    check_module(node, module)
                    continue
                if _is_private(attr):
                    note(node, f"reads the private name {module}.{attr}")
                break
    return sorted(found)


def test_no_private_name_crosses_a_module_boundary():
    """No module of edgesim/ or analysis/ imports or reads another module's private name, or
    imports a private module from outside its package's ``__init__``."""
    crossings = _boundary_crossings(REPO, SCANNED)
    assert crossings == [], "\n".join(crossings)


@pytest.fixture
def toy_tree(tmp_path):
    """A package ``pkg`` with each way of crossing a module boundary, and the allowed ones."""
    files = {
        "pkg/__init__.py": "from pkg._impl import run\nfrom pkg import _impl as _impl_module\n",
        "pkg/_impl.py": "_SECRET = 1\n\ndef run():\n    return _SECRET\n",
        "pkg/names.py": "_hidden = 2\nvisible = 3\n__version__ = '1'\n",
        "pkg/user.py": (
            "import numpy as _np\n"
            "from pkg.names import visible as _visible, __version__\n"
            "from pkg.names import _hidden\n"  # line 3: a private name
            "from . import names\n"
            "import pkg.names\n"
            "def f():\n"
            "    from .names import _hidden as h\n"  # line 7: function-local, relative
            "    return names._hidden + pkg.names._hidden + h\n"  # line 8: read twice
        ),
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from .. import _impl\nfrom ..names import _hidden\n",
        "scripts/_common.py": "def helper():\n    return 1\n",
        "scripts/bench.py": "from _common import helper\nimport _common\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_boundary_check_finds_every_crossing_and_only_those(toy_tree):
    """The scan above can fail: on a toy tree it reports exactly the planted crossings."""
    assert _boundary_crossings(toy_tree, ("pkg", "scripts")) == [
        "pkg/sub/deep.py:1: imports the private module pkg._impl",
        "pkg/sub/deep.py:2: imports the private name pkg.names._hidden",
        "pkg/user.py:3: imports the private name pkg.names._hidden",
        "pkg/user.py:7: imports the private name pkg.names._hidden",
        "pkg/user.py:8: reads the private name pkg.names._hidden",
        "scripts/bench.py:1: imports the private module scripts._common",
        "scripts/bench.py:2: imports the private module scripts._common",
    ]
