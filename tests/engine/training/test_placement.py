"""Rank placement: Megatron's and Llama 3's rank orders on the fabric's GPUs."""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.training.layout import Layout
from engine.training.placement import rank_grid


def test_megatron_placement_keeps_tp_in_a_server_and_dp_strided(fabric_1k):
    lay = Layout(8, 4, 8, 2, 1, 1, 4, 32, 2048, 1, 0, False, True)
    grid = rank_grid(lay)
    tp_group = grid[0, 0, 0, :]
    assert np.all(fabric_1k.gpu_server[tp_group] == fabric_1k.gpu_server[tp_group[0]])
    np.testing.assert_array_equal(tp_group, np.arange(8))
    np.testing.assert_array_equal(grid[0, 0, :, 0], [0, 8])  # CP next
    np.testing.assert_array_equal(grid[0, :3, 0, 0], [0, 16, 32])  # then DP
    assert grid[1, 0, 0, 0] == 8 * 2 * 8  # pipeline stages outermost
    llama = rank_grid(dataclasses.replace(lay, pp_outermost=False))
    assert llama[1, 0, 0, 0] == 16 and llama[0, 1, 0, 0] == 16 * 4  # tp-cp-pp-dp
