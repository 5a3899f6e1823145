"""The driver: jumps over settled stretches agree with stepping through, horizons, idle
gaps, and the twin backends on mechanism-heavy cases."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.runtime.progress import Progress, RunCancelledError
from engine.transport.defaults import transport_config
from engine.transport.params import Mechanisms, SettleParams
from engine.transport.simulate import simulate
from engine.transport.workloads import LinkShape, incast, switch_spec, victim_incast


@pytest.fixture(scope="module")
def ib(catalog):
    return transport_config(catalog, "infiniband", "qm9700"), switch_spec(catalog, "qm9700", 400)


@pytest.fixture(scope="module")
def roce(catalog):
    return transport_config(catalog, "roce", "sn5600"), switch_spec(catalog, "sn5600", 400)


@pytest.mark.parametrize("tech", ["ib", "roce_pfc"])
def test_jumping_over_settled_stretches_matches_stepping_through(tech, ib, roce):
    if tech == "ib":
        config, spec = ib
    else:
        config, spec = roce
        config = replace(config, mechanisms=Mechanisms("pfc", False, False))
    # Long enough for PFC's on/off cycles (about 12 us here) to average out over a window.
    network = incast(8, spec, 20e6 if tech == "ib" else 100e6)
    jumped = simulate(network, config)
    stepped = simulate(network, replace(config, settle=SettleParams(enabled=False)))
    assert jumped.jumps >= 1 and jumped.steps < stepped.steps / 2
    np.testing.assert_allclose(jumped.finish_s, stepped.finish_s, rtol=2e-3)
    np.testing.assert_allclose(jumped.delivered_bytes, network.classes.bytes, rtol=1e-9)
    np.testing.assert_allclose(jumped.pause_fraction, stepped.pause_fraction, atol=0.01)


def test_jumping_matches_stepping_through_while_dcqcn_raises_a_class(roce):
    # Two flows collide and DCQCN cuts them; a third starts at 3 ms. Recovering from the
    # cuts, R_C and R_T climb by a few Mb/s per increase event, within the settle tolerance
    # from one window to the next: the run took that for settled and jumped at the rates
    # of the climb, 4.7% late (engine.transport.settle.recovering).
    config, spec = roce
    network = incast(3, spec, 100e6, start_s=[0.0, 0.0, 3e-3])
    jumped = simulate(network, config)
    stepped = simulate(network, replace(config, settle=SettleParams(enabled=False)))
    np.testing.assert_allclose(jumped.finish_s, stepped.finish_s, rtol=2e-3)


def test_a_horizon_stops_the_run_with_unfinished_classes(ib):
    config, spec = ib
    result = simulate(incast(2, spec, 1e9), config, horizon_s=50e-6)
    assert result.end_s == pytest.approx(50e-6)
    assert not result.finished and np.all(np.isinf(result.finish_s))
    # The receiver link was full all along: 50 us at 50 GB/s.
    assert result.delivered_bytes.sum() == pytest.approx(50e-6 * 50e9, rel=0.02)


def test_idle_time_before_a_late_start_is_skipped(ib):
    config, spec = ib
    network = incast(2, spec, 1e6, start_s=[0.0, 1e-3])
    result = simulate(network, config)
    assert result.finished
    # The first flow ends alone long before the second starts.
    assert result.finish_s[0] == pytest.approx(1e6 / 50e9, rel=0.02)
    assert result.finish_s[1] == pytest.approx(1e-3 + 1e6 / 50e9, rel=0.02)
    assert result.steps < 2_000


def test_a_class_of_no_bytes_finishes_when_it_starts(ib):
    config, spec = ib
    result = simulate(incast(2, spec, 0.0), config)
    assert result.finished and result.makespan_s <= 2 * config.dt_s


def test_the_time_series_holds_every_delivered_byte(roce):
    config, spec = roce
    network = incast(4, spec, 2e6, shape=LinkShape(gbps=400))
    result = simulate(network, config)
    delivered = result.mean_rate_Bps(0.0, result.end_s) * result.end_s
    np.testing.assert_allclose(delivered, network.classes.bytes, rtol=1e-9)


@pytest.mark.parametrize(
    "mechanisms,recovery",
    [
        (Mechanisms("pfc", True, False), "selective-repeat"),
        (Mechanisms("credit", False, True), "selective-repeat"),
        (Mechanisms("none", True, False), "selective-repeat"),
        (Mechanisms("none", False, False), "go-back-n"),
    ],
)
def test_both_backends_agree_through_pauses_drops_and_marks(mechanisms, recovery, roce):
    config, spec = roce
    # A small buffer makes PFC's headroom too small (drops) and fills the credit window.
    small = replace(spec, port_buffer_bytes=150e3)
    network = victim_incast(4, small, 1e6, 1e6)
    config = replace(config, mechanisms=mechanisms, loss_recovery=recovery)
    fast = simulate(network, config, horizon_s=80e-6)
    slow = simulate(network, config, horizon_s=80e-6, backend="reference")
    assert fast.steps == slow.steps
    for name in (
        "finish_s",
        "delivered_bytes",
        "dropped_bytes",
        "pause_fraction",
        "ecn_mark_fraction",
        "max_occupancy_bytes",
        "class_rate_Bps",
        "queue_bytes",
    ):
        np.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-6, err_msg=name
        )


def test_go_back_n_pays_the_window_behind_every_drop(roce):
    # Lossy (no PFC, no DCQCN), an 8:1 incast into a small buffer: selective repeat resends
    # what was dropped, go-back-N the window in flight behind each lost packet as well, so
    # the same drops cost it more bytes on the wire and a later finish.
    config, spec = roce
    network = incast(8, replace(spec, port_buffer_bytes=150e3), 2e6)
    lossy = replace(config, mechanisms=Mechanisms("none", False, False))
    selective = simulate(network, replace(lossy, loss_recovery="selective-repeat"))
    gbn = simulate(network, replace(lossy, loss_recovery="go-back-n"))
    assert selective.finished and gbn.finished
    assert selective.dropped_bytes.sum() > 0.0
    assert gbn.makespan_s > selective.makespan_s
    np.testing.assert_allclose(gbn.delivered_bytes, network.classes.bytes, rtol=1e-9)


def test_a_run_reports_its_share_of_the_horizon_and_stops_when_asked(roce):
    """Progress after every window, rising to the horizon; a cancel ends the run between
    windows with RunCancelledError (a kernel call cannot be interrupted, a run can)."""
    config, spec = roce
    network = incast(16, spec, 1e9)
    seen: list[float] = []
    simulate(network, config, horizon_s=200e-6, progress=Progress(lambda f, _: seen.append(f)))
    assert len(seen) >= 3 and seen == sorted(seen) and 0.0 <= seen[0] < seen[-1] < 1.0
    polls = 0

    def stop_after_three() -> bool:
        nonlocal polls
        polls += 1
        return polls > 3

    with pytest.raises(RunCancelledError, match="transport"):
        simulate(network, config, horizon_s=200e-6, progress=Progress(None, stop_after_three))
    assert polls == 4
