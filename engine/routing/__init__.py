"""Routing on an expanded fabric: ECMP, spraying, adaptive and failover paths.

`router` is the front (`Router`), `kernels` the numba code it calls and `reference` the
plain-Python twin the tests hold the kernels to.
"""
