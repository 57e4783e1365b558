"""The layers drawn in docs/architecture.md hold in the code: import-linter
checks the contracts in pyproject.toml ([tool.importlinter]) against the
real import graph, so the drawing cannot drift from the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_layer_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 kept, 0 broken" in run.stdout


def test_a_core_module_importing_the_store_breaks_the_contract(tmp_path):
    """The contract can fail: a copy of the package whose arming imports the
    store is refused."""
    import shutil

    pkg = tmp_path / "companion"
    shutil.copytree(ROOT / "companion", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    arming = pkg / "arming.py"
    arming.write_text(arming.read_text().replace(
        "from .edges import Edge", "from .edges import Edge\nfrom . import store  # noqa", 1))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint), "--config", str(tmp_path / "pyproject.toml")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode != 0
    assert "companion.arming is not allowed to import companion.store" in run.stdout


def test_the_session_stays_thin():
    """Issue 19: the table session commits, persists and publishes; its races
    live on the desk (companion/desk.py, companion/tableraces.py)."""
    lines = (ROOT / "companion" / "session.py").read_text().count("\n")
    assert lines < 600, f"companion/session.py has {lines} lines"
