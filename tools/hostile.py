"""A hostile-user campaign against the command line: damaged scenarios and libraries in, crashes out.

Why: the CLI promises that bad input is refused with a message naming the field (exit 1 or 2)
and that only a bug reaches its crash path (one line naming a saved report, exit 70). This
tool checks that promise the way a careless or malicious user would: it takes the shipped
presets as JSON, damages them at random with a fixed seed (absurd numbers, NaN and
Infinity tokens, 5,000-digit integers, lone surrogates, 100k-character text, deep nesting,
wrong types, dropped keys, duplicated items, swapped catalog models, huge counts, ...), runs
``validate``, ``evaluate --json`` and ``collective --json`` on each file, and sorts every run
into ok, refused, crash or timeout. A second campaign damages a library file (bytes,
truncation, tables altered with sqlite3) and runs the ``library`` verbs on it.

The commands run in a child process per batch, under an address-space limit, with a
per-command timeout watched from outside, so a hang, a memory blow-up or a segfault costs
one run, not the campaign. Each crash is saved (file, traceback of a ``--debug`` rerun in a
fresh process) under OUT/crashes/, grouped by exception type and innermost frame, and
reduced to the single edit that still reproduces it.

Run from the project root::

    .venv/bin/python -m tools.hostile scenarios --count 200 --out /tmp/hostile
    .venv/bin/python -m tools.hostile scenarios --budget-s 2400 --start 200 --out /tmp/hostile
    .venv/bin/python -m tools.hostile library --count 60 --out /tmp/hostile
    .venv/bin/python -m tools.hostile summary --out /tmp/hostile

Results accumulate in OUT/results.jsonl (one line per run); ``summary`` prints the JSON
summary of everything recorded so far. ``--tree DIR`` runs the CLI of another source tree,
e.g. a ``git archive HEAD`` snapshot, so edits made to the checkout meanwhile do not change
the code under test halfway through a campaign.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import faulthandler
import io
import json
import os
import random
import re
import resource
import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The code under test: this checkout, or a snapshot named by HOSTILE_TREE (``--tree``), so a
# campaign is not disturbed by edits made to the checkout while it runs.
ROOT = Path(os.environ.get("HOSTILE_TREE") or Path(__file__).resolve().parent.parent).resolve()
sys.path.insert(0, str(ROOT))

EXIT_INTERNAL = 70
TIMEOUT_S = 60.0
MEMORY_GIB = 6.0
MAX_MEMORY = "3G"  # the CLI's own estimate check refuses before the address-space limit bites
BATCH_CASES = 20
SCENARIO_COMMANDS = (("validate",), ("evaluate", "--json"), ("collective", "--json"))
PRESET_WEIGHTS = {  # the 1k presets keep most runs fast
    "dgx-h100-ib-ndr-1k": 24,
    "dgx-h100-roce-spectrumx-1k": 22,
    "hgx-h100-roce-ecmp-1k": 22,
    "rail-only-h100-1k": 22,
    "h100-ib-ndr-16k": 7,
    "h100-roce-128k": 3,
}

Path_ = tuple[str | int, ...]


# ------------------------------------------------------------------------------------------
# Hostile values


@dataclass(frozen=True)
class Raw:
    """A JSON token written into the file verbatim (NaN, 1e400, 5,000 digits, deep nesting)."""

    token: str
    label: str

    def __repr__(self) -> str:
        return f"<raw {self.label}>"


def nested(depth: int) -> Raw:
    return Raw("[" * depth + "]" * depth, f"{depth} nested lists")


GENERIC: list[Any] = [
    10**400,
    -(10**400),
    -1,
    0,
    1,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63) - 1,
    2**53 + 1,
    1e308,
    -1e308,
    1e-320,
    5e-324,
    -0.0,
    0.5,
    1.5,
    3.0,
    1e15,
    1e19,
    Raw("NaN", "NaN"),
    Raw("Infinity", "Infinity"),
    Raw("-Infinity", "-Infinity"),
    Raw("1e400", "1e400"),
    Raw("-1e400", "-1e400"),
    Raw("1e-400", "1e-400"),
    Raw("1" * 5000, "a 5,000-digit integer"),
    Raw("-" + "9" * 4301, "a 4,301-digit negative integer"),
    "",
    " ",
    "x" * 100_000,
    "x" * 100_001,
    "é" * 100_000,
    "\ud800",
    "a\udfffb",
    "\x00",
    "\u202eevil",
    "NaN",
    "1e3",
    "auto",
    None,
    True,
    False,
    [],
    {},
    [1, 2, 3],
    {"a": 1},
    nested(50),
    nested(999),
    nested(1001),
    nested(100_000),
    Raw('{"a":' * 5000 + "1" + "}" * 5000, "5,000 nested objects"),
]

COUNTS_MODEST = [0, 1, 2, 3, 5, 7, 9, 17, 63, 64, 65, 129, 256, 1000, 2000, -1, -5, 1.5, 2.0]
COUNTS_HUGE = [10**6, 10**9, 2**24, 2**24 + 1, 10**12, 10**400]


def _catalog() -> dict[str, Any]:
    return json.loads((ROOT / "resources" / "catalog.json").read_text(encoding="utf-8"))


@dataclass
class Vocabulary:
    """Names a hostile edit draws from: catalog ids by kind, fields, algorithms, presets."""

    devices: dict[str, list[str]]
    device_fields: list[str]
    technologies: list[str]
    algorithms: list[str]
    ops: list[str]
    models: list[str]
    training_keys: list[str]

    @classmethod
    def load(cls) -> Vocabulary:
        from engine.analysis import OPS
        from engine.catalog.model_presets import MODEL_PRESETS, SHAPE_FIELDS
        from engine.collectives.schedules import ALGORITHMS
        from engine.training.knobs import KNOBS

        cat = _catalog()
        devices: dict[str, list[str]] = defaultdict(list)
        fields: set[str] = set()
        for d in cat["devices"]:
            devices[d["kind"]].append(d["id"])
            fields.update(d["fields"])
        algos = sorted({a for names in ALGORITHMS.values() for a in names})
        return cls(
            devices=dict(devices),
            device_fields=sorted(fields),
            technologies=[t["id"] for t in cat["technologies"]],
            algorithms=[*algos, "auto"],
            ops=list(OPS),
            models=list(MODEL_PRESETS),
            training_keys=[*SHAPE_FIELDS, *KNOBS],
        )

    def all_devices(self) -> list[str]:
        return [d for ids in self.devices.values() for d in ids]


# (dataclass, field) -> the class of its value (or of its list's items)
CHILD = {
    ("Scenario", "metadata"): "Metadata",
    ("Scenario", "groups"): "DeviceGroup",
    ("Scenario", "bundles"): "LinkBundle",
    ("Scenario", "fabric"): "FabricSettings",
    ("Scenario", "transport"): "TransportSettings",
    ("Scenario", "routing"): "RoutingPolicy",
    ("Scenario", "workload"): "Workload",
    ("Scenario", "failures"): "Failures",
    ("Scenario", "calibration"): "Calibration",
    ("Workload", "training"): "TrainingJob",
    ("Failures", "switches"): "SwitchFailure",
    ("Failures", "links"): "LinkFailure",
}


def owner_field(path: Path_) -> tuple[str, str]:
    """The dataclass and field a JSON path lands in (list items and dict keys count as it)."""
    cls: str | None = "Scenario"
    result = ("Scenario", "")
    for key in path:
        if isinstance(key, int):
            continue
        if cls is None:
            break
        result = (cls, key)
        cls = CHILD.get((cls, key))
    return result


def limit_values(owner: str, name: str) -> list[Any]:
    """The bound of a field as the reader has it, and values just inside and beyond it."""
    from engine.model.limits import INT64_MAX, limit_of

    lim = limit_of(owner, name)
    largest = lim.largest if lim is not None else INT64_MAX
    values: list[Any] = [largest, -largest]
    if isinstance(largest, int):
        values += [largest + 1, largest - 1, largest // 2]
    else:
        values += [largest * 1.000001, largest / 2]
    return values


def semantic_values(owner: str, name: str, doc: dict[str, Any], vocab: Vocabulary) -> list[Any]:
    """Values that make sense in type for this field but are absurd, edge or inconsistent."""
    group_ids = [g.get("id") for g in items_of(doc, "groups") if isinstance(g, dict)]
    bundle_ids = [b.get("id") for b in items_of(doc, "bundles") if isinstance(b, dict)]
    tiny = [0, -1, 1e-320, 5e-324]
    table: dict[tuple[str, str], list[Any]] = {
        ("DeviceGroup", "count"): COUNTS_MODEST,
        ("DeviceGroup", "model"): [*vocab.all_devices(), "", "DGX-H100", "dgx-h100 "],
        ("DeviceGroup", "kind"): ["server", "switch", "gpu", "nic", "cable", "SERVER", ""],
        ("DeviceGroup", "tier"): ["server", "leaf", "spine", "core", "nic", ""],
        ("DeviceGroup", "id"): [*group_ids, *bundle_ids, "", "x" * 100_000],
        ("DeviceGroup", "position"): [[1e9, -1e9], [1e10, 0], [0], [0, 0, 0], [1e-320, 5e-324]],
        ("LinkBundle", "a"): [*group_ids, "nope", ""],
        ("LinkBundle", "b"): [*group_ids, "nope", ""],
        ("LinkBundle", "id"): [*bundle_ids, *group_ids, ""],
        ("LinkBundle", "pattern"): ["rail", "full", "one-to-one", "striped", "mesh", ""],
        ("LinkBundle", "links_per_pair"): [0, 1, 2, 3, 7, 64, 4096, 4097, -1],
        ("LinkBundle", "speed_gbps"): [*tiny, 1, 25, 100, 200, 399.999, 400, 800, 1600, 1e6],
        ("LinkBundle", "blocks"): [0, 1, 2, 3, 5, 7, 8, 64, 1000, 2**24, -1],
        ("LinkBundle", "cable"): [
            *vocab.devices.get("cable", []),
            *vocab.devices.get("transceiver", []),
            "qm9700",
            "auto",
            "",
        ],
        ("LinkBundle", "length_m"): [*tiny, 0.5, 3, 30, 100, 1000, 1e6, 1e308],
        ("FabricSettings", "technology"): ["infiniband", "roce", "nvlink", ""],
        ("FabricSettings", "switch_latency_ns"): [*tiny, 1e-9, 1e9, 1e6],
        ("FabricSettings", "nic_latency_ns"): [*tiny, 1e-9, 1e9, 1e6],
        ("FabricSettings", "header_efficiency"): [*tiny, 1, 1.0000001, 2, 1e3],
        ("FabricSettings", "mtu_bytes"): [0, 1, 63, 64, 65, 256, 1500, 4096, 9000, 2**20, -1],
        ("FabricSettings", "packet_loss_rate"): [*tiny, 1e-6, 0.5, 0.999999, 1, 1.5],
        ("FabricSettings", "loss_recovery"): [
            "link-retransmit",
            "go-back-n",
            "selective-repeat",
            "none",
        ],
        ("FabricSettings", "collnet"): [True, False],
        ("TransportSettings", "model"): ["mechanistic", "ideal", "fluid", ""],
        ("TransportSettings", "pfc"): [True, False],
        ("TransportSettings", "dcqcn"): [True, False],
        ("TransportSettings", "ib_cc"): [True, False],
        ("TransportSettings", "pfc_xoff_bytes"): [*tiny, 1, 64, 1e6, 1e12],
        ("TransportSettings", "ecn_kmin_bytes"): [*tiny, 1, 64, 1e6, 1e12],
        ("TransportSettings", "ecn_kmax_bytes"): [*tiny, 1, 64, 1e6, 1e12],
        ("TransportSettings", "ecn_pmax"): [*tiny, 1, 1.5, 1e3],
        ("TransportSettings", "port_buffer_bytes"): [*tiny, 1, 64, 1e6, 1e12],
        ("TransportSettings", "dcqcn_profile"): [*vocab.technologies, "", "nope"],
        ("RoutingPolicy", "mode"): ["ecmp", "adaptive", "spray", "ECMP", ""],
        ("RoutingPolicy", "hash_scope"): ["switch", "tier", "model", "fabric", "rack"],
        ("RoutingPolicy", "seed"): [-1, 2**63 - 1, 2**63, 2**64],
        ("RoutingPolicy", "flows_per_connection"): [0, 1, 2, 3, 8, 64, 512, 4096, -1],
        ("RoutingPolicy", "pxn"): [True, False],
        ("Workload", "kind"): ["permutation", "collective", "training", "incast", ""],
        ("Workload", "op"): [*vocab.ops, "allreduce", ""],
        ("Workload", "algorithm"): [*vocab.algorithms, "nope", ""],
        ("Workload", "protocol"): ["auto", "ll", "ll128", "simple", "LL", ""],
        ("Workload", "ranks"): [0, 1, 2, 3, 7, 8, 9, 1023, 1024, 1025, 2**31, -1],
        ("Workload", "placement"): [
            [0],
            [0, 0],
            [0, 1],
            [-1],
            [10**6],
            list(range(1024))[::-1],
            list(range(9)),
            [0] * 1024,
            [2**31],
        ],
        ("Workload", "message_bytes"): [*tiny, 1, 0.5, 2**60, 1e18],
        ("Workload", "seed"): [-1, 2**63 - 1, 2**63, 2**64],
        ("TrainingJob", "model"): [*vocab.models, "gpt5", ""],
        ("TrainingJob", "micro_batch"): [0, 1, 3, 2**24, -1],
        ("TrainingJob", "global_batch"): [0, 1, 3, 7, 2**40, -1],
        ("TrainingJob", "seq_len"): [0, 1, 3, 2**30, -1],
        ("TrainingJob", "zero_stage"): [-2, -1, 0, 1, 2, 3, 4],
        ("TrainingJob", "compute_efficiency"): [*tiny, 1, 1.5, 1e3],
        ("TrainingJob", "overlap_dp"): [True, False],
        ("SwitchFailure", "group"): [*group_ids, "nope"],
        ("SwitchFailure", "index"): [0, 1, 7, 8, 127, 128, -1, 2**31],
        ("LinkFailure", "bundle"): [*bundle_ids, "nope"],
        ("LinkFailure", "links_down"): [0, 1, 7, 1024, 1025, 2048, 10**6, 2**40, -1],
        ("Calibration", "nic_efficiency"): [*tiny, 0.05, 0.049, 1.2, 1.21, 1e3],
        ("Calibration", "latency_scale"): [*tiny, 0.05, 20, 20.1, 1e3],
        ("Calibration", "simple_efficiency"): [*tiny, 0.2, 0.19, 1.2, 1e3],
        ("Calibration", "fit_error"): [*tiny, 1e6, None],
        ("Calibration", "version"): [0, -1, 2**31],
        ("Calibration", "name"): ["", "fit", "x" * 100_000],
    }
    for dim in ("tp", "pp", "dp", "ep", "cp"):
        table[("TrainingJob", dim)] = [0, 1, 2, 3, 7, 8, 16, 64, 1024, 2**24, -1]
    return table.get((owner, name), [])


# ------------------------------------------------------------------------------------------
# Edits on a scenario document


@dataclass
class Edit:
    """One change to a scenario document, re-applicable on its own for reduction."""

    op: str  # set, delete, dup, append, file
    path: Path_
    value: Any = None

    def describe(self) -> str:
        where = path_text(self.path)
        if self.op == "set":
            return f"{where} = {short(self.value)}"
        if self.op == "delete":
            return f"delete {where}"
        if self.op == "dup":
            return f"duplicate {where}"
        if self.op == "append":
            return f"append to {where}: {short(self.value)}"
        return f"file: {self.value}"


def path_text(path: Path_) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "<document>"


def short(value: Any, limit: int = 120) -> str:
    if isinstance(value, Raw):
        return value.label
    if isinstance(value, str) and len(value) > 40:
        return f"<text of {len(value):,} chars {value[:1]!r}...>"
    text = repr(value)
    if len(text) > limit:
        if isinstance(value, int):
            return f"<int of {len(str(abs(value)))} digits>"
        return text[: limit - 3] + "..."
    return text


def get_at(doc: Any, path: Path_) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def all_paths(doc: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path below the document, containers and leaves alike."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from all_paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*prefix, i)
            yield from all_paths(v, (*prefix, i))


def apply_edit(doc: Any, edit: Edit) -> bool:
    """Apply `edit` in place; False when its path no longer exists."""
    if edit.op == "file":
        return True
    try:
        parent = get_at(doc, edit.path[:-1]) if edit.path else None
        key = edit.path[-1] if edit.path else None
        if edit.op == "set":
            if isinstance(parent, dict) or (
                isinstance(parent, list) and isinstance(key, int) and key < len(parent)
            ):
                parent[key] = copy.deepcopy(edit.value)
                return True
            return False
        if edit.op == "delete":
            del parent[key]
            return True
        if edit.op == "dup":
            items = get_at(doc, edit.path[:-1])
            items.insert(key + 1, copy.deepcopy(items[key]))
            return True
        if edit.op == "append":
            target = get_at(doc, edit.path)
            if not isinstance(target, list):
                return False
            target.append(copy.deepcopy(edit.value))
            return True
    except (KeyError, IndexError, TypeError):
        return False
    return False


def serialize(doc: Any, file_edits: list[Edit]) -> bytes:
    """The document as file bytes: Raw tokens spliced in, then file-level damage applied."""
    raws: list[Raw] = []

    def swap(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(v)
            return f"@@RAW{len(raws) - 1}@@"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [swap(x) for x in v]
        return v

    text = json.dumps(swap(doc), indent=1, allow_nan=True)
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw.token, 1)
    data = text.encode("utf-8", "surrogatepass")
    for edit in file_edits:
        kind, arg = edit.value
        if kind == "truncate":
            data = data[: int(len(data) * arg)]
        elif kind == "empty":
            data = b""
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "bad-utf8":
            pos = int(len(data) * arg)
            data = data[:pos] + b"\xff\xfe" + data[pos:]
        elif kind == "toplevel":
            data = arg.encode() if arg != "[doc]" else b"[" + data + b"]"
        elif kind == "garbage-tail":
            data = data + b"\n}}]]garbage"
        elif kind == "utf16":
            data = data.decode("utf-8", "surrogatepass").encode("utf-16")
    return data


@dataclass
class Case:
    index: int
    preset: str
    edits: list[Edit] = field(default_factory=list)


def pick_value(rng: random.Random, path: Path_, doc: dict[str, Any], vocab: Vocabulary) -> Any:
    owner, name = owner_field(path)
    roll = rng.random()
    sem = semantic_values(owner, name, doc, vocab)
    if roll < 0.55 and sem:
        return rng.choice(sem)
    if roll < 0.7 and name:
        return rng.choice(limit_values(owner, name))
    return rng.choice(GENERIC)


def items_of(doc: dict[str, Any], key: str) -> list[Any]:
    """`doc[key]` when it is still a list (an earlier edit may have replaced it)."""
    value = doc.get(key)
    return value if isinstance(value, list) else []


def make_edit(rng: random.Random, doc: dict[str, Any], vocab: Vocabulary) -> Edit | None:
    """One random edit valid on `doc` as it is now."""
    groups = [i for i, g in enumerate(items_of(doc, "groups")) if isinstance(g, dict)]
    op = rng.choices(
        [
            "set-any",
            "set-field",
            "count",
            "swap-model",
            "technology",
            "drop",
            "dup",
            "override",
            "add",
        ],
        weights=[30, 30, 9, 6, 4, 6, 4, 6, 5],
    )[0]
    paths = list(all_paths(doc))
    if op == "set-any" and paths:
        path = rng.choice(paths)
        return Edit("set", path, pick_value(rng, path, doc, vocab))
    if op == "set-field":
        leaves = [
            p
            for p in paths
            if isinstance(p[-1], str) and semantic_values(*owner_field(p), doc, vocab)
        ]
        if leaves:
            path = rng.choice(leaves)
            owner, name = owner_field(path)
            return Edit("set", path, rng.choice(semantic_values(owner, name, doc, vocab)))
    if op == "count" and groups:
        i = rng.choice(groups)
        pool = COUNTS_HUGE if rng.random() < 0.12 else COUNTS_MODEST
        return Edit("set", ("groups", i, "count"), rng.choice(pool))
    if op == "swap-model" and groups:
        i = rng.choice(groups)
        kind = rng.choice(["switch", "server", "nic", "switch", "server", "gpu", "cable"])
        return Edit("set", ("groups", i, "model"), rng.choice(vocab.devices.get(kind, ["x"])))
    if op == "technology" and isinstance(doc.get("fabric"), dict):
        now = doc["fabric"].get("technology")
        return Edit(
            "set", ("fabric", "technology"), "roce" if now == "infiniband" else "infiniband"
        )
    if op == "drop" and paths:
        path = rng.choice([p for p in paths if isinstance(p[-1], str)] or paths)
        return Edit("delete", path)
    if op == "dup":
        lists = [p for p in paths if isinstance(p[-1], int)]
        if lists:
            return Edit("dup", rng.choice(lists))
    if op == "override":
        if rng.random() < 0.6 and groups:
            i = rng.choice(groups)
            key = rng.choice(vocab.device_fields)
            value = rng.choice([0, -1, 1e-320, 0.5, 1, 2, 8, 1e15, 1e16, 16, 4096, 10**400])
            return Edit("set", ("groups", i, "overrides", key), value)
        key = rng.choice([*vocab.training_keys, "nope"])
        value = rng.choice([0, -1, 1e-320, 0.5, 1, 2, 3, 7, 1e9, 1e18, 1e19, 2**63])
        workload = doc.get("workload")
        training = workload.get("training") if isinstance(workload, dict) else None
        if isinstance(training, dict) and isinstance(training.get("overrides"), dict):
            return Edit("set", ("workload", "training", "overrides", key), value)
    if op == "add":
        return make_addition(rng, doc, vocab)
    return None


def make_addition(rng: random.Random, doc: dict[str, Any], vocab: Vocabulary) -> Edit | None:
    """A new failure, bundle or group."""
    groups = [g for g in items_of(doc, "groups") if isinstance(g, dict)]
    bundles = [b for b in items_of(doc, "bundles") if isinstance(b, dict)]
    ids = [g.get("id") for g in groups] or ["nope"]
    what = rng.choice(["switch-failure", "link-failure", "bundle", "group"])
    failures = doc.get("failures")
    if what == "switch-failure" and isinstance(failures, dict):
        g = rng.choice(groups) if groups else {}
        count = g.get("count", 1) if isinstance(g.get("count"), int) else 1
        index = rng.choice([0, count - 1, count, -1, 2**31, 1])
        return Edit(
            "append", ("failures", "switches"), {"group": g.get("id", "nope"), "index": index}
        )
    if what == "link-failure" and isinstance(failures, dict):
        b = rng.choice(bundles) if bundles else {}
        down = rng.choice([0, 1, 2, 100, 1024, 1025, 4096, 2**40, -1])
        return Edit(
            "append", ("failures", "links"), {"bundle": b.get("id", "nope"), "links_down": down}
        )
    if what == "bundle" and isinstance(doc.get("bundles"), list):
        return Edit(
            "append",
            ("bundles",),
            {
                "id": rng.choice(["extra", *(b.get("id") for b in bundles)]),
                "a": rng.choice(ids),
                "b": rng.choice(ids),
                "pattern": rng.choice(["rail", "full", "one-to-one", "striped"]),
                "links_per_pair": rng.choice([1, 2, 4096]),
                "speed_gbps": rng.choice([400.0, 800.0, 100.0, 1e6]),
                "blocks": rng.choice([1, 2, 3, 8]),
                "cable": "auto",
                "length_m": rng.choice([3.0, 1e6]),
            },
        )
    if what == "group" and isinstance(doc.get("groups"), list):
        kind = rng.choice(["server", "switch"])
        model = rng.choice(vocab.devices["server" if kind == "server" else "switch"])
        return Edit(
            "append",
            ("groups",),
            {
                "id": rng.choice(["extra", *ids]),
                "kind": kind,
                "model": model,
                "count": rng.choice([1, 2, 3, 8, 64]),
                "tier": rng.choice(["server", "leaf", "spine", "core"]),
            },
        )
    return None


FILE_DAMAGE: list[tuple[str, Any]] = [
    ("truncate", 0.5),
    ("truncate", 0.01),
    ("truncate", 0.99),
    ("empty", None),
    ("bom", None),
    ("bad-utf8", 0.3),
    ("toplevel", "[doc]"),
    ("toplevel", "null"),
    ("toplevel", "42"),
    ("toplevel", '"text"'),
    ("garbage-tail", None),
    ("utf16", None),
]


def make_case(seed: int, index: int, vocab: Vocabulary, base: dict[str, dict[str, Any]]) -> Case:
    """Case `index` of campaign `seed`: the same every time, whatever ran before it."""
    rng = random.Random(f"{seed}:{index}")
    preset = rng.choices(list(PRESET_WEIGHTS), weights=list(PRESET_WEIGHTS.values()))[0]
    case = Case(index, preset)
    if rng.random() < 0.03:
        case.edits.append(Edit("file", (), rng.choice(FILE_DAMAGE)))
        return case
    doc = copy.deepcopy(base[preset])
    wanted = rng.choices([1, 2, 3], weights=[50, 30, 20])[0]
    tries = 0
    while len(case.edits) < wanted and tries < 20:
        tries += 1
        try:
            edit = make_edit(rng, doc, vocab)
        except (TypeError, KeyError, AttributeError, IndexError, ValueError):
            continue  # an earlier edit left nothing this kind of edit can act on
        if edit is not None and apply_edit(doc, edit):
            case.edits.append(edit)
    return case


def render_case(
    case: Case, base: dict[str, dict[str, Any]], edits: list[Edit] | None = None
) -> bytes | None:
    """The file bytes of `case` (or of `edits` on its preset); None if an edit does not apply."""
    doc = copy.deepcopy(base[case.preset])
    chosen = case.edits if edits is None else edits
    for edit in chosen:
        if edit.op != "file" and not apply_edit(doc, edit):
            return None
    return serialize(doc, [e for e in chosen if e.op == "file"])


def base_documents() -> dict[str, dict[str, Any]]:
    from engine.model.scenario import to_json
    from engine.presets.scenarios import load_preset, preset_names

    return {name: json.loads(to_json(load_preset(name))) for name in preset_names()}


# ------------------------------------------------------------------------------------------
# Running commands: a worker child per batch, watched from here


@dataclass
class Job:
    key: str
    argv: list[str]
    case: int
    command: str
    file: str
    env: dict[str, str] = field(default_factory=dict)
    copy_from: str = ""  # a library to copy to `copy_to` just before the run
    copy_to: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def strict_json_problem(text: str) -> str | None:
    """Why `text` is not strict JSON (NaN, Infinity, not JSON at all), None when it is."""

    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard token {token}")

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError as exc:
        return str(exc)[:200]
    return None


def run_in_process(cli_main: Callable[[list[str]], int], job: dict[str, Any]) -> dict[str, Any]:
    """Run one command through ``cli.main.main`` with its output captured."""
    if job.get("copy_from"):
        dst = Path(job["copy_to"])
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(f"{dst}{suffix}")
        src = Path(job["copy_from"])
        if src.is_symlink() or not src.is_file():
            pass  # special files are made in place by the library campaign
        else:
            shutil.copyfile(src, dst)
            for suffix in ("-wal", "-journal"):
                if Path(f"{src}{suffix}").exists():
                    shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    saved_env = {k: os.environ.get(k) for k in job.get("env", {})}
    os.environ.update(job.get("env", {}))
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    exc_text = ""
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(list(job["argv"]))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            exc_text = "".join(traceback.format_exception(exc))
    seconds = time.monotonic() - start
    for k, v in saved_env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    stdout = out.getvalue()
    json_problem = None
    if code == 0 and "--json" in job["argv"] and stdout.strip():
        json_problem = strict_json_problem(stdout)
    return {
        "code": code,
        "exc": exc_text,
        "stderr": err.getvalue()[-6000:],
        "stdout_head": stdout[:300],
        "json_problem": json_problem,
        "seconds": round(seconds, 3),
    }


def worker_main(jobs_file: str, fd: int, memory_bytes: int) -> int:
    """The child: run each job in turn, reporting start and end on pipe `fd`."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    faulthandler.enable(file=sys.__stderr__, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    from cli.main import main as cli_main

    jobs = json.loads(Path(jobs_file).read_text(encoding="utf-8"))
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as pipe:
        for job in jobs:
            pipe.write(json.dumps({"start": job["key"]}) + "\n")
            pipe.flush()
            result = run_in_process(cli_main, job)
            pipe.write(json.dumps({"done": job["key"], **result}) + "\n")
            pipe.flush()
    return 0


