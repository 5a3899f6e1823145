"""Render the application icon's SVG to the 256 px PNG that ships beside it.

Run from the project root after editing ``resources/icons/fabriclab.svg``:
``.venv/bin/python tools/render_icon.py [SIZE]``. The PNG is what the window, the About
dialog and the desktop entry use, so no SVG plugin is needed at run time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

from engine.runtime.resources import resource_path  # noqa: E402

DEFAULT_SIZE_PX = 256


def render_icon(svg: Path, png: Path, size_px: int = DEFAULT_SIZE_PX) -> None:
    """Draw `svg` into a transparent `size_px` square image and save it as `png`."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG file")
    image = QImage(size_px, size_px, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png)):
        raise OSError(f"cannot write {png}")


def main(argv: list[str]) -> int:
    """Render the shipped icon; exit 1 with a message when the SVG or the PNG fails."""
    size_px = int(argv[0]) if argv else DEFAULT_SIZE_PX
    _app = QGuiApplication.instance() or QGuiApplication([])
    svg, png = resource_path("icons", "fabriclab.svg"), resource_path("icons", "fabriclab.png")
    try:
        render_icon(svg, png, size_px)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{png.relative_to(ROOT)} ({size_px}×{size_px})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
