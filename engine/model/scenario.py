"""The scenario: plain dataclasses, their versioned JSON form and dotted-path overrides.

A scenario is what an engineer edits: device groups ("128 × DGX H100"), link bundles between
two groups with a wiring pattern, fabric technology settings, a routing policy, a workload and
the failed elements. It holds no computed state; the engine expands it into arrays on demand.

The JSON form is versioned (`FORMAT_VERSION`) and loss-free: ``from_json(to_json(s)) == s``.
Reading rejects unknown or mistyped fields with a `ScenarioError` naming the JSON path, so a
typo in a hand-edited file is reported, not silently ignored. The format is documented in
docs/scenario-format.md.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from engine.model.constraints import Constraints
from engine.model.devices import CustomDevice, json_value
from engine.model.errors import Problem, ScenarioError
from engine.model.format_upgrades import from_version_1, printable
from engine.model.jobs import Job
from engine.model.limits import MAX_TEXT_CHARS, Limit, beyond, limit_of
from engine.model.traffic import TrafficFlow

FORMAT_NAME = "fabriclab-scenario"
FORMAT_VERSION = 3  # 3: devices, constraints, jobs, workload.sizes

GROUP_KINDS = ("server", "switch", "storage")  # storage: engine.model.networks
TIERS = ("server", "leaf", "spine", "core")
PATTERNS = ("rail", "full", "one-to-one", "striped")
TECHNOLOGIES = ("infiniband", "roce")
ROUTING_MODES = ("ecmp", "adaptive", "spray")
WORKLOAD_KINDS = ("permutation", "collective", "training", "traffic")
LOSS_RECOVERY = ("link-retransmit", "go-back-n", "selective-repeat")


@dataclass
class Metadata:
    """Name, description and tags shown in the library and the window title."""

    name: str = "untitled"
    description: str = ""
    tags: list[str] = field(default_factory=list)
    author: str = ""


@dataclass
class DeviceGroup:
    """`count` identical devices of one catalog `model`, drawn as one node on the canvas.

    `overrides` replaces catalog fields for this group only (e.g. ``{"latency_ns": 250}``).
    """

    id: str
    kind: str
    model: str
    count: int
    tier: str
    name: str = ""
    position: tuple[float, float] = (0.0, 0.0)
    overrides: dict[str, float] = field(default_factory=dict)


@dataclass
class LinkBundle:
    """The cables between two groups, `a` (lower tier) and `b` (upper tier).

    Patterns: ``rail`` (NIC r of every server goes to the r-th switch of its block),
    ``full`` (every member of block k of `a` to every member of block k of `b`; `a` is cut
    into `blocks` contiguous blocks of ceil(n/blocks) members, `b` into equal blocks), ``striped`` (member i of `a` to every member of block
    i mod `blocks` of `b`: spine planes to core groups), ``one-to-one`` (member i to member i).
    For server groups the members are the servers' NICs. `links_per_pair` cables join each
    connected pair. `cable` is a catalog id or ``auto`` (chosen by length and speed).
    """

    id: str
    a: str
    b: str
    pattern: str
    links_per_pair: int = 1
    speed_gbps: float = 400.0
    blocks: int = 1
    cable: str = "auto"
    length_m: float = 3.0


@dataclass
class FabricSettings:
    """Technology and its knobs. ``None`` means "the catalog's value" (shown in the UI).

    `mtu_bytes` is the packet payload: it sets the header efficiency (payload over payload
    plus the technology's per-packet headers) unless `header_efficiency` forces one, and the
    transport's packet size (PFC headroom, ECN marking, IB CC). `collnet` lets NCCL's choice
    use in-network reduction (InfiniBand SHARP) where every switch tier offers it, as
    ``NCCL_COLLNET_ENABLE=1`` does; NCCL's default is off.
    """

    technology: str = "infiniband"
    switch_latency_ns: float | None = None
    nic_latency_ns: float | None = None
    header_efficiency: float | None = None
    mtu_bytes: int | None = None
    packet_loss_rate: float | None = None
    loss_recovery: str | None = None
    collnet: bool | None = None


@dataclass
class TransportSettings:
    """How transfers move through the fabric's queues; ``None`` means the catalog's default
    for the fabric's technology (InfiniBand: credits, IB CC off; RoCE: PFC, ECN and DCQCN).

    `model` ``mechanistic`` runs the transport mechanisms (`engine.transport`); ``ideal``
    gives max-min fair rates, what a perfect transport would do. `pfc` false makes a RoCE
    fabric lossy (drops and resends). ECN thresholds and the port buffer replace the
    switches' catalog figures on every link; `dcqcn_profile` names a catalog DCQCN profile
    (default: the NIC's own); the ``dcqcn_g_reading``, ``_byte_unit_bytes``, ``_byte_counter``
    and ``_cnp_pacing`` fields read its firmware registers (`engine.transport.readings`).
    """

    model: str = "mechanistic"
    pfc: bool | None = None
    pfc_xoff_bytes: float | None = None
    ecn_kmin_bytes: float | None = None
    ecn_kmax_bytes: float | None = None
    ecn_pmax: float | None = None
    dcqcn: bool | None = None
    dcqcn_profile: str | None = None
    dcqcn_g_reading: str | None = None
    dcqcn_byte_unit_bytes: float | None = None
    dcqcn_byte_counter: bool | None = None
    dcqcn_cnp_pacing: str | None = None
    ib_cc: bool | None = None
    port_buffer_bytes: float | None = None


@dataclass
class RoutingPolicy:
    """How flows are placed on equal-cost paths.

    ``ecmp``: each flow hashed onto one path (deterministic for `seed`), split into
    `flows_per_connection` independently hashed sub-flows like NCCL's queue pairs per
    connection. ``adaptive``: each flow on the least-loaded path
    (past 200,000 flows in one pattern, the least-loaded next link at each hop). ``spray``: every flow split
    evenly over all equal-cost next hops. `pxn` forwards over NVLink to the local GPU on the
    destination's rail before entering the network (NCCL's PXN); without it a GPU uses its own
    NIC whenever that NIC can reach the destination.

    `hash_scope` says which switches share one ECMP hash function (one of `HASH_SCOPES`):
    ``switch`` (each switch its own seed), ``tier`` (one per tier: leaves alike, spines
    alike), ``model`` (one per catalog model, a vendor's default: every switch of a model
    hashes alike) or ``fabric`` (one everywhere). Switches hashing alike make the choices of
    successive hops correlated, so flows that collided on a leaf's uplink collide again
    further up (hash polarization). The default is ``switch``: Cumulus Linux, the NOS of the
    Spectrum switches, seeds each switch's ECMP hash at random unless configured (its
    ``traffic.conf``: ``ecmp_hash_seed``, default random); a fabric of switches left on one
    fixed seed (SAI's default is 0) is what ``model`` asks.
    """

    HASH_SCOPES: typing.ClassVar[tuple[str, ...]] = ("switch", "tier", "model", "fabric")

    mode: str = "ecmp"
    seed: int = 0
    flows_per_connection: int = 1
    pxn: bool = False
    hash_scope: str = "switch"


@dataclass
class TrainingJob:
    """A training job: a model preset (fields overridable) and its parallelism layout.

    ``tp * pp * dp * cp`` ranks are used (``ep`` splits the data-parallel ranks for the
    experts of a mixture-of-experts model). Zero values mean "the model preset's default".
    """

    model: str = "gpt3-175b"
    tp: int = 0
    pp: int = 0
    dp: int = 0
    ep: int = 0
    cp: int = 0
    micro_batch: int = 0
    global_batch: int = 0
    seq_len: int = 0
    zero_stage: int = -1
    compute_efficiency: float = 0.0
    overlap_dp: bool = True
    overrides: dict[str, float] = field(default_factory=dict)


@dataclass
class Workload:
    """What traffic to evaluate.

    ``permutation``: every GPU sends to one GPU on another server. The collective fields
    (`op`, `algorithm`, `protocol`, `ranks`: 0 for all GPUs, `placement`: GPU ids in rank
    order, empty for servers in order) drive the collective benchmark;
    `training` the training-step model; ``traffic`` runs the flows of `matrix`; `sizes`
    the app's collective curve (``1M:8G``; empty: 8 B to 8 GiB, `engine.model.sizes`).
    """

    kind: str = "permutation"
    seed: int = 0
    message_bytes: float = 1073741824.0
    op: str = "all-reduce"
    algorithm: str = "auto"
    protocol: str = "auto"
    ranks: int = 0
    sizes: str = ""
    placement: list[int] = field(default_factory=list)
    training: TrainingJob = field(default_factory=TrainingJob)
    matrix: list[TrafficFlow] = field(default_factory=list)


@dataclass
class SwitchFailure:
    """Member `index` of switch group `group` is down."""

    group: str
    index: int


@dataclass
class LinkFailure:
    """`links_down` of the cables of bundle `bundle` are down (spread evenly over it)."""

    bundle: str
    links_down: int


@dataclass
class Failures:
    """Failed or degraded elements, routed around by the engine."""

    switches: list[SwitchFailure] = field(default_factory=list)
    links: list[LinkFailure] = field(default_factory=list)


@dataclass
class Calibration:
    """Factors fitted to measured runs of this cluster (``calibrate``), on top of the defaults.

    The catalog's defaults stay sourced; a calibration says how one real cluster differs
    from them: `nic_efficiency` is the share of NCCL's per-NIC rate its network stages
    reach, `latency_scale` multiplies NCCL's software latency per collective, and
    `simple_efficiency` the bandwidth share of the Simple protocol. `name` empty means no
    calibration (every factor 1). `version` counts the fits saved under `name`; `measured`
    names the runs it was fitted on and `fit_error` is the fit's median absolute error.
    """

    name: str = ""
    version: int = 0
    nic_efficiency: float = 1.0
    latency_scale: float = 1.0
    simple_efficiency: float = 1.0
    measured: list[str] = field(default_factory=list)
    fit_error: float | None = None


@dataclass
class Scenario:
    """One what-if: topology, fabric, transport, routing, workload, failures, calibration
    to measured runs, its own catalog entries, constraints on its parts, jobs sharing it."""

    metadata: Metadata = field(default_factory=Metadata)
    groups: list[DeviceGroup] = field(default_factory=list)
    bundles: list[LinkBundle] = field(default_factory=list)
    fabric: FabricSettings = field(default_factory=FabricSettings)
    transport: TransportSettings = field(default_factory=TransportSettings)
    routing: RoutingPolicy = field(default_factory=RoutingPolicy)
    workload: Workload = field(default_factory=Workload)
    failures: Failures = field(default_factory=Failures)
    calibration: Calibration = field(default_factory=Calibration)
    devices: list[CustomDevice] = field(default_factory=list)
    constraints: Constraints = field(default_factory=Constraints)
    jobs: list[Job] = field(default_factory=list)

    def group(self, group_id: str) -> DeviceGroup:
        """The group with this id (KeyError if there is none)."""
        for g in self.groups:
            if g.id == group_id:
                return g
        raise KeyError(group_id)

    def bundle(self, bundle_id: str) -> LinkBundle:
        """The bundle with this id (KeyError if there is none)."""
        for b in self.bundles:
            if b.id == bundle_id:
                return b
        raise KeyError(bundle_id)


# --------------------------------------------------------------------------------------------
# Conversion between dataclasses and JSON-ready dicts, driven by the type hints above.


_hints = functools.cache(typing.get_type_hints)  # a class's field types never change


def to_dict(obj: Any) -> Any:
    """The JSON-ready form of a model object (dataclasses become dicts, tuples lists)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


def _fail(path: str, message: str) -> ScenarioError:
    return ScenarioError(Problem(where=path or "scenario", message=message))


def _convert(value: Any, tp: Any, path: str, limit: Limit | None = None) -> Any:
    """`value` read from JSON, checked against and converted to the type `tp`; a number
    beyond `limit` (or, with none, beyond a 64-bit integer) is refused."""
    if tp is Any:  # a user-defined device's figure (engine.model.devices)
        return json_value(value, path)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        return _convert(value, non_none[0], path, limit)
    if dataclasses.is_dataclass(tp):
        return _from_dict(tp, value, path)
    if origin is list:
        if not isinstance(value, list):
            raise _fail(path, f"expected a list, got {type(value).__name__}")
        return [_convert(v, args[0], f"{path}[{i}]", limit) for i, v in enumerate(value)]
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise _fail(path, f"expected a list of {len(args)} numbers")
        return tuple(
            _convert(v, a, f"{path}[{i}]", limit)
            for i, (v, a) in enumerate(zip(value, args, strict=False))
        )
    if origin is dict:
        if not isinstance(value, dict):
            raise _fail(path, f"expected an object, got {type(value).__name__}")
        return {
            _text(str(k), f"{path} key"): _convert(v, args[1], f"{path}.{k}", limit)
            for k, v in value.items()
        }
    if tp is bool:
        if not isinstance(value, bool):
            raise _fail(path, f"expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return _bounded(int(value), limit, path)
            raise _fail(path, f"expected a whole number, got {value!r}")
        return _bounded(value, limit, path)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, f"expected a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            raise _fail(
                path, f"expected a finite number, got one of {len(str(value))} digits"
            ) from None
        if not math.isfinite(number):
            raise _fail(path, f"expected a finite number, got {value!r}")
        return _bounded(number, limit, path)
    if tp is str:
        if not isinstance(value, str):
            raise _fail(path, f"expected text, got {value!r}")
        return _text(value, path)
    raise TypeError(f"unsupported field type {tp!r} at {path}")  # a bug in this module


def _bounded(value: int | float, limit: Limit | None, path: str) -> int | float:
    """`value` if it is within `limit`; else the refusal naming the field and the bound."""
    why = beyond(value, limit)
    if why is not None:
        raise _fail(path, why)
    return value


def _text(value: str, path: str) -> str:
    """`value` if it is text a file can hold: UTF-8 encodable and of sane length."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(
            path, f"text holds an unpaired surrogate (character {exc.start + 1}); not valid Unicode"
        ) from None
    if len(value) > MAX_TEXT_CHARS:
        raise _fail(path, f"text of {len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
    return value


def _from_dict(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise _fail(path, f"expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        shown = ", ".join(printable(str(u)) for u in unknown[:10])
        raise _fail(path, f"unknown field(s) {shown}; known: {', '.join(sorted(names))}")
    kwargs = {}
    for f in dataclasses.fields(cls):
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in data:
            limit = limit_of(cls.__name__, f.name)
            kwargs[f.name] = _convert(data[f.name], hints[f.name], sub, limit)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise _fail(sub, "required field is missing")
    return cls(**kwargs)


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The versioned JSON-ready document of a scenario."""
    return {"format": FORMAT_NAME, "version": FORMAT_VERSION, **to_dict(scenario)}


def scenario_from_dict(data: Any, notes: list[str] | None = None) -> Scenario:
    """A scenario from its JSON document; `ScenarioError` names what is malformed.

    A document of an older format is read as its newer form; what that changed is appended
    to `notes` (when given) as one line each.
    """
    if not isinstance(data, dict):
        raise _fail("scenario", "a scenario file must hold a JSON object")
    body = dict(data)
    fmt = body.pop("format", None)
    version = body.pop("version", None)
    if fmt != FORMAT_NAME:
        raise _fail(
            "format", f"not a FabricLab scenario (format is {fmt!r}, expected {FORMAT_NAME!r})"
        )
    if not isinstance(version, int) or isinstance(version, bool):
        raise _fail("version", f"expected a whole number, got {version!r}")
    if version > FORMAT_VERSION:
        raise _fail(
            "version",
            f"written by a newer FabricLab (format {version}; this one reads up to "
            f"{FORMAT_VERSION}); upgrade FabricLab to open it",
        )
    if version < 1:
        raise _fail("version", f"unknown format version {version}")
    if version < 2:
        body = from_version_1(body, notes)
    return _from_dict(Scenario, body, "")


def to_json(scenario: Scenario, indent: int | None = 2) -> str:
    """The scenario as JSON text (stable key order, exact float round trip)."""
    return json.dumps(scenario_to_dict(scenario), indent=indent, allow_nan=False)


def from_json(text: str, notes: list[str] | None = None) -> Scenario:
    """A scenario from JSON text; malformed JSON is a `ScenarioError` with line and column.

    `notes` collects what reading an older format changed (see `scenario_from_dict`)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(
            "file", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise _fail("file", "nested too deeply (~1,000 levels) to be a scenario") from None
    except ValueError:  # Python refuses to read a whole number of more than 4,300 digits
        raise _fail(
            "file",
            "holds a whole number of more than 4,300 digits, past any count or size a "
            "scenario can have",
        ) from None
    return scenario_from_dict(data, notes)