@dataclass
class Settings:
    out: Path
    timeout_s: float = TIMEOUT_S
    memory_bytes: int = int(MEMORY_GIB * 2**30)
    max_memory: str = MAX_MEMORY

    @property
    def state_home(self) -> Path:
        return self.out / "state"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["XDG_STATE_HOME"] = str(self.state_home)  # crash reports stay in the scratch folder
        env.pop("FABRICLAB_LIBRARY", None)
        env.pop("FABRICLAB_MAX_MEMORY", None)
        env["PYTHONPATH"] = str(ROOT)
        return env


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def run_jobs(jobs: list[Job], settings: Settings) -> Iterator[tuple[Job, dict[str, Any]]]:
    """Run `jobs` in worker children, one at a time; yields each job with its raw result.

    A job that runs past the timeout gets its stacks dumped (SIGUSR1) and the child killed;
    a child that dies mid-job is reported with its exit status. Either way a new child
    takes the remaining jobs.
    """
    by_key = {j.key: j for j in jobs}
    pending = [j.key for j in jobs]
    logs = settings.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    while pending:
        jobs_file = logs / "jobs.json"
        payload = [
            {
                "key": k,
                "argv": by_key[k].argv,
                "env": by_key[k].env,
                "copy_from": by_key[k].copy_from,
                "copy_to": by_key[k].copy_to,
            }
            for k in pending
        ]
        jobs_file.write_text(json.dumps(payload), encoding="utf-8")
        log_path = logs / "worker.log"
        read_fd, write_fd = os.pipe()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "worker",
                    str(jobs_file),
                    str(write_fd),
                    str(settings.memory_bytes),
                ],
                cwd=ROOT,
                env=settings.env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        os.close(write_fd)
        finished: set[str] = set()
        current: str | None = None
        started = time.monotonic()
        buffer = b""
        sel = selectors.DefaultSelector()
        sel.register(read_fd, selectors.EVENT_READ)
        eof = False
        timed_out = False
        while not eof:
            for _ in sel.select(timeout=1.0):
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    eof = True
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    msg = json.loads(line)
                    if "start" in msg:
                        current, started = msg["start"], time.monotonic()
                    else:
                        key = msg.pop("done")
                        finished.add(key)
                        current = None
                        yield by_key[key], msg
            if current is not None and time.monotonic() - started > settings.timeout_s:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGUSR1)
                time.sleep(1.0)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                timed_out = True
                break
        sel.close()
        os.close(read_fd)
        returncode = proc.wait()
        if current is not None:
            finished.add(current)
            stacks = _tail(log_path)
            if timed_out:
                yield by_key[current], {"timeout": True, "stacks": stacks}
            else:
                yield by_key[current], {"died": returncode, "stacks": stacks}
        elif returncode != 0 and not timed_out and len(finished) < len(pending):
            raise RuntimeError(f"worker failed before any job:\n{_tail(log_path)}")
        pending = [k for k in pending if k not in finished]


