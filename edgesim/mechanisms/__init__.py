"""Server algorithms written once, run by any driver; importing registers the built-ins."""

from edgesim.config import attach_options
from edgesim.mechanisms import base, dpffl, fedavg, ffl, local, vcg, vcg_federated  # noqa: F401
from edgesim.mechanisms.base import MECHANISMS, Mechanism, make_mechanism

#: The names edgesim itself registers (taken before any user registration can run).
BUILTIN_MECHANISMS = tuple(sorted(MECHANISMS))


def register_mechanism(
    name: str, mechanism: Mechanism, *, options: type | None = None, replace: bool = False
) -> None:
    """Register a mechanism generator function under ``name``; returns nothing.

    ``options``: the mechanism's own options class (a frozen dataclass whose
    fields are declared with :func:`edgesim.config.option`), unless the
    function already carries one as its ``options`` attribute. A scenario
    sets them in the ``[mechanism.<name>]`` sub-table, validated like every
    key; the mechanism reads them with
    ``edgesim.config.resolved_options(ctx.cfg, "options")`` (defaults filled
    in). A name already taken raises ValueError unless ``replace`` is true
    (:func:`edgesim.check_mechanism` tests a new mechanism before you use it).
    """
    attach_options(mechanism, options)
    base.register_mechanism(name, mechanism, replace=replace)


__all__ = ["BUILTIN_MECHANISMS", "MECHANISMS", "make_mechanism", "register_mechanism"]
