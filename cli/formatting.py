"""Text for a terminal: the reports of evaluate, collective, train, cost, compare and
transport, and the measured runs (nccl-tests) kept in the library.

Each function reads the typed result the door returned (`engine.analysis.results`) and
only words and lays out its figures.
"""

from __future__ import annotations

from engine.analysis import (
    CollectiveRow,
    CollectiveSummary,
    CostReport,
    EvaluationResult,
    Measurement,
    NcclTestsRun,
    PermutationResult,
    StorageSummary,
    TopologySummary,
    TrainingResult,
    TransportStudy,
    TransportWorkload,
)


def _gbps(bytes_per_s: float) -> str:
    return f"{bytes_per_s * 8 / 1e9:,.0f} Gb/s"


def format_report(report: EvaluationResult, traffic: bool = False) -> str:
    """The evaluation report as text for a terminal: each part that was asked for
    (`traffic`: the flow test ran the scenario's traffic matrix, not a permutation)."""
    lines = [format_topology(report.topology)]
    if report.permutation is not None:
        label = "traffic matrix" if traffic else "permutation traffic"
        lines += ["", format_permutation(report.permutation, label)]
    if report.collective is not None:
        lines += ["", format_collective(report.collective)]
    if report.training is not None:
        lines += ["", format_training(report.training)]
    if report.cost is not None:
        lines += ["", format_cost(report.cost, report.topology.name)]
    if report.storage is not None:
        lines += ["", format_storage(report.storage)]
    lines += report.warnings
    return "\n".join(lines)


def format_topology(t: TopologySummary) -> str:
    """GPUs, switches, cables, bisection and oversubscription of the expanded fabric."""
    lines = [f"{t.name}: {t.gpus:,} GPUs on {t.servers:,} servers"]
    lines.append("  switches: " + ", ".join(f"{n:,} {tier}" for tier, n in t.switches.items()))
    lines.append(
        "  cables:   "
        + ", ".join(f"{n:,} {b}" for b, n in t.cables.items())
        + f" ({t.cables_working:,} of {t.cables_total:,} working)"
    )
    lines.append(f"  bisection bandwidth: {_gbps(t.bisection_bandwidth_Bps)}")
    if t.oversubscription:
        lines.append(
            "  oversubscription:   "
            + ", ".join(f"{tier} {v:.2f}:1" for tier, v in t.oversubscription.items())
        )
    return "\n".join(lines)


def format_storage(s: StorageSummary) -> str:
    """The storage network beside the compute fabric: its parts, the bandwidth at each end
    and the checkpoint written over it (what bounds it)."""
    nodes = ", ".join(f"{n:,} x {model}" for model, n in s.node_models.items())
    switches = ", ".join(f"{n:,} {tier}" for tier, n in s.switches.items())
    drives = "not given" if s.node_drives_Bps is None else _gbps(s.node_drives_Bps)
    lines = [
        f"storage network: {s.nodes:,} storage nodes ({nodes}); switches: {switches}",
        f"  cables: {s.cables_working:,} of {s.cables_total:,} working; "
        f"{s.frontend_ports:,} server front-end ports",
        f"  bandwidth: servers' front-end {_gbps(s.frontend_Bps)}, storage nodes' ports "
        f"{_gbps(s.node_ports_Bps)}, their drives {drives}",
    ]
    size = _binary_size(s.checkpoint_bytes_per_gpu)
    head = f"  checkpoint ({s.checkpoint_source}): {s.checkpoint_gpus:,} GPUs x {size}"
    if s.checkpoint_s is None or s.checkpoint_Bps is None:
        lines.append(f"{head}: not run ({s.checkpoint_error})")
    else:
        lines.append(
            f"{head}: {s.checkpoint_s:.3f} s at {_gbps(s.checkpoint_Bps)} "
            f"({s.checkpoint_Bps / 1e9:,.1f} GB/s), bound by the {s.checkpoint_bound}"
        )
    return "\n".join(lines)


