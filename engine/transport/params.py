"""The knobs of the transport model, one frozen dataclass per mechanism.

Every number here is a default read from the catalog (`engine.transport.defaults`) or set by
the user for a what-if; nothing is tuned inside the model. Units are SI (seconds, bytes,
bytes per second) unless a name says otherwise. `dataclasses.replace` changes one knob:
``replace(config, pfc=replace(config.pfc, xoff_bytes=200e3))``.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N815

from __future__ import annotations

from dataclasses import dataclass, field

LOSSLESS_CHOICES = ("credit", "pfc", "none")


@dataclass(frozen=True)
class DcqcnParams:
    """DCQCN at the sender (reaction point): its parameters, as NVIDIA documents them and as
    the fluid model of Zhu et al. 2016 names them.

    `rate_decrease_period_s` bounds how often a flow is cut (NVIDIA's RATE_REDUCE_MONITOR_PERIOD);
    the model cuts at most once per ``max(cnp_interval_s, rate_decrease_period_s)``.
    `byte_counter_bytes` of ``inf`` means no byte counter.
    `clamp_target_always` is the published DCQCN (every cut sets the target rate R_T to the
    current rate R_C); without it, as NVIDIA's CLAMP_TGT_RATE = 0, a cut sets R_T only when
    the rate was raised since the last cut, by the byte counter or, with
    `clamp_target_after_timer` (CLAMP_TGT_RATE_AFTER_TIME_INC), by the timer too: a train
    of cuts then keeps the target the flow had before it. The kernel runs the NIC's
    reaction point per flow class (`engine.transport.reaction`); `published_mean_field`
    runs the paper's fluid equations instead (`engine.transport.control`), which the tests
    of the paper's analysis use.
    """

    cnp_interval_s: float
    alpha_update_s: float
    alpha_gain: float
    initial_alpha: float
    rate_increase_timer_s: float
    byte_counter_bytes: float
    fast_recovery_steps: int
    additive_increase_Bps: float
    hyper_increase_Bps: float
    min_rate_Bps: float
    max_decrease_fraction: float
    rate_decrease_period_s: float = 0.0
    clamp_target_always: bool = True
    clamp_target_after_timer: bool = True
    published_mean_field: bool = False
    cnp_pacing: str = "flow"  # or "port": a receiving port's CNPs shared by its flows

    @property
    def decrease_interval_s(self) -> float:
        """The interval tau of the fluid model: one possible cut per interval."""
        return max(self.cnp_interval_s, self.rate_decrease_period_s)


@dataclass(frozen=True)
class IbCcParams:
    """InfiniBand congestion control (IBA Annex A10): FECN at a switch, BECN to the source,
    the congestion control table index (CCTI) raised per BECN and lowered by a timer."""

    marking_rate: int
    threshold_fraction: float
    ccti_increase: float
    ccti_min: float
    ccti_limit: float
    ccti_timer_s: float
    cct_numerator: float
    cct_index_scale: float
    cct_scale: float
    cct_shift: int


@dataclass(frozen=True)
class EcnParams:
    """RED-style ECN marking at a switch egress queue (Kmin, Kmax in bytes; Pmax 0..1)."""

    kmin_bytes: float
    kmax_bytes: float
    pmax: float


@dataclass(frozen=True)
class PfcParams:
    """Priority flow control at a switch ingress port.

    `xoff_bytes` of None applies the catalog rule: pause when the port's share of the buffer
    minus the headroom it needs is used. `response_bytes_by_gbps` is the peer's response time
    as bytes at each port speed (IEEE 802.3 Annex 31B.3.7).
    """

    response_bytes_by_gbps: dict[float, float]
    xon_offset_bytes: float
    xoff_bytes: float | None = None


@dataclass(frozen=True)
class Mechanisms:
    """Which mechanisms run: the lossless one (``credit``, ``pfc`` or ``none``), ECN marking
    with DCQCN at the senders, and InfiniBand congestion control."""

    lossless: str
    dcqcn: bool
    ib_cc: bool

    def __post_init__(self) -> None:
        if self.lossless not in LOSSLESS_CHOICES:
            raise ValueError(f"lossless must be one of {LOSSLESS_CHOICES}, not {self.lossless!r}")


@dataclass(frozen=True)
class SettleParams:
    """When the stepping may stop and jump to the next event.

    Rates and queues are averaged over windows; when two consecutive windows agree within
    `rel_tol` (and no flow started or ended), the state is settled and the simulation jumps
    to the next flow completion with the averaged rates. A window that is not settled makes
    the next one `growth` times longer (up to `max_window_s`), so that a periodic steady
    state (PFC on/off cycles) settles once its average is known to within `rel_tol`.
    """

    enabled: bool = True
    window_s: float = 20e-6
    max_window_s: float = 2e-3
    growth: float = 1.5
    rel_tol: float = 0.01


@dataclass(frozen=True)
class TransportConfig:
    """Everything the transport model needs besides the network: mechanisms and parameters.

    `mtu_bytes` is the packet size used for marking, headroom and IB CC packet times.
    `credit_overhead_s` is added to twice the propagation delay for the credit round trip.
    `loss_recovery` is what a drop costs its sender: ``selective-repeat`` resends the lost
    bytes, ``go-back-n`` also the window in flight behind each lost packet.
    `dt_s` is the fixed step of the transient phase; `cc_interval_s` how often the senders'
    rate controls (DCQCN, IB CC) move (a multiple of the step, at least one);
    `sample_interval_s` the spacing of the time series in the result.
    `egress_service` is how a switch egress queue serves its classes: ``fifo`` in the order
    their bytes came, in bins of `fifo_bin_s` over up to `fifo_depth_s` of queue (deeper,
    the newest bin takes the rest), or ``even``, every class's queued bytes in proportion
    (`engine.transport.fifo`). Both are resolutions of the model, not figures of a device:
    bins must be finer than the gaps a PFC pause leaves among a sender's bytes (1 us keeps
    them, 10 us loses them: docs/transport.md, "The FIFO closes it").
    """

    mechanisms: Mechanisms
    dcqcn: DcqcnParams
    ib_cc: IbCcParams
    ecn: EcnParams
    pfc: PfcParams
    mtu_bytes: float
    credit_overhead_s: float
    loss_recovery: str = "selective-repeat"
    dt_s: float = 100e-9
    cc_interval_s: float = 400e-9
    sample_interval_s: float = 1e-6
    settle: SettleParams = field(default_factory=SettleParams)
    max_steps: int = 20_000_000
    egress_service: str = "fifo"
    fifo_bin_s: float = 100e-9
    fifo_depth_s: float = 1e-3

    @property
    def reaction_point(self) -> bool:
        """Whether DCQCN runs as the NIC's reaction point per class (which draws each
        class's cuts, `engine.transport.reaction`), not as the published mean field."""
        return bool(self.mechanisms.dcqcn) and not self.dcqcn.published_mean_field
