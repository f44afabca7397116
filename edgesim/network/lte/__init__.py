"""The LTE physical layer as a link model (``network.radio.model = "lte"``, docs/network.md "LTE cell").

:mod:`~edgesim.network.lte.tables` holds the 3GPP TS 36.213 tables and the
SINR -> CQI -> MCS -> TBS chain; :mod:`~edgesim.network.lte.rates` a device's
payload rate and HARQ cost from its SINR (and :func:`peak_rate_bps`, a channel
width's rate at MCS 28); :mod:`~edgesim.network.lte.options` the options of
``[network.radio.lte]``; :mod:`~edgesim.network.lte.link` the link itself
(it extends :class:`~edgesim.network.links.ShannonLink`, and registers ``"lte"`` in
:data:`edgesim.network.links.LINKS` when this package is imported).
"""

from edgesim.network.lte.link import LteLink, lte_link
from edgesim.network.lte.options import LteOptions
from edgesim.network.lte.rates import peak_rate_bps

__all__ = ["LteLink", "LteOptions", "lte_link", "peak_rate_bps"]
