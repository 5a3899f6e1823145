"""FabricLab entry point: the desktop app by default, headless sub-commands otherwise.

``python main.py`` opens the window; ``python main.py presets|validate|evaluate ...`` runs
headless (see ``python main.py --help``).
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Dispatch to the GUI (no arguments) or to the headless CLI."""
    if argv:
        from engine.cli import main as cli_main

        return cli_main(argv)
    from ui.app import run_app

    return run_app()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