def format_permutation(p: PermutationResult, label: str = "permutation traffic") -> str:
    """The permutation test (or a traffic matrix's, named by `label`): per-flow throughput,
    latency and link utilization per tier."""
    f = p.throughput_fraction
    lines = []
    lines.append(
        f"{label}, routing {p.routing} ({p.flows_per_connection} flow(s) per connection), "
        f"{p.connections:,} connections"
    )
    lines.append(
        f"  per-flow throughput / line rate (ideal): min {f.min:.3f}  mean {f.mean:.3f}  "
        f"max {f.max:.3f}"
    )
    c = p.cross_leaf_throughput_fraction
    if p.cross_leaf_connections:
        lines.append(
            f"  cross-leaf flows ({p.cross_leaf_connections:,}):     min {c.min:.3f}  "
            f"mean {c.mean:.3f}  max {c.max:.3f}"
        )
    lines.append(f"  flows below 99% of line rate: {p.below_99pct_fraction:.1%}")
    t = p.transport
    if t is not None and t.throughput_fraction is not None:
        m = t.throughput_fraction
        lines.append(
            f"  through the transport (steady):  min {m.min:.3f}  mean {m.mean:.3f}  "
            f"max {m.max:.3f}   efficiency {t.efficiency:.3f}, paused {t.max_pause_fraction:.1%}, "
            f"ECN-marked {t.max_ecn_mark_fraction:.1%} at most"
        )
    if t is not None and t.note:
        lines.append(f"  transport: {t.note}")
    if p.unreachable:
        lines.append(f"  UNREACHABLE connections: {p.unreachable:,}")
    lines.append(f"  mean path latency: {p.mean_path_latency_s * 1e6:.2f} µs")
    lines.append("  link utilization per tier (min / mean / max, idle share):")
    for label, u in p.link_utilization.items():
        lines.append(
            f"    {label:<14} {u.min:.2f} / {u.mean:.2f} / {u.max:.2f}   "
            f"idle {u.idle_fraction:.1%} of {u.links:,}"
        )
    return "\n".join(lines)


def format_cost(report: CostReport, name: str) -> str:
    """The bill of materials, capex, power and energy cost."""
    lines = [f"{name}: bill of materials"]
    for line in report.bom:
        lines.append(
            f"  {line.count:>9,} x {line.item:<44} {line.unit_price_usd:>11,.0f} USD "
            f"{line.unit_power_w:>8,.1f} W  ({line.tier})"
        )
    lines.append(
        f"capex {report.capex_usd:,.0f} USD, network {report.network_capex_usd:,.0f} USD "
        f"({report.network_share:.1%}); {report.cost_per_gpu_usd:,.0f} USD per GPU"
    )
    lines.append(
        f"power {report.power_w / 1e3:,.1f} kW (network {report.network_power_w / 1e3:,.1f} kW); "
        f"energy over {report.years:g} years {report.opex_usd:,.0f} USD"
    )
    return "\n".join(lines + format_supply(report))


def _second_sources(count: int | None) -> str:
    return "no supply data" if count is None else f"{count} second source" + "s" * (count != 1)


def format_supply(report: CostReport) -> list[str]:
    """Vendor concentration beside the price, each line's supply facts, host cores saved."""
    s = report.supply
    shares = ", ".join(f"{v.vendor} {v.share:.1%}" for v in s.by_vendor)
    network = ", ".join(f"{v.vendor} {v.share:.1%}" for v in s.network_by_vendor)
    lines = [
        f"vendors of the capex: {shares}; largest {s.top_vendor} {s.top_vendor_share:.1%}; "
        f"single-source parts {s.single_source_share:.1%}",
        f"vendors of the network capex: {network}; largest {s.network_top_vendor} "
        f"{s.network_top_vendor_share:.1%}; single-source {s.network_single_source_share:.1%}; "
        f"open-standard {s.network_open_standard_share:.1%}",
        f"host CPU cores saved by NIC offload: {report.host_cores_saved:,}",
        "supply per line:",
    ]
    for line in report.bom:
        lines.append(
            f"  {line.catalog_id:<24} {line.vendor:<16} {_second_sources(line.second_sources):<20}"
            f" lead time {line.lead_time:<12} "
            + {True: "open standard", False: "single-vendor interfaces", None: "openness unknown"}[
                line.open_standard
            ]
        )
    return lines + [f"note: {n}" for n in s.notes]


