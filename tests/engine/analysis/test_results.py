"""The door's typed results: they round-trip through their dict and JSON, are frozen, and
write exactly the JSON the CLI has always printed (the golden suite covers every preset)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from engine.analysis import (
    AppReport,
    CollectiveSummary,
    ComparisonResult,
    CostReport,
    EvaluationResult,
    ResultFormatError,
    SweepResult,
    TrainingResult,
    collective_run,
    compare,
    cost_run,
    evaluate,
    load_preset,
    run_evaluation,
    sweep,
    training_run,
)
from tests.golden.cases import blank_wall_clock, fixture_path

PRESET = "dgx-h100-ib-ndr-1k"
PARTS = ("permutation", "collective", "training", "cost")


@pytest.fixture(scope="module")
def scenario():
    return load_preset(PRESET)


@pytest.fixture(scope="module")
def evaluation(scenario, catalog) -> EvaluationResult:
    return evaluate(scenario, catalog, PARTS)


@pytest.fixture(scope="module")
def app_report(scenario, catalog) -> AppReport:
    return run_evaluation(scenario, catalog)


@pytest.fixture(scope="module")
def probes(scenario, catalog):
    return {
        "collective": collective_run(scenario, catalog, np.array([2.0**20, 2.0**30])),
        "training": training_run(scenario, catalog),
        "cost": cost_run(scenario, catalog),
    }


def _golden(command: str) -> str:
    return fixture_path(command, PRESET).read_text(encoding="utf-8")


def _normalized(text: str) -> str:
    """JSON text with the wall-clock fields blanked, as the golden fixtures hold it."""
    return json.dumps(blank_wall_clock(json.loads(text)), indent=2) + "\n"


# ---- round trips -------------------------------------------------------------------------------


def test_an_evaluation_round_trips_through_its_dict_and_its_json(evaluation):
    assert type(evaluation) is EvaluationResult
    assert EvaluationResult.from_dict(evaluation.to_dict()) == evaluation
    assert EvaluationResult.from_dict(json.loads(evaluation.to_json())) == evaluation


def test_the_apps_report_round_trips_as_the_library_keeps_it(app_report):
    from engine.library.plain_json import json_safe

    stored = json.loads(json.dumps(json_safe(app_report.to_dict())))
    assert AppReport.from_dict(stored) == app_report
    assert app_report.collective_sweep is not None and app_report.scenario is not None


@pytest.mark.parametrize(
    ("name", "cls"),
    [("collective", CollectiveSummary), ("training", TrainingResult), ("cost", CostReport)],
)
def test_each_probe_round_trips(probes, name, cls):
    result = probes[name]
    assert type(result) is cls
    assert cls.from_dict(result.to_dict()) == result
    assert cls.from_dict(json.loads(result.to_json())) == result


def test_a_comparison_round_trips(scenario, catalog):
    result = compare(scenario, scenario, catalog, parts=("permutation",))
    assert isinstance(result, ComparisonResult)
    assert [row.metric for row in result.rows][:3] == ["GPUs", "switches", "cables"]
    assert all(row.b_over_a == 1.0 for row in result.rows)
    assert ComparisonResult.from_dict(result.to_dict()) == result


# ---- the JSON form -----------------------------------------------------------------------------


def test_parts_not_asked_for_are_left_out_of_the_dict(scenario, catalog):
    result = evaluate(scenario, catalog, parts=("permutation",))
    assert result.collective is None and result.training is None and result.cost is None
    assert list(result.to_dict()) == ["topology", "permutation", "warnings", "expand_s"]


def test_keys_come_in_the_order_the_cli_has_always_printed(evaluation):
    assert list(evaluation.to_dict()) == [
        "topology",
        "permutation",
        "collective",
        "training",
        "cost",
        "warnings",
        "expand_s",
    ]


def test_to_json_is_the_golden_json(scenario, catalog, probes):
    cli_default = evaluate(scenario, catalog, ("permutation", "collective", "training"))
    assert _normalized(cli_default.to_json()) == _golden("evaluate")
    assert _normalized(probes["training"].to_json()) == _golden("train")
    assert _normalized(probes["cost"].to_json()) == _golden("cost")


def test_the_collective_rows_json_is_what_collective_json_prints(scenario, catalog):
    from engine.model.sizes import parse_sizes

    result = collective_run(scenario, catalog, parse_sizes("8:16G", 4.0))
    assert _normalized(result.rows_json()) == _golden("collective")


def test_the_apps_report_is_the_evaluation_with_its_extras_after_it(app_report):
    keys = list(app_report.to_dict())
    assert keys[-4:] == ["collective_sweep", "scenario", "ui_elapsed_s", "reused"]
    sweep_part = app_report.collective_sweep
    assert sweep_part.sizes == tuple(float(r.bytes) for r in app_report.collective.rows)
    assert sweep_part.best_busbw_GBps == tuple(r.busbw_GBps for r in app_report.collective.rows)


# ---- frozen, and refusing what does not fit ------------------------------------------------------


def test_results_and_their_rows_are_frozen(evaluation, probes):
    for target, name in (
        (evaluation, "expand_s"),
        (evaluation.topology, "gpus"),
        (evaluation.permutation.throughput_fraction, "mean"),
        (evaluation.collective.rows[0], "busbw_GBps"),
        (probes["training"], "step_s"),
        (probes["training"].comm_s["tp"], "raw_s"),
        (probes["cost"], "capex_usd"),
        (probes["cost"].bom[0], "count"),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(target, name, 0)
    assert isinstance(evaluation.collective.rows, tuple)
    assert isinstance(probes["cost"].bom, tuple)


def test_a_dict_of_another_shape_is_refused_naming_the_field(evaluation):
    data = evaluation.to_dict()
    data["topology"]["gpus"] = "many"
    with pytest.raises(ResultFormatError, match=r"topology\.gpus"):
        EvaluationResult.from_dict(data)
    data = evaluation.to_dict()
    del data["permutation"]["throughput_fraction"]
    with pytest.raises(ResultFormatError, match="missing field throughput_fraction"):
        EvaluationResult.from_dict(data)
    with pytest.raises(ResultFormatError, match="unknown field"):
        EvaluationResult.from_dict({**evaluation.to_dict(), "layout_v0": {}})
    with pytest.raises(ResultFormatError):
        AppReport.from_dict(["not", "a", "report"])


def test_a_sweep_result_is_frozen_and_writes_the_cli_json(scenario):
    result = sweep(scenario, [("routing.mode", ["ecmp", "spray"])], "busbw_GBps")
    assert isinstance(result, SweepResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.metric = "mfu"
    assert isinstance(result.results, tuple) and result.grid().shape == (2,)
    data = json.loads(result.to_json())
    assert data == {"metric": "busbw_GBps", "table": result.table(), "errors": {}}


def test_json_is_strict_an_infinite_figure_is_null(probes):
    """`--json` is strict JSON: a figure without a finite value reads as null, never as
    Infinity or NaN (which most JSON readers refuse)."""
    step = dataclasses.replace(probes["training"], step_s=math.inf, mfu=math.nan)
    data = json.loads(step.to_json(), parse_constant=lambda name: pytest.fail(name))
    assert data["step_s"] is None and data["mfu"] is None
