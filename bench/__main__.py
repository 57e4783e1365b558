"""Print every benchmark figure as ``name value unit``, one per line.

    python -m bench            # all
    python -m bench referee    # only bench/bench_referee.py
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

from companion.heap import keep_freed_memory

#: every bench/bench_<name>.py, in a fixed order (a new benchmark is one file)
MODULES = sorted(p.stem[len("bench_"):] for p in Path(__file__).parent.glob("bench_*.py"))


def main(argv: list[str]) -> int:
    names = argv or MODULES
    keep_freed_memory()     # as `companion serve` does (companion/heap.py)
    failed = 0
    for name in names:
        try:
            mod = importlib.import_module(f"bench.bench_{name}")
            for metric, value, unit in mod.run():
                print(f"{metric} {value:.6g} {unit}", flush=True)
        except Exception:  # a broken benchmark must not hide the others
            failed += 1
            print(f"# bench_{name} failed:", file=sys.stderr)
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
