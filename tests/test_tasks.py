"""tasks.py, the quick start's entry point: what a new user sees first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_an_unknown_command_is_named_as_unknown_and_exits_2():
    r = subprocess.run([sys.executable, str(ROOT / "tasks.py"), "frobnicate"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "unknown command 'frobnicate'" in r.stderr
    assert "run, test, bench" in r.stderr
    assert "python3 tasks.py run" in r.stdout          # and the usage follows


def test_no_command_shows_the_usage_without_calling_it_unknown():
    r = subprocess.run([sys.executable, str(ROOT / "tasks.py")], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and "unknown" not in r.stderr
    assert "python3 tasks.py test" in r.stdout


def test_fast_and_long_are_handed_to_pytest_as_its_own_options():
    sys.path.insert(0, str(ROOT))
    try:
        import tasks
    finally:
        sys.path.remove(str(ROOT))
    par = ["-n", str(tasks.workers()), "--dist", "loadgroup"]     # a test at a time
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert tasks.workers() == 2 * cores + 1     # two a core and one more: waiting tests fill them
    assert tasks.pytest_args(["--fast", "-k", "chope"]) == par + [
        "-m", "not slow and not browser", "-k", "chope"]
    assert tasks.pytest_args(["--long", "-q"]) == par + ["--long", "-q"]   # conftest's own
    for own in (["-n", "0"], ["-n0"], ["--pdb"], ["-p", "no:xdist"], ["--numprocesses=3"]):
        assert tasks.pytest_args(own) == own             # the caller's choice stands


def test_the_tests_temporary_folders_go_to_memory_one_folder_a_run(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT))
    try:
        import tasks
    finally:
        sys.path.remove(str(ROOT))
    monkeypatch.setattr(tasks, "MEMORY_TMP", tmp_path)
    one, two = tasks.test_tmp(["-q"]), tasks.test_tmp([])
    assert one.parent == two.parent == tmp_path and one != two      # two runs never share
    assert tasks.test_tmp(["--basetemp=/x"]) is None                 # the caller's choice stands
    assert tasks.test_tmp(["--basetemp", "/x"]) is None
    monkeypatch.setattr(tasks, "MEMORY_TMP", tmp_path / "none")
    assert tasks.test_tmp([]) is None                                # no such folder: pytest's own


def test_long_plays_the_long_count_of_random_games_and_a_count_given_wins():
    from tests.kit.conformance import random_play_of

    class Config:
        def __init__(self, **options):
            self.options = {"random_games": None, "long": False, "random_seed": 8, **options}

        def getoption(self, name):
            return self.options[name]

    assert random_play_of(Config()) == (10, 8)
    assert random_play_of(Config(long=True)) == (300, 8)
    assert random_play_of(Config(long=True, random_games=3, random_seed=5)) == (3, 5)


def test_bench_taps_skips_with_a_message_without_chromium():
    """`python -m bench taps` on a machine with no chromium: no figures, and why."""
    env = dict(os.environ, COMPANION_CHROMIUM="/nonexistent/chromium")
    r = subprocess.run([sys.executable, "-m", "bench", "taps"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr
    assert "bench_taps skipped: no chromium at /nonexistent/chromium" in r.stderr