def format_training(step: TrainingResult) -> str:
    """The training-step breakdown as text."""
    lines = [
        f"training step: {step.model} " + " ".join(f"{k}={v}" for k, v in step.layout.items()),
        f"  step {step.step_s:.3f} s = compute {step.compute_s:.3f} s + exposed communication "
        f"{step.exposed_comm_s:.3f} s + pipeline bubble {step.bubble_s:.3f} s + optimizer "
        f"{step.optimizer_s:.3f} s  ({step.schedule}, recompute {step.recompute})",
        f"  GPU utilization {step.gpu_utilization:.1%}   MFU {step.mfu:.1%}   "
        f"{step.tokens_per_s:,.0f} tokens/s",
        "  compute by kernel: "
        + ", ".join(f"{k.replace('_', ' ')} {v:.3f} s" for k, v in step.compute_parts_s.items())
        + f"  (compute phase at {step.compute_efficiency:.1%} of peak)",
        f"  memory per GPU: model states {step.model_state_bytes_per_gpu / 1e9:,.1f} GB + "
        f"activations {step.activation_bytes_per_gpu / 1e9:,.1f} GB",
    ]
    for kind, c in step.comm_s.items():
        lines.append(
            f"  {kind:<4} communication {c.raw_s * 1e3:9.2f} ms, exposed "
            f"{c.exposed_s * 1e3:9.2f} ms"
        )
    for note in step.notes:
        lines.append(f"  note: {note}")
    for item in step.assumptions:
        lines.append(f"  assumption: {item}")
    return "\n".join(lines)


def _fastest_text(row: CollectiveRow) -> str:
    """The fastest pair under the transport and its busbw where it beats what runs."""
    gain = row.forcing_gain()
    if gain < 5e-4:
        return ""
    busbw = row.busbw_GBps * row.time_s / row.fastest_time_s
    return f"{row.fastest_algorithm} / {row.fastest_protocol} {busbw:.2f} GB/s"


def format_collective(result: CollectiveSummary) -> str:
    """An nccl-tests-like table of a collective's times: the pair NCCL runs and, where
    another is faster on this fabric, that pair (what forcing NCCL_ALGO/NCCL_PROTO gives)."""
    lines = [
        f"# {result.op} over {result.ranks} ranks",
        f"#{'size (B)':>14} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}  "
        f"{'algorithm / protocol':<22} faster if forced",
    ]
    for row in result.rows:
        lines.append(
            f"{row.bytes:>15} {row.time_s * 1e6:>12.2f} {row.algbw_GBps:>13.2f} "
            f"{row.busbw_GBps:>13.2f}  {row.algorithm + ' / ' + row.protocol:<22} "
            f"{_fastest_text(row)}".rstrip()
        )
    if any(row.forcing_gain() >= 5e-4 for row in result.rows):
        lines.append(
            "# auto runs NCCL's pick (its tuner sees the NICs, not the congestion); the last "
            "column is the fastest pair on this fabric, what NCCL_ALGO/NCCL_PROTO would force"
        )
    lines.append(
        "# largest size, per stage: "
        + "; ".join(
            f"{b.stage}: {b.bandwidth_s * 1e6:.1f} us transfer + {b.latency_s * 1e6:.1f} us latency"
            for b in result.breakdown
        )
    )
    for b in result.breakdown:
        said = "settled" in b.transport_note or "by kinds" in b.stage  # a note to read
        if b.transport_efficiency < 1.0 - 1e-6 or said:
            why = f" ({b.transport_note})" if b.transport_note else ""
            lines.append(
                f"# transport, {b.stage}: {b.transport_efficiency:.2f} of its ideal, paused "
                f"{b.max_pause_fraction:.0%}, ECN-marked {b.max_ecn_mark_fraction:.0%}{why}"
            )
    hot = result.hottest_links[:3]
    if hot:
        lines.append("# hottest links: " + ", ".join(f"{h.link} {h.utilization:.0%}" for h in hot))
    return "\n".join(lines)


