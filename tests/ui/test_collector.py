"""Garbage is collected on the GUI thread's timer, never on an engine thread (ui.collector)."""

from __future__ import annotations

import gc
import threading
import weakref

from ui.collector import GuiThreadCollector, install_gui_thread_collector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_the_app_collector_switches_automatic_collection_off(qapp):
    assert install_gui_thread_collector(qapp) is install_gui_thread_collector(qapp)
    assert not gc.isenabled()


def test_cycles_are_freed_by_the_timer_on_the_gui_thread(qtbot, monkeypatch):
    collector = GuiThreadCollector(interval_ms=10)
    monkeypatch.setattr(collector, "threshold", (0, 0, 0))  # due at once
    threads = []
    real_collect = gc.collect

    def collect(generation: int = 2) -> int:
        threads.append(threading.current_thread())
        return real_collect(generation)

    monkeypatch.setattr(gc, "collect", collect)
    node = _Node()
    ref = weakref.ref(node)
    del node
    qtbot.waitUntil(lambda: ref() is None, timeout=5000)
    assert threads and all(t is threading.main_thread() for t in threads)
    collector.timer.stop()
