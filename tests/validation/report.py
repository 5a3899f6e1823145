"""Regenerate docs/validation.md: every check, its model value, measurement, error and source.

Run: ``.venv/bin/python tests/validation/report.py`` (or ``make validation``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.validation.checks import CHECKS, published  # noqa: E402

HEADER = """# Validation

How FabricLab's engine compares with published measurements. Each row is a check in
`tests/validation/checks.py`, run by `make test`; the tolerance is fixed before the
comparison, and no default is tuned to meet it. Regenerate this page with
`.venv/bin/python tests/validation/report.py`. Closed-form checks (ring, halving-doubling,
tree, all-to-all on a non-blocking fabric) are in `tests/test_collectives.py`.

| check | measured | model | error | tolerance | result |
| --- | --- | --- | --- | --- | --- |
"""


def main() -> int:
    figures = published()
    rows, notes = [], []
    for check in CHECKS:
        figure = figures[check.figure]
        measured = figure["value"]
        model = check.model()
        error = abs(model - measured) / measured
        result = "known gap" if check.known_gap else "pass" if error <= check.tolerance else "FAIL"
        rows.append(
            f"| {check.what} | {measured:g} {check.unit} | {model:.1f} {check.unit} | {error:.1%} | "
            f"{check.tolerance:.0%} | {result} |"
        )
        src = figure["source"]
        notes.append(
            f"- **{check.what}**: measured {measured:g} {check.unit} — {src['title']} ({src['date']}, "
            f"{src.get('who', '')}) <{src['url']}>. Model: {check.explanation}"
            + (f" Known gap: {check.known_gap}" if check.known_gap else "")
        )
    text = HEADER + "\n".join(rows) + "\n\n## Sources and reasons\n\n" + "\n".join(notes) + "\n"
    out = ROOT / "docs" / "validation.md"
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
