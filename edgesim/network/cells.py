"""The radio hop's shared media: how the devices of one cell share its channel in an exchange.

Each cell has a channel of R resource blocks (:meth:`RadioConfig.blocks`)
in each direction (FDD: uplink and downlink do not compete). A link's
airtime is what a message takes alone in the cell (all R blocks; with
``resource_blocks = 'per-device'`` every device has such a channel of its
own). ``network.radio.access`` says how the devices with data share it:

- ``round-robin`` and ``shared``: processor sharing (the fluid limit of
  handing the blocks out slot by slot in turn): n senders each progress at
  1/n of their lone rate, so N >= R equal uploads of S bytes at per-block
  rate r finish together at N S 8 / (R r);
- ``ofdma``: first-come waves: a message holds one block (rate r, airtime R
  times its lone airtime) until it is sent, so N equal uploads finish in
  ceil(N / R) waves of S 8 / r;
- ``tdma``: one sender at a time on the whole channel, first come;
- ``proportional-fair``: slot by slot under per-slot Rayleigh fading
  (:mod:`edgesim.network.proportional_fair`);
- ``wifi``: one medium both ways, contended by the devices with data and the
  access point, whose queue holds the downlink (:meth:`Cells.joint_ns`,
  :mod:`edgesim.network.wifi`).

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

from edgesim.network.links import Transfers
from edgesim.network.medium import contention_ns, finish_ns
from edgesim.network.proportional_fair import proportional_fair_ns
from edgesim.network.radio import RadioConfig

#: ``network.radio.access`` -> its :mod:`edgesim.network.medium` discipline (proportional
#: fair has its own scheduler).
DISCIPLINE = {
    "round-robin": "ps",
    "shared": "ps",
    "tdma": "fifo",
    "ofdma": "fifo",
}


class Cells:
    """The cells' channels for one run: which discipline each direction follows.

    ``cfg``: the ``[network.radio]`` table; ``ap_of`` (K,): each device's
    cell; ``uplink``/``downlink``: the links (their SNRs feed proportional fair);
    ``tcp``: the transport is TCP (on Wi-Fi its ACKs contend for the medium, and its slow
    start keeps A-MPDUs small), with an initial window of ``initial_window`` segments.
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
        #: Wi-Fi: one contended medium both ways (:meth:`joint_ns`), no resource blocks.
        self.joint = cfg.access == "wifi"
        self.blocks = 1 if self.joint else cfg.blocks()
        self.tcp = tcp
        self.initial_window = initial_window
        if self.joint:
            self.mac = cfg.wifi_mac()

    def shared(self, direction: str) -> bool:
        """Whether messages in ``direction`` ('up' or 'down') share their cell's channel."""
        if self.per_device:
            return False
        return direction == "up" or self.cfg.downlink_access == "shared"

    @property
    def draws(self) -> bool:
        """Whether sharing draws random numbers (proportional fair's per-slot fading)."""
        return self.cfg.access == "proportional-fair" and (self.shared("up") or self.shared("down"))

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
        draws proportional fair's fading (nothing else draws);
        ``horizon_ns`` lets it stop at a round's deadline (a message not
        through by then gets an instant after it).
        """
        work = transfers.attempts * transfers.airtime_ns
        if not self.shared(direction):
            return arrive_ns + work
        group = self.ap_of[devices]
        access = self.cfg.access
        if access == "proportional-fair":
            link = self.links[direction]
            done, _ = proportional_fair_ns(
                arrive_ns,
                transfers.attempts * np.asarray(sizes, dtype=np.int64) * 8,
                link.mean_snr_of(devices),
                group,
                blocks=self.blocks,
                block_hz=link.block_hz,
                slot_ns=round(self.cfg.slot_s * 1e9),
                window_slots=self.cfg.pf_window_slots,
                rng=rng,
                horizon_ns=horizon_ns,
            )
            return np.where(done < 0, np.iinfo(np.int64).max // 4, done)
        if access == "ofdma":
            return finish_ns(arrive_ns, work * self.blocks, group, "fifo", self.blocks)
        return finish_ns(arrive_ns, work, group, DISCIPLINE[access])

    def efficiency(self, n: int) -> float:
        """Wi-Fi: the medium's delivery with ``n`` contenders over one contender alone (the
        links' lone rate): Bianchi's efficiency, with TCP's ACKs contending and at most
        ``wifi_tcp_backlog`` TCP senders (:meth:`WifiMac.efficiency_tcp`). A ratio, <= 1."""
        share = self.mac.efficiency_tcp if self.tcp else self.mac.efficiency
        return share(n) / self.mac.efficiency(1)

    def medium_work_ns(self, sizes: np.ndarray, work_ns: np.ndarray) -> np.ndarray:
        """Return each message's work on its cell's medium (int64 ns, aligned with ``sizes``).

        ``work_ns``: its transmissions' airtimes alone. On Wi-Fi with TCP they are
        longer by :meth:`WifiMac.slow_start_factor` of the message's size (slow
        start's small A-MPDUs, the handshake's frames); otherwise unchanged.
        """
        if not (self.joint and self.tcp):
            return work_ns
        sizes, which = np.unique(np.asarray(sizes, dtype=np.int64), return_inverse=True)
        factor = [self.mac.slow_start_factor(s, self.initial_window) for s in sizes.tolist()]
        return np.rint(work_ns * np.asarray(factor)[which]).astype(np.int64)

    def joint_ns(
        self,
        devices: np.ndarray,
        down_arrive_ns: np.ndarray,
        down_work_ns: np.ndarray,
        up_offset_ns: np.ndarray,
        up_work_ns: np.ndarray,
        sends: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Wi-Fi: schedule both directions of an exchange on each cell's one medium.

        The access point contends with its devices (:func:`edgesim.network.medium.contention_ns`,
        with Bianchi's efficiency of n contenders over one's). ``down_arrive_ns``: when each
        downlink reaches the access point; ``down_work_ns``: its airtimes alone (a broadcast
        is split evenly among its receivers, who share it and so all receive it when the
        whole is through); ``up_offset_ns``: from its last transmission
        leaving the medium to the device's reply joining it; ``up_work_ns``: the reply's
        airtimes; ``sends``: whether the device replies. Returns (downlink through, uplink
        through; -1 for no reply), int64 ns, aligned with ``devices``.
        """
        group = self.ap_of[devices]
        down_done = np.empty(devices.size, dtype=np.int64)
        up_done = np.full(devices.size, -1, dtype=np.int64)
        for cell in np.unique(group).tolist():
            idx = np.flatnonzero(group == cell)
            down_done[idx], up_done[idx] = contention_ns(
                down_arrive_ns[idx],
                down_work_ns[idx],
                up_offset_ns[idx],
                up_work_ns[idx],
                sends[idx],
                self.efficiency,
            )
        return down_done, up_done

    def broadcast_ns(self, devices: np.ndarray, size_bytes: int, airtime_ns: np.ndarray):
        """Return each cell's time to broadcast one message (int64 ns) and the cell of each device.

        ``airtime_ns`` (m,): the message's lone airtime to each receiver. A
        cellular broadcast goes at the rate of the cell's worst receiver (its
        longest airtime); a Wi-Fi one at ``wifi_multicast_bps`` in
        unaggregated frames. Returns (time per cell (c,), the cells (c,), each
        device's index into them (m,)).
        """
        cells, where = np.unique(self.ap_of[devices], return_inverse=True)
        if self.joint:
            t = self.mac.multicast_s(size_bytes, self.cfg.wifi_multicast_bps)
            return np.full(cells.size, round(t * 1e9), dtype=np.int64), cells, where
        worst = np.zeros(cells.size, dtype=np.int64)
        np.maximum.at(worst, where, airtime_ns)
        return worst, cells, where
