"""A transport network whose links and classes of one kind run as one: symmetry, used.

When the links of a network fall into kinds that carry alike (every leaf's uplinks in an
all-to-all over a fat-tree, as `engine.topology.symmetry` finds them) and the flow classes
into kinds that cross the same kinds of links, the fluid model of the whole is the fluid
model of one link and one class of each kind, with their counts: a kind of k links is one
link of k ports (k times one port's capacity, buffers and ECN thresholds; its PFC
thresholds per port), exactly as a sprayed set of links runs (`LinkSpec.ports`), and a
kind of classes is one class with all their flows. It is the same model, not an
approximation of it, as long as the kinds are true (each link of a kind carries the same
flows as the others, up to their names); what the caller must vouch for is that.

`lump` takes a network of *representative* flows (a few flows of each kind, each standing
for `flow_weight` flows) with the kind of each of its links and the number of ports each
kind has in the whole fabric, and returns the network to run.

One thing a kind of flows does not keep: the flows' own chances. DCQCN's reaction point
draws, per class, when a marked packet makes the next cut (`engine.transport.reaction`),
so that flows seeing the same marks cut apart, as flows do; one class for a kind of a
million flows would make them cut as one. `draws` runs each kind as that many classes of
equal share that draw apart. It is a sampling resolution, and the answer converges in it:
a 128-GPU leaf-spine at 4:1, all-to-all of 0.5 MB per pair under RoCE at NVIDIA's DCQCN
defaults, mean flow finish 1.85 / 1.61 / 1.47 / 1.44 / 1.47 ms at 1 / 4 / 16 / 64 / 256
draws (every one of its 15,360 classes drawing on its own: 1.39 ms), last finish 2.68 /
2.80 / 2.58 / 2.69 / 2.73 ms (2.70). Without draws (InfiniBand; DCQCN as its published
mean field) a kind's classes would move alike, and one is run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.transport.network import FlowClasses, LinkSpec, TransportNetwork, group_into_classes

# Per-port figures that add up over the ports of a link (the rest are the same per port).
_ADDITIVE = (
    "capacity_Bps",
    "buffer_bytes",
    "egress_buffer_bytes",
    "ecn_kmin_bytes",
    "ecn_kmax_bytes",
)


@dataclass(frozen=True)
class Lumped:
    """The network to run and where each link and class of the representatives' network
    went (`link_of`, `class_of`: indices into it); `kind_of_link` is the kind each lumped
    link stands for."""

    network: TransportNetwork
    link_of: np.ndarray
    class_of: np.ndarray
    kind_of_link: np.ndarray


def lump(
    network: TransportNetwork,
    link_kind: np.ndarray,
    kind_ports: np.ndarray,
    flow_weight: np.ndarray,
    draws: int = 1,
) -> Lumped:
    """Run `network`'s links of one kind as one and its classes over the same kinds as one.

    `link_kind` gives each link of `network` its kind (0..K-1), `kind_ports` each kind's
    ports in the whole fabric, `flow_weight` each flow of `network.flow_class` how many of
    the whole's it stands for per flow of the network (a class of m flows named by n
    flows: each of the n stands for m / n of them, times its weight); each kind of classes
    runs as `draws` classes of equal share (see the module docstring; `class_of` then names
    the first). Raises ValueError when two links of one kind differ in a per-port figure
    (then they are not alike), when the network has pipeline gates, or `draws` is under 1.
    """
    if draws < 1:
        raise ValueError(f"draws must be at least 1, not {draws}")
    if network.gates is not None:
        raise ValueError("a network with pipeline gates cannot be lumped")
    links = network.links
    kind = np.asarray(link_kind, dtype=np.int64)
    used_kinds, first, link_of = np.unique(kind, return_index=True, return_inverse=True)
    link_of = link_of.reshape(-1)
    own_ports = np.ones(links.n_links) if links.ports is None else links.ports.astype(np.float64)
    per_port = _per_port(links, own_ports)
    for name, values in per_port.items():
        alike = _same_bits(values, values[first[link_of]])
        if not np.all(alike):
            bad = int(np.flatnonzero(~alike)[0])
            raise ValueError(
                f"links {int(first[link_of[bad]])} and {bad} are of one kind but differ in "
                f"{name} per port: they are not alike"
            )
    total = np.asarray(kind_ports, dtype=np.float64)[used_kinds]
    spec = {
        name: values[first] * total if name in _ADDITIVE else values[first]
        for name, values in per_port.items()
    }
    lumped_links = replace(
        links,
        **{
            name: getattr(links, name)[first]
            for name in links.__dataclass_fields__
            if getattr(links, name) is not None
            and name not in spec
            and name not in ("ports", "flow_ports")
        },
        **spec,
        ports=total.astype(np.int64),
        flow_ports=own_ports[first].astype(np.int64),
    )
    classes, class_of, flow_of = _lumped_classes(network, link_of, flow_weight)
    if draws > 1:
        classes = _drawn_apart(classes, draws)
        class_of, flow_of = class_of * draws, np.where(flow_of >= 0, flow_of * draws, -1)
    return Lumped(
        network=TransportNetwork(
            links=lumped_links,
            classes=classes,
            flow_class=flow_of,
            link_names=tuple(network.link_names[i] for i in first) if network.link_names else (),
        ),
        link_of=link_of,
        class_of=class_of,
        kind_of_link=used_kinds,
    )


def _per_port(links: LinkSpec, ports: np.ndarray) -> dict[str, np.ndarray]:
    """Every per-link figure of `links` for one of its ports."""
    out = {}
    for name in links.__dataclass_fields__:
        value = getattr(links, name)
        if value is None or name in ("ports", "flow_ports"):
            continue
        out[name] = value / ports if name in _ADDITIVE else value
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: equal numbers (infinities and zeros alike), to a rounding of the
    division by ports."""
    if a.dtype == bool or np.issubdtype(a.dtype, np.integer):
        return a == b
    both_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    with np.errstate(invalid="ignore"):
        return both_inf | (np.abs(a - b) <= 1e-12 * np.maximum(np.abs(a), np.abs(b)))


