"""tasks.py, the quick start's entry point: what a new user sees first."""

from __future__ import annotations

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
