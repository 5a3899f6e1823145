"""The step-model knobs a training job's ``overrides`` may set, and their checks.

`TrainingJob.overrides` (engine.model.scenario) mixes two kinds of entry: model shape fields
(``{"layers": 48}``, engine.catalog.model_presets.SHAPE_FIELDS) and the knobs below, which tune
the step model itself (overlap shares, bucket size, rank order). This module names the knobs
with their defaults, splits an overrides mapping into the two kinds and refuses unknown keys
and out-of-range values, so the rest of the step model reads plain, checked numbers.
"""

from __future__ import annotations

from engine.catalog.model_presets import SHAPE_FIELDS
from engine.model.errors import Problem, ScenarioError

WHERE = "workload.training"

# Step-model knobs a `TrainingJob.overrides` entry may set, with default and meaning.
# A negative default means "the model preset's value".
KNOBS: dict[str, tuple[float, str]] = {
    "virtual_stages": (-1, "interleaved 1F1B model chunks per pipeline stage"),
    "sequence_parallel": (-1, "1: TP with sequence parallelism (all-gather + reduce-scatter)"),
    "pp_outermost": (-1, "1: Megatron rank order tp-cp-ep-dp-pp; 0: Llama 3's tp-cp-pp-dp"),
    "tp_overlap": (0.0, "share of TP communication hidden behind compute (Megatron default 0)"),
    "ep_overlap": (0.0, "share of EP all-to-all time hidden behind compute"),
    "cp_overlap": (1.0, "share of attention compute available to hide the CP K/V exchange"),
    "dp_overlap": (1.0, "share of the last backward (first forward) that hides DP traffic"),
    "grad_bytes": (2.0, "bytes per reduced gradient element (4 for fp32 reduction)"),
    "bucket_params": (0.0, "DP bucket size in parameters (0: Megatron's max(40M, 1M x group))"),
    "max_concurrent_groups": (64.0, "other groups timed concurrently with the one measured"),
    "recompute": (0.0, "activation recomputation: 0 none, 1 selective (attention core), 2 full"),
    "flash_attention": (
        1.0,
        "1: fused FlashAttention-class kernel; 0: unfused (Megatron pre-2022)",
    ),
    "schedule": (0.0, "pipeline schedule: 0 1F1B (interleaved when virtual_stages > 1), 1 ZB-H1"),
    "fp8": (0.0, "1: linear-layer matmuls in FP8 (Transformer Engine), attention in BF16"),
    "capacity_factor": (0.0, "MoE expert capacity over the mean load (0: dropless, no padding)"),
    "expert_imbalance": (1.0, "MoE: the busiest expert's tokens over the mean (dropless routing)"),
}
# Knobs that take one of a few whole values, with what each value means.
CHOICES: dict[str, dict[int, str]] = {
    "recompute": {0: "none", 1: "selective", 2: "full"},
    "flash_attention": {0: "unfused", 1: "fused"},
    "schedule": {0: "1F1B", 1: "ZB-H1"},
    "fp8": {0: "bf16", 1: "fp8"},
}


def split_overrides(overrides: dict[str, float]) -> tuple[dict[str, int], dict[str, float]]:
    """Shape overrides (whole numbers) and step knobs; unknown keys are refused."""
    shape: dict[str, int] = {}
    knobs = {k: v[0] for k, v in KNOBS.items()}
    for key, value in overrides.items():
        if key in SHAPE_FIELDS:
            if not float(value).is_integer() or value < 0:
                raise ScenarioError(
                    Problem(f"{WHERE}.overrides", f"{key} must be a whole number ≥ 0", key)
                )
            shape[key] = int(value)
        elif key in KNOBS:
            knobs[key] = float(value)
        else:
            known = ", ".join([*SHAPE_FIELDS, *KNOBS])
            raise ScenarioError(
                Problem(f"{WHERE}.overrides", f"unknown override {key!r}; known: {known}", key)
            )
    return shape, knobs


def knob_flag(knobs: dict[str, float], name: str, preset_value: bool) -> bool:
    """A yes/no knob: the preset's value when the knob is negative (unset), else knob ≥ 0.5."""
    return preset_value if knobs[name] < 0 else knobs[name] >= 0.5


def check_knobs(knobs: dict[str, float]) -> None:
    """Refuse knob values outside their range, naming the knob."""
    for name in ("tp_overlap", "ep_overlap", "cp_overlap", "dp_overlap"):
        if not 0.0 <= knobs[name] <= 1.0:
            raise ScenarioError(Problem(f"{WHERE}.overrides", "must be between 0 and 1", name))
    if not knobs["grad_bytes"] >= 1:
        raise ScenarioError(
            Problem(f"{WHERE}.overrides", "grad_bytes must be at least one byte", "grad_bytes")
        )
    bucket = knobs["bucket_params"]
    if not (bucket == 0 or bucket >= 1):
        raise ScenarioError(
            Problem(
                f"{WHERE}.overrides",
                "bucket_params must be 0 (Megatron's size) or at least one parameter",
                "bucket_params",
            )
        )
    for name, values in CHOICES.items():
        if knobs[name] not in values:
            allowed = ", ".join(f"{k} ({v})" for k, v in values.items())
            raise ScenarioError(
                Problem(f"{WHERE}.overrides", f"{name} must be one of {allowed}", name)
            )
    if not (knobs["capacity_factor"] == 0 or knobs["capacity_factor"] >= 1):
        raise ScenarioError(
            Problem(
                f"{WHERE}.overrides",
                "capacity_factor must be 0 (dropless) or at least 1",
                "capacity_factor",
            )
        )
    if not 1 <= knobs["expert_imbalance"] <= 64:
        raise ScenarioError(
            Problem(
                f"{WHERE}.overrides",
                "expert_imbalance must be between 1 and 64",
                "expert_imbalance",
            )
        )
    if knobs["max_concurrent_groups"] < 0:
        raise ScenarioError(Problem(f"{WHERE}.overrides", "must be ≥ 0", "max_concurrent_groups"))
