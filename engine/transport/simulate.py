"""The transport model's driver: step through transients, jump over settled stretches.

The kernel (`engine.transport.step.run_window`) advances a window of fixed steps. After each
window the driver compares it with the one before: when no class started or finished and
every class's rate, every queue, pause share, mark and drop rate agree within the settle
tolerance, the state is settled, and the driver jumps straight to the next event (the first
class to have sent all its bytes, the next class to start, or the horizon) with the window's
averages, then steps again through the transient that event starts. A 1 GB transfer thus
costs its transients, not 20,000 steps per millisecond. A window that is not settled makes
the next one longer, so a periodic steady state (PFC cycles, IB CC limit cycles) settles once
its average over a window is known to the tolerance.

Beside the mechanistic result the driver computes the ideal: max-min fair rates and the
event-driven fluid finish times of `engine.flows.solver`, what a perfect transport would do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from engine.runtime.progress import Progress, checkpoint, poll
from engine.transport.blocks import arrange
from engine.transport.copies import Copies, find_copies
from engine.transport.gates import Gates, time_to_bind
from engine.transport.ideal import ideal_rates
from engine.transport.live import Unfolding, cut_window, live_part, shrink
from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.result import TransportResult
from engine.transport.series import Series, over_budget
from engine.transport.settle import Window, at_rest, comparable_windows, pace_settled, settled
from engine.transport.step import run_window
from engine.transport.structures import SampleAcc, State, Stats, Tables
from engine.transport.tables import (
    MAX_HISTORY_BYTES,
    LinkDerived,
    build_tables,
    history_bytes,
    initial_state,
    new_rows,
    new_sample_acc,
    new_stats,
)

# Which per-link statistics are maxima (the others are sums).
_MAX_FIELDS = ("max_queue", "max_occupancy")


@dataclass
class _Run:
    """The mutable pieces of one run the driver threads through its helpers."""

    tables: Tables
    state: State
    totals: Stats
    acc: SampleAcc
    rows: Series
    steps: int = 0
    jumps: int = 0
    queues_at_rest: bool = True  # False: an until-settled stop with queues still moving
    unfold: Unfolding | None = None  # set once the run goes on with its live part


def simulate(
    network: TransportNetwork,
    config: TransportConfig,
    horizon_s: float | None = None,
    backend: str = "numba",
    until_settled: bool = False,
    progress: Progress | None = None,
    run_copies_once: bool = True,
    drop_finished: bool = True,
) -> TransportResult:
    """Run the transport model until every class finished (or `horizon_s` is reached).

    `until_settled` stops instead as soon as the pace of the slowest class (the longest
    bytes / rate over the active classes) agrees within the settle tolerance across two
    windows; the result's `settled_window_s` names the second, whose averages are the
    steady state. It also stops when every rate, pause, mark and control has been at rest
    (queue levels aside) for at least as long as the run before that stretch: then
    `settled_window_s` is that stretch and `queues_at_rest` is False (some queue was still
    filling or draining; a threshold it reaches later could move the rates again). A run
    that gets to neither goes on to the end (or the horizon).
    `backend` ``"reference"`` runs the plain-Python twin of the kernel (slow; for tests).
    `progress` hears the simulated share of the horizon after every window (when there is
    a horizon) and stops the run there, with `RunCancelledError`, when its caller asks.
    With `run_copies_once`, parts of the network that share no link with the rest and copy
    another part number for number are stepped once (`engine.transport.copies`): the result
    is the same, bit for bit; turning it off runs every class (for tests). With
    `drop_finished`, once most classes are done the run goes on with its live part
    (`engine.transport.live`), again bit for bit.
    """
    if backend == "numba":
        runner = run_window
    elif backend == "reference":
        from engine.transport.reference import run_window as runner
    else:
        raise ValueError(f"backend must be 'numba' or 'reference', not {backend!r}")
    tables, derived = build_tables(network, config)
    whole = network
    copies = None
    # A run whose histories are too long fails as the whole network (initial_state).
    if run_copies_once and history_bytes(tables)[0] <= MAX_HISTORY_BYTES:
        copies = find_copies(network, tables)
    if copies is not None:
        network = copies.network
        tables, derived = build_tables(network, config)
    arranged = arrange(network, tables.gates)
    if arranged is not None:
        # each part's classes and links together, for the kernel's blocks; the result
        # goes back to the network's order as a copy's does
        network, class_pos, link_pos = arranged
        tables, derived = build_tables(network, config)
        copies = Copies(
            network,
            class_pos if copies is None else class_pos[copies.class_of],
            link_pos if copies is None else link_pos[copies.link_of],
        )
    n_links, n_classes = tables.links.capacity.shape[0], tables.classes.size.shape[0]
    run = _Run(
        tables,
        initial_state(tables, config),
        new_stats(n_links, n_classes),
        new_sample_acc(n_links, n_classes),
        Series(n_classes, n_links),
    )
    dt = tables.knobs.dt
    settle = config.settle
    base_window = max(1, math.ceil(settle.window_s / dt))
    max_window = max(base_window, math.ceil(settle.max_window_s / dt))
    sample_every = max(1, round(config.sample_interval_s / dt))
    window = base_window
    previous: Window | None = None
    settled_window: tuple[float, float] | None = None
    at_rest_since: float | None = None  # rates, pauses, marks and controls at rest since
    clock = run.state.clock
    start = tables.classes.start
    begin = float(start.min(initial=0.0))
    base_tables = tables
    while run.steps < config.max_steps:
        keep = live_part(run.tables, run.state, run.acc, previous) if drop_finished else None
        if keep is not None:
            network = _go_live(run, network, config, keep)
            previous = None if previous is None else cut_window(previous, keep)
            start = run.tables.classes.start
        finish = run.state.classes.finish
        unfinished = ~np.isfinite(finish)
        now = float(clock.time[0])
        if not unfinished.any() or (horizon_s is not None and now >= horizon_s * (1 - 1e-12)):
            break
        if not np.any(unfinished & (start <= now)):
            _idle_until(run, float(start[unfinished].min()), horizon_s)
            previous = None
            continue
        if horizon_s is not None:
            checkpoint(progress, now / horizon_s, "transport")
        else:
            poll(progress, "transport")
        n = window
        if horizon_s is not None:
            n = max(1, min(n, math.ceil((horizon_s - now) / dt - 1e-9)))
        sample_every = _bound_series(run, whole, sample_every, n)
        current = _run_window(run, runner, n, sample_every)
        if run.unfold is not None:
            run.unfold.add_totals(run.totals)
        if current is None:
            previous = None
            continue
        comparable = previous is not None and comparable_windows(previous, current)
        if (
            until_settled
            and comparable
            and pace_settled(previous, current, run.tables, settle.rel_tol)
        ):
            settled_window = (current.t0, current.t1)
            break
        if until_settled and comparable and at_rest(previous, current, run.tables, settle.rel_tol):
            at_rest_since = previous.t0 if at_rest_since is None else at_rest_since
            if current.t1 - begin >= 2.0 * (at_rest_since - begin):
                # Everything but the queues' levels has been at rest for as long as the
                # run before it: read the rates off that stretch (the result says so).
                settled_window = (at_rest_since, current.t1)
                run.queues_at_rest = False
                break
        else:
            at_rest_since = None
        if settle.enabled and comparable and settled(previous, current, run.tables, settle.rel_tol):
            outcome = _jump(run, current, horizon_s, min_span_s=2 * window * dt)
            if run.unfold is not None:
                run.unfold.add_totals(run.totals)
            if outcome == "stuck":
                break
            if outcome == "jumped":
                previous, window, at_rest_since = None, base_window, None
                continue
        if comparable:
            window = min(max(window + 1, int(window * settle.growth)), max_window)
        elif previous is not None:
            window = base_window
        previous = current
    _flush(run)
    if run.unfold is not None:
        # Back to the indexing of the run's first network for the result.
        run.unfold.gather(run.rows, run.state)
        run.totals, run.rows, run.tables = run.unfold.totals, run.unfold.rows, base_tables
    return _result(whole, run, derived, settled_window, copies)


def _go_live(
    run: _Run,
    network: TransportNetwork,
    config: TransportConfig,
    keep: tuple[np.ndarray, np.ndarray],
) -> TransportNetwork:
    """Go on with the kept classes and links of `network`: gather the figures so far in
    place, cut the state to the kept part and step that from here."""
    if run.unfold is None:
        n_links, n_classes = run.tables.links.capacity.shape[0], run.tables.classes.size.shape[0]
        run.unfold = Unfolding(
            n_classes, n_links, np.arange(n_classes, dtype=np.int64), np.arange(n_links)
        )
    run.unfold.add_totals(run.totals)
    run.unfold.gather(run.rows, run.state)
    run.unfold.narrow(keep)
    small, run.state, run.acc = shrink(network, run.tables, run.state, run.acc, keep)
    # The FIFO rings keep the shape they were allocated with, and a queue its service
    # (binned while the run's first network shared it), so that the cut changes nothing.
    knobs, shared = run.tables.knobs, run.tables.links.shared[keep[1]]
    run.tables, _ = build_tables(small, config)
    run.tables = run.tables._replace(
        links=run.tables.links._replace(shared=shared),
        knobs=run.tables.knobs._replace(
            fifo_bin_steps=knobs.fifo_bin_steps, fifo_width=knobs.fifo_width
        ),
    )
    run.totals = new_stats(small.links.n_links, small.classes.n_classes)
    run.rows = Series(small.classes.n_classes, small.links.n_links)
    return small


def _bound_series(run: _Run, whole: TransportNetwork, sample_every: int, n_steps: int) -> int:
    """The sample spacing (in steps) for the next `n_steps`: while the rows held and those
    the window will write would pass the series budget of a network of `whole`'s size,
    the rows held are merged in pairs and the spacing doubles (`engine.transport.series`)."""
    n_classes, n_links = whole.classes.n_classes, whole.links.n_links
    while True:
        held = len(run.rows) + (len(run.unfold.rows) if run.unfold is not None else 0)
        coming = n_steps // sample_every + 2
        if not over_budget(held + coming, n_classes, n_links) or (held <= 1 and coming <= 2):
            return sample_every
        since = 0.0
        if run.unfold is not None and len(run.unfold.rows):
            since = run.unfold.rows.last_time()
            run.unfold.rows.merge_pairs(0.0)
        run.rows.merge_pairs(since)
        sample_every *= 2


def _run_window(run: _Run, runner, n: int, sample_every: int) -> Window | None:
    """Take one window of steps; its averages, or None when it took no step."""
    tables, state = run.tables, run.state
    n_links, n_classes = tables.links.capacity.shape[0], tables.classes.size.shape[0]
    t0 = float(state.clock.time[0])
    stats = new_stats(n_links, n_classes)
    rows = new_rows(n // sample_every + 2, n_links, n_classes)
    taken = runner(tables, state, stats, run.acc, rows, n, sample_every)
    run.steps += taken
    for name in Stats._fields:
        total, part = getattr(run.totals, name), getattr(stats, name)
        if name in _MAX_FIELDS:
            np.maximum(total, part, out=total)
        else:
            total += part
    n_rows = int(rows.count[0])  # the window's own arrays: kept, not copied
    run.rows.add(
        rows.time[:n_rows], rows.class_rate[:n_rows], rows.queue[:n_rows], rows.paused[:n_rows]
    )
    if taken < n or taken == 0:
        return None  # every class finished inside the window
    span = taken * tables.knobs.dt
    per_link = {
        "queue_time": stats.queue_time / span,
        "paused_time": stats.paused_time / span,
        "marked": stats.marked / span,
        "served": stats.served / span,
        "dropped": stats.dropped / span,
        "xoff_events": stats.xoff_events / span,
    }
    t1 = float(state.clock.time[0])
    return Window(
        t0=t0,
        t1=t1,
        rate=stats.delivered / span,
        sent=stats.sent / span,
        dropped_class=stats.dropped_class / span,
        per_link=per_link,
        finished=np.isfinite(state.classes.finish),
        started=tables.classes.start <= t1,
        controls={
            name: getattr(state.classes, name).copy() for name in ("rc", "rt", "alpha", "ccti")
        },
    )


def _jump(run: _Run, w: Window, horizon_s: float | None, min_span_s: float) -> str:
    """Advance over a settled stretch to the next event with the window's averages.

    Returns ``"jumped"``, ``"short"`` (the next event is too near: keep stepping) or
    ``"stuck"`` (nothing moves and no event will come: a deadlock).
    """
    state, cl = run.state, run.tables.classes
    cs = state.classes
    now = float(state.clock.time[0])
    active = ~np.isfinite(cs.finish) & (cl.start <= now)
    moving = active & (w.rate > 0.0) & (cs.remaining > 0.0)
    ends = np.full(cl.size.shape[0], np.inf)
    ends[moving] = cs.remaining[moving] / w.rate[moving]
    waiting = ~np.isfinite(cs.finish) & (cl.start > now)
    span = float(ends.min(initial=np.inf))
    if waiting.any():
        span = min(span, float(cl.start[waiting].min()) - now)
    if horizon_s is not None:
        span = min(span, horizon_s - now)
    g = run.tables.gates
    if g.cls.size:
        # A gate that starts to hold its class back ends the settled stretch.
        free_bytes = 4.0 * w.rate * run.tables.knobs.dt
        gated = Gates(g.ptr, g.cls, g.slack)
        done = np.isfinite(cs.finish)
        span = min(
            span, time_to_bind(gated, cl.size, cs.remaining, cs.delivered, done, w.rate, free_bytes)
        )
    if not math.isfinite(span):
        # Nothing left to send: either the last bytes are draining (step on) or nothing
        # moves at all and nothing will start (a deadlock: stop).
        # (Sending without delivering is go-back-N resending duplicates: not a deadlock.)
        return "short" if np.any(active & ((w.rate > 0.0) | (w.sent > 0.0))) else "stuck"
    if span < min_span_s:
        return "short"
    _flush(run)
    progress = np.where(moving, w.rate * span, 0.0)
    first = np.flatnonzero(moving & (ends <= span * (1 + 1e-12)))
    cs.remaining[moving] = np.maximum(cs.remaining[moving] - progress[moving], 0.0)
    cs.remaining[first] = 0.0
    cs.delivered[:] += progress
    cs.last_out[:] += progress
    cs.deadline[np.isfinite(cs.deadline)] += span
    t = run.totals
    t.delivered[:] += progress
    t.sent[:] += (w.sent * span) * active
    t.dropped_class[:] += (w.dropped_class * span) * active
    for name, rate in w.per_link.items():
        getattr(t, name)[:] += rate * span
    state.clock.time[0] = now + span
    run.rows.add_row(now + span, w.rate, w.per_link["queue_time"], w.per_link["paused_time"])
    run.jumps += 1
    return "jumped"


def _idle_until(run: _Run, t: float, horizon_s: float | None) -> None:
    """Nothing is sending and nothing is queued: move the clock to the next start."""
    _flush(run)
    if horizon_s is not None:
        t = min(t, horizon_s)
    run.state.clock.time[0] = t
    n_links, n_classes = run.tables.links.capacity.shape[0], run.tables.classes.size.shape[0]
    run.rows.add_row(t, np.zeros(n_classes), run.state.links.queue, np.zeros(n_links))


def _flush(run: _Run) -> None:
    """Close the sample interval in progress (before a jump and at the end)."""
    acc = run.acc
    steps = int(acc.steps[0])
    if steps == 0:
        return
    span = steps * run.tables.knobs.dt
    run.rows.add_row(
        float(run.state.clock.time[0]),
        acc.delivered / span,
        run.state.links.queue,
        acc.paused / steps,
    )
    acc.steps[0] = 0
    acc.delivered[:] = 0.0
    acc.paused[:] = 0.0


def _result(
    network: TransportNetwork,
    run: _Run,
    derived: LinkDerived,
    settled_window: tuple[float, float] | None = None,
    copies: Copies | None = None,
) -> TransportResult:
    """Assemble the result of `network` from the run's totals and rows (the run of its
    `copies`' smaller network, whose figures every copy takes, when given)."""
    end = float(run.state.clock.time[0])
    span = end if end > 0 else 1.0
    capacity = run.tables.links.capacity
    time, rates, queues, paused = run.rows.rows()
    t = run.totals
    finish, delivered = run.state.classes.finish.copy(), run.state.classes.delivered.copy()
    if run.unfold is not None:
        finish, delivered = run.unfold.finish.copy(), run.unfold.delivered.copy()
    if copies is not None:
        cls, link = copies.class_of, copies.link_of
        rates, queues, paused = rates[:, cls], queues[:, link], paused[:, link]
        finish, delivered, capacity = finish[cls], delivered[cls], capacity[link]
        per_class = [a.shape[0] == 1 for a in new_stats(0, 1)]
        t = Stats(*(a[cls] if c else a[link] for a, c in zip(t, per_class, strict=True)))
        derived = LinkDerived(**{f.name: getattr(derived, f.name)[link] for f in fields(derived)})
    ideal_rate, ideal_finish = ideal_rates(network)
    knobs = run.tables.knobs
    with np.errstate(invalid="ignore", divide="ignore"):
        mark_share = np.where(t.served > 0, t.marked / t.served, 0.0)
    return TransportResult(
        network=network,
        time_s=time,
        class_rate_Bps=rates,
        queue_bytes=queues,
        paused_share=paused,
        finish_s=finish,
        delivered_bytes=delivered,
        dropped_class_bytes=t.dropped_class.copy(),
        ideal_rate_Bps=ideal_rate,
        ideal_finish_s=ideal_finish,
        pause_fraction=t.paused_time / span,
        ecn_mark_fraction=mark_share,
        dropped_bytes=t.dropped.copy(),
        xoff_events=t.xoff_events.copy(),
        max_queue_bytes=t.max_queue.copy(),
        max_occupancy_bytes=t.max_occupancy.copy(),
        mean_queue_bytes=t.queue_time / span,
        utilization=t.served / (capacity * span),
        headroom_bytes=derived.headroom_bytes,
        lossless=derived.lossless,
        xoff_bytes=derived.xoff_bytes,
        xon_bytes=derived.xon_bytes,
        end_s=end,
        steps=run.steps,
        jumps=run.jumps,
        settled_window_s=settled_window,
        queues_at_rest=run.queues_at_rest,
        fifo_bin_s=knobs.fifo_bin_steps * knobs.dt if knobs.fifo_width > 0 else 0.0,
    )
