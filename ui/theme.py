"""Light and dark themes as data, and their application to the app, the canvas and the plots.

A `Theme` is a flat record of colours (hex strings): the Qt palette roles, the canvas (scene
background, tier bands, nodes, bundles, overlays) and the pyqtgraph plots. `apply_app_theme`
sets the Fusion style and the palette on the QApplication and makes the theme pyqtgraph's
default for plots created later; `apply_theme_to` restyles every existing `pg.PlotWidget`
under a widget (background, axes, grid, title, legend), so panels that build plots need no
theme code of their own. The canvas and the palette take the theme through their own
``set_theme`` methods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QStyleFactory, QToolTip, QWidget

THEME_SETTING = "theme"
DEFAULT_THEME = "light"
THEME_PROPERTY = "fabriclabTheme"


@dataclass(frozen=True)
class Theme:
    """Every colour the app draws with, for one look (``light`` or ``dark``)."""

    name: str
    title: str
    dark: bool
    # Qt palette roles
    window: str
    window_text: str
    base: str
    alternate_base: str
    text: str
    button: str
    button_text: str
    highlight: str
    highlighted_text: str
    tooltip_base: str
    tooltip_text: str
    placeholder_text: str
    disabled_text: str
    link: str
    mid: str
    # toolbar and palette icons
    icon: str
    icon_disabled: str
    # canvas
    canvas_background: str
    band_fills: tuple[str, str]
    band_label: str
    server_fill: str
    switch_fill: str
    node_border: str
    node_text: str
    node_subtext: str
    badge_fill: str
    badge_text: str
    selection: str
    problem: str
    edge: str
    edge_label: str
    edge_label_background: str
    overlay_background: str
    overlay_text: str
    infiniband: str
    ethernet: str
    # plots
    plot_background: str
    plot_foreground: str
    plot_axis: str
    plot_legend_background: str


LIGHT = Theme(
    name="light",
    title="&Light",
    dark=False,
    window="#eff0f2",
    window_text="#1c1f24",
    base="#ffffff",
    alternate_base="#f5f6f8",
    text="#1c1f24",
    button="#e6e8eb",
    button_text="#1c1f24",
    highlight="#2f6fd0",
    highlighted_text="#ffffff",
    tooltip_base="#fdfdf2",
    tooltip_text="#1c1f24",
    placeholder_text="#80868f",
    disabled_text="#9aa0a8",
    link="#1f5fbf",
    mid="#b9bec6",
    icon="#343a44",
    icon_disabled="#b0b5bc",
    canvas_background="#fbfbfc",
    band_fills=("#f2f5f9", "#e8edf4"),
    band_label="#6b7585",
    server_fill="#dcebf8",
    switch_fill="#e9e4f4",
    node_border="#8a93a0",
    node_text="#15181d",
    node_subtext="#4c535e",
    badge_fill="#2f3a4b",
    badge_text="#ffffff",
    selection="#1f6fd1",
    problem="#d62728",
    edge="#8d949e",
    edge_label="#39404a",
    edge_label_background="#fbfbfc",
    overlay_background="#ffffff",
    overlay_text="#1c1f24",
    infiniband="#16958c",
    ethernet="#d07a12",
    plot_background="#ffffff",
    plot_foreground="#2b2f36",
    plot_axis="#6f7682",
    plot_legend_background="#ffffff",
)

DARK = Theme(
    name="dark",
    title="&Dark",
    dark=True,
    window="#2a2c30",
    window_text="#e4e6ea",
    base="#1e1f22",
    alternate_base="#26282c",
    text="#e4e6ea",
    button="#35383d",
    button_text="#e4e6ea",
    highlight="#3b78d8",
    highlighted_text="#ffffff",
    tooltip_base="#3a3d43",
    tooltip_text="#eef0f3",
    placeholder_text="#8a9099",
    disabled_text="#71767e",
    link="#7fb1ff",
    mid="#4a4e55",
    icon="#d9dce1",
    icon_disabled="#62666d",
    canvas_background="#1a1b1e",
    band_fills=("#1f2125", "#25282d"),
    band_label="#8e95a1",
    server_fill="#263a52",
    switch_fill="#3a3152",
    node_border="#66707e",
    node_text="#f1f3f6",
    node_subtext="#b3bac5",
    badge_fill="#dfe3ea",
    badge_text="#1a1b1e",
    selection="#5ea2ff",
    problem="#ff5c5c",
    edge="#737a85",
    edge_label="#c9ced6",
    edge_label_background="#1a1b1e",
    overlay_background="#2a2c30",
    overlay_text="#e4e6ea",
    infiniband="#2cc3b6",
    ethernet="#f0a040",
    plot_background="#1e1f22",
    plot_foreground="#d5d9df",
    plot_axis="#8d949e",
    plot_legend_background="#2a2c30",
)

THEMES: dict[str, Theme] = {t.name: t for t in (LIGHT, DARK)}


def theme_named(name: object) -> Theme:
    """The theme called `name` (a stored setting, so anything unknown gives the default)."""
    return THEMES.get(str(name).strip().lower() if name is not None else "", THEMES[DEFAULT_THEME])


def color(hex_color: str, alpha: int = 255) -> QColor:
    """A QColor from a theme entry, with an optional alpha (0..255)."""
    c = QColor(hex_color)
    c.setAlpha(alpha)
    return c


def readable_on(fill: QColor) -> QColor:
    """Dark or light text, whichever reads better on `fill` (e.g. a utilization colour)."""
    luminance = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF()
    return QColor("#111418") if luminance > 0.55 else QColor("#f4f6f8")


def app_palette(theme: Theme) -> QPalette:
    """The Qt palette for `theme` (active and inactive roles, plus disabled text)."""
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: theme.window,
        QPalette.ColorRole.WindowText: theme.window_text,
        QPalette.ColorRole.Base: theme.base,
        QPalette.ColorRole.AlternateBase: theme.alternate_base,
        QPalette.ColorRole.Text: theme.text,
        QPalette.ColorRole.Button: theme.button,
        QPalette.ColorRole.ButtonText: theme.button_text,
        QPalette.ColorRole.Highlight: theme.highlight,
        QPalette.ColorRole.HighlightedText: theme.highlighted_text,
        QPalette.ColorRole.ToolTipBase: theme.tooltip_base,
        QPalette.ColorRole.ToolTipText: theme.tooltip_text,
        QPalette.ColorRole.PlaceholderText: theme.placeholder_text,
        QPalette.ColorRole.Link: theme.link,
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Mid: theme.mid,
        QPalette.ColorRole.Light: QColor(theme.button).lighter(130).name(),
        QPalette.ColorRole.Midlight: QColor(theme.button).lighter(115).name(),
        QPalette.ColorRole.Dark: QColor(theme.button).darker(160).name(),
        QPalette.ColorRole.Shadow: QColor(theme.button).darker(250).name(),
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    disabled = QPalette.ColorGroup.Disabled
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        pal.setColor(disabled, role, QColor(theme.disabled_text))
    pal.setColor(disabled, QPalette.ColorRole.Highlight, QColor(theme.mid))
    return pal


def apply_app_theme(app: QApplication, theme: Theme) -> None:
    """Fusion style and the theme's palette for the whole app; pyqtgraph's defaults too.

    Fusion draws every widget from the palette on every platform, so both themes look the
    same everywhere. The pyqtgraph defaults make plots created from now on start themed.
    """
    if app.style().name().lower() != "fusion":
        style = QStyleFactory.create("Fusion")
        if style is not None:
            app.setStyle(style)
    palette = app_palette(theme)
    app.setPalette(palette)
    QToolTip.setPalette(palette)
    pg.setConfigOptions(background=theme.plot_background, foreground=theme.plot_foreground)


def style_plot(plot: pg.PlotWidget, theme: Theme) -> None:
    """Background, axes (lines, ticks, grid), tick and axis labels, title and legend."""
    plot.setBackground(theme.plot_background)
    item = plot.getPlotItem()
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(theme.plot_axis)
        axis.setTextPen(theme.plot_foreground)
    title = item.titleLabel
    title.setAttr("color", theme.plot_foreground)
    title.setText(title.text)
    legend = item.legend
    if legend is not None:
        legend.setBrush(color(theme.plot_legend_background, 200))
        legend.setPen(color(theme.plot_axis, 120))
        legend.setLabelTextColor(theme.plot_foreground)
        for _sample, label in legend.items:
            label.setText(label.text)
    plot.setProperty(THEME_PROPERTY, theme.name)


def apply_theme_to(widget: QWidget, theme: Theme, force: bool = False) -> int:
    """Restyle every pyqtgraph plot in `widget` (itself included) not yet in `theme`.

    Plots already in `theme` are skipped unless `force`, so calling this after each report
    (to catch plots created since) costs only the search. Returns how many were restyled.
    """
    plots = list(widget.findChildren(pg.PlotWidget))
    if isinstance(widget, pg.PlotWidget):
        plots.append(widget)
    restyled = 0
    for plot in plots:
        if force or plot.property(THEME_PROPERTY) != theme.name:
            style_plot(plot, theme)
            restyled += 1
    return restyled


def add_theme_actions(
    parent: QWidget, menu: QMenu, on_choose: Callable[[str], None]
) -> dict[str, QAction]:
    """One exclusive checkable action per theme in `menu`; choosing one calls `on_choose`."""
    group = QActionGroup(parent)
    group.setExclusive(True)
    actions: dict[str, QAction] = {}
    for theme in THEMES.values():
        action = QAction(theme.title, parent)
        action.setObjectName(f"theme_{theme.name}")
        action.setCheckable(True)
        action.setData(theme.name)
        group.addAction(action)
        menu.addAction(action)
        action.triggered.connect(lambda _checked=False, n=theme.name: on_choose(n))
        actions[theme.name] = action
    return actions
