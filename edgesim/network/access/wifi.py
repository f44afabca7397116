"""Wi-Fi: one medium both ways, contended by the devices with data and the access point.

The access point's queue holds the downlink, so it contends with its own
devices (802.11 EDCA); the medium delivers, with n contenders, Bianchi's
efficiency of n over that of one alone (:mod:`edgesim.network.wifi`, the
802.11 PHY rates and MAC arithmetic), walked exchange by exchange by
:func:`edgesim.network.contention.contention_ns`. The PHY rate comes from the
standard's MCS table (so the link model is ``'fixed'``), there are no
resource blocks, and a broadcast goes at the multicast rate, unaggregated.
Devices must be always on: churn within a contended exchange is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network.access.base import AccessScheme
from edgesim.network.contention import contention_ns
from edgesim.network.wifi import STANDARDS, TCP_BACKLOG, WifiMac, phy_rate_bps


@dataclass(frozen=True)
class WifiOptions:
    """``[network.radio.wifi]``: the cell's 802.11 PHY, and how its TCP senders and broadcasts go."""

    flat_aliases: ClassVar[dict[str, str]] = {
        "wifi_standard": "standard",
        "wifi_mcs": "mcs",
        "wifi_streams": "streams",
        "wifi_guard_interval_ns": "guard_interval_ns",
        "wifi_tcp_backlog": "tcp_backlog",
        "wifi_multicast_bps": "multicast_bps",
    }

    standard: str = option(
        "802.11ac",
        "the PHY, '802.11n', '802.11ac' or '802.11ax' (rates from mcs, network.radio.channel_mhz"
        " and streams)",
        choices=("802.11n", "802.11ac", "802.11ax"),
    )
    mcs: int = option(7, "the modulation and coding scheme (fixed rate)", ge=0)
    streams: int = option(1, "spatial streams", ge=1)
    guard_interval_ns: int = option(
        800,
        "OFDM guard interval: 800 or 400 (802.11n/ac), 800, 1600 or 3200 (802.11ax; ns-3's"
        " HE default is 3200)",
        unit="ns",
        ge=1,
    )
    tcp_backlog: int = option(
        TCP_BACKLOG,
        "with network.transport = 'tcp': the most TCP senders that contend at once (a sender"
        " waiting for its window's ACKs does not); fitted to ns-3, see docs/network.md",
        ge=1,
    )
    multicast_bps: float = option(
        6e6,
        "rate of group-addressed (broadcast) frames, which are neither aggregated nor"
        " acknowledged: the lowest basic rate of 802.11a/g/n/ac/ax at 5 GHz",
        unit="bit/s",
        gt=0.0,
    )


