"""App timings, run offscreen: start to the default scenario evaluated and shown, and a count
edit on the 1,024-GPU preset to updated plots. Prints one JSON object.

``--start T0`` (used by benchmarks/run.py) measures from T0, the parent's clock just before
it started this process, so interpreter and import time count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--start", type=float, help="the parent's time.time() before starting this process"
    )
    args = parser.parse_args()

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    window = MainWindow()
    window.show()

    def wait_for_result(timeout_s: float = 60.0) -> None:
        loop = QEventLoop()
        window.worker.finished.connect(loop.quit)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        loop.exec()
        window.worker.finished.disconnect(loop.quit)
        app.processEvents()  # the plots and canvas redraw on the finished signal

    wait_for_result()
    result = {}
    if args.start is not None:
        result["app_start_s"] = time.time() - args.start
    t0 = time.perf_counter()
    window.document.set_field("groups.servers.count", "96")
    window.evaluate_now()
    wait_for_result()
    result["edit_to_plot_1k_s"] = time.perf_counter() - t0
    window.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
