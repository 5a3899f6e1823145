"""Lossless transport and congestion control as mechanisms, in a fluid model.

Buffers, InfiniBand credit flow control and IB congestion control, RoCEv2 PFC (thresholds,
headroom, pauses that stop victim flows), ECN marking and DCQCN: a time-stepped fluid model
of egress queues and per-class rates (`engine.transport.step`, numba), driven through
transients and jumping over settled stretches (`engine.transport.simulate`), with its
defaults from the catalog (`engine.transport.defaults`) and the max-min ideal beside it.
docs/transport.md describes the model, its parameters and what it is validated against.
"""

from pathlib import Path

from engine.runtime.jit_cache import refresh

# The step kernel inlines the queue and control kernels of sibling modules (see jit_cache).
refresh(Path(__file__).parent)
