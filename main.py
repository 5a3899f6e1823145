"""FabricLab entry point: the desktop app by default, headless sub-commands otherwise.

``python main.py`` opens the window; ``python main.py presets|validate|evaluate ...`` runs
headless (see ``python main.py --help``); ``--version`` prints the version and
``--self-test [--self-test-png PATH]`` checks an installation end to end (engine, library,
window) and exits 0 only when everything works. The bundled app runs this same file.
"""

from __future__ import annotations

import contextlib
import sys


def kernel_cache_note() -> str:
    """Choose where numba keeps the compiled kernels (importing `engine` does it, before any
    kernel exists: `engine.runtime.numba_cache`) and return what the user should hear about
    the choice, or an empty string."""
    import engine

    return engine.KERNEL_CACHE.note


def main(argv: list[str] | None = None) -> int:
    """Dispatch to --version, --self-test, the headless CLI (arguments) or the GUI (none).

    `argv` defaults to the process arguments; the ``fabriclab`` console script calls this.
    """
    argv = sys.argv[1:] if argv is None else argv
    note = kernel_cache_note()
    if note and argv[:1] != ["--version"]:
        # a closed or full stderr: the note is not worth failing for
        with contextlib.suppress(OSError):
            print(note, file=sys.stderr)
    if argv[:1] == ["--version"]:
        from engine import __version__

        print(f"FabricLab {__version__}")
        return 0
    if "--self-test" in argv:
        from ui.self_test import run_self_test

        return run_self_test(argv)
    if argv:
        from cli.main import main as cli_main

        return cli_main(argv)
    from ui.app import run_app

    return run_app()


if __name__ == "__main__":
    if getattr(sys, "frozen", False):
        import multiprocessing

        multiprocessing.freeze_support()  # worker processes of a sweep start this same binary
    sys.exit(main(sys.argv[1:]))