def number(value: float) -> str:
    """A figure for a table: thousands separated when large, 4 significant digits when small."""
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def _binary_size(value: float) -> str:
    """Bytes in the binary units the command line reads (64M is 64 MiB)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def _workload_text(w: TransportWorkload) -> str:
    """The workload in a few words, e.g. ``incast 16:1 + victim, 8 MiB per flow``."""
    ranks = "all GPUs" if w.ranks == 0 else f"{w.ranks} ranks"
    kind = {
        "incast": f"incast {w.senders}:1" + (" + victim" if w.victim else ""),
        "permutation": f"permutation (seed {w.seed})",
        "all-to-all": f"all-to-all over {ranks}",
        "collective": f"{w.algorithm} {w.op} over {ranks} (first network stage)",
    }.get(w.kind, w.kind)
    horizon = f", horizon {w.horizon_s * 1e3:g} ms" if w.horizon_s else ""
    if w.kind == "traffic":
        return f"traffic matrix, each flow its own bytes{horizon}"
    return f"{kind}, {_binary_size(w.bytes_per_flow)} per flow{horizon}"


def format_transport(study: TransportStudy) -> str:
    """The transport study: per-flow throughput against the ideal, efficiency, drops, the
    victim's slowdown and the hottest ports."""
    t, i = study.throughput_Bps, study.ideal_throughput_Bps
    # An all-to-all over thousands of GPUs gives each pair a sliver of a link: MB/s then.
    scale, unit = (1e9, "GB/s") if max(i.max, t.max) >= 0.1e9 else (1e6, "MB/s")
    lines = [
        f"{study.scenario}: {study.technology} ({', '.join(study.mechanisms)}), "
        + _workload_text(study.workload),
        f"  per-flow throughput: mean {t.mean / scale:.3f} {unit}  min {t.min / scale:.3f}  "
        f"max {t.max / scale:.3f}   (ideal mean {i.mean / scale:.3f}  min {i.min / scale:.3f}  "
        f"max {i.max / scale:.3f})",
        f"  efficiency {study.efficiency:.3f}: makespan {study.makespan_s * 1e3:.4g} ms vs ideal "
        f"{study.ideal_makespan_s * 1e3:.4g} ms ({study.flows:,} flows in {study.classes:,} "
        f"classes{'' if study.finished else ', NOT finished'})",
    ]
    drops = (
        f"dropped {study.dropped_bytes / 1e6:.4g} MB (sent again)"
        if study.dropped_bytes > 0
        else "no drops"
    )
    short = sum(not p.headroom_ok for p in study.hottest)
    loss = "lossless" if study.lossless else "NOT lossless"
    if short:
        loss += f" ({short} of the hottest ports without lossless headroom)"
    lines.append(f"  {drops}; {loss}")
    if study.victim_slowdown is not None:
        lines.append(f"  victim slowdown: {study.victim_slowdown:.2f}x its ideal time")
    if study.hottest:
        width = max(len(p.link) for p in study.hottest)
        lines.append(
            f"  {'hottest ports':<{width}} {'queue KB max':>12} {'mean':>9} {'pause %':>8} "
            f"{'ECN %':>7} {'drops MB':>9}"
        )
        for p in study.hottest:
            lines.append(
                f"  {p.link:<{width}} {p.max_queue_bytes / 1e3:>12,.1f} "
                f"{p.mean_queue_bytes / 1e3:>9,.1f} {p.pause_fraction:>8.1%} "
                f"{p.ecn_mark_fraction:>7.1%} {p.dropped_bytes / 1e6:>9.3g}"
            )
    lines += [f"  note: {note}" for note in study.notes]
    lines.append(f"  engine {study.engine_s:.2f} s ({study.steps:,} steps, {study.jumps} jumps)")
    return "\n".join(lines)


def format_measurement(measurement: Measurement, run: NcclTestsRun) -> str:
    """A stored measured run: its name, op, ranks, GPU, NCCL version, the size range of its
    points and the peak busbw, with a warning when nccl-tests found wrong values."""
    version = f"NCCL {run.nccl_version}" if run.nccl_version else "NCCL version not stated"
    lines = [
        f"{measurement.name}: {run.op} over {run.ranks} ranks of {run.gpu or 'an unnamed GPU'}, "
        f"{version}, {run.dtype}"
    ]
    peak = run.peak_point
    if peak is not None:
        sizes = [p.size_bytes for p in run.points]
        lines.append(
            f"  {len(run.points)} points, {_binary_size(min(sizes))} to "
            f"{_binary_size(max(sizes))}; peak busbw {run.peak_busbw_GBps:.2f} GB/s at "
            f"{_binary_size(peak.size_bytes)}"
        )
    origin = f"  from {measurement.source or 'no file'}, imported {measurement.imported[:19]}"
    if measurement.scenario:
        origin += f", measures scenario {measurement.scenario}"
    lines.append(origin)
    if run.wrong_rows:
        lines.append(f"  warning: nccl-tests found wrong values in {run.wrong_rows} row(s)")
    return "\n".join(lines)
