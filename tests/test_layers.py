"""The layers drawn in docs/architecture.md hold in the code: import-linter
checks the contracts in pyproject.toml ([tool.importlinter]) against the
real import graph, so the drawing cannot drift from the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_layer_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "7 kept, 0 broken" in run.stdout


def lint_a_copy(tmp_path, module: str, line: str):
    """import-linter over a copy of the package where ``module``'s file gains
    ``line`` after its ``from __future__`` import."""
    import shutil

    pkg = tmp_path / "companion"
    shutil.copytree(ROOT / "companion", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    path = pkg.joinpath(*module.split(".")[1:]).with_suffix(".py")
    path.write_text(path.read_text().replace(
        "from __future__ import annotations\n",
        f"from __future__ import annotations\n{line}  # noqa\n", 1))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--config", str(tmp_path / "pyproject.toml")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("module, line, refused", [
    # the core imports no store (the forbidden contract), and the race core
    # sits under the record (the packages' layers)
    ("companion.races.arming", "from ..record import store",
     ("companion.races is not allowed to import companion.record.store",
      "companion.races is not allowed to import companion.record:")),
    # ...it reads no clock: time comes in as integer ns (was a test reading
    # arming's text); and inside the package the referee sits under the desk
    ("companion.races.referee", "import time; from . import desk",
     ("companion.races is not allowed to import time",
      "companion.races.referee is not allowed to import companion.races.desk")),
    # the connection caps sit under the web app (was a test reading limits.py's text)
    ("companion.web.limits", "from . import auth",
     ("companion.web.limits is not allowed to import companion.web.auth",)),
])
def test_a_module_breaking_a_contract_is_refused(tmp_path, module, line, refused):
    """Each kind of contract can fail: a copy of the package with an import
    too many is refused."""
    run = lint_a_copy(tmp_path, module, line)
    assert run.returncode != 0
    for message in refused:
        assert message in run.stdout, run.stdout[-3000:]


#: SLF001 findings allowed in companion/: none (docs/architecture.md, "No
#: private members across modules"); the test fails on any finding, and on
#: an entry here that no longer occurs.
KNOWN_PRIVATE_ACCESS: dict[tuple[str, str], int] = {}


def test_no_module_reaches_into_another_ones_private_members():
    """``ruff check --select SLF001 companion/``: the session, its races, the
    game's log, the outbox and the views call each other's public members
    only (the races once touched six of the session's private ones)."""
    import json
    from collections import Counter

    ruff = Path(sys.executable).with_name("ruff")
    run = subprocess.run([str(ruff), "check", "--select", "SLF001", "--output-format",
                          "json", "--no-cache", "companion/"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    found = Counter()
    for f in json.loads(run.stdout):
        member = f["message"].rsplit("`", 2)[-2]
        found[(Path(f["filename"]).relative_to(ROOT).as_posix(), member)] += 1
    new = {k: n for k, n in found.items() if n > KNOWN_PRIVATE_ACCESS.get(k, 0)}
    assert not new, f"private members reached from outside: {new}"
    gone = {k: n for k, n in KNOWN_PRIVATE_ACCESS.items() if found.get(k, 0) < n}
    assert not gone, f"fixed: take these out of KNOWN_PRIVATE_ACCESS: {gone}"