def _lumped_classes(
    network: TransportNetwork, link_of: np.ndarray, flow_weight: np.ndarray
) -> tuple[FlowClasses, np.ndarray, np.ndarray]:
    """The classes over lumped links: classes of `network` whose paths cross the same
    lumped links with the same per-flow bytes, start and feedback delay merge, their
    flows counted by `flow_weight`. Returns them, each old class's new one, and each
    flow's."""
    cl = network.classes
    crossing = network.flow_class >= 0
    of_flow = network.flow_class[crossing]
    # A flow of `network` is 1/n of its class's flows (n: the flows named in the class);
    # each stands for `flow_weight` of the whole's.
    named = np.bincount(of_flow, minlength=cl.n_classes)
    share = cl.multiplicity[of_flow] / named[of_flow]
    weight = np.bincount(
        of_flow,
        weights=np.asarray(flow_weight, dtype=np.float64)[crossing] * share,
        minlength=cl.n_classes,
    )
    per_flow = cl.bytes / cl.multiplicity
    merged, class_of = group_into_classes(
        cl.ptr, link_of[cl.links], per_flow, cl.start_s, cl.feedback_delay_s
    )
    mult = np.bincount(class_of, weights=weight, minlength=merged.n_classes)
    classes = replace(merged, multiplicity=mult, bytes=merged.bytes / merged.multiplicity * mult)
    flow_of = np.where(network.flow_class >= 0, class_of[np.maximum(network.flow_class, 0)], -1)
    return classes, class_of, flow_of


def _drawn_apart(classes: FlowClasses, draws: int) -> FlowClasses:
    """Each class as `draws` classes in a row, each with its share of the flows."""
    idx = np.repeat(np.arange(classes.n_classes), draws)
    lengths = np.diff(classes.ptr)[idx]
    ptr = np.zeros(idx.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    starts = np.repeat(classes.ptr[idx], lengths)
    offsets = np.arange(ptr[-1]) - np.repeat(ptr[:-1], lengths)
    return FlowClasses(
        ptr=ptr,
        links=classes.links[starts + offsets],
        multiplicity=classes.multiplicity[idx] / draws,
        bytes=classes.bytes[idx] / draws,
        start_s=classes.start_s[idx],
        feedback_delay_s=classes.feedback_delay_s[idx],
    )
