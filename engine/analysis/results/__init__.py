"""The typed results the door returns: frozen dataclasses, each with `to_dict`, `to_json`
and `from_dict` (`codec`), grouped by concern.

`fabric` (topology, permutation test and the utilization rows they share), `collective`,
`training`, `cost`, `report` (the whole evaluation and the app's report), `comparison`,
`transport` (the transport study of one workload), `measured` (a run of nccl-tests) and
`goodput` (goodput under failures), `link_errors` (post-FEC loss and its cost) and
`storage` (a design's storage network and a checkpoint over it).
The sweep's result lives with the sweep (`engine.analysis.sweeps.SweepResult`).
"""

from __future__ import annotations

from engine.analysis.results.codec import JsonResult, ResultFormatError
from engine.analysis.results.collective import (
    CollectiveRow,
    CollectiveSummary,
    CollectiveSweep,
    StageTime,
)
from engine.analysis.results.comparison import (
    ComparisonResult,
    ComparisonRow,
    DecisionRow,
    DecisionTable,
)
from engine.analysis.results.cost import BomRow, CostReport, SupplySummary, VendorShare
from engine.analysis.results.fabric import (
    HotLink,
    PermutationResult,
    PermutationTransport,
    Stats,
    TierUtilization,
    TopologySummary,
    UtilizationHistogram,
)
from engine.analysis.results.goodput import GoodputComparison, GoodputPart, GoodputResult
from engine.analysis.results.jobs import JobResult, SharedResult
from engine.analysis.results.link_errors import LinkErrorsResult, RecoveryCost
from engine.analysis.results.measured import NcclTestsPoint, NcclTestsRun, NcclTestsTiming
from engine.analysis.results.report import AppReport, EvaluationResult
from engine.analysis.results.storage import StorageSummary
from engine.analysis.results.training import CommTime, TimedCollective, TrainingResult
from engine.analysis.results.transport import (
    FlowSeries,
    PortFigures,
    PortSeries,
    TransportStudy,
    TransportWorkload,
)
from engine.analysis.results.uncertainty import UnknownSwing, VerdictRange

__all__ = [
    "AppReport",
    "BomRow",
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
    "FlowSeries",
    "GoodputComparison",
    "GoodputPart",
    "GoodputResult",
    "HotLink",
    "JobResult",
    "JsonResult",
    "LinkErrorsResult",
    "NcclTestsPoint",
    "NcclTestsRun",
    "NcclTestsTiming",
    "PermutationResult",
    "PermutationTransport",
    "PortFigures",
    "PortSeries",
    "RecoveryCost",
    "ResultFormatError",
    "SharedResult",
    "StageTime",
    "Stats",
    "StorageSummary",
    "SupplySummary",
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
]
