"""Access schemes: how the devices of a cell share its channel (``network.radio.access``).

Each scheme is a registered part, one module each: its options (the
scenario's sub-table ``[network.radio.<name>]``), its checks, its closed
forms and, for a joint medium, its plan of both directions
(:class:`~edgesim.network.access.base.AccessScheme` says what a scheme
implements). Built in:

- ``round-robin`` and ``shared``: processor sharing (:mod:`.round_robin`);
- ``ofdma``: first-come waves, one block per message (:mod:`.ofdma`);
- ``tdma``: one sender at a time (:mod:`.tdma`);
- ``proportional-fair``: per-slot fading, events only (:mod:`.proportional_fair`);
- ``wifi``: 802.11 contention, one medium both ways (:mod:`.wifi`).

Researchers add schemes with :func:`register_access`, and check one with
:func:`edgesim.check.check_access`.
"""

from __future__ import annotations

from edgesim.config import attach_options
from edgesim.network.access.base import AccessScheme
from edgesim.network.access.ofdma import Ofdma
from edgesim.network.access.proportional_fair import ProportionalFair, ProportionalFairOptions
from edgesim.network.access.round_robin import RoundRobin
from edgesim.network.access.tdma import Tdma
from edgesim.network.access.wifi import Wifi, WifiOptions
from edgesim.registry import register

ACCESS_SCHEMES: dict[str, type[AccessScheme]] = {
    "round-robin": RoundRobin,
    "proportional-fair": ProportionalFair,
    "ofdma": Ofdma,
    "tdma": Tdma,
    "shared": RoundRobin,
    "wifi": Wifi,
}
"""Access schemes by ``network.radio.access`` name (subclasses of :class:`AccessScheme`)."""


def register_access(
    name: str, scheme: type[AccessScheme], *, options: type | None = None, replace: bool = False
) -> None:
    """Register an access scheme under ``name`` (usable as ``network.radio.access``); returns nothing.

    ``scheme``: a subclass of :class:`AccessScheme`; ``options``: its options
    dataclass, when the class does not declare one. A name already taken
    raises ValueError unless ``replace`` is true; a scheme that is not an
    :class:`AccessScheme` subclass raises TypeError.
    """
    if not (isinstance(scheme, type) and issubclass(scheme, AccessScheme)):
        raise TypeError(f"an access scheme must be a subclass of AccessScheme, got {scheme!r}")
    attach_options(scheme, options)
    register(ACCESS_SCHEMES, "access scheme", name, scheme, replace)


__all__ = [
    "ACCESS_SCHEMES",
    "AccessScheme",
    "Ofdma",
    "ProportionalFair",
    "ProportionalFairOptions",
    "RoundRobin",
    "Tdma",
    "Wifi",
    "WifiOptions",
    "register_access",
]