# ------------------------------------------------------------------------------------------
# Classification and grouping

FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+),? in (?P<func>.+)$', re.M)
REPORT = re.compile(r"the details are in (?P<path>\S+?);")


def traceback_key(text: str) -> tuple[str, list[str]]:
    """'ExceptionType @ file:line in func' and the last frames of a traceback text."""
    if "most recent call first" in text:  # a faulthandler dump: the current thread, reversed
        at = text.rfind("Current thread")
        text = text[at:] if at >= 0 else text
        found = list(FRAME.finditer(text))[::-1]
    else:
        found = list(FRAME.finditer(text))
    frames = [f"{_rel(m['file'])}:{m['line']} in {m['func'].strip()}" for m in found]
    exc_type = "?"
    for line in reversed(text.strip().splitlines()):
        m = re.match(r"^([A-Za-z_][\w.]*)(:|$)", line)
        if m and not line.startswith("Traceback") and not line.startswith("During"):
            exc_type = m.group(1)
            break
    last = frames[-1] if frames else "?"
    return f"{exc_type} @ {last}", frames[-6:]


def _rel(path: str) -> str:
    with contextlib.suppress(ValueError):
        return str(Path(path).resolve().relative_to(ROOT))
    return path.replace(str(Path(sys.prefix)), "<venv>")


