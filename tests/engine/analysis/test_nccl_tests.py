"""Reading nccl-tests output: every column layout the fixtures hold, the run's JSON round trip,
and malformed text, which is always one `ScenarioError` naming the line, never a traceback."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis import (
    OPS,
    NcclTestsRun,
    OpNotNamedError,
    measured_series,
    op_name,
    parse_nccl_tests,
    read_nccl_tests,
)
from engine.model.errors import ScenarioError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl_tests"
HEAD = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20
# Using devices
#  Rank  0 Group  0 Pid   1001 on node-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1002 on node-a device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
"""
ROW = "        1024           256     float     sum      -1    20.00    0.05    0.05      0    20.50    0.05    0.05      0"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def refused(text: str, match: str, **options) -> ScenarioError:
    with pytest.raises(ScenarioError, match=match) as info:
        parse_nccl_tests(text, **{"source": "run.txt", **options})
    assert "Traceback" not in str(info.value)
    return info.value


# ---- the layouts --------------------------------------------------------------------------


def test_a_modern_all_reduce_log_with_nccl_info_lines():
    run = read_nccl_tests(FIXTURES / "all_reduce_perf_8xh100.txt")
    assert (run.op, run.ranks, run.gpu, run.dtype) == (
        "all-reduce",
        8,
        "NVIDIA H100 80GB HBM3",
        "float",
    )
    assert run.nccl_version == "2.18.5"  # NCCL_DEBUG=INFO's own words beat nccl-library=
    assert run.source == "all_reduce_perf_8xh100.txt"
    assert len(run.points) == 17
    first, last = run.points[0], run.points[-1]
    assert (first.size_bytes, first.count) == (8, 2)
    assert first.out_of_place.time_s == pytest.approx(13.67e-6)
    assert first.in_place is not None and first.in_place.time_s == pytest.approx(13.81e-6)
    assert first.out_of_place.wrong == 0
    assert last.size_bytes == 16 * 2**30
    assert last.out_of_place.busbw_GBps == pytest.approx(479.9)  # nccl-model.md §4 row 22
    assert last.out_of_place.algbw_GBps == pytest.approx(274.23)
    assert run.peak_busbw_GBps == pytest.approx(479.9)
    assert run.wrong_rows == 0


def test_the_nccl_library_code_gives_the_version_without_info_lines():
    run = read_nccl_tests(FIXTURES / "all_gather_perf_16xa100.txt")
    assert (run.op, run.ranks, run.nccl_version) == ("all-gather", 16, "2.17.1")
    assert run.points[-1].out_of_place.busbw_GBps == pytest.approx(186.01)  # row 17
    sendrecv = read_nccl_tests(FIXTURES / "sendrecv_perf_16xb200.txt")
    assert (sendrecv.op, sendrecv.ranks, sendrecv.gpu) == ("send-recv", 16, "NVIDIA B200")
    assert sendrecv.nccl_version == "2.29.7"
    assert sendrecv.peak_busbw_GBps == pytest.approx(42.6)  # row 13


def test_srun_labels_are_dropped_and_unchecked_results_are_none():
    run = read_nccl_tests(FIXTURES / "alltoall_perf_srun_labels.txt")
    assert (run.op, run.ranks, run.nccl_version) == ("all-to-all", 16, "2.17.1")
    assert all(p.out_of_place.wrong is None for p in run.points)  # #wrong N/A (-c 0)
    assert run.points[0].out_of_place.time_s == pytest.approx(49.75e-6)  # row 16
    assert run.points[-1].out_of_place.busbw_GBps == pytest.approx(37.81)  # row 17


def test_an_older_layout_without_root_or_version_needs_the_op():
    text = fixture("all_reduce_2019_no_root.txt")
    error = refused(text, r"cannot tell which collective ran \(it names no nccl-tests program\)")
    assert isinstance(error, OpNotNamedError)  # a front end asks for the op on this one
    run = parse_nccl_tests(text, "old.txt", op="all_reduce_perf")
    assert (run.op, run.ranks, run.gpu, run.nccl_version) == (
        "all-reduce",
        8,
        "Tesla V100-SXM2-32GB",
        None,
    )
    assert len(run.points) == 9
    # the old "error" column is the largest error, a float, not a count of wrong values
    assert all(p.out_of_place.wrong is None for p in run.points)


