"""What the window says of the scenario and of its runs: the summary label and the status bar.

On a first start numba compiles every kernel the first run meets, which takes tens of
seconds on a laptop; the window says so instead of seeming to hang. Whether the kernels are
compiled is asked of the engine once, when the first run starts (`engine.analysis.
kernels_ready`), and the first run's messages carry the note; later runs do not.
"""

from __future__ import annotations

from engine.analysis import kernels_ready
from engine.model.scenario import Scenario

FIRST_START_NOTE = "first start: compiling the engine's kernels once, this takes a while"


class RunMessages:
    """The status texts of runs: plain once the kernels are compiled."""

    def __init__(self) -> None:
        self.first_start: bool | None = None  # unknown until a run starts

    def started(self) -> str:
        """The text when a run starts (the first run asks whether kernels are compiled)."""
        if self.first_start is None:
            self.first_start = not kernels_ready()
        elif self.first_start:
            self.first_start = False  # the first run compiled them
        return f"Evaluating ({FIRST_START_NOTE})…" if self.first_start else "Evaluating…"

    def progress(self, stage: str) -> str:
        """The text as a run reaches `stage`."""
        note = f" ({FIRST_START_NOTE})" if self.first_start else ""
        return f"Evaluating: {stage}{note}…"


def summary_html(scenario: Scenario) -> str:
    """Name, description and the groups of a scenario, for the summary label."""
    groups = "<br>".join(f"{g.count:,} × {g.model}  ({g.tier})" for g in scenario.groups)
    return (
        f"<b>{scenario.metadata.name}</b><br><small>{scenario.metadata.description}</small>"
        f"<p>{groups}</p>"
    )