def classify(job: Job, raw: dict[str, Any]) -> dict[str, Any]:
    """ok, refused, refused-oom, crash or timeout, with the crash group and its frames."""
    record: dict[str, Any] = {
        "case": job.case,
        "command": job.command,
        "argv": job.argv,
        "file": job.file,
        **job.meta,
    }
    if raw.get("timeout"):
        key, frames = traceback_key(raw.get("stacks", ""))
        record.update(outcome="timeout", where=frames[-3:])
        return record
    if "died" in raw:
        stacks = raw.get("stacks", "")
        key, frames = traceback_key(stacks)
        record.update(
            outcome="crash",
            group=f"worker died (exit {raw['died']}) @ {frames[-1] if frames else '?'}",
            frames=frames,
            traceback=stacks[-4000:],
        )
        return record
    record.update(code=raw["code"], seconds=raw["seconds"])
    stderr = raw["stderr"]
    text = ""
    if raw["exc"]:
        text = raw["exc"]
    elif raw["code"] == EXIT_INTERNAL or "internal error:" in stderr:
        m = REPORT.search(stderr)
        text = _tail(Path(m["path"]), 20000) if m else stderr
        record["report"] = m["path"] if m else ""
    if text:
        key, frames = traceback_key(text)
        if raw["exc"]:
            key = "escaped " + key
        record.update(outcome="crash", group=key, frames=frames, traceback=text[-6000:])
        return record
    if raw["code"] == 0:
        record["outcome"] = "ok"
        if raw.get("json_problem"):
            record["json_problem"] = raw["json_problem"]
        return record
    message = stderr.strip()
    if raw["code"] in (1, 2) and message:
        first = message.splitlines()[-1] if message.startswith("note:") else message
        oom = "too large:" in stderr and (
            "Unable to allocate" in stderr or re.search(r"too large:\s*$", stderr, re.M)
        )
        record.update(outcome="refused-oom" if oom else "refused", message=first[:300])
        return record
    record.update(
        outcome="crash",
        group=f"unexpected exit {raw['code']} (stderr {'empty' if not message else 'present'})",
        frames=[],
        traceback=stderr[-3000:],
    )
    return record