def test_the_oldest_layout_has_out_of_place_columns_only():
    run = parse_nccl_tests(fixture("broadcast_oldest_out_of_place.txt"), op="broadcast")
    assert (run.op, run.ranks, run.gpu) == ("broadcast", 8, "Tesla P100-SXM2-16GB")
    assert all(p.in_place is None for p in run.points)
    assert [p.size_bytes for p in run.points] == [1024, 16384, 262144, 4194304, 67108864]


def test_columns_without_a_header_or_other_comments_still_read():
    text = "".join(line + "\n" for line in HEAD.splitlines()[:4]) + ROW + "\n"
    run = parse_nccl_tests(text, op="all-reduce")
    assert run.ranks == 2 and len(run.points) == 1


def test_rows_of_7_to_13_columns_all_read():
    timing = "10.0 0.10 0.10 0"
    for labels in ("", "sum", "sum -1"):
        for timings in (timing, f"{timing} {timing}"):
            text = HEAD.splitlines()[2] + f"\n1000 250 float {labels} {timings}\n"
            run = parse_nccl_tests(text, op="all-reduce")
            assert run.points[0].size_bytes == 1000
            assert (run.points[0].in_place is None) == (timings == timing)


def test_log_noise_around_the_table_is_skipped():
    text = (
        "3 nodes allocated\nWarning: Permanently added 'node-b' to known hosts\n"
        + HEAD
        + ROW
        + "\nnode-a:1001:1001 [0] NCCL INFO comm 0x55 rank 0 nranks 2 - Destroy COMPLETE\n"
        + "# Avg bus bandwidth    : 0.05\n2 processes exited\n"
    )
    run = parse_nccl_tests(text, op="all-reduce")
    assert len(run.points) == 1


# ---- the op -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given_name", "op"),
    [
        ("all-reduce", "all-reduce"),
        ("all_reduce_perf", "all-reduce"),
        ("AllReduce", "all-reduce"),
        ("alltoall_perf", "all-to-all"),
        ("all-to-all", "all-to-all"),
        ("sendrecv", "send-recv"),
        ("reduce_scatter", "reduce-scatter"),
        ("reduce", "reduce"),
    ],
)
def test_op_names_of_either_spelling(given_name, op):
    assert op_name(given_name) == op


def test_every_op_nccl_tests_has_is_one_fabriclab_models():
    assert {op_name(name) for name in ("all_reduce", "all_gather", "reduce_scatter")} <= set(OPS)
    assert {op_name(n) for n in ("alltoall", "sendrecv", "broadcast", "reduce")} <= set(OPS)


def test_an_unknown_op_is_refused_with_the_choices():
    with pytest.raises(
        ScenarioError, match="unknown collective 'allgatherv'; use one of all-reduce"
    ):
        op_name("allgatherv")


def test_a_program_fabriclab_does_not_model_is_named():
    refused(HEAD + ROW + "\n# ran ./build/gather_perf -b 8\n", r"gather_perf is not a collective")


def test_two_programs_named_need_the_op():
    text = "./all_reduce_perf\n./all_gather_perf\n" + HEAD + ROW
    assert isinstance(
        refused(text, r"all_reduce_perf, all_gather_perf\); give the op"), OpNotNamedError
    )
    assert parse_nccl_tests(text, op="all-gather").op == "all-gather"


def test_an_op_that_contradicts_the_output_is_refused():
    text = "# Collective test starting: all_gather_perf\n" + HEAD + ROW
    refused(
        text,
        r"run.txt line 1: the output says all_gather_perf ran, but op 'all-reduce'",
        op="all-reduce",
    )
    assert parse_nccl_tests(text, op="all_gather").op == "all-gather"


