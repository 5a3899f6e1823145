"""Device and toolbar icons from the SVG files in resources/icons/, drawn in theme colours.

The files are 24×24 line drawings (1.5 stroke, round caps) that stroke with ``currentColor``.
Loading substitutes a concrete colour and renders through QSvgRenderer, so one file serves
both themes and stays sharp at every size. Devices of an InfiniBand or an Ethernet model
carry a corner badge (round for InfiniBand, square for Ethernet, in the theme's technology
colours; an InfiniBand-to-Ethernet gateway half of each) cut out of the drawing so it reads on any background. Files are read only through
`engine.runtime.resources.resource_path`, which also works from a bundled app. Renderers and
pixmaps are cached by name, colour and size, so repainting costs a lookup.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QAction, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from engine.analysis import resource_path
from ui.theme import Theme

log = logging.getLogger(__name__)

ACTION_ICONS = (
    "undo",
    "redo",
    "fit",
    "zoom-in",
    "zoom-out",
    "run",
    "stop",
    "template",
    "open",
    "save",
    "export",
)
DEVICE_ICONS = {
    "gpu": "gpu",
    "server": "server",
    "switch": "switch",
    "nic": "nic",
    "cable": "cable",
    "transceiver": "transceiver",
    "storage": "storage",
}
SWITCH_TIER_ICONS = {"leaf": "switch-leaf", "spine": "switch-spine", "core": "switch-core"}
BADGES = {
    "infiniband": "badge-infiniband",
    "ethernet": "badge-ethernet",
    "roce": "badge-ethernet",
    "gateway": "badge-gateway",
}
ICON_SIZES_PX = (16, 20, 24, 32, 48, 64)
BADGE_SHARE = 0.46  # badge edge as a share of the icon's edge
BADGE_GAP = 0.09  # cut-out ring around the badge, as a share of the badge's edge


@functools.cache
def svg_source(folder: str, name: str) -> str:
    """The text of ``resources/icons/<folder>/<name>.svg`` (``""`` and a log line if missing)."""
    path = resource_path("icons", folder, f"{name}.svg")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("icon %s cannot be read: %s", path, exc)
        return ""


@functools.lru_cache(maxsize=256)
def svg_renderer(folder: str, name: str, color_hex: str) -> QSvgRenderer:
    """A renderer of one icon with ``currentColor`` replaced by `color_hex`."""
    text = svg_source(folder, name).replace("currentColor", color_hex)
    return QSvgRenderer(QByteArray(text.encode("utf-8")))


def device_icon_name(kind: str, tier: str = "") -> str:
    """The icon file for a catalog device kind; switches get their tier's mark.

    An unknown kind falls back to the server or the generic switch drawing by tier, so a
    new catalog kind still gets a sensible icon.
    """
    if kind == "switch":
        return SWITCH_TIER_ICONS.get(tier, "switch")
    if kind in DEVICE_ICONS:
        return DEVICE_ICONS[kind]
    return "server" if tier in ("", "server") else SWITCH_TIER_ICONS.get(tier, "switch")


def badge_name(technology: str | None) -> str | None:
    """The badge file for a technology (``None`` for ``both``, none or unknown)."""
    return BADGES.get((technology or "").lower())


def technology_color(technology: str | None, theme: Theme) -> str | None:
    """The theme's colour for InfiniBand (and a gateway, whose text starts with it) or
    Ethernet (``None`` otherwise)."""
    badge = badge_name(technology)
    if badge is None:
        return None
    return theme.ethernet if badge == "badge-ethernet" else theme.infiniband


@functools.lru_cache(maxsize=512)
def device_pixmap(
    kind: str,
    tier: str,
    technology: str | None,
    theme: Theme,
    size_px: int,
    color_hex: str = "",
) -> QPixmap:
    """A `size_px` square pixmap of a device icon in `color_hex` (default: the theme's).

    InfiniBand and Ethernet devices get their badge in the bottom-right corner; the drawing
    under the badge (and a thin ring around it) is cleared first, so the badge stays legible.
    """
    pixmap = QPixmap(size_px, size_px)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    svg_renderer("devices", device_icon_name(kind, tier), color_hex or theme.icon).render(
        painter, QRectF(0, 0, size_px, size_px)
    )
    badge = badge_name(technology)
    tech_color = technology_color(technology, theme)
    if badge is not None and tech_color is not None:
        edge = size_px * BADGE_SHARE
        rect = QRectF(size_px - edge, size_px - edge, edge, edge)
        gap = edge * BADGE_GAP
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Clear)
        svg_renderer("devices", badge, "#000000").render(
            painter, rect.adjusted(-gap, -gap, gap, gap)
        )
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
        inner = rect.adjusted(gap, gap, 0, 0)
        if badge == "badge-gateway":  # InfiniBand's round half beside Ethernet's square one
            svg_renderer("devices", "badge-gateway-ib", theme.infiniband).render(painter, inner)
            svg_renderer("devices", "badge-gateway-eth", theme.ethernet).render(painter, inner)
        else:
            svg_renderer("devices", badge, tech_color).render(painter, inner)
    painter.end()
    return pixmap


def device_icon(kind: str, tier: str, technology: str | None, theme: Theme) -> QIcon:
    """A device's icon at the usual sizes (palette rows, menus, tooltips)."""
    icon = QIcon()
    for size in ICON_SIZES_PX:
        icon.addPixmap(device_pixmap(kind, tier, technology, theme, size))
    return icon


@functools.lru_cache(maxsize=256)
def action_pixmap(name: str, color_hex: str, size_px: int) -> QPixmap:
    """A `size_px` square pixmap of the action icon `name` in `color_hex`."""
    pixmap = QPixmap(size_px, size_px)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    svg_renderer("actions", name, color_hex).render(painter, QRectF(0, 0, size_px, size_px))
    painter.end()
    return pixmap


def action_icon(name: str, theme: Theme) -> QIcon:
    """The toolbar icon `name` in the theme's icon colour, greyed when disabled.

    An unknown name raises ValueError listing the known ones (a programming error).
    """
    if name not in ACTION_ICONS:
        raise ValueError(f"no action icon {name!r}; known: {', '.join(ACTION_ICONS)}")
    if not svg_source("actions", name):
        return QIcon()
    icon = QIcon()
    for size in ICON_SIZES_PX:
        icon.addPixmap(action_pixmap(name, theme.icon, size), QIcon.Mode.Normal)
        icon.addPixmap(action_pixmap(name, theme.icon_disabled, size), QIcon.Mode.Disabled)
    return icon


def set_action_icons(actions: Iterable[tuple[QAction, str]], theme: Theme) -> None:
    """Give each action its icon in `theme` (called again when the theme changes)."""
    for action, name in actions:
        action.setIcon(action_icon(name, theme))
