"""Routing on an expanded fabric: ECMP, spraying, adaptive and failover paths.

`router` is the front (`Router`). It calls the numba kernels: `kernels` (every flow's path,
counted then written), built on `candidates` (equal-cost next hops), `hashing` (ECMP
hashes), `spray` (the even split over the DAG of shortest paths) and `adaptive` (the
least-loaded path and its re-placement), which take their arrays grouped as in
`structures`. `reference` is the plain-Python twin the tests hold the kernels to.
"""

from pathlib import Path

from engine.runtime.jit_cache import refresh

# The kernels inline `candidates` and call kernels of sibling modules, which numba's cache
# does not track: drop the package's cached kernels when any of its sources changed.
refresh(Path(__file__).parent)