class Wifi(AccessScheme):
    """802.11 EDCA contention among a cell's devices with data and its access point."""

    options = WifiOptions
    flat_aliases = WifiOptions.flat_aliases
    joint = True
    resource_grid = False

    def __init__(self, radio, settings=None, *, links=None, tcp=False, initial_window=10):
        super().__init__(radio, settings, links=links, tcp=tcp, initial_window=initial_window)
        #: the cell's MAC: PHY rate, frame times, Bianchi's efficiency
        self.mac = self.mac_of(radio, settings)

    # ------------------------------------------------------------------ checks
    @staticmethod
    def mac_of(radio, settings: WifiOptions) -> WifiMac:
        """Return the cell's MAC, its PHY rate from the standard's table (``settings``: the options).

        Raises ValueError when the standard lacks the MCS, width or streams.
        """
        phy = phy_rate_bps(
            settings.standard,
            settings.mcs,
            int(radio.channel_mhz),
            settings.streams,
            settings.guard_interval_ns,
        )
        _, _, _, preamble, per_stream = STANDARDS[settings.standard]
        return WifiMac(
            phy,
            preamble_s=preamble + (settings.streams - 1) * per_stream,
            tcp_backlog=settings.tcp_backlog,
        )

    @classmethod
    def cross_check(cls, radio, settings, prefix: str) -> list[ScenarioError]:
        """Return the scheme's errors on ``[network.radio]``: a fixed link without resource
        blocks, a shared downlink, and a PHY the standard has."""
        errs = []
        own = f"{prefix}.{radio.access}"
        if radio.model == "fixed" and radio.bandwidth_bps != type(radio)().bandwidth_bps:
            errs.append(
                ScenarioError(
                    f"{prefix}.bandwidth_bps",
                    f"{radio.bandwidth_bps!r} would be ignored: it is only used with an access"
                    f" other than 'wifi' (a Wi-Fi cell's PHY rate comes from {own}'s standard,"
                    " mcs and streams and channel_mhz)",
                )
            )
        if radio.model != "fixed":
            errs.append(
                ScenarioError(
                    f"{prefix}.model",
                    "'wifi' access needs model = 'fixed' (rates from the MCS table)",
                )
            )
        if radio.downlink_access != "shared":
            errs.append(
                ScenarioError(
                    f"{prefix}.downlink_access",
                    "'wifi' is one medium both ways: the access point contends with its devices",
                )
            )
        if isinstance(radio.resource_blocks, int) or radio.resource_blocks == "per-device":
            errs.append(
                ScenarioError(
                    f"{prefix}.resource_blocks",
                    "'wifi' has no resource blocks; leave it at 'channel'",
                )
            )
        try:
            cls.mac_of(radio, settings)
        except ValueError as exc:
            text = str(exc)
            key = f"{own}.mcs" if "MCS" in text else f"{prefix}.channel_mhz"
            if "streams" in text and "MCS" not in text:
                key = f"{own}.streams"
            if "guard interval" in text:
                key = f"{own}.guard_interval_ns"
            errs.append(ScenarioError(key, text))
        return errs

    @classmethod
    def network_check(cls, network, settings) -> list[ScenarioError]:
        """Return the scheme's errors across ``[network]``: ``tcp_backlog`` only with TCP, and
        devices always on."""
        errs = super().network_check(network, settings)
        own = f"network.radio.{network.radio.access}"
        if network.transport != "tcp" and settings.tcp_backlog != WifiOptions().tcp_backlog:
            errs.append(
                ScenarioError(
                    f"{own}.tcp_backlog",
                    f"{settings.tcp_backlog!r} would be ignored: it is only used with"
                    " transport = 'tcp'",
                )
            )
        if network.availability.model != "always":
            errs.append(
                ScenarioError(
                    "network.availability.model",
                    "access = 'wifi' needs devices always on ('always'): churn within a"
                    " contended Wi-Fi exchange is not modelled",
                )
            )
        return errs

    @classmethod
    def lone_rate_bps(cls, radio, settings) -> float:
        """Return the MAC's goodput of one contender alone (bit/s)."""
        return cls.mac_of(radio, settings).goodput_bps(1)

    # ------------------------------------------------------------------ closed forms
    def efficiency(self, n: int) -> float:
        """Return the medium's delivery with ``n`` contenders over one contender alone (the
        links' lone rate): Bianchi's efficiency, with TCP's ACKs contending and at most
        ``tcp_backlog`` TCP senders (:meth:`WifiMac.efficiency_tcp`). A ratio, <= 1."""
        share = self.mac.efficiency_tcp if self.tcp else self.mac.efficiency
        return share(n) / self.mac.efficiency(1)

    def medium_work_ns(self, sizes: np.ndarray, work_ns: np.ndarray) -> np.ndarray:
        """Return each message's work on the medium (int64 ns, aligned with ``sizes``).

        With TCP, longer than ``work_ns`` (its airtimes alone) by
        :meth:`WifiMac.slow_start_factor` of the message's size (slow start's
        small A-MPDUs, the handshake's frames); otherwise unchanged.
        """
        if not self.tcp:
            return work_ns
        sizes, which = np.unique(np.asarray(sizes, dtype=np.int64), return_inverse=True)
        factor = [self.mac.slow_start_factor(s, self.initial_window) for s in sizes.tolist()]
        return np.rint(work_ns * np.asarray(factor)[which]).astype(np.int64)

    def joint_ns(self, cell, down_arrive_ns, down_work_ns, up_offset_ns, up_work_ns, sends):
        """Schedule both directions on each cell's one medium (:meth:`AccessScheme.joint_ns`).

        The access point contends with its devices
        (:func:`edgesim.network.contention.contention_ns`, with :meth:`efficiency`).
        A broadcast's work is split evenly among its receivers, who share it
        and so all receive it when the whole is through.
        """
        down_done = np.empty(cell.size, dtype=np.int64)
        up_done = np.full(cell.size, -1, dtype=np.int64)
        for c in np.unique(cell).tolist():
            idx = np.flatnonzero(cell == c)
            down_done[idx], up_done[idx] = contention_ns(
                down_arrive_ns[idx],
                down_work_ns[idx],
                up_offset_ns[idx],
                up_work_ns[idx],
                sends[idx],
                self.efficiency,
            )
        return down_done, up_done

    def broadcast_ns(self, size_bytes, airtime_ns, where, cells):
        """Return each cell's broadcast time (int64 ns, (cells,)): ``multicast_bps`` in
        unaggregated frames, the same in every cell."""
        t = self.mac.multicast_s(size_bytes, self.settings.multicast_bps)
        return np.full(cells, round(t * 1e9), dtype=np.int64)
