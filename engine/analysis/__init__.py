"""The one door of the engine: everything the front ends (`cli`, `ui`) ask of it.

Front ends import from here, `engine.model`, `engine.catalog` and `engine.library` only (a
contract in pyproject.toml); every figure they show is computed behind this door, and comes
out of it as a typed, frozen result (`engine.analysis.results`) with `to_dict`, `to_json`
and `from_dict`.

Importing it tunes one thing of the process for the engine's large arrays: numpy's huge-page
advice is turned off where it stalls every fresh array (`engine.runtime.memory`).
"""

from __future__ import annotations

from engine.analysis.caches import cache_counts, clear_caches, reused_since
from engine.analysis.calibrate import FACTORS as CALIBRATION_FACTORS
from engine.analysis.calibrate import CalibrationFit, calibrate
from engine.analysis.comparison import compare, convert_technology
from engine.analysis.connect import default_bundle
from engine.analysis.decision import DECIDING_BYTES, busbw_at, decision_row, decision_table
from engine.analysis.evaluation import evaluate, training_summary
from engine.analysis.formats import (
    EXPORT_FORMATS,
    EXPORT_SUFFIXES,
    TOPOLOGY_SUFFIXES,
    TRAFFIC_SUFFIXES,
    Flow,
    export_fabric,
    export_preview,
    import_topology,
    import_traffic,
)
from engine.analysis.frontier import COSTS as FRONTIER_COSTS
from engine.analysis.frontier import PERFORMANCE as FRONTIER_PERFORMANCE
from engine.analysis.frontier import REPORT_PERFORMANCE as FRONTIER_REPORT_PERFORMANCE
from engine.analysis.frontier import (
    Frontier,
    FrontierPoint,
    frontier,
    frontier_library,
    frontier_of_reports,
    frontier_scenarios,
    frontier_sweep,
)
from engine.analysis.goodput import goodput, goodput_by_technology
from engine.analysis.html_report import html_report
from engine.analysis.interactive import PARTS, run_evaluation
from engine.analysis.latency import LATENCIES_NS, ROW_KEYS, latency_reach, latency_rows
from engine.analysis.link_errors import RECOVERIES as LINK_RECOVERIES
from engine.analysis.link_errors import link_errors
from engine.analysis.measurements import (
    import_nccl_tests,
    measured_series,
    measurement_run,
    read_nccl_tests,
    store_run,
)
from engine.analysis.nccl_tests import TEST_OPS as NCCL_TESTS_OPS
from engine.analysis.nccl_tests import OpNotNamedError, op_name, parse_nccl_tests
from engine.analysis.probes import collective_run, cost_run, fabric_size, training_run
from engine.analysis.results import (
    AppReport,
    BomRow,
    CollectiveRow,
    CollectiveSummary,
    CollectiveSweep,
    CommTime,
    ComparisonResult,
    ComparisonRow,
    CostReport,
    DecisionRow,
    DecisionTable,
    EvaluationResult,
    FlowSeries,
    GoodputComparison,
    GoodputPart,
    GoodputResult,
    HotLink,
    JobResult,
    LinkErrorsResult,
    NcclTestsPoint,
    NcclTestsRun,
    NcclTestsTiming,
    PermutationResult,
    PortFigures,
    PortSeries,
    RecoveryCost,
    ResultFormatError,
    SharedResult,
    StageTime,
    Stats,
    StorageSummary,
    SupplySummary,
    TierUtilization,
    TimedCollective,
    TopologySummary,
    TrainingResult,
    TransportStudy,
    TransportWorkload,
    UnknownSwing,
    UtilizationHistogram,
    VendorShare,
    VerdictRange,
)
from engine.analysis.self_check import (
    CheckResult,
    SelfCheckError,
    check_evaluation,
    check_library,
    check_numba_cache,
    check_resources,
    kernels_ready,
    run_check,
)
from engine.analysis.shared import equal_jobs, shared_run
from engine.analysis.sources import (
    library_scenarios,
    load_from_library,
    open_library,
    seed_with_presets,
)
from engine.analysis.sweep_points import SweepPoint, sweep_points
from engine.analysis.sweeps import METRICS, SweepResult, default_executor, parse_values, sweep
from engine.analysis.tier_utilization import bundle_tier_labels, tier_peak, tier_utilization
from engine.analysis.transport_demand import KINDS as TRANSPORT_KINDS
from engine.analysis.transport_study import transport_study
from engine.analysis.uncertainty import describe as describe_verdict_range
from engine.analysis.uncertainty import verdict_range
from engine.collectives.schedules import ALGORITHMS as COLLECTIVE_ALGORITHMS
from engine.collectives.schedules import OPS
from engine.collectives.timing import DEFAULT_SIZES
from engine.library.measurements import Measurement
from engine.presets.scenarios import DEFAULT_PRESET, PRESETS, load_preset, preset_names
from engine.runtime.memory import parse_bytes, plain_pages_for_numpy, set_memory_limit
from engine.runtime.progress import Progress, RunCancelledError
from engine.runtime.resources import resource_dir, resource_path
from engine.topology.templates import (
    MIXED_PODS,
    OVERSUBSCRIBED,
    PLANED,
    TEMPLATES,
    generate,
    template_speed,
)

