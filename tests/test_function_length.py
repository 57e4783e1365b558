"""No function anywhere over 60 lines (issue 19): a function that long does
more than one job, and its jobs are better named apart.

Measured as ``ast`` does: from the ``def`` line (decorators not counted) to
the function's last line, its docstring and nested functions included. Every
``.py`` file of the companion, the benchmarks, the hardware tools, the Pico's
firmware and ``tasks.py`` is read.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("companion", "bench", "hardware", "firmware")
FILES = ("tasks.py",)
LIMIT = 60


def _sources() -> list[Path]:
    paths = [ROOT / f for f in FILES]
    for tree in TREES:
        paths.extend(sorted((ROOT / tree).rglob("*.py")))
    return [p for p in paths if p.is_file()]


def _too_long(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(ROOT).as_posix()
    return [f"{rel}:{node.lineno} {node.name} is {node.end_lineno - node.lineno + 1} lines"
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LIMIT]


def test_the_walk_reads_every_tree():
    read = {p.relative_to(ROOT).parts[0] for p in _sources()}
    assert {"companion", "bench", "tasks.py"} <= read
    assert len(_sources()) > 50


def test_no_function_is_over_60_lines():
    too_long = [line for path in _sources() for line in _too_long(path)]
    assert not too_long, (f"functions over {LIMIT} lines (split them, one job each):\n  "
                          + "\n  ".join(too_long))
