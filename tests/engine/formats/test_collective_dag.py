"""A collective workload exported as htsim's DAG of steps (barrier triggers between them),
read back step by step; the DAG reader against a hand-written sample; and a DAG refused as
a traffic matrix."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from engine.analysis import generate
from engine.formats import htsim, ns3
from engine.formats.export import export_texts
from engine.formats.importer import traffic_from_text
from engine.model.errors import ScenarioError

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "samples"


@pytest.fixture(scope="module")
def sixteen():
    s = generate("single-switch", gpus=16, server="dgx-h100", switch="qm9700")
    s.workload.kind = "collective"
    s.workload.message_bytes = 16.0 * 2**20
    return s


def test_the_sample_dag_reads_as_two_steps():
    matrix = htsim.read_cm_dag((SAMPLES / "two-steps.cm").read_text())
    assert matrix.nodes == 4 and matrix.triggers == {1: ("barrier", 2)}
    steps = htsim.dag_steps(matrix)
    assert [[(f.src, f.dst, f.size_bytes) for f in s] for s in steps] == [
        [(0, 1, 1000), (2, 3, 1000)],
        [(1, 2, 500), (3, 0, 500)],
    ]
    assert [c.recv_done for c in matrix.connections] == [1, 1, 0, 0]


def test_a_ring_all_reduce_is_2n_minus_2_steps_of_barriers(sixteen, catalog):
    text = export_texts(sixteen, "htsim", catalog)["traffic.cm"]
    assert "# ring all-reduce of 16777216 bytes: 30 steps" in text
    matrix = htsim.read_cm_dag(text)
    steps = htsim.dag_steps(matrix)
    assert len(steps) == 2 * (16 - 1)
    # every barrier counts the flows of the step it closes
    assert [matrix.triggers[k] for k in range(1, 30)] == [("barrier", len(s)) for s in steps[:-1]]
    # each step moves S/n per ring position: all ranks together S per step
    assert {sum(f.size_bytes for f in s) for s in steps} == {16 * 2**20}
    assert all(f.src != f.dst for s in steps for f in s)


def test_ns3_gets_the_first_step_of_a_collective(sixteen, catalog):
    flows = ns3.read_flows(export_texts(sixteen, "ns3", catalog)["flow.txt"])
    dag = htsim.dag_steps(htsim.read_cm_dag(export_texts(sixteen, "htsim", catalog)["traffic.cm"]))
    assert [(f.src, f.dst, f.size_bytes) for f in flows] == [
        (f.src, f.dst, f.size_bytes) for f in dag[0]
    ]


def test_switch_reduced_algorithms_are_refused(sixteen, catalog):
    nvls = copy.deepcopy(sixteen)
    nvls.workload.algorithm = "sharp"
    with pytest.raises(ScenarioError, match="reduced in the switches"):
        export_texts(nvls, "htsim", catalog)


def test_a_dag_is_not_a_traffic_matrix():
    with pytest.raises(ScenarioError) as caught:
        traffic_from_text((SAMPLES / "two-steps.cm").read_text(), "two-steps.cm")
    assert caught.value.problems[0].where == "two-steps.cm:4"  # the Triggers line
    assert "DAG" in caught.value.problems[0].message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "Nodes 2\nConnections 1\n0->1 id 1 trigger 5 size 10\n",
            "trigger 5 is used but never defined",
        ),
        (
            "Nodes 2\nConnections 1\nTriggers 1\n0->1 id 1 start 0 size 10\ntrigger id 1 count 2\n",
            "needs an id and a kind",
        ),
        ("Nodes 2\nConnections 1\n0->1 id 1 start 0 trigger 1 size 10\n", "one of them"),
    ],
)
def test_bad_dags_are_refused(text, words):
    with pytest.raises(ScenarioError, match=words):
        htsim.read_cm_dag(text)
