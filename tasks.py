#!/usr/bin/env python3
"""Set up and run Tabletop Companion from a bare machine with only Python.

    python3 tasks.py run      # the companion: mock buzzers and SQLite when no Pi
    python3 tasks.py test     # every test (installs chromium for the browser tests)
    python3 tasks.py test --fast   # no browser, no slow tests: the edit-test loop
    python3 tasks.py test --long   # every test, 300 random games of each kind
    python3 tasks.py bench    # the benchmark figures, one "name value unit" a line
    python3 tasks.py i18n extract | add LANG | compile   # the languages (docs/web.md)

Each command first makes the virtual environment ``.venv`` and installs the
project into it (again only when pyproject.toml changed). Extra arguments go to
the command: ``python3 tasks.py test -k chope``, ``python3 tasks.py run --port 9000``.
Uses only the standard library, so it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
CHROMIUM = Path("/usr/bin/chromium")
#: Debian's headless build of the same chromium: what most browser tests drive
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
MOSQUITTO = Path("/usr/sbin/mosquitto")


def say(msg: str) -> None:
    print(f"[tasks] {msg}", flush=True)


def on_a_pi() -> bool:
    try:
        return "raspberry pi" in Path("/proc/device-tree/model").read_text().lower()
    except OSError:
        return False


def ensure_venv(extras: str) -> None:
    """Create .venv and install the project with ``extras`` if needed."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed (this is {platform.python_version()})")
    if not PY.exists():
        say(f"creating {VENV.relative_to(ROOT)}")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    stamp = VENV / f".installed-{extras.replace(',', '-')}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    if on_a_pi():
        extras = f"{extras},pi" if extras else "pi"
    target = f".[{extras}]" if extras else "."
    say(f"installing {target} into .venv")
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["--upgrade", "pip"], check=True, cwd=ROOT)
    subprocess.run(pip + ["-e", target], check=True, cwd=ROOT)
    stamp.write_text(digest)


