"""Server algorithms written once, run by any driver; importing registers the built-ins."""

from edgesim.mechanisms import dpffl, fedavg, ffl, local, vcg, vcg_federated  # noqa: F401
from edgesim.mechanisms.base import MECHANISMS, make_mechanism, register_mechanism

#: The names edgesim itself registers (taken before any user registration can run).
BUILTIN_MECHANISMS = tuple(sorted(MECHANISMS))

__all__ = ["BUILTIN_MECHANISMS", "MECHANISMS", "make_mechanism", "register_mechanism"]
