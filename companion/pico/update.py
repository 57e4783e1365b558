"""``companion pico``: flash the buzzer box or run its self-test, even while the
table runs.

Each job names the box's port (:func:`~companion.pico.transport.named_port`:
``--port``, ``$COMPANION_PICO_PORT``, the udev name ``/dev/buzzerbox``, or the
one Pico plugged in; never mpremote's "auto", which skips a port it cannot
open and may take another MicroPython board), borrows it from the table that
holds it (:func:`~companion.pico.lease.borrow`: the table shows "away for an
update" and takes the box back after), runs, and gives it back, whatever the
job's outcome::

    companion pico flash                  # mpremote connect /dev/buzzerbox cp firmware/*.py : + reset
    companion pico selftest --both        # python -m hardware.selftest --real --pico --both
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

from .lease import borrow

#: the source tree this companion runs from (firmware/ and hardware/ are there)
SOURCE_TREE = Path(__file__).resolve().parents[2]


def firmware_files(firmware_dir: str | Path | None = None) -> list[str]:
    """The files to copy to the box: ``main.py`` and the ``box*.py``
    modules of ``firmware_dir`` (default: this source tree's ``firmware/``;
    never ``firmware/sim/``, the tests' stand-ins)."""
    d = Path(firmware_dir) if firmware_dir else SOURCE_TREE / "firmware"
    files = sorted(str(p) for p in d.glob("*.py"))
    if not any(Path(f).name == "main.py" for f in files):
        raise ValueError(f"no firmware in {d} (no main.py): run from the companion's source "
                         f"tree or name the firmware directory (--firmware)")
    return files


def mpremote(explicit: str | None = None) -> list[str]:
    """The mpremote command: ``explicit``, else ``mpremote`` on PATH, else
    next to this Python, else ``python -m mpremote`` if installed."""
    if explicit:
        return [explicit]
    found = shutil.which("mpremote") or shutil.which("mpremote", path=str(Path(sys.executable).parent))
    if found:
        return [found]
    try:
        import mpremote as _mp  # noqa: F401
    except ImportError:
        raise ValueError("mpremote is not installed: pip install mpremote") from None
    return [sys.executable, "-m", "mpremote"]


def flash_argv(port: str, files: Sequence[str], program: Sequence[str]) -> list[str]:
    """mpremote on the named port: copy ``files`` to the box and reset it."""
    return [*program, "connect", port, "cp", *files, ":", "+", "reset"]


def selftest_argv(port: str, both: bool = False, fairness: bool = False,
                  pulses: int | None = None) -> list[str]:
    """The real self-test on the named port (``hardware/selftest.py``, which
    borrows the port itself)."""
    argv = [sys.executable, "-m", "hardware.selftest", "--real", "--port", port]
    if fairness:
        return argv + ["--fairness"]
    argv += ["--pico"] + (["--both"] if both else [])
    return argv + ([] if pulses is None else ["--pulses", str(pulses)])


def run_borrowed(port: str, what: str, argv: Sequence[str],
                 say: Callable[[str], None] = print, cwd: str | Path | None = None) -> int:
    """Borrow ``port`` from the table holding it, run ``argv``, give it
    back; the program's exit status."""
    with borrow(port, what) as lease:
        if lease.holder is not None:
            say(f"the table let go of the buzzer box ({lease.holder}); it shows the box as "
                f"away for an update")
        say("running: " + " ".join(argv))
        rc = subprocess.call(list(argv), cwd=cwd)
    if lease.holder is not None:
        say("the port is given back: the table takes the box again")
    return rc


def run_selftest(port: str, say: Callable[[str], None] = print, **options) -> int:
    """``python -m hardware.selftest --real`` on the named port, from the
    source tree (hardware/ is not installed with the package)."""
    if not (SOURCE_TREE / "hardware" / "selftest.py").exists():
        raise ValueError(f"no hardware/selftest.py in {SOURCE_TREE}: run from the "
                         f"companion's source tree")
    say("running: " + " ".join(selftest_argv(port, **options)))
    return subprocess.call(selftest_argv(port, **options), cwd=SOURCE_TREE)


__all__ = ["SOURCE_TREE", "firmware_files", "flash_argv", "mpremote", "run_borrowed",
           "run_selftest", "selftest_argv"]
