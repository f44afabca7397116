"""The interface of an access scheme: how the devices of one cell share its channel.

An access scheme is a registered part (:func:`edgesim.network.access.register_access`),
named by ``network.radio.access``. It is a subclass of :class:`AccessScheme` that
declares, as class attributes, its options and capabilities, and implements
its closed forms. One instance serves one run (:class:`edgesim.network.cells.Cells`
builds it); its class methods check a scenario before any run.

Two kinds of scheme:

- *per direction* (``joint = False``): the uplink and the downlink are two
  channels that do not compete (FDD); :meth:`AccessScheme.through_ns` says when
  each message sharing one direction of a cell is through it. Round robin,
  OFDMA, TDMA and proportional fair are such schemes.
- *joint* (``joint = True``): one medium both ways, contended by the devices
  and the access point, whose queue holds the downlink (Wi-Fi);
  :meth:`AccessScheme.joint_ns` schedules a whole exchange on it, and the
  server plans such exchanges with both directions at once.

Times are integer nanoseconds (int64), arrays aligned with the messages; a
message's *work* is its transmissions' airtime alone in its cell (all the
cell's resource blocks), attempts times its lone airtime. Messages of
different cells never interact.

The scheme sees only the traffic it shares: a dedicated downlink
(``downlink_access = 'dedicated'``) and ``resource_blocks = 'per-device'``
bypass it (each message is through at arrival + work).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from edgesim.errors import ScenarioError


class AccessScheme:
    """How the devices of one cell share its channel; subclass it to add a scheme.

    Class attributes (the scheme's declaration):

    - ``options``: the frozen dataclass of the scheme's own options (fields
      declared with :func:`edgesim.config.option`; the scenario's sub-table
      ``[network.radio.<name>]``), or None when it takes none;
    - ``flat_aliases``: deprecated keys of ``[network.radio]`` that stand for
      its options (old key -> option name), still read with a warning;
    - ``joint``: one medium both ways (implement :meth:`joint_ns`), else one
      channel per direction (implement :meth:`through_ns`);
    - ``batched``: whether the ``batched`` fidelity computes it (else the
      scenario check asks for ``events``, with the message ``not_batched``);
    - ``draws``: whether sharing draws random numbers (from the ``links``
      stream, in the plan's order), so no two exchanges are alike;
    - ``resource_grid``: whether it shares resource blocks of the numerology's
      grid (``channel_mhz`` must be one of its widths); a scheme without one
      has ``blocks`` = 1.

    An instance serves one run: ``radio`` is the ``[network.radio]`` table
    (:class:`~edgesim.network.radio.RadioConfig`), ``settings`` the scheme's
    options (an instance of ``options``, defaults filled in; None without
    options), ``links`` the run's links by direction (``{"up": ..., "down":
    ...}``; their SNRs feed fading schedulers), ``tcp`` whether the transport
    is TCP, with an initial window of ``initial_window`` segments.
    """

    options: ClassVar[type | None] = None
    flat_aliases: ClassVar[dict[str, str]] = {}
    joint: ClassVar[bool] = False
    batched: ClassVar[bool] = True
    draws: ClassVar[bool] = False
    resource_grid: ClassVar[bool] = True
    not_batched: ClassVar[str] = (
        "{access!r} is not computed by the 'batched' fidelity; use network.fidelity = 'events'"
    )

    def __init__(
        self, radio, settings=None, *, links=None, tcp: bool = False, initial_window: int = 10
    ):
        self.radio = radio
        self.settings = settings
        self.links = links or {}
        self.tcp = tcp
        self.initial_window = initial_window
        #: the cell's resource blocks R (1 for a scheme without a resource grid)
        self.blocks = radio.blocks() if self.resource_grid else 1

    # ------------------------------------------------------------------ checks (before a run)
    @classmethod
    def cross_check(cls, radio, settings, prefix: str) -> list[ScenarioError]:
        """Return the errors of the scheme's rules on the ``[network.radio]`` table ``radio``.

        ``settings``: its options (defaults filled in; None without options);
        ``prefix``: the table's key (``"network.radio"``); an option's key is
        ``f"{prefix}.{radio.access}.{option}"``. Called by
        :meth:`RadioConfig.cross_check <edgesim.network.radio.RadioConfig.cross_check>`
        after the fields' own checks passed. Default: no rule.
        """
        return []

    @classmethod
    def network_check(cls, network, settings) -> list[ScenarioError]:
        """Return the errors of the scheme's rules across the ``[network]`` table ``network``.

        Called by :meth:`NetworkConfig.cross_check
        <edgesim.network.config.NetworkConfig.cross_check>`. Default: a scheme
        that is not ``batched`` refuses ``network.fidelity = 'batched'``.
        """
        if network.fidelity == "batched" and not cls.batched:
            message = cls.not_batched.format(access=network.radio.access)
            return [ScenarioError("network.radio.access", message)]
        return []

    @classmethod
    def lone_rate_bps(cls, radio, settings) -> float:
        """Return the rate of a device alone in its cell under the fixed link model (bit/s).

        Default: the channel's ``bandwidth_bps``.
        """
        return radio.channel_rate_bps()

    # ------------------------------------------------------------------ closed forms (a run)
    def through_ns(
        self,
        direction: str,
        cell: np.ndarray,
        devices: np.ndarray,
        sizes: np.ndarray,
        arrive_ns: np.ndarray,
        transfers,
        rng: np.random.Generator | None,
        horizon_ns: int | None = None,
    ) -> np.ndarray:
        """Return when each message's last transmission has left its cell's channel (int64 ns, (m,)).

        A per-direction scheme's closed form, for the messages of one exchange
        that share ``direction`` ('up' or 'down'). ``cell`` (m,): each
        message's cell; ``devices`` (m,): its device; ``sizes`` (m,): bytes;
        ``arrive_ns`` (m,): when it reaches the sender's radio;
        ``transfers``: its :class:`~edgesim.network.links.Transfers`
        (``attempts * airtime_ns`` is its work); ``rng``: draws the scheme's
        randomness (only when ``draws``), None in a steady exchange;
        ``horizon_ns``: the round's deadline, past which a scheme may stop
        (a message not through by then gets any instant after it).
        Must not be earlier than arrival + work.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement through_ns")

    def joint_ns(
        self,
        cell: np.ndarray,
        down_arrive_ns: np.ndarray,
        down_work_ns: np.ndarray,
        up_offset_ns: np.ndarray,
        up_work_ns: np.ndarray,
        sends: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """A joint scheme's closed form: schedule both directions of an exchange on each cell.

        Arrays (m,) are aligned with the recipients; ``cell``: each one's
        cell; ``down_arrive_ns``: when its downlink reaches the access point;
        ``down_work_ns``: the downlink's work; ``up_offset_ns``: from the
        downlink's last transmission leaving the medium to the reply joining
        it; ``up_work_ns``: the reply's work; ``sends``: whether it replies.
        Returns (downlink through, uplink through; -1 where no reply), int64 ns.
        """
        raise NotImplementedError(f"{type(self).__name__} is not a joint scheme")

    def medium_work_ns(self, sizes: np.ndarray, work_ns: np.ndarray) -> np.ndarray:
        """Return each message's work on a joint medium (int64 ns, aligned with ``sizes``).

        ``work_ns``: its transmissions' airtimes alone. Default: unchanged.
        """
        return work_ns

    def broadcast_ns(
        self, size_bytes: int, airtime_ns: np.ndarray, where: np.ndarray, cells: int
    ) -> np.ndarray:
        """Return each cell's time to broadcast one message of ``size_bytes`` (int64 ns, (cells,)).

        ``airtime_ns`` (m,): the message's lone airtime to each receiver;
        ``where`` (m,): each receiver's cell, an index into the ``cells``
        cells. Default: at the rate of the cell's worst receiver (its longest
        airtime).
        """
        worst = np.zeros(cells, dtype=np.int64)
        np.maximum.at(worst, where, airtime_ns)
        return worst