def ensure_debian_packages(binaries: list[Path], packages: list[str], what: str) -> None:
    """Install Debian ``packages`` with apt when one of ``binaries`` is
    missing; where that cannot be done (no apt, not root and no sudo), say
    which ``what`` (the tests that need it) will be skipped."""
    if all(b.exists() for b in binaries):
        return
    apt = shutil.which("apt-get")
    if apt is None:
        say(f"no apt-get: {what} will be skipped (install {' '.join(packages)} by hand)")
        return
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if sudo is None:
        say(f"not root and no sudo: {what} will be skipped")
        return
    say(f"installing Debian's {' '.join(packages)} for the {what}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + [apt, "-q", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(sudo + [apt, "-y", "-q", "install", *packages], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def ensure_chromium() -> None:
    """Debian's chromium for the Playwright tests (Playwright's own browser
    download is not used: the Pi and CI have no internet beyond packages):
    its headless shell for most, the whole browser for what only it has
    (tests/kit/browser.py)."""
    ensure_debian_packages([CHROMIUM, HEADLESS_SHELL],
                           ["chromium", "chromium-headless-shell", "fonts-dejavu-core"],
                           "browser tests")


def ensure_mosquitto() -> None:
    """Debian's Mosquitto broker for the league tests and benchmark (the
    fixtures start their own broker on a free port; the system service is
    not used)."""
    ensure_debian_packages([MOSQUITTO], ["mosquitto"], "league tests")


#: ``test --fast``: the tests marked neither slow nor browser
FAST = ["-m", "not slow and not browser"]


def workers() -> int:
    """How many pytest-xdist workers ``test`` starts: two a core and one
    more. Many tests mostly wait (a broker restarting, a buzzer box's clock
    drifting over seconds, a bridge cut for 6 s, a countdown, a kill -9 at
    a random moment) and leave their core idle; the extra workers fill it.
    On this two-core machine, runs taken in turn with the browser tests on
    chromium's headless shell: the whole suite took 280 s on three workers,
    276 s on four and 271 s on five (the cores 97 % busy through it);
    ``--fast`` 64, 58 and 56 s."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        cores = os.cpu_count() or 1
    return 2 * cores + 1


#: the tests on :func:`workers` processes (pytest-xdist): a test at a time goes
#: to whichever worker is free, the longest first (tests/conftest.py orders
#: them), so no long test starts last and holds the end of the run; each worker
#: starts one chromium for all its browser tests (a module may still keep its
#: tests on one worker with an ``xdist_group`` mark)
PARALLEL = ["-n", str(workers()), "--dist", "loadgroup"]


def pytest_args(args: list[str]) -> list[str]:
    """``test``'s arguments for pytest: ``--fast`` becomes :data:`FAST`;
    ``--long`` (the random games' long count) is tests/conftest.py's own;
    :data:`PARALLEL` unless the caller chose (``-n 0``: one process) or
    debugs (``--pdb``)."""
    out = [a for arg in args for a in (FAST if arg == "--fast" else [arg])]
    chosen = any(a in ("-n", "--numprocesses", "--pdb", "no:xdist")
                 or (a.startswith("-n") and a[2:].isdigit())
                 or a.startswith("--numprocesses=") for a in out)
    return out if chosen else PARALLEL + out


#: where the tests' temporary folders go when the caller did not choose
#: (``--basetemp``): memory, not disk. Every table a test opens keeps its
#: SQLite store durable (``synchronous=FULL``: a sync to disk per logged
#: event, as on game night); on this machine's disk that made a 1,137-event
#: game take 17 s to log, 9 s in memory. What is measured is the logic, not
#: the disk: the store's own durability tests kill a writer, not the power.
MEMORY_TMP = Path("/dev/shm")


def test_tmp(args: list[str]):
    """A fresh folder in :data:`MEMORY_TMP` for this run's ``--basetemp``
    (each run its own: pytest empties its basetemp first), or None when the
    caller chose one or the machine has no such memory folder."""
    if any(a == "--basetemp" or a.startswith("--basetemp=") for a in args):
        return None
    if not (MEMORY_TMP.is_dir() and os.access(MEMORY_TMP, os.W_OK | os.X_OK)):
        return None
    return Path(tempfile.mkdtemp(prefix="companion-tests-", dir=MEMORY_TMP))


#: where the tests' compiled bytecode is kept between runs: beside the
#: packages in the virtual environment, never in the tree
BYTECODE = VENV / "pycache"


def test_env() -> dict:
    """The tests' environment: bytecode cached in :data:`BYTECODE` even
    where the shell says not to write any (``PYTHONDONTWRITEBYTECODE``, as
    on this machine and CI). Without it every test process compiled the
    project and pytest rewrote every test module's asserts again: collecting
    took 7.6 s of CPU a process here (the workers, and every ``companion``
    process a test starts, each compiled anew), 2.4 s from the cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
    return env


def cmd_test(args: list[str]) -> int:
    ensure_venv("test")
    if "--fast" not in args:
        ensure_chromium()
    ensure_mosquitto()
    tmp = test_tmp(args)
    extra = [f"--basetemp={tmp / 'pytest'}"] if tmp is not None else []
    try:
        return subprocess.call([str(PY), "-m", "pytest", *extra, *pytest_args(args)], cwd=ROOT,
                               env=test_env())
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def cmd_run(args: list[str]) -> int:
    ensure_venv("")
    return subprocess.call([str(PY), "-m", "companion", "serve", *args], cwd=ROOT)


def cmd_bench(args: list[str]) -> int:
    ensure_venv("test")
    ensure_mosquitto()
    return subprocess.call([str(PY), "-m", "bench", *args], cwd=ROOT)


TRANSLATIONS = ROOT / "companion" / "translations"


def i18n_commands(args: list[str]) -> list[list[str]]:
    """The pybabel lines behind ``tasks.py i18n extract|add LANG|compile``."""
    pybabel = str(BIN / "pybabel")
    cfg, pot, out = (str(TRANSLATIONS / "babel.cfg"), str(TRANSLATIONS / "messages.pot"),
                     str(TRANSLATIONS))
    what = args[0] if args else ""
    if what == "extract":            # the words of the code into messages.pot and every .po
        return [[pybabel, "extract", "-F", cfg, "--no-location", "--sort-output",
                 "--omit-header", "-o", pot, "."],
                [pybabel, "update", "-i", pot, "-d", out, "--no-fuzzy-matching",
                 "--ignore-obsolete", "-w", "100"]]     # the width the catalogs are kept at
    if what == "add" and len(args) == 2:      # a new language's .po, to translate
        return [[pybabel, "init", "-i", pot, "-d", out, "-l", args[1]]]
    if what == "compile":            # every .po into the .mo the server reads
        return [[pybabel, "compile", "-d", out, "--statistics"]]
    raise SystemExit("tasks.py i18n extract | add LANG | compile (docs/web.md, Languages)")


def cmd_i18n(args: list[str]) -> int:
    ensure_venv("")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for line in i18n_commands(args):
        subprocess.run(line, check=True, cwd=ROOT, env=env)
    return 0


COMMANDS = {"run": cmd_run, "test": cmd_test, "bench": cmd_bench, "i18n": cmd_i18n}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        if argv:
            print(f"tasks.py: unknown command {argv[0]!r}; the commands are "
                  f"{', '.join(COMMANDS)}", file=sys.stderr)
        print(__doc__)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except subprocess.CalledProcessError as exc:
        say(f"failed: {' '.join(map(str, exc.cmd))} (exit {exc.returncode})")
        return exc.returncode or 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