def debug_rerun(argv: list[str], settings: Settings, env: dict[str, str] | None = None) -> str:
    """Stderr of the same command with ``--debug`` in a fresh process (the traceback)."""
    full_env = settings.env()
    full_env.update(env or {})
    limit = settings.memory_bytes

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run(
            [sys.executable, "main.py", "--debug", *argv],
            cwd=ROOT,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=settings.timeout_s,
            preexec_fn=cap,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "(timed out)"
    text = done.stderr.decode("utf-8", "replace")
    return f"exit {done.returncode}\n{text}"


# ------------------------------------------------------------------------------------------
# The scenario campaign


def scenario_jobs(case: Case, file: Path, settings: Settings) -> list[Job]:
    meta = {"preset": case.preset, "edits": [e.describe() for e in case.edits]}
    return [
        Job(
            key=f"{case.index}:{cmd[0]}",
            argv=["--max-memory", settings.max_memory, cmd[0], str(file), *cmd[1:]],
            case=case.index,
            command=" ".join(cmd),
            file=str(file),
            meta=meta,
        )
        for cmd in SCENARIO_COMMANDS
    ]


def campaign_scenarios(args: argparse.Namespace, settings: Settings) -> None:
    vocab = Vocabulary.load()
    base = base_documents()
    cases_dir = settings.out / "cases"
    cases_dir.mkdir(parents=True, exist_ok=True)
    results = settings.out / "results.jsonl"
    deadline = time.monotonic() + args.budget_s if args.budget_s else None
    index = args.start
    end = args.start + args.count if args.count else None
    with results.open("a", encoding="utf-8") as sink:
        while (end is None or index < end) and (deadline is None or time.monotonic() < deadline):
            stop = index + BATCH_CASES if end is None else min(end, index + BATCH_CASES)
            jobs: list[Job] = []
            for i in range(index, stop):
                case = make_case(args.seed, i, vocab, base)
                data = render_case(case, base)
                file = cases_dir / f"case-{i:05d}.json"
                file.write_bytes(data or b"")
                jobs += scenario_jobs(case, file, settings)
            for job, raw in run_jobs(jobs, settings):
                record = classify(job, raw)
                record["campaign"] = "scenario"
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            print(f"cases {args.start}..{stop - 1} done", file=sys.stderr, flush=True)
            index = stop
    follow_up(settings, args.seed, args.reruns)


# ------------------------------------------------------------------------------------------
# The library campaign

QUERIES = [
    "seed",
    '"',
    "*",
    "NEAR(a b)",
    "a OR",
    "-",
    "\udcff",
    "x" * 10_000,
    "",
    "AND",
    "(",
    "'",
    "seed-a*",
]
NAMES = ["seed-a", "seed-b", "trashed", "nope", "", "\udcff", "x" * 10_000, "seed-a' --"]


def build_library(path: Path) -> None:
    """A small library: three scenarios with two versions each and one in the trash."""
    from engine.library.store import Library
    from engine.presets.scenarios import load_preset

    def seed(lib: Any) -> None:
        scenario = load_preset("rail-only-h100-1k")
        for name in ("seed-a", "seed-b", "seed-c", "trashed"):
            scenario.metadata.name = name
            scenario.metadata.tags = ["seed", name]
            lib.save(scenario, note="first")
            scenario.routing.seed = 7
            lib.save(scenario, note="second")
            scenario.routing.seed = 0
        lib.delete("trashed")

    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{suffix}")
    Library(path, seed=seed).close()


def q(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _sql_damage(rng: random.Random, hostile_body: str) -> tuple[str, list[str]]:
    """One SQL alteration of a library: its label and statements."""
    bad_text = ["CAST(x'ff' AS TEXT)", "42", "NULL", "x'ff00'", "''"]
    bodies = [
        q("not json"),
        q("[]"),
        q("{}"),
        q("[" * 100_000),
        q(hostile_body),
        *bad_text,
    ]
    tags = [q("not json"), q("[1,2]"), q('{"a":1}'), q("[" * 5000), *bad_text]
    times = [q("9999-99-99"), *bad_text]
    first_version = "(SELECT min(id) FROM versions)"
    pick = rng.choice
    options: list[tuple[str, list[str]]] = [
        ("body", [f"UPDATE scenarios SET body = {pick(bodies)} WHERE name = 'seed-a'"]),
        ("version body", [f"UPDATE versions SET body = {pick(bodies)} WHERE id = {first_version}"]),
        ("tags", [f"UPDATE scenarios SET tags = {pick(tags)} WHERE name = 'seed-a'"]),
        ("times", [f"UPDATE scenarios SET modified = {pick(times)}, created = {pick(times)}"]),
        (
            "version times",
            [f"UPDATE versions SET created = {pick(times)}, note = {pick(bad_text)}"],
        ),
        ("name", [f"UPDATE scenarios SET name = {pick(bad_text)} WHERE name = 'seed-a'"]),
        ("description", [f"UPDATE scenarios SET description = {pick(bad_text)}"]),
        ("deleted_at", [f"UPDATE scenarios SET deleted_at = {pick(times)}"]),
        (
            "format_version",
            [f"UPDATE scenarios SET format_version = {pick(['99', '-1', q('x'), 'NULL'])}"],
        ),
        ("drop versions", ["DROP TABLE versions"]),
        ("drop fts", ["DROP TABLE scenarios_fts"]),
        ("drop measurements", ["DROP TABLE measurements"]),
        ("drop column", ["ALTER TABLE scenarios DROP COLUMN description"]),
        ("user_version", [f"PRAGMA user_version = {pick([0, 1, 3, -1, 999, 2**31 - 1])}"]),
        ("orphan versions", ["UPDATE versions SET scenario_id = 999"]),
        ("no versions", ["DELETE FROM versions"]),
        (
            "fts ghost",
            [
                "INSERT INTO scenarios_fts(rowid, name, description, tags) VALUES (999, 'ghost', 'x', 'y')"
            ],
        ),
        ("fts delete-all", ["INSERT INTO scenarios_fts(scenarios_fts) VALUES ('delete-all')"]),
        (
            "autosave",
            [
                f"INSERT OR REPLACE INTO autosave(slot, saved_at, body) VALUES (1, {pick(times)}, {pick(bodies)})"
            ],
        ),
        (
            "measurement",
            [
                "INSERT INTO measurements(name, op, ranks, gpu, nccl_version, dtype, source, "
                f"imported, scenario, points) VALUES ('m', {pick(['42', q('all-reduce'), 'NULL'])}, "
                f"{pick(['-1', '0', '8', q('x')])}, 'h100', '2.21', 'float', 's', {pick(times)}, "
                f"NULL, {pick([*bodies, q('[[1,2,3]]'), q('[{}]')])})"
            ],
        ),
        ("extra table", ["CREATE TABLE evil(x)"]),
        ("rename table", ["ALTER TABLE scenarios RENAME TO scenarios_old"]),
        ("journal", ["PRAGMA journal_mode = DELETE"]),
    ]
    return pick(options)


def damage_library(rng: random.Random, base: Path, dst: Path, hostile_body: str) -> str:
    """Make `dst` a damaged copy of `base` (or a non-library object); returns what was done."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(f"{dst}{suffix}")
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    kind = rng.choices(
        ["sql", "bytes", "truncate", "special", "sql+bytes"], weights=[45, 20, 15, 8, 12]
    )[0]
    if kind == "special":
        what = rng.choice(
            ["folder", "fifo", "broken-link", "devnull", "empty", "json", "random", "other-db"]
        )
        if what == "folder":
            dst.mkdir()
        elif what == "fifo":
            os.mkfifo(dst)
        elif what == "broken-link":
            dst.symlink_to("/nonexistent/library")
        elif what == "devnull":
            dst.symlink_to("/dev/null")
        elif what == "empty":
            dst.write_bytes(b"")
        elif what == "json":
            dst.write_text(hostile_body, encoding="utf-8")
        elif what == "random":
            dst.write_bytes(rng.randbytes(rng.choice([10, 100, 4096, 100_000])))
        else:
            conn = sqlite3.connect(dst)
            conn.execute("CREATE TABLE scenarios(x)")
            conn.commit()
            conn.close()
        return f"special: {what}"
    shutil.copyfile(base, dst)
    done = []
    if kind in ("sql", "sql+bytes"):
        label, statements = _sql_damage(rng, hostile_body)
        conn = sqlite3.connect(dst)
        try:
            for s in statements:
                conn.execute(s)
            conn.commit()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except (sqlite3.Error, UnicodeEncodeError) as exc:
            label += f" (sqlite refused: {exc})"
        finally:
            conn.close()
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(f"{dst}{suffix}")
        done.append(f"sql: {label}: {statements[0][:200]}")
    data = bytearray(dst.read_bytes())
    if kind in ("bytes", "sql+bytes"):
        n = rng.choice([1, 4, 32, 256])
        region = rng.choice(["header", "anywhere", "page1", "last-page"])
        for _ in range(n):
            if region == "header":
                pos = rng.randrange(0, 100)
            elif region == "page1":
                pos = rng.randrange(100, min(4096, len(data)))
            elif region == "last-page":
                pos = rng.randrange(max(0, len(data) - 4096), len(data))
            else:
                pos = rng.randrange(len(data))
            data[pos] = rng.randrange(256)
        done.append(f"bytes: {n} random byte(s) in {region}")
    if kind == "truncate":
        cut = rng.choice([0, 50, 100, 4096, len(data) // 2, len(data) - 1, len(data) - 4096])
        data = data[: max(0, cut)]
        done.append(f"truncate to {max(0, cut)} of {len(dst.read_bytes())} bytes")
    dst.write_bytes(bytes(data))
    return "; ".join(done)


def library_jobs(
    case: int, lib: Path, work: Path, scenario_file: Path, rng: random.Random, max_memory: str
) -> list[tuple[str, list[str], dict[str, str]]]:
    """The commands run against one damaged library: name, argv and environment."""
    p = ["library", "--path", str(lib)]
    query = rng.choice(QUERIES)
    name = rng.choice(NAMES)
    return [
        ("library list", [*p, "list"], {}),
        ("library list --sort name", [*p, "--sort", "name", "list"], {}),
        ("library search", [*p, "search", query], {}),
        ("library show", [*p, "show", "seed-a"], {}),
        ("library show NAME", [*p, "show", name], {}),
        ("library versions", [*p, "versions", rng.choice(["seed-a", "trashed", name])], {}),
        ("library export", [*p, "export", "seed-b", str(work / f"export-{case}.json")], {}),
        ("library import", [*p, "import", str(scenario_file)], {}),
        ("measurements", ["measurements", "--library", str(lib), "--json"], {}),
        (
            "evaluate library:",
            ["--max-memory", max_memory, "evaluate", "library:seed-a", "--json"],
            {"FABRICLAB_LIBRARY": str(lib)},
        ),
    ]


def campaign_library(args: argparse.Namespace, settings: Settings) -> None:
    vocab = Vocabulary.load()
    base_docs = base_documents()
    work = settings.out / "library"
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base.fabriclab"
    build_library(base)
    results = settings.out / "results.jsonl"
    index = args.start
    deadline = time.monotonic() + args.budget_s if args.budget_s else None
    end = args.start + args.count if args.count else None
    with results.open("a", encoding="utf-8") as sink:
        while (end is None or index < end) and (deadline is None or time.monotonic() < deadline):
            rng = random.Random(f"library:{args.seed}:{index}")
            case = make_case(args.seed, 100_000 + index, vocab, base_docs)
            hostile_bytes = render_case(case, base_docs) or b"{}"
            hostile = hostile_bytes.decode("utf-8", "replace")  # what SQL can store as text
            damaged = work / f"damaged-{index:04d}.fabriclab"
            how = damage_library(rng, base, damaged, hostile)
            scenario_file = work / f"import-{index:04d}.json"
            scenario_file.write_bytes(hostile_bytes)
            jobs = []
            for name, argv, env in library_jobs(
                index, damaged.with_suffix(".run"), work, scenario_file, rng, settings.max_memory
            ):
                jobs.append(
                    Job(
                        key=f"lib{index}:{name}",
                        argv=argv,
                        case=index,
                        command=name,
                        file=str(damaged),
                        env=env,
                        copy_from=str(damaged),
                        copy_to=str(damaged.with_suffix(".run")),
                        meta={
                            "damage": how,
                            "edits": [e.describe() for e in case.edits],
                            "env": env,
                        },
                    )
                )
            if not damaged.is_file() or damaged.is_symlink():
                # a folder, pipe or link is not copied: run on it where it is
                for job in jobs:
                    job.argv = [str(damaged) if a == job.copy_to else a for a in job.argv]
                    job.env = {
                        k: str(damaged) if v == job.copy_to else v for k, v in job.env.items()
                    }
                    job.copy_from = job.copy_to = ""
            for job in jobs:
                job.meta.update(copy_from=job.copy_from, copy_to=job.copy_to, env=job.env)
            for job, raw in run_jobs(jobs, settings):
                record = classify(job, raw)
                record["campaign"] = "library"
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            print(f"library case {index}: {how}", file=sys.stderr, flush=True)
            index += 1
    follow_up(settings, args.seed, args.reruns)


# ------------------------------------------------------------------------------------------
# Follow-up: debug reruns, saved crashes, reduction, summary


def load_records(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    if not path.exists():
        return []
    latest: dict[tuple[str, int, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line:
            r = json.loads(line)
            latest[(r["campaign"], r["case"], r["command"])] = r  # a case run again counts once
    return list(latest.values())


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:90]


def reduce_case(record: dict[str, Any], seed: int, settings: Settings) -> dict[str, Any] | None:
    """The single edit of a scenario case that alone reproduces its crash group, if any."""
    vocab = Vocabulary.load()
    base = base_documents()
    case = make_case(seed, record["case"], vocab, base)
    if [e.describe() for e in case.edits] != record.get("edits"):
        return None  # another seed made this case
    scratch = settings.out / "reduce"
    scratch.mkdir(parents=True, exist_ok=True)
    candidates = [[e] for e in case.edits] if len(case.edits) > 1 else []
    candidates += [case.edits]
    for edits in candidates:
        data = render_case(case, base, edits)
        if data is None:
            continue
        file = scratch / f"case-{record['case']:05d}-{len(edits)}.json"
        file.write_bytes(data)
        argv = [str(file) if a == record["file"] else a for a in record["argv"]]
        text = debug_rerun(argv, settings)
        key, _ = traceback_key(text)
        if key == record["group"].removeprefix("escaped "):
            return {
                "preset": case.preset,
                "edits": [e.describe() for e in edits],
                "paths": [path_text(e.path) for e in edits],
                "command": "fabriclab --debug " + " ".join(argv),
                "file": str(file),
            }
    return None


def follow_up(settings: Settings, seed: int, reruns: int) -> None:
    """Save every crash; rerun the first `reruns` of each group with --debug; reduce one."""
    records = load_records(settings.out)
    crashes_dir = settings.out / "crashes"
    per_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r["outcome"] == "crash":
            per_group[r["group"]].append(r)
    for group, items in per_group.items():
        folder = crashes_dir / slug(group)
        folder.mkdir(parents=True, exist_ok=True)
        for n, r in enumerate(items):
            stem = f"{r['campaign']}-{r['case']:05d}-{slug(r['command'])}"
            target = folder / f"{stem}.txt"
            if target.exists():
                continue
            src = Path(r["file"])
            if src.is_file() and not src.is_symlink():
                shutil.copyfile(src, folder / f"{stem}{src.suffix or '.bin'}")
            text = r.get("traceback", "")
            if n < reruns:
                if r.get("copy_from"):
                    shutil.copyfile(r["copy_from"], r["copy_to"])
                rerun = debug_rerun(r["argv"], settings, r.get("env"))
                text = f"--debug rerun:\n{rerun}\n\nin-process:\n{text}"
            meta = {k: r.get(k) for k in ("argv", "edits", "damage", "preset", "group")}
            target.write_text(
                json.dumps(meta, indent=1) + "\n\n" + text,
                encoding="utf-8",
                errors="backslashreplace",
            )
        minimal = folder / "minimal.json"
        first = items[0]
        if not minimal.exists() and first["campaign"] == "scenario":
            found = reduce_case(first, seed, settings)
            minimal.write_text(
                json.dumps(found or {"edits": first.get("edits"), "reduced": False}, indent=1),
                encoding="utf-8",
            )


def summary(out: Path) -> dict[str, Any]:
    records = load_records(out)
    result: dict[str, Any] = {}
    for campaign in ("scenario", "library"):
        rs = [r for r in records if r.get("campaign") == campaign]
        if not rs:
            continue
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rs:
            if r["outcome"] == "crash":
                groups[r["group"]].append(r)
        crash_groups = []
        for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            minimal_file = out / "crashes" / slug(key) / "minimal.json"
            minimal = json.loads(minimal_file.read_text()) if minimal_file.exists() else None
            crash_groups.append(
                {
                    "group": key,
                    "runs": len(items),
                    "cases": len({r["case"] for r in items}),
                    "commands": dict(Counter(r["command"] for r in items)),
                    "frames": items[0].get("frames", []),
                    "example": {
                        "case": items[0]["case"],
                        "edits": items[0].get("edits"),
                        "damage": items[0].get("damage"),
                        "argv": items[0]["argv"],
                    },
                    "minimal": minimal,
                    "folder": str(out / "crashes" / slug(key)),
                }
            )
        result[campaign] = {
            "cases": len({r["case"] for r in rs}),
            "runs": len(rs),
            "outcomes": dict(Counter(r["outcome"] for r in rs)),
            "by_command": {
                c: dict(Counter(r["outcome"] for r in rs if r["command"] == c))
                for c in sorted({r["command"] for r in rs})
            },
            "ok_with_non_strict_json": [
                {
                    "case": r["case"],
                    "command": r["command"],
                    "edits": r.get("edits"),
                    "problem": r["json_problem"],
                }
                for r in rs
                if r.get("json_problem")
            ][:20],
            "timeouts": [
                {
                    "case": r["case"],
                    "command": r["command"],
                    "edits": r.get("edits") or r.get("damage"),
                    "where": r.get("where"),
                }
                for r in rs
                if r["outcome"] == "timeout"
            ][:20],
            "refused_oom": [
                {
                    "case": r["case"],
                    "command": r["command"],
                    "edits": r.get("edits"),
                    "message": r.get("message"),
                }
                for r in rs
                if r["outcome"] == "refused-oom"
            ][:20],
            "crash_groups": crash_groups,
        }
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        return worker_main(argv[1], int(argv[2]), int(argv[3]))
    parser = argparse.ArgumentParser(prog="hostile", description=__doc__.splitlines()[0])
    parser.add_argument("campaign", choices=["scenarios", "library", "summary"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/hostile"))
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--count", type=int, default=0, help="cases to run (0: until --budget-s)")
    parser.add_argument("--start", type=int, default=0, help="index of the first case")
    parser.add_argument(
        "--budget-s", type=float, default=0.0, help="stop starting cases after this"
    )
    parser.add_argument("--timeout-s", type=float, default=TIMEOUT_S)
    parser.add_argument("--memory-gib", type=float, default=MEMORY_GIB)
    parser.add_argument("--max-memory", default=MAX_MEMORY, help="passed to the CLI")
    parser.add_argument("--reruns", type=int, default=10, help="--debug reruns per crash group")
    parser.add_argument(
        "--tree", type=Path, help="run the CLI of this source tree (default: this checkout)"
    )
    args = parser.parse_args(argv)
    if args.tree and args.tree.resolve() != ROOT:  # start again with the tree's modules
        os.environ["HOSTILE_TREE"] = str(args.tree.resolve())
        os.execv(sys.executable, [sys.executable, str(Path(__file__).resolve()), *argv])
    if not args.count and not args.budget_s and args.campaign != "summary":
        parser.error("give --count or --budget-s")
    settings = Settings(args.out, args.timeout_s, int(args.memory_gib * 2**30), args.max_memory)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.campaign == "scenarios":
        campaign_scenarios(args, settings)
    elif args.campaign == "library":
        campaign_library(args, settings)
    print(json.dumps(summary(args.out), indent=1, ensure_ascii=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