__all__ = [
    "CALIBRATION_FACTORS",
    "COLLECTIVE_ALGORITHMS",
    "DECIDING_BYTES",
    "DEFAULT_PRESET",
    "DEFAULT_SIZES",
    "EXPORT_FORMATS",
    "EXPORT_SUFFIXES",
    "FRONTIER_COSTS",
    "FRONTIER_PERFORMANCE",
    "FRONTIER_REPORT_PERFORMANCE",
    "LATENCIES_NS",
    "LINK_RECOVERIES",
    "METRICS",
    "MIXED_PODS",
    "NCCL_TESTS_OPS",
    "OPS",
    "OVERSUBSCRIBED",
    "PARTS",
    "PLANED",
    "PRESETS",
    "ROW_KEYS",
    "TEMPLATES",
    "TOPOLOGY_SUFFIXES",
    "TRAFFIC_SUFFIXES",
    "TRANSPORT_KINDS",
    "AppReport",
    "BomRow",
    "CalibrationFit",
    "CheckResult",
    "CollectiveRow",
    "CollectiveSummary",
    "CollectiveSweep",
    "CommTime",
    "ComparisonResult",
    "ComparisonRow",
    "CostReport",
    "DecisionRow",
    "DecisionTable",
    "EvaluationResult",
    "Flow",
    "FlowSeries",
    "Frontier",
    "FrontierPoint",
    "GoodputComparison",
    "GoodputPart",
    "GoodputResult",
    "HotLink",
    "JobResult",
    "LinkErrorsResult",
    "Measurement",
    "NcclTestsPoint",
    "NcclTestsRun",
    "NcclTestsTiming",
    "OpNotNamedError",
    "PermutationResult",
    "PortFigures",
    "PortSeries",
    "Progress",
    "RecoveryCost",
    "ResultFormatError",
    "RunCancelledError",
    "SelfCheckError",
    "SharedResult",
    "StageTime",
    "Stats",
    "StorageSummary",
    "SupplySummary",
    "SweepPoint",
    "SweepResult",
    "TierUtilization",
    "TimedCollective",
    "TopologySummary",
    "TrainingResult",
    "TransportStudy",
    "TransportWorkload",
    "UnknownSwing",
    "UtilizationHistogram",
    "VendorShare",
    "VerdictRange",
    "bundle_tier_labels",
    "busbw_at",
    "cache_counts",
    "calibrate",
    "check_evaluation",
    "check_library",
    "check_numba_cache",
    "check_resources",
    "clear_caches",
    "collective_run",
    "compare",
    "convert_technology",
    "cost_run",
    "decision_row",
    "decision_table",
    "default_bundle",
    "default_executor",
    "describe_verdict_range",
    "equal_jobs",
    "evaluate",
    "export_fabric",
    "export_preview",
    "fabric_size",
    "frontier",
    "frontier_library",
    "frontier_of_reports",
    "frontier_scenarios",
    "frontier_sweep",
    "generate",
    "goodput",
    "goodput_by_technology",
    "html_report",
    "import_nccl_tests",
    "import_topology",
    "import_traffic",
    "kernels_ready",
    "latency_reach",
    "latency_rows",
    "library_scenarios",
    "link_errors",
    "load_from_library",
    "load_preset",
    "measured_series",
    "measurement_run",
    "op_name",
    "open_library",
    "parse_bytes",
    "parse_nccl_tests",
    "parse_values",
    "preset_names",
    "read_nccl_tests",
    "resource_dir",
    "resource_path",
    "reused_since",
    "run_check",
    "run_evaluation",
    "seed_with_presets",
    "set_memory_limit",
    "shared_run",
    "store_run",
    "sweep",
    "sweep_points",
    "template_speed",
    "tier_peak",
    "tier_utilization",
    "training_run",
    "training_summary",
    "transport_study",
    "verdict_range",
]

plain_pages_for_numpy()  # before the first evaluation allocates (see the module's docstring)
