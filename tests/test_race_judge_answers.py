"""The race judge and the order check give the same answers as before
their arithmetic was made faster (issue 30): every probability of every
judgement and order check asked over two simulated games, to 1e-9
relative, and the same tally (tests/kit/judgerecord.py; the answers were
recorded with the code before the change, tests/data/judge_answers.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kit.judgerecord import RUNS, record

ANSWERS = json.loads((Path(__file__).parent / "data" / "judge_answers.json").read_text())


def _close(got, want, where: str) -> None:
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=0.0), where
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for k, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{where}[{k}]")
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r[0]}cards-{r[1]}ms-seed{r[2]}")
def test_the_judge_and_the_order_check_answer_as_recorded(run):
    want = next(w for w in ANSWERS if tuple(w["run"]) == run)
    got = record(*run)
    assert got["tally"] == want["tally"]
    assert len(got["answers"]) == len(want["answers"])
    assert {a[0] for a in want["answers"]} == {"judge", "order"}    # both were asked
    for k, (g, w) in enumerate(zip(got["answers"], want["answers"])):
        _close(g, w, f"answer {k}")
