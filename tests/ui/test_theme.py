"""Light and dark theme through View > Theme, device and toolbar icons, themed canvas nodes."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QToolBar

from engine.catalog.devices import DEVICE_KINDS
from engine.presets.scenarios import load_preset
from ui.canvas.layout import tier_y
from ui.icons import ACTION_ICONS, action_icon, device_icon, device_pixmap
from ui.main_window import MainWindow
from ui.settings import app_settings
from ui.theme import DARK, LIGHT, THEME_SETTING, apply_app_theme, apply_theme_to


@pytest.fixture(autouse=True)
def light_theme_after(temp_settings):
    """Settings in a temporary folder (tests/conftest.py); leave the app in the light theme."""
    yield temp_settings
    app = QApplication.instance()
    if app is not None:
        apply_app_theme(app, LIGHT)


def open_window(qtbot) -> MainWindow:
    w = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    w.canvas.fit()
    return w


def menu_action(window: MainWindow, *path: str):
    """The action reached through the menu bar by `path` of texts (``&`` ignored)."""
    actions = window.menuBar().actions()
    found = None
    for i, text in enumerate(path):
        found = next(a for a in actions if a.text().replace("&", "") == text)
        if i < len(path) - 1:
            menu = found.menu()
            assert isinstance(menu, QMenu), text
            actions = menu.actions()
    return found


def choose_theme(qtbot, window: MainWindow, title: str) -> None:
    action = menu_action(window, "View", "Theme", title)
    assert action.isCheckable()
    action.trigger()
    qtbot.wait(20)


def lightness(c: QColor) -> int:
    return c.lightness()


def canvas_pixel(window: MainWindow, scene_point: QPointF) -> QColor:
    view = window.canvas
    image = view.viewport().grab().toImage()
    p = view.mapFromScene(scene_point)
    return image.pixelColor(p.x(), p.y())


def plot_background_pixel(plot: pg.PlotWidget) -> QColor:
    image = plot.grab().toImage()
    return image.pixelColor(3, 3)


def first_plot(window: MainWindow) -> pg.PlotWidget:
    plots = window.findChildren(pg.PlotWidget)
    assert plots, "the main window has no plots"
    return plots[0]


def empty_scene_point(window: MainWindow) -> QPointF:
    """A scene point in the servers band, well left of every node."""
    nodes = window.canvas.nodes.values()
    left = min(n.sceneBoundingRect().left() for n in nodes)
    return QPointF(left - 60, tier_y("server"))


def test_view_theme_switches_palette_canvas_and_plots_and_persists(qtbot, temp_settings):
    win = open_window(qtbot)
    app = QApplication.instance()
    assert win.theme_actions["light"].isChecked()
    light_window = app.palette().color(QPalette.ColorRole.Window)
    light_canvas = canvas_pixel(win, empty_scene_point(win))
    plot = first_plot(win)
    light_plot = plot_background_pixel(plot)

    choose_theme(qtbot, win, "Dark")

    assert win.theme_actions["dark"].isChecked()
    assert not win.theme_actions["light"].isChecked()
    dark_window = app.palette().color(QPalette.ColorRole.Window)
    assert lightness(dark_window) < 100 < lightness(light_window)
    assert win.inspector.palette().color(QPalette.ColorRole.Window) == dark_window
    assert win.canvas.backgroundBrush().color() == QColor(DARK.canvas_background)
    dark_canvas = canvas_pixel(win, empty_scene_point(win))
    assert lightness(dark_canvas) < lightness(light_canvas) - 100
    dark_plot = plot_background_pixel(plot)
    assert lightness(dark_plot) < lightness(light_plot) - 100
    for other in win.findChildren(pg.PlotWidget):
        assert other.backgroundBrush().color() == QColor(DARK.plot_background)
        axis = other.getPlotItem().getAxis("bottom")
        assert axis.textPen().color() == QColor(DARK.plot_foreground)

    win.close()
    settings = app_settings()
    settings.sync()
    assert settings.value(THEME_SETTING) == "dark"

    apply_app_theme(app, LIGHT)  # the next window must apply the saved theme itself
    again = open_window(qtbot)
    assert again.theme_actions["dark"].isChecked()
    assert app.palette().color(QPalette.ColorRole.Window) == dark_window
    assert again.canvas.theme is DARK
    choose_theme(qtbot, again, "Light")
    assert app.palette().color(QPalette.ColorRole.Window) == light_window
    again.close()
    assert app_settings().value(THEME_SETTING) == "light"


def test_an_unknown_stored_theme_opens_light(qtbot, temp_settings):
    settings = app_settings()
    settings.setValue(THEME_SETTING, "purple")
    settings.sync()
    win = open_window(qtbot)
    assert win.theme is LIGHT and win.theme_actions["light"].isChecked()


def test_tier_bands_alternate_behind_the_nodes(qtbot):
    win = open_window(qtbot)
    x = empty_scene_point(win).x()
    servers = canvas_pixel(win, QPointF(x, tier_y("server")))
    leaf = canvas_pixel(win, QPointF(x, tier_y("leaf")))
    assert servers != leaf
    assert {servers.name(), leaf.name()} == set(LIGHT.band_fills)


def test_every_catalog_device_kind_has_an_icon(catalog):
    kinds = {d.kind for d in catalog.devices.values()}
    assert kinds == set(DEVICE_KINDS)
    for theme in (LIGHT, DARK):
        for device in catalog.devices.values():
            icon = device_icon(device.kind, "", device.technology, theme)
            assert not icon.isNull(), device.id
            image = icon.pixmap(24, 24).toImage()
            assert drawn_pixels(image) > 20, device.id


def drawn_pixels(image: QImage, near: QColor | None = None) -> int:
    """Pixels that are not transparent (or, with `near`, whose colour is close to it)."""
    count = 0
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if c.alpha() < 128:
                continue
            if (
                near is None
                or max(
                    abs(c.red() - near.red()),
                    abs(c.green() - near.green()),
                    abs(c.blue() - near.blue()),
                )
                < 40
            ):
                count += 1
    return count


def test_switch_icons_mark_the_tier_and_badge_the_technology():
    images = {
        tier: device_pixmap("switch", tier, None, LIGHT, 48).toImage()
        for tier in ("leaf", "spine", "core")
    }
    assert images["leaf"] != images["spine"] != images["core"] != images["leaf"]
    ib = device_pixmap("switch", "leaf", "infiniband", LIGHT, 48).toImage()
    eth = device_pixmap("switch", "leaf", "ethernet", LIGHT, 48).toImage()
    assert drawn_pixels(ib, QColor(LIGHT.infiniband)) > 50
    assert drawn_pixels(eth, QColor(LIGHT.ethernet)) > 50
    assert drawn_pixels(images["leaf"], QColor(LIGHT.infiniband)) == 0


def node_icon_image(win: MainWindow, group_id: str) -> tuple[QImage, QColor]:
    """The canvas scene rendered over a node's icon area, and the node's fill there."""
    node = win.canvas.nodes[group_id]
    source = node.mapRectToScene(node.icon_rect())
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    win.canvas.scene().render(painter, QRectF(0, 0, 64, 64), source)
    painter.end()
    return image, image.pixelColor(0, 0)


def test_canvas_nodes_draw_their_icon_in_the_theme_text_colour(qtbot):
    win = open_window(qtbot)
    win.canvas.show_utilization(None)
    image, _fill = node_icon_image(win, "spine")
    light_strokes = drawn_pixels(image, QColor(LIGHT.node_text))
    assert light_strokes > 100
    choose_theme(qtbot, win, "Dark")
    image, _fill = node_icon_image(win, "spine")
    assert drawn_pixels(image, QColor(DARK.node_text)) > 100
    assert drawn_pixels(image, QColor(LIGHT.node_text)) < light_strokes / 10


def test_toolbar_and_palette_icons_follow_the_theme(qtbot):
    win = open_window(qtbot)
    toolbar = win.findChild(QToolBar, "mainToolBar")
    actions = [a for a in toolbar.actions() if not a.isSeparator()]
    assert len(actions) >= 6
    light = {}
    for action in actions:
        assert not action.icon().isNull(), action.text()
        light[action.text()] = action.icon().pixmap(24, 24).toImage()
        assert drawn_pixels(light[action.text()], QColor(LIGHT.icon)) > 10, action.text()
    palette_item = win.palette.items["qm9700"]
    palette_light = palette_item.icon(0).pixmap(24, 24).toImage()
    assert drawn_pixels(palette_light) > 20
    choose_theme(qtbot, win, "Dark")
    for action in actions:
        image = action.icon().pixmap(24, 24).toImage()
        assert drawn_pixels(image, QColor(DARK.icon)) > 10, action.text()
        assert image != light[action.text()]
    assert palette_item.icon(0).pixmap(24, 24).toImage() != palette_light


def test_action_icons_exist_and_unknown_names_are_refused():
    for name in ACTION_ICONS:
        assert not action_icon(name, LIGHT).isNull(), name
    with pytest.raises(ValueError, match="no action icon 'nope'"):
        action_icon("nope", LIGHT)


def test_plots_added_later_pick_up_the_theme(qtbot):
    win = open_window(qtbot)
    choose_theme(qtbot, win, "Dark")
    late = pg.PlotWidget()
    late.setBackground("w")
    win.results.tabs.addTab(late, "Later")
    assert apply_theme_to(win, win.theme) == 1
    assert late.backgroundBrush().color() == QColor(DARK.plot_background)
    assert apply_theme_to(win, win.theme) == 0


def test_nodes_badge_switches_by_model_and_servers_by_the_fabric(qtbot):
    win = MainWindow(load_preset("hgx-h100-roce-ecmp-1k"), evaluate_on_start=False)
    qtbot.addWidget(win)
    assert win.document.scenario.fabric.technology == "roce"
    nodes = win.canvas.nodes
    assert {nodes[g].technology for g in nodes if nodes[g].kind == "switch"} == {"ethernet"}
    assert nodes["servers"].technology == "roce"
    win.canvas.show_utilization(None)
    image, _fill = node_icon_image(win, "servers")
    assert drawn_pixels(image, QColor(LIGHT.ethernet)) > 50
    assert drawn_pixels(image, QColor(LIGHT.infiniband)) == 0
