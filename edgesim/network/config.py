"""The ``[network]`` table: fidelity, round policy, and one sub-table per part of the network."""

from __future__ import annotations

from dataclasses import dataclass

from edgesim.config import option, resolved_options, section
from edgesim.errors import ScenarioError
from edgesim.mechanisms.protocol import FLOAT_BYTES
from edgesim.network.access import ACCESS_SCHEMES
from edgesim.network.availability import AVAILABILITY_MODELS, AvailabilityConfig
from edgesim.network.compute import COMPUTE_MODELS, ComputeConfig
from edgesim.network.energy import EnergyConfig
from edgesim.network.links import LINKS
from edgesim.network.loss import LOSSES
from edgesim.network.mobility import MobilityConfig, area_of, read_trace
from edgesim.network.radio import RadioConfig
from edgesim.network.secagg import SecAggConfig
from edgesim.network.topology import BackhaulConfig, TopologyConfig
from edgesim.plugins import register_from_spec

FIDELITIES = ("none", "events", "batched")


@dataclass(frozen=True)
class NetworkConfig:
    """The ``[network]`` table: how the mechanism's messages travel, and how long they take."""

    fidelity: str = option(
        "none",
        "'none' (in-memory driver: counts messages, no simulated time), 'events' (every message"
        " handled at its own instant as a SimPy event) or 'batched' (one numpy plan and one"
        " event per round: the same results, for every access scheme but proportional-fair)",
        choices=FIDELITIES,
    )
    round_policy: str = option(
        "wait-all",
        "'wait-all' (a round closes when every reply arrived or is known lost) or 'deadline'"
        " (it closes at deadline_s at the latest; late agents are cut and the mechanism"
        " reweights the replies it got)",
        choices=("wait-all", "deadline"),
    )
    deadline_s: float = option(
        1.0,
        "round deadline, from the server's first message (round_policy = 'deadline')",
        unit="s",
        gt=0.0,
    )
    model_bytes: int | str = option(
        "auto",
        "bytes of model each model or gradient message carries (its payload; the 64-byte header"
        " comes on top): 'auto' = the learning model's own 8 n_params, or a number, to time the"
        " transfers of a real model (say 45e6 for a 45 MB network) on a small learning problem",
        unit="B",
        kinds=(int, str),
        choices=("auto",),
        ge=1,
    )
    downlink: str = option(
        "unicast",
        "'unicast' (one message per recipient) or 'broadcast' (a message that is the same for"
        " every recipient goes once per access point: one copy over each wired path, one"
        " transmission per cell at the rate of its worst receiver, or Wi-Fi's multicast rate;"
        " unacknowledged: each receiver loses it independently, no ARQ)",
        choices=("unicast", "broadcast"),
    )
    transport: str = option(
        "ideal",
        "'ideal' (a message goes at its link's rate from its first byte) or 'tcp' (each message"
        " on a fresh connection: a handshake round trip, then slow start from"
        " tcp_initial_window segments of tcp_mss_bytes; closed form, see docs/network.md)",
        choices=("ideal", "tcp"),
    )
    tcp_initial_window: int = option(
        10, "tcp: initial congestion window (RFC 6928)", unit="segments", ge=1
    )
    tcp_mss_bytes: int = option(
        1448, "tcp: segment size (1500-byte MTU, timestamps)", unit="B", ge=1
    )
    radio: RadioConfig = section(RadioConfig, "the radio hop between a device and its access point")
    backhaul: BackhaulConfig = section(
        BackhaulConfig, "the wired path from an access point to the server"
    )
    topology: TopologyConfig = section(TopologyConfig, "access points and device placement")
    compute: ComputeConfig = section(ComputeConfig, "devices' compute time per request")
    availability: AvailabilityConfig = section(AvailabilityConfig, "devices' on/off churn")
    secagg: SecAggConfig = section(SecAggConfig, "secure aggregation (Bonawitz et al.; SecAgg+)")
    energy: EnergyConfig = section(EnergyConfig, "devices' energy: powers, compute, batteries")
    mobility: MobilityConfig = section(MobilityConfig, "moving devices and handover")

    def payload_bytes(self, n_params: int) -> int:
        """Return the bytes of model one model or gradient message carries (header excluded).

        ``model_bytes`` when set, else the learning model's own 8 ``n_params``.
        """
        return FLOAT_BYTES * n_params if self.model_bytes == "auto" else int(self.model_bytes)

    def register_plugins(self) -> list[ScenarioError]:
        """Register the ``"module:Name"`` kinds this table names (links, losses, access, compute, availability).

        Each factory has the signature of its registry (see
        :data:`~edgesim.network.links.LinkFactory` and friends). Returns the
        import errors. Called by :meth:`cross_check` and by workers that run
        an already-validated scenario.
        """
        return [
            *register_from_spec(self.radio.model, "network.radio.model", LINKS),
            *register_from_spec(self.radio.loss, "network.radio.loss", LOSSES),
            *register_from_spec(self.radio.access, "network.radio.access", ACCESS_SCHEMES),
            *register_from_spec(self.compute.model, "network.compute.model", COMPUTE_MODELS),
            *register_from_spec(
                self.availability.model, "network.availability.model", AVAILABILITY_MODELS
            ),
        ]

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the errors of rules spanning keys of the ``[network]`` table."""
        plugin_errors = self.register_plugins()
        if plugin_errors:
            return plugin_errors
        errs = [
            *self.radio.cross_check("network.radio"),
            *self.topology.cross_check(agents_count),
            *self.compute.cross_check(agents_count),
            *self.availability.cross_check(agents_count),
        ]
        if self.transport != "tcp":
            defaults = NetworkConfig()
            unused = {
                f"network.{k}": (getattr(self, k), getattr(defaults, k))
                for k in ("tcp_initial_window", "tcp_mss_bytes")
            }
            for path, (value, default) in unused.items():
                if value != default:
                    errs.append(
                        ScenarioError(
                            path,
                            f"{value!r} would be ignored: it is only used with transport = 'tcp'",
                        )
                    )
        errs += self.mobility.cross_check()
        if self.mobility.model == "trace" and not errs:
            t = self.topology
            area = area_of(t.site_xy(t.cells(agents_count)), t.cell_radius_m)
            try:
                read_trace(self.mobility.trace_path, agents_count, area)
            except (OSError, ValueError) as err:
                errs.append(ScenarioError("network.mobility.trace_path", str(err)))
        if self.mobility.model != "static":
            if self.radio.model not in ("fixed", "shannon", "lte"):
                errs.append(
                    ScenarioError(
                        "network.mobility.model",
                        f"moving devices need a built-in link ('fixed', 'shannon' or 'lte'), not"
                        f" {self.radio.model!r}",
                    )
                )
            if self.radio.loss == "snr" or self.topology.placement == "file":
                key = "radio.loss" if self.radio.loss == "snr" else "topology.placement"
                errs.append(
                    ScenarioError(
                        f"network.{key}",
                        "does not combine with moving devices yet (network.mobility.model):"
                        " the snr loss and file placement assume fixed positions",
                    )
                )
        if self.downlink == "broadcast" and self.fidelity == "none":
            errs.append(
                ScenarioError(
                    "network.downlink",
                    "'broadcast' is a property of the simulated network: use fidelity 'events'"
                    " or 'batched'",
                )
            )
        scheme = self.radio.access_scheme()
        if scheme is not None:
            settings = resolved_options(self.radio, "access_options")
            if scheme.options is None or isinstance(settings, scheme.options):
                errs += scheme.network_check(self, settings)  # e.g. Wi-Fi refuses churn
        return errs