# ---- malformed text -----------------------------------------------------------------------


def test_no_table_is_said():
    refused("", r"run.txt: no nccl-tests table found")
    refused("# nThread 1 nGpus 1\n# Using devices\n", "no nccl-tests table found")
    refused("just some words\nand more\n", "no nccl-tests table found: none of its 3 lines")


def test_no_rank_lines_is_said():
    refused(ROW + "\n", r"no '#  Rank N \.\.\. device D \[bus\] GPU' lines", op="all-reduce")


def test_a_row_of_the_wrong_width_names_its_line():
    short = ROW.rsplit(maxsplit=1)[0]
    refused(
        HEAD + ROW + "\n" + short + "\n",
        r"run\.txt line 7: a table row of 12 columns, but the column header \(line 5\) has 13",
    )
    headless = HEAD.replace(HEAD.splitlines()[-1], "#")
    refused(
        headless + ROW + "\n" + short + "\n",
        r"line 7: a table row of 12 columns, but the first row \(line 6\) has 13",
    )
    refused(
        HEAD + short + "\n",
        r"line 6: a table row of 12 columns, but the column header \(line 5\) has 13",
    )
    refused(
        HEAD + "1024 256 float sum -1 20.0 0.05\n",
        r"line 6: a table row of 7 columns, but the column header",
    )
    refused(
        HEAD.splitlines()[2] + "\n1 2 3 4 5 6 7 8 9 10 11 12 13 14\n",
        r"line 2: a table row of 14 columns; nccl-tests rows have 7 to 13",
    )


def test_a_word_where_a_number_belongs_names_the_column():
    bad = ROW.replace("30.12", "x").replace("20.00", "fast")
    refused(HEAD + bad, r"line 6: out-of-place time 'fast' is not a number")
    refused(
        HEAD + ROW.replace("    0.05    0.05      0    20.50", "    0.05    0.05      0    abc"),
        "in-place time 'abc' is not a number",
    )
    refused(HEAD + ROW.replace("256", "many"), r"line 6: count 'many' is not a number")
    refused(
        HEAD + ROW.replace("float", "4"),
        r"column 3 is the data type \(float, half\.\.\.\), not the number 4",
    )
    refused(
        HEAD + ROW.replace("      0    20.50", "   lots    20.50"),
        r"out-of-place #wrong 'lots' is not a number",
    )


def test_a_negative_or_fractional_size_is_refused():
    refused(HEAD + ROW.replace("        1024", "       -1024"), r"line 6: size -1024 is negative")
    refused(
        HEAD + ROW.replace("        1024", "      1024.5"),
        r"line 6: size '1024.5' is not a whole number",
    )
    refused(HEAD + ROW.replace("20.00", "-20.00"), r"out-of-place time '-20.00' is negative")
    refused(
        HEAD + ROW.replace("0.05    0.05      0    20.50", "inf    0.05      0    20.50"),
        r"out-of-place algbw 'inf' is not a finite number",
    )


def test_a_second_run_in_the_same_text_is_refused():
    text = HEAD + ROW + "\n# Avg bus bandwidth    : 0.05\n" + HEAD + ROW + "\n"
    refused(
        text,
        r"line 8: a '# nThread' line after the table: the text holds more than one nccl-tests run",
    )
    refused(
        HEAD + ROW + "\n#\n" + ROW + "\n", r"line 8: a table row after the table ended \(line 7\)"
    )


def test_an_attempt_that_stopped_before_its_table_gives_way_to_the_next():
    failed = HEAD.replace("Rank  1", "Rank  7") + "node-a: NCCL WARN unhandled cuda error\n"
    run = parse_nccl_tests(failed + HEAD + ROW, op="all-reduce")
    assert run.ranks == 2 and len(run.points) == 1


def test_mixed_data_types_are_refused():
    refused(
        HEAD + ROW + "\n" + ROW.replace("   float", "    half"),
        r"line 7: a row of half sum -1 after rows of float sum -1 \(line 6\)",
    )


