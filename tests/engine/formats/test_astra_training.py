"""ASTRA-sim's layered text workload of a training step: written, read back, and adding up
to the step the engine computes."""

from __future__ import annotations

import copy

import pytest

from engine.analysis import export_fabric, export_preview, generate
from engine.analysis.astra_training import astra_training_layers, step_totals
from engine.formats.astra_workload import Layer, read_layers, write_layers
from engine.model.errors import ScenarioError
from engine.topology.expand import expand
from engine.training.step import train_step


@pytest.fixture(scope="module")
def cluster():
    return generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")


def _training(scenario, **layout):
    s = copy.deepcopy(scenario)
    s.workload.kind = "training"
    s.workload.training.model = "llama3-70b"
    s.workload.training.cp = 1
    for name, value in layout.items():
        setattr(s.workload.training, name, value)
    return s


@pytest.mark.parametrize(
    ("layout", "parallelism"),
    [
        ({"tp": 8, "pp": 2, "dp": 8}, "HYBRID_DATA_MODEL"),
        ({"tp": 1, "pp": 8, "dp": 16}, "DATA"),
        ({"tp": 8, "pp": 16, "dp": 1}, "MODEL"),
    ],
)
def test_the_layers_add_up_to_the_engine_s_step(cluster, catalog, layout, parallelism):
    s = _training(cluster, **layout)
    kind, layers = astra_training_layers(s, catalog)
    assert kind == parallelism
    step = train_step(expand(s, catalog), s.workload.training, catalog)
    assert len(layers) == round(80 / layout["pp"])  # Llama 3 70B has 80 layers
    totals = step_totals(layers)
    compute = step["micro_batch_compute_s"] * step["layout"]["micro_batches"]
    assert totals["compute_s"] == pytest.approx(compute, rel=1e-3)  # whole microseconds
    for kind_ in ("tp", "dp"):
        sent = sum(
            c["bytes"] * c["count_per_step"] for c in step["collectives"] if c["kind"] == kind_
        )
        expected = sent if layout[kind_] > 1 else 0.0
        assert totals[f"{kind_}_bytes"] == pytest.approx(expected, rel=1e-6, abs=len(layers))


def test_the_export_writes_the_training_workload_beside_the_network(cluster, catalog, tmp_path):
    s = _training(cluster, tp=8, pp=2, dp=8)
    files = export_preview(s, "astra", catalog)
    kind, layers = read_layers(files["workload.txt"])
    assert (kind, layers) == astra_training_layers(s, catalog)
    paths = export_fabric(s, "astra", tmp_path / "job.yml", catalog)
    assert [p.name for p in paths] == ["job.yml", "job.workload.txt"]
    assert paths[1].read_text(encoding="utf-8") == files["workload.txt"]


def test_a_layer_line_round_trips_and_a_bad_one_is_refused():
    layer = Layer("attn", 10, "ALLREDUCE", 2048, 20, "NONE", 0, 30, "ALLGATHER", 4096, 5)
    text = write_layers("HYBRID_DATA_MODEL", [layer])
    assert text.splitlines()[2] == "attn -1 10 ALLREDUCE 2048 20 NONE 0 30 ALLGATHER 4096 5"
    assert read_layers(text) == ("HYBRID_DATA_MODEL", [layer])
    with pytest.raises(ScenarioError, match="first line"):
        read_layers(text.replace("HYBRID_DATA_MODEL", "PIPELINE"))
    with pytest.raises(ScenarioError, match="a time or size"):
        read_layers(text.replace(" 2048 ", " 2k "))
