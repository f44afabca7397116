"""The radio hop's shared media: how the devices of one cell share its channel in an exchange.

Each cell has a channel of R resource blocks (:meth:`RadioConfig.blocks`)
in each direction (FDD: uplink and downlink do not compete), or one medium
both ways (Wi-Fi). A link's airtime is what a message takes alone in the
cell (all R blocks; with ``resource_blocks = 'per-device'`` every device has
such a channel of its own). ``network.radio.access`` names the access
scheme that says how the devices with data share it
(:mod:`edgesim.network.access`: round robin, OFDMA, TDMA, proportional fair,
Wi-Fi, or a researcher's own); :class:`Cells` hands each shared message to it.

The downlink is shared the same way (``downlink_access = 'shared'``) or each
message goes at a lone receiver's rate (``'dedicated'``).

Capped ARQ on a shared medium: a message's transmissions are one job of
``attempts`` times its airtime (the scheduler serves the retransmissions as
soon as they are due, as LTE's HARQ does); the retransmission timeouts and
the latency come after it leaves the medium (:attr:`Transfers.after_ns`).
On a dedicated channel this is exactly the sum :attr:`Transfers.duration_ns`.
"""

from __future__ import annotations

import numpy as np

from edgesim.config import resolved_options
from edgesim.network.links import Transfers
from edgesim.network.radio import RadioConfig


class Cells:
    """The cells' channels for one run: the access scheme, and which messages it shares.

    ``cfg``: the ``[network.radio]`` table; ``ap_of`` (K,): each device's
    cell; ``uplink``/``downlink``: the links (their SNRs feed proportional fair);
    ``tcp``: the transport is TCP (on Wi-Fi its ACKs contend for the medium, and its slow
    start keeps A-MPDUs small), with an initial window of ``initial_window`` segments.
    ``scheme``: the run's :class:`~edgesim.network.access.AccessScheme` instance.
    """

    def __init__(
        self,
        cfg: RadioConfig,
        ap_of: np.ndarray,
        uplink,
        downlink,
        tcp: bool = False,
        initial_window: int = 10,
    ):
        self.cfg = cfg
        self.ap_of = np.asarray(ap_of)
        self.links = {"up": uplink, "down": downlink}
        self.per_device = cfg.resource_blocks == "per-device"
        self.scheme = cfg.access_scheme()(
            cfg,
            resolved_options(cfg, "access_options"),
            links=self.links,
            tcp=tcp,
            initial_window=initial_window,
        )
        #: one medium both ways (Wi-Fi): the server plans both directions at once (:meth:`joint_ns`)
        self.joint = self.scheme.joint

    def shared(self, direction: str) -> bool:
        """Whether messages in ``direction`` ('up' or 'down') share their cell's channel."""
        if self.per_device:
            return False
        return direction == "up" or self.cfg.downlink_access == "shared"

    @property
    def draws(self) -> bool:
        """Whether sharing draws random numbers (proportional fair's per-slot fading)."""
        return self.scheme.draws and (self.shared("up") or self.shared("down"))

    def through_ns(
        self,
        direction: str,
        devices: np.ndarray,
        sizes: np.ndarray,
        arrive_ns: np.ndarray,
        transfers: Transfers,
        rng: np.random.Generator | None,
        horizon_ns: int | None = None,
    ) -> np.ndarray:
        """Return when each message's last transmission has left the channel (int64 ns, (m,)).

        ``devices``, ``sizes`` (bytes) and ``arrive_ns`` (when the message
        reaches the sender's radio) are aligned with ``transfers``. ``rng``
        draws the scheme's randomness (proportional fair's fading; nothing
        else draws); ``horizon_ns`` lets it stop at a round's deadline (a
        message not through by then gets an instant after it). A message
        that does not share its channel is through at arrival + work.
        """
        if not self.shared(direction):
            return arrive_ns + transfers.attempts * transfers.airtime_ns
        cell = self.ap_of[devices]
        return self.scheme.through_ns(
            direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns
        )

    def medium_work_ns(self, sizes: np.ndarray, work_ns: np.ndarray) -> np.ndarray:
        """Return each message's work on its cell's medium (int64 ns, aligned with ``sizes``):
        the scheme's :meth:`~edgesim.network.access.AccessScheme.medium_work_ns` of ``work_ns``,
        its transmissions' airtimes alone (Wi-Fi with TCP: longer, slow start's small A-MPDUs)."""
        return self.scheme.medium_work_ns(sizes, work_ns)

    def joint_ns(
        self,
        devices: np.ndarray,
        down_arrive_ns: np.ndarray,
        down_work_ns: np.ndarray,
        up_offset_ns: np.ndarray,
        up_work_ns: np.ndarray,
        sends: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """A joint scheme (Wi-Fi): schedule both directions of an exchange on each cell's medium.

        Arrays aligned with ``devices`` (see
        :meth:`~edgesim.network.access.AccessScheme.joint_ns`). Returns
        (downlink through, uplink through; -1 for no reply), int64 ns.
        """
        cell = self.ap_of[devices]
        return self.scheme.joint_ns(
            cell, down_arrive_ns, down_work_ns, up_offset_ns, up_work_ns, sends
        )

    def broadcast_ns(self, devices: np.ndarray, size_bytes: int, airtime_ns: np.ndarray):
        """Return each cell's time to broadcast one message (int64 ns) and the cell of each device.

        ``airtime_ns`` (m,): the message's lone airtime to each receiver. A
        cellular broadcast goes at the rate of the cell's worst receiver (its
        longest airtime); a Wi-Fi one at its multicast rate in unaggregated
        frames (the scheme's :meth:`~edgesim.network.access.AccessScheme.broadcast_ns`).
        Returns (time per cell (c,), the cells (c,), each device's index into them (m,)).
        """
        cells, where = np.unique(self.ap_of[devices], return_inverse=True)
        return self.scheme.broadcast_ns(size_bytes, airtime_ns, where, cells.size), cells, where
