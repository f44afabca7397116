"""Server algorithms written once, run by any driver; importing registers the built-ins."""

from edgesim.mechanisms import dpffl, fedavg, ffl, local, vcg, vcg_federated  # noqa: F401
from edgesim.mechanisms.base import MECHANISMS, make_mechanism, register_mechanism

__all__ = ["MECHANISMS", "make_mechanism", "register_mechanism"]
