"""Problems found in a scenario, and the exception that carries them.

Every check in the engine reports a `Problem` that names the element (`where`, e.g.
``groups[leaf]``) and the field it concerns, so the CLI can print it and the canvas can
outline the offending item. Nothing in the engine raises a bare traceback at a user.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario: where it is, which field, and what to do."""

    where: str
    message: str
    field: str | None = None
    severity: str = "error"

    def __str__(self) -> str:
        location = self.where if self.field is None else f"{self.where}.{self.field}"
        return f"{self.severity}: {location}: {self.message}"


class ScenarioError(Exception):
    """A scenario cannot be used as it is; `problems` says every reason found."""

    def __init__(self, problems: list[Problem] | Problem):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def brief(self) -> str:
        """The problems' messages in one line, for a status line or a part that failed."""
        return "; ".join(p.message for p in self.problems) or str(self)