def test_a_message_names_the_text_when_no_source_is_given():
    with pytest.raises(ScenarioError, match=r"nccl-tests output: no nccl-tests table found"):
        parse_nccl_tests("")


def test_text_that_is_not_text_is_refused():
    with pytest.raises(ScenarioError, match="expected text, got bytes"):
        parse_nccl_tests(b"# nThread")  # type: ignore[arg-type]


def test_a_file_that_cannot_be_read_is_named(tmp_path):
    with pytest.raises(ScenarioError, match=r"missing\.txt: cannot read the file"):
        read_nccl_tests(tmp_path / "missing.txt")
    with pytest.raises(ScenarioError, match="cannot read the file"):
        read_nccl_tests(tmp_path)


def test_a_stray_byte_does_not_stop_the_import(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(fixture("all_gather_perf_16xa100.txt").encode() + b"# host caf\xe9\n")
    assert read_nccl_tests(path).ranks == 16


# ---- the run as JSON and as a series --------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.txt")))
def test_every_fixture_round_trips_through_json(name):
    run = parse_nccl_tests(fixture(name), name, op=None if "perf" in name else "all-reduce")
    again = NcclTestsRun.from_json(run.to_json())
    assert again == run
    assert again.to_json() == run.to_json()


def test_malformed_run_json_is_a_clear_error():
    with pytest.raises(ScenarioError, match="the text is not JSON"):
        NcclTestsRun.from_json("{not json")
    run = read_nccl_tests(FIXTURES / "sendrecv_perf_16xb200.txt")
    data = run.to_dict()
    data["points"][0]["size_bytes"] = "big"
    with pytest.raises(ScenarioError, match=r"NcclTestsRun\.points\[0\]\.size_bytes: expected int"):
        NcclTestsRun.from_plain(data)
    with pytest.raises(ScenarioError, match="missing field ranks"):
        NcclTestsRun.from_plain({k: v for k, v in run.to_dict().items() if k != "ranks"})


def test_measured_series_gives_sizes_and_busbw():
    run = read_nccl_tests(FIXTURES / "all_reduce_perf_8xh100.txt")
    sizes, busbw = measured_series(run)
    assert sizes.tolist() == [p.size_bytes for p in run.points]
    assert busbw.tolist() == [p.out_of_place.busbw_GBps for p in run.points]
    _, in_place = measured_series(run, in_place=True)
    assert in_place[-1] == pytest.approx(478.02)
    old = parse_nccl_tests(fixture("broadcast_oldest_out_of_place.txt"), op="broadcast")
    assert measured_series(old, in_place=True)[0].size == 0


# ---- garbage never raises anything else -----------------------------------------------------

WORDS = st.sampled_from(
    [
        "#",
        "# nThread 1 nGpus 1",
        "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] GPU",
        "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
        "# Collective test starting: all_reduce_perf",
        "# nccl-tests version 2.18.3 nccl-library=99999999999999",
        "NCCL version 2.21.5",
        "all_gather_perf",
        "gather_perf",
        "float",
        "sum",
        "N/A",
        "-1",
        "0",
        "1024",
        "1e309",
        "nan",
        "-0.0",
        "9" * 5000,
        "١٢٣",
        "0:",
        "[1,0]<stdout>:",
        "\r",
        "\t",
    ]
)
LINE = st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=16).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=30).map("\n".join), st.sampled_from([None, "all-reduce"]))
def test_garbage_raises_only_the_clear_error(text, op):
    try:
        run = parse_nccl_tests(text, "garbage.txt", op=op)
    except ScenarioError as exc:
        assert exc.problems and exc.problems[0].where.startswith(("garbage.txt", "op"))
        return
    assert run.points and run.ranks >= 1 and run.op in OPS
    assert all(math.isfinite(p.out_of_place.time_s) for p in run.points)
    assert NcclTestsRun.from_json(run.to_json()) == run


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_raises_only_the_clear_error(text):
    with contextlib.suppress(ScenarioError):
        parse_nccl_tests(text)
