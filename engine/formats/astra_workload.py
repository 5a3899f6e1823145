"""ASTRA-sim's text workload: the scenario's collective as the ``MICRO`` form, and a
training step's layers as the ``DATA``, ``MODEL`` or ``HYBRID_DATA_MODEL`` form, as its Chakra
converter reads them (``chakra_converter Text --input FILE --num-npus N``) and ASTRA-sim 1.0
read directly.

The file is the parallelism (``MICRO``: a micro-benchmark), the layer count, then one line
per layer of twelve columns: name, a reserved ``-1``, then for the forward pass, the input
gradient and the weight gradient each a compute time and a collective with its size in
bytes (``NONE 0`` for none), and the weight update time. A collective workload is one layer
whose weight gradient runs the op; compute times are 1 (the smallest the examples use), so
the run is the collective's time. Ops without an ASTRA-sim collective (broadcast, reduce,
send-recv) have no workload file.

A training workload (`write_layers`) is one line per layer of one pipeline stage in the same
twelve columns; its parallelism says which collectives the converter chains where: ``DATA``
the weight gradients', ``MODEL`` the forward's and input gradients', ``HYBRID_DATA_MODEL``
all three. Compute times are whole microseconds (the converter makes them its nodes'
``duration_micros``).

Format source: the ASTRA-sim 1.0 text workloads and the Chakra text converter
(mlcommons/chakra, ``src/converter/text_converter.py``: the parallelism on the first line,
the layer count, twelve columns per layer) (docs/formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.formats.lines import content_lines, refuse, whole

COLLECTIVES = {
    "all-reduce": "ALLREDUCE",
    "all-gather": "ALLGATHER",
    "reduce-scatter": "REDUCESCATTER",
    "all-to-all": "ALLTOALL",
}
COMM_TYPES = ("NONE", *COLLECTIVES.values())
COMPUTE_TIME = 1
PARALLELISMS = ("MICRO", "DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA")


@dataclass(frozen=True)
class Layer:
    """One line of a text workload: each pass's compute time (µs) and collective (type and
    bytes) for the forward, the input gradient and the weight gradient, and the update."""

    name: str
    fwd_us: int
    fwd_comm: str
    fwd_bytes: int
    ig_us: int
    ig_comm: str
    ig_bytes: int
    wg_us: int
    wg_comm: str
    wg_bytes: int
    update_us: int

    def line(self) -> str:
        """The layer's twelve columns (the second is the reserved ``-1``)."""
        return (
            f"{self.name} -1 {self.fwd_us} {self.fwd_comm} {self.fwd_bytes} {self.ig_us} "
            f"{self.ig_comm} {self.ig_bytes} {self.wg_us} {self.wg_comm} {self.wg_bytes} "
            f"{self.update_us}"
        )


def write_layers(parallelism: str, layers: list[Layer]) -> str:
    """The text workload of `layers` under `parallelism` (one of `PARALLELISMS`)."""
    if parallelism not in PARALLELISMS:
        raise ValueError(parallelism)  # a bug in the caller
    return f"{parallelism}\n{len(layers)}\n" + "".join(f"{x.line()}\n" for x in layers)


def read_layers(text: str, source: str = "workload.txt") -> tuple[str, list[Layer]]:
    """The parallelism and layers of a text workload; a refusal names the line."""
    lines = list(content_lines(text))
    if len(lines) < 2:
        raise refuse(source, None, "expected the parallelism, the layer count and the layers")
    number, head = lines[0]
    if len(head) != 1 or head[0] not in PARALLELISMS:
        raise refuse(source, number, f"the first line is one of {', '.join(PARALLELISMS)}")
    number, count_fields = lines[1]
    count = whole(count_fields[0], source, number, "the layer count", minimum=1)
    if len(lines) - 2 != count:
        raise refuse(source, None, f"{len(lines) - 2} layer lines; the count says {count}")
    layers = []
    for number, f in lines[2:]:
        if len(f) != 12:
            raise refuse(source, number, f"a layer line has 12 columns, not {len(f)}")
        for i in (3, 6, 9):
            if f[i] not in COMM_TYPES:
                raise refuse(source, number, f"unknown collective {f[i]!r}")
        n = [whole(f[i], source, number, "a time or size") for i in (2, 4, 5, 7, 8, 10, 11)]
        layers.append(Layer(f[0], n[0], f[3], n[1], n[2], f[6], n[3], n[4], f[9], n[5], n[6]))
    return head[0], layers


def write_micro(op: str, size_bytes: int, name: str = "collective") -> str | None:
    """The ``MICRO`` workload of one `op` of `size_bytes`; ``None`` for an op ASTRA-sim's
    text workloads have no collective for."""
    comm = COLLECTIVES.get(op)
    if comm is None:
        return None
    t = COMPUTE_TIME
    layer = f"{name} -1 {t} NONE 0 {t} NONE 0 {t} {comm} {size_bytes} {t}"
    return f"MICRO\n1\n{layer}\n"


def read_micro(text: str, source: str = "workload.txt") -> list[tuple[str, str, int]]:
    """The layers of a text workload as (name, weight-gradient collective, its bytes)."""
    _, layers = read_layers(text, source)
    return [(x.name, x.wg_comm, x.wg_bytes) for x in layers]
