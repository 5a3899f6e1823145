"""FabricLab entry point: the desktop app by default, headless sub-commands otherwise.

``python main.py`` opens the window; ``python main.py presets|validate|evaluate ...`` runs
headless (see ``python main.py --help``); ``--version`` prints the version and
``--self-test [--self-test-png PATH]`` checks an installation end to end (engine, library,
window) and exits 0 only when everything works. The bundled app runs this same file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path


def numba_cache_dir(version: str, environ: MutableMapping[str, str], home: Path) -> Path:
    """Where a bundled app keeps numba's compiled kernels: the user's cache, per version.

    ``$XDG_CACHE_HOME/fabriclab/numba-<version>`` (``~/.cache`` when XDG_CACHE_HOME is unset
    or not absolute, as the XDG spec asks), so a new version never loads an older one's code.
    """
    base = environ.get("XDG_CACHE_HOME", "")
    cache_home = Path(base) if base and os.path.isabs(base) else home / ".cache"
    return cache_home / "fabriclab" / f"numba-{version}"


def configure_numba_cache(
    environ: MutableMapping[str, str] | None = None, frozen: bool | None = None
) -> Path | None:
    """Point numba's JIT cache at the user's cache dir when running as a bundled app.

    Must run before numba is imported (numba reads NUMBA_CACHE_DIR once). A bundle's
    install folder may be read-only and holds no ``__pycache__`` next to its sources, so
    without this every start would compile again. From a checkout numba keeps its default
    (``__pycache__`` beside each module) and nothing is set. An explicit NUMBA_CACHE_DIR is
    respected. Returns the directory set, or None when nothing was set.
    """
    environ = os.environ if environ is None else environ
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if not frozen or environ.get("NUMBA_CACHE_DIR"):
        return None
    from engine import __version__

    path = numba_cache_dir(__version__, environ, Path.home())
    environ["NUMBA_CACHE_DIR"] = str(path)
    return path


def main(argv: list[str] | None = None) -> int:
    """Dispatch to --version, --self-test, the headless CLI (arguments) or the GUI (none).

    `argv` defaults to the process arguments; the ``fabriclab`` console script calls this.
    """
    argv = sys.argv[1:] if argv is None else argv
    configure_numba_cache()
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
