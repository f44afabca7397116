"""The ``[network.radio]`` table: :class:`RadioConfig` and its validation.

One wireless hop between the devices and their access point: the link
model and its parameters, the loss model, capped ARQ and medium access.
:meth:`RadioConfig.cross_check` holds a config built in code to the same
rules as a scenario file. The link and loss models that read it are in
:mod:`edgesim.network.links` and :mod:`edgesim.network.loss`.
"""

from __future__ import annotations

from dataclasses import dataclass

from edgesim.config import field_errors, option, suggest
from edgesim.errors import ScenarioError
from edgesim.network import to_ns


@dataclass(frozen=True)
class RadioConfig:
    """The scenario's ``[network.radio]`` table: one wireless hop between devices and the AP.

    Defaults follow docs/network.md (3GPP macro path loss, 8 dB
    shadowing, -174 dBm/Hz noise, 1 MHz resource blocks, 10 dBm uplink,
    Chen et al. IEEE TWC 2021 packet-error model).
    """

    model: str = option(
        "fixed",
        "link model: 'fixed' (constant rate bandwidth_bps and latency) or 'shannon' (path loss,"
        " shadowing and Rayleigh fading; rate B log2(1 + SNR)), or a name registered with"
        " edgesim.network.links.register_link",
    )
    latency_s: float = option(
        0.005,
        "one-way propagation + processing latency added to each delivered transmission",
        unit="s",
        ge=0.0,
    )
    bandwidth_bps: float = option(
        20e6,
        "fixed model: rate of one transmission (of one resource block when the access"
        " scheme splits the medium)",
        unit="bit/s",
        gt=0.0,
    )
    loss: str = option(
        "none",
        "per-transmission loss: 'none', 'bernoulli' (probability loss_prob), 'snr' (Rayleigh"
        " fading packet error of Chen et al. 2021, needs model = 'shannon'), 'gilbert-elliott'"
        " (bursty, ge_p/ge_r/ge_h/ge_k as in netem), or a name registered with"
        " edgesim.network.links.register_loss",
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
        "ofdma",
        "medium access: 'ofdma' (a message holds one resource block until it is sent:"
        " first come, in waves), 'round-robin' (the blocks shared slot by slot among the"
        " senders, fluid limit: each gets min(1, blocks / senders)), 'tdma' (one sender at a"
        " time), 'shared' (processor sharing of the medium)",
        choices=("ofdma", "round-robin", "tdma", "shared"),
    )
    resource_blocks: int | str = option(
        "per-device",
        "resource blocks of the cell: an integer, or 'per-device' (every device has its own)",
        kinds=(int, str),
        choices=("per-device",),
        ge=1,
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
    rb_bandwidth_hz: float = option(
        1e6, "shannon: bandwidth B of one resource block", unit="Hz", gt=0.0
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
        registered; ``loss = 'snr'`` needs ``model = 'shannon'``;
        ``loss_prob`` is only used by ``'bernoulli'``, the ``ge_*`` keys only
        by ``'gilbert-elliott'`` and the radio keys only by ``'shannon'``
        (a changed value that would be ignored is an error); a loss model
        that loses every transmission (long-run rate 1) and a Gilbert-Elliott
        chain that never moves (``ge_p = ge_r = 0``) are errors.
        """
        # imported here, not at the top: links.py and loss.py import this module
        from edgesim.network.links import LINKS
        from edgesim.network.loss import LOSSES, _ge_mean_loss

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
        if self.loss == "snr" and self.model != "shannon":
            err("loss", f"'snr' needs model = 'shannon' (it uses the SNR), got {self.model!r}")

        defaults = RadioConfig()
        unused: list[tuple[str, str]] = []
        if self.loss != "bernoulli":
            unused.append(("loss_prob", "loss = 'bernoulli'"))
        if self.loss != "gilbert-elliott":
            unused += [(k, "loss = 'gilbert-elliott'") for k in ("ge_p", "ge_r", "ge_h", "ge_k")]
        if self.model != "shannon":
            unused += [(k, "model = 'shannon'") for k in _SHANNON_KEYS]
        if self.model == "shannon":
            unused.append(("bandwidth_bps", "model = 'fixed'"))
        if self.loss != "snr":
            unused.append(("snr_waterfall_m", "loss = 'snr'"))
        for key, needs in unused:
            value = getattr(self, key)
            if value != getattr(defaults, key):
                err(key, f"{value!r} would be ignored: it is only used with {needs}")

        if self.loss == "bernoulli" and self.loss_prob == 1.0:
            err("loss_prob", "1 loses every transmission (no message is ever delivered); use < 1")
        if self.loss == "gilbert-elliott":
            if self.ge_p + self.ge_r == 0.0:
                err("ge_p", "ge_p = ge_r = 0: the chain never moves; give ge_p + ge_r > 0")
            elif _ge_mean_loss(self.ge_p, self.ge_r, self.ge_h, self.ge_k) >= 1.0:
                err(
                    "ge_k",
                    "the long-run loss rate is 1 (no message is ever delivered); raise ge_k"
                    " or ge_h, or lower ge_p",
                )
        return errs

    def rto_ns(self) -> int:
        """Return the ARQ retransmission timeout in integer ns (``'auto'`` = 2 x latency)."""
        return _rto_ns(self.rto_s, to_ns(self.latency_s))


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


def _rto_ns(rto_s: float | str, latency_ns: int) -> int:
    """Return the ARQ timeout in ns: ``rto_s`` rounded, or 2 x ``latency_ns`` for ``'auto'``."""
    if isinstance(rto_s, str):
        if rto_s != "auto":
            raise ValueError(f"rto_s must be a number of seconds or 'auto', got {rto_s!r}")
        return 2 * latency_ns
    if not rto_s >= 0:
        raise ValueError(f"rto_s must be >= 0, got {rto_s!r}")
    return to_ns(rto_s)
