"""The ``[network.radio]`` table: :class:`RadioConfig` and its validation.

One wireless hop between the devices and their access point: the link
model and its parameters, the loss model, capped ARQ and medium access.
:meth:`RadioConfig.cross_check` holds a config built in code to the same
rules as a scenario file. The parts it names are registries below it: the
link and loss models (:mod:`edgesim.network.links`, :mod:`edgesim.network.loss`)
and the access schemes (:mod:`edgesim.network.access`, whose options are the
sub-table ``[network.radio.<access>]``); they read the table without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgesim.config import (
    allowed,
    field_errors,
    option,
    part_options,
    resolved_options,
    show,
    suggest,
)
from edgesim.errors import ScenarioError
from edgesim.network import to_ns
from edgesim.network.access import ACCESS_SCHEMES, AccessScheme
from edgesim.network.channel import NUMEROLOGIES, block_hz, channel_blocks, widths
from edgesim.network.links import LINKS, rto_ns_of
from edgesim.network.loss import LOSSES, ge_mean_loss
from edgesim.network.lte import peak_rate_bps  # importing it registers the 'lte' link
from edgesim.network.lte.options import rbg_split_errors
from edgesim.network.lte.tables import MAX_PRB


@dataclass(frozen=True)
class RadioConfig:
    """The scenario's ``[network.radio]`` table: one wireless hop between devices and the AP.

    Defaults follow docs/network.md (3GPP macro path loss, 8 dB
    shadowing, -174 dBm/Hz noise, 1 MHz resource blocks, 10 dBm uplink,
    Chen et al. IEEE TWC 2021 packet-error model).
    """

    model: str = option(
        "fixed",
        "link model: 'fixed' (constant rate bandwidth_bps and latency), 'shannon' (path loss,"
        " shadowing and Rayleigh fading; rate B log2(1 + SNR)), 'lte' (the same SINR through"
        " TS 36.213's CQI, MCS and TBS tables, HARQ, a latency per direction; options in"
        " [network.radio.lte]), or a name registered with edgesim.network.links.register_link",
    )
    link_options: Any = part_options(
        "model",
        LINKS,
        "the chosen link model's own options: the sub-table named after it"
        " ([network.radio.my-link]); 'fixed' and 'shannon' declare none (their keys are this"
        " table's own)",
    )
    latency_s: float = option(
        0.005,
        "one-way propagation + processing latency added to each delivered transmission ('lte'"
        " gives each direction its own: [network.radio.lte])",
        unit="s",
        ge=0.0,
    )
    bandwidth_bps: float | str = option(
        "auto",
        "fixed model: rate of the cell's channel, what one device sending alone gets (a"
        " resource block carries bandwidth_bps / blocks; 'per-device' gives every device a"
        " channel of its own); 'auto' = what LTE's tables give the channel at MCS 28 (TS"
        " 36.213's transport block of its blocks per 1 ms, less 2.1% of headers: 73.8 Mbit/s"
        " at 20 MHz, what ns-3's LTE delivers to a lone device; NR numerologies: the same"
        " bit/s per Hz of blocks, not validated)",
        unit="bit/s",
        kinds=(float, int, str),
        choices=("auto",),
        gt=0.0,
    )
    loss: str = option(
        "none",
        "per-transmission loss: 'none', 'bernoulli' (probability loss_prob), 'snr' (Rayleigh"
        " fading packet error of Chen et al. 2021, needs model = 'shannon'), 'gilbert-elliott'"
        " (bursty, ge_p/ge_r/ge_h/ge_k as in netem), or a name registered with"
        " edgesim.network.links.register_loss",
    )
    loss_options: Any = part_options(
        "loss",
        LOSSES,
        "the chosen loss model's own options: the sub-table named after it"
        " ([network.radio.my-loss]); the built-in losses declare none (their keys are this"
        " table's own)",
    )
    loss_prob: float = option(
        0.0,
        "bernoulli: probability that one transmission is lost (independent)",
        ge=0.0,
        le=1.0,
    )
    arq_max_retries: int = option(
        3,
        "ARQ: retransmissions R after the first try; a message still lost after R + 1"
        " transmissions is dropped",
        ge=0,
    )
    rto_s: float | str = option(
        "auto",
        "ARQ retransmission timeout: time a failed transmission waits (after its airtime)"
        " before the next try; 'auto' = 2 * latency_s (one round trip)",
        unit="s",
        kinds=(float, int, str),
        choices=("auto",),
        ge=0.0,
    )
    access: str = option(
        "round-robin",
        "how the devices of a cell share its resource blocks: 'round-robin' (slot by slot in"
        " turn, fluid limit: n senders each get 1/n of the channel), 'proportional-fair'"
        " (per-slot Rayleigh fading, each block to the best rate over average throughput;"
        " model = 'shannon', events fidelity), 'ofdma' (first-come waves: a message holds one"
        " block until it is sent), 'tdma' (one sender at a time on the whole channel), 'shared'"
        " (processor sharing of the channel: the same as round-robin's fluid limit), 'wifi'"
        " (802.11 EDCA contention among the devices with data and the access point, whose"
        " queue holds the downlink: one medium both ways; Bianchi's saturation throughput),"
        " or a name registered with edgesim.network.access.register_access",
    )
    access_options: Any = part_options(
        "access",
        ACCESS_SCHEMES,
        "the chosen access scheme's own options: the sub-table named after it"
        " ([network.radio.wifi], [network.radio.proportional-fair])",
    )
    downlink_access: str = option(
        "shared",
        "the access point's messages to its devices: 'shared' (its downlink channel shared by"
        " the access scheme, like the uplink's; FDD: the two directions do not compete) or"
        " 'dedicated' (each at the rate of a lone receiver, unshared: an idealisation)",
        choices=("shared", "dedicated"),
    )
    resource_blocks: int | str = option(
        "channel",
        "resource blocks of the cell: 'channel' (as many as channel_mhz holds in the"
        " numerology), an integer, or 'per-device' (every device has a channel of its own,"
        " nothing shared: an idealisation)",
        kinds=(int, str),
        choices=("channel", "per-device"),
        ge=1,
    )
    numerology: str = option(
        "lte",
        "the channel's resource grid: 'lte' (blocks of 12 x 15 kHz = 180 kHz) or NR's 'nr-15',"
        " 'nr-30', 'nr-60' (12 subcarriers of 15, 30 or 60 kHz)",
        choices=NUMEROLOGIES,
    )
    channel_mhz: float = option(
        20.0,
        "channel width; with resource_blocks = 'channel' it sets the number of blocks (LTE 20"
        " MHz: 100 blocks; NR at 30 kHz, 100 MHz: 273)",
        unit="MHz",
        kinds=(float, int),
        gt=0.0,
    )
    min_distance_m: float = option(
        35.0,
        "shannon: distances below this are raised to it before the path loss (minimum"
        " UE-cell distance of 3GPP TR 36.814, Table A.2.1.1-2)",
        unit="m",
        gt=0.0,
    )
    ge_p: float = option(
        0.01,
        "gilbert-elliott: P(good -> bad) per transmission (netem p); mean good run 1/p"
        " transmissions",
        ge=0.0,
        le=1.0,
    )
    ge_r: float = option(
        0.5,
        "gilbert-elliott: P(bad -> good) per transmission (netem r); mean burst 1/r transmissions",
        ge=0.0,
        le=1.0,
    )
    ge_h: float = option(
        0.0,
        "gilbert-elliott: probability that a transmission in the bad state gets through"
        " (netem gives 1-h; default 0: the bad state loses everything)",
        ge=0.0,
        le=1.0,
    )
    ge_k: float = option(
        1.0,
        "gilbert-elliott: probability that a transmission in the good state gets through"
        " (netem gives 1-k; default 1: the good state loses nothing)",
        ge=0.0,
        le=1.0,
    )
    tx_power_dbm: float = option(
        10.0, "shannon: device (uplink) transmit power P per resource block", unit="dBm"
    )
    ap_tx_power_dbm: float = option(
        23.0,
        "shannon: access point (downlink) transmit power per resource block; 23 dBm is a"
        " small-cell/edge AP (3GPP power class 3 maximum; a macro cell is ~36 dBm/MHz:"
        " 46 dBm over 10 MHz, TR 36.814), 13 dB above the uplink",
        unit="dBm",
    )
    rb_bandwidth_hz: float | str = option(
        "auto",
        "shannon: bandwidth B of one resource block; 'auto' = the numerology's (LTE: 180 kHz)",
        unit="Hz",
        kinds=(float, int, str),
        choices=("auto",),
        gt=0.0,
    )
    noise_dbm_per_hz: float = option(
        -174.0, "shannon: noise power spectral density N0 (thermal, 290 K)", unit="dBm/Hz"
    )
    interference_dbm: float | str = option(
        "none",
        "shannon: interference power I over one resource block, or 'none' (I = 0)",
        unit="dBm",
        kinds=(float, int, str),
        choices=("none",),
    )
    shadowing_db: float = option(
        8.0,
        "shannon: standard deviation of log-normal shadowing, drawn once per device",
        unit="dB",
        ge=0.0,
    )
    path_loss_db_at_1km: float = option(
        128.1, "shannon: path loss at 1 km (3GPP macro: 128.1 + 37.6 log10 d_km)", unit="dB"
    )
    path_loss_exponent_db: float = option(
        37.6,
        "shannon: path loss slope per decade of distance (10 x the exponent)",
        unit="dB/decade",
        ge=0.0,
    )
    snr_waterfall_m: float = option(
        0.023,
        "snr loss: waterfall threshold m of q = 1 - exp(-m (I + B N0) / (P h)) (Chen et al."
        " IEEE TWC 2021)",
        gt=0.0,
    )

    def cross_check(self, prefix: str = "network.radio") -> list[ScenarioError]:
        """Return the errors of this section (empty when consistent), keys ``prefix.<field>``.

        Checks every field against its declared type, choices and bounds (so
        a config built in code is held to the same rules as a scenario
        file), then the rules across fields: ``model`` and ``loss`` must be
        registered, and ``access`` a registered :class:`AccessScheme`;
        ``loss = 'snr'`` needs ``model = 'shannon'``; ``loss_prob`` is only
        used by ``'bernoulli'``, the ``ge_*`` keys only by
        ``'gilbert-elliott'`` and the radio keys only by ``'shannon'`` (a
        changed value that would be ignored is an error); a loss model that
        loses every transmission (long-run rate 1) and a Gilbert-Elliott chain
        that never moves (``ge_p = ge_r = 0``) are errors. The access scheme
        adds its own rules (:meth:`AccessScheme.cross_check`).
        """
        errs = field_errors(self, prefix)
        if errs:
            return errs

        def err(key: str, message: str) -> None:
            errs.append(ScenarioError(f"{prefix}.{key}", message))

        for key, registry, what in (("model", LINKS, "link"), ("loss", LOSSES, "loss")):
            name = getattr(self, key)
            if name not in registry:
                err(
                    key,
                    f"unknown {what} model {name!r}{suggest(name, registry)}; use "
                    + ", ".join(repr(k) for k in registry),
                )
        scheme = self.access_scheme()
        name = self.access
        if name not in ACCESS_SCHEMES:
            err(
                "access",
                f"{show(name)} is not allowed{suggest(name, ACCESS_SCHEMES)}; use"
                f" {allowed((str,), tuple(ACCESS_SCHEMES))}",
            )
        elif scheme is None:
            err("access", f"{name!r} is {ACCESS_SCHEMES[name]!r}, not a subclass of AccessScheme")
        if self.model == "lte" and self.numerology != "lte":
            err(
                "numerology",
                f"model = 'lte' needs the LTE resource grid (numerology = 'lte'), got"
                f" {self.numerology!r}; NR's MCS and TBS tables are not modelled",
            )
        elif self.model == "lte" and isinstance(self.resource_blocks, int):
            if self.resource_blocks > MAX_PRB:
                err(
                    "resource_blocks",
                    f"model = 'lte': TS 36.213's TBS table covers 1..{MAX_PRB} blocks, got"
                    f" {self.resource_blocks}",
                )
        errs += rbg_split_errors(self, prefix)  # LTE's downlink_rbg_split needs round robin
        if self.loss == "snr" and self.model != "shannon":
            err("loss", f"'snr' needs model = 'shannon' (it uses the SNR), got {self.model!r}")

        defaults = RadioConfig()
        unused: list[tuple[str, str]] = []
        if self.loss != "bernoulli":
            unused.append(("loss_prob", "loss = 'bernoulli'"))
        if self.loss != "gilbert-elliott":
            unused += [(k, "loss = 'gilbert-elliott'") for k in ("ge_p", "ge_r", "ge_h", "ge_k")]
        if self.model not in ("shannon", "lte"):
            unused += [(k, "model = 'shannon' or 'lte'") for k in _SHANNON_KEYS]
        if self.model in ("shannon", "lte"):
            unused.append(("bandwidth_bps", "model = 'fixed'"))
        if self.model == "lte":  # [network.radio.lte] gives a latency per direction
            unused.append(
                (
                    "latency_s",
                    "model 'fixed' or 'shannon' (LTE: [network.radio.lte]"
                    " downlink_latency_s and uplink_latency_s)",
                )
            )
        if self.loss != "snr":
            unused.append(("snr_waterfall_m", "loss = 'snr'"))
        for key, needs in unused:
            value = getattr(self, key)
            if value != getattr(defaults, key):
                err(key, f"{value!r} would be ignored: it is only used with {needs}")

        if scheme is not None:
            errs += scheme.cross_check(self, resolved_options(self, "access_options"), prefix)
        if (scheme is None or scheme.resource_grid) and channel_blocks(
            self.numerology, self.channel_mhz
        ) is None:
            err(
                "channel_mhz",
                f"{self.numerology} has no {self.channel_mhz:g} MHz channel; use one of"
                f" {widths(self.numerology)}",
            )
        if self.loss == "bernoulli" and self.loss_prob == 1.0:
            err("loss_prob", "1 loses every transmission (no message is ever delivered); use < 1")
        if self.loss == "gilbert-elliott":
            if self.ge_p + self.ge_r == 0.0:
                err("ge_p", "ge_p = ge_r = 0: the chain never moves; give ge_p + ge_r > 0")
            elif ge_mean_loss(self.ge_p, self.ge_r, self.ge_h, self.ge_k) >= 1.0:
                err(
                    "ge_k",
                    "the long-run loss rate is 1 (no message is ever delivered); raise ge_k"
                    " or ge_h, or lower ge_p",
                )
        return errs

    def blocks(self) -> int:
        """Return the cell's resource blocks R: ``resource_blocks``, or what the channel holds.

        With ``'per-device'`` it is the channel's count too: each device has
        such a channel of its own.
        """
        if isinstance(self.resource_blocks, int):
            return self.resource_blocks
        blocks = channel_blocks(self.numerology, self.channel_mhz)
        if blocks is None:
            raise ValueError(f"{self.numerology} has no {self.channel_mhz:g} MHz channel")
        return blocks

    def block_bandwidth_hz(self) -> float:
        """Return the bandwidth of one resource block (Hz): ``rb_bandwidth_hz`` or the numerology's."""
        if self.rb_bandwidth_hz == "auto":
            return block_hz(self.numerology)
        return float(self.rb_bandwidth_hz)

    def access_scheme(self) -> type[AccessScheme] | None:
        """Return the access scheme ``access`` names (its class, from :data:`ACCESS_SCHEMES`), or
        None when no :class:`AccessScheme` subclass is registered under that name."""
        scheme = ACCESS_SCHEMES.get(self.access)
        return scheme if isinstance(scheme, type) and issubclass(scheme, AccessScheme) else None

    def channel_rate_bps(self) -> float:
        """Return the fixed model's channel rate (bit/s): ``bandwidth_bps``, or under ``'auto'``
        what LTE's tables give the channel at MCS 28 less headers (:func:`edgesim.network.lte.
        peak_rate_bps`; NR numerologies: the same bit/s per Hz of resource blocks)."""
        if self.bandwidth_bps != "auto":
            return float(self.bandwidth_bps)
        blocks = channel_blocks(self.numerology, self.channel_mhz)
        if blocks is None:
            raise ValueError(f"{self.numerology} has no {self.channel_mhz:g} MHz channel")
        if self.numerology == "lte":
            return peak_rate_bps(blocks)
        per_hz = peak_rate_bps(LTE_20MHZ_BLOCKS) / (LTE_20MHZ_BLOCKS * block_hz("lte"))
        return per_hz * blocks * block_hz(self.numerology)

    def lone_rate_bps(self) -> float:
        """Return the fixed model's rate of a device alone in its cell (bit/s): ``bandwidth_bps``,
        or what the access scheme says (Wi-Fi: the MAC's goodput of one contender)."""
        settings = resolved_options(self, "access_options")
        return self.access_scheme().lone_rate_bps(self, settings)

    def rto_ns(self) -> int:
        """Return the ARQ retransmission timeout in integer ns (``'auto'`` = 2 x latency)."""
        return rto_ns_of(self.rto_s, to_ns(self.latency_s))


#: Resource blocks of LTE's widest (20 MHz) channel: its peak rate per Hz extends to NR's grids.
LTE_20MHZ_BLOCKS = 100

_SHANNON_KEYS = (
    "min_distance_m",
    "tx_power_dbm",
    "ap_tx_power_dbm",
    "rb_bandwidth_hz",
    "noise_dbm_per_hz",
    "interference_dbm",
    "shadowing_db",
    "path_loss_db_at_1km",
    "path_loss_exponent_db",
)
