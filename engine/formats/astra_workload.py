"""ASTRA-sim's text workload for the scenario's collective: the ``MICRO`` form its Chakra
converter reads (``chakra_converter Text --input FILE --num-npus N``) and ASTRA-sim 1.0
read directly.

The file is the parallelism (``MICRO``: a micro-benchmark), the layer count, then one line
per layer of twelve columns: name, a reserved ``-1``, then for the forward pass, the input
gradient and the weight gradient each a compute time and a collective with its size in
bytes (``NONE 0`` for none), and the weight update time. A collective workload is one layer
whose weight gradient runs the op; compute times are 1 (the smallest the examples use), so
the run is the collective's time. Ops without an ASTRA-sim collective (broadcast, reduce,
send-recv) have no workload file.

Format source: the ASTRA-sim 1.0 text workloads and the Chakra converter's micro-benchmark
examples (docs/formats.md).
"""

from __future__ import annotations

from engine.formats.lines import content_lines, refuse, whole

COLLECTIVES = {
    "all-reduce": "ALLREDUCE",
    "all-gather": "ALLGATHER",
    "reduce-scatter": "REDUCESCATTER",
    "all-to-all": "ALLTOALL",
}
COMM_TYPES = ("NONE", *COLLECTIVES.values())
COMPUTE_TIME = 1


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
    lines = list(content_lines(text))
    if len(lines) < 2:
        raise refuse(source, None, "expected the parallelism, the layer count and the layers")
    number, head = lines[0]
    if len(head) != 1:
        raise refuse(source, number, "the first line holds the parallelism alone (e.g. MICRO)")
    number, count_fields = lines[1]
    count = whole(count_fields[0], source, number, "the layer count", minimum=1)
    if len(lines) - 2 != count:
        raise refuse(source, None, f"{len(lines) - 2} layer lines; the count says {count}")
    layers = []
    for number, fields in lines[2:]:
        if len(fields) != 12:
            raise refuse(source, number, f"a layer line has 12 columns, not {len(fields)}")
        for i in (3, 6, 9):
            if fields[i] not in COMM_TYPES:
                raise refuse(source, number, f"unknown collective {fields[i]!r}")
            whole(fields[i + 1], source, number, "a collective's size")
        layers.append((fields[0], fields[9], int(fields[10])))
    return layers
