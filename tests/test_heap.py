"""The judge's grids reuse the heap (companion/heap.py): a judgement made
again faults no new pages in, where glibc's default gave its blocks back to
the kernel and faulted them in again every time (a third of a simulated
game's CPU time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: a fresh process (the heap as its entry leaves it), a Table with three
#: slams judged 3 times to warm up, then 20 times more: page faults a judgement
JUDGE_AGAIN = """
import resource, sys
from companion.heap import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
from companion.races.attribution import FIRST, MS, S, Card, judge
from companion.races.edges import Edge
card = Card(FIRST, ("bo", "cy", "dee"), log_ns=2 * S)
slams = [Edge("bo", True, S + 300 * MS), Edge("cy", True, S + 500 * MS),
         Edge("dee", True, 2 * S + 900 * MS)]
for i in range(3):
    judge(card, slams, 5 * S + i)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(20):
    assert judge(card, slams, 5 * S + 10 + i).best.player == "bo"
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
"""


def faults_per_judgement(heap: str) -> float:
    out = subprocess.run([sys.executable, "-c", JUDGE_AGAIN, heap], cwd=ROOT, check=True,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    return float(out.stdout)


def test_a_judgement_made_again_reuses_the_heap_it_freed():
    # glibc's default: the grids' blocks go back to the kernel and fault in again
    assert faults_per_judgement("default") > 100
    # kept: a judgement made again touches only pages it already has
    assert faults_per_judgement("keep") < 10
