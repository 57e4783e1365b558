"""Every answer the race judge and the order check give over a simulated
game (tests/kit/pacesim.py), for the test that holds them while their
arithmetic is made faster (tests/test_race_judge_answers.py, issue 30).

    python -m tests.kit.judgerecord > tests/data/judge_answers.json

writes the answers of the code in the working tree (regenerate only when a
change is meant to change them, and say so in the commit)."""

from __future__ import annotations

import dataclasses
import json
import sys

from companion.races import attribution

from .pacesim import simulate

#: the simulated games recorded: (race cards, pace in ms, seed)
RUNS = ((24, 1_500, 1), (24, 800, 113277))


def _judgement(j: attribution.Judgement) -> list:
    return ["judge", j.action, j.recheck_ns,
            [[r.player, r.t_ns, float(r.p),
             [[q, t] for q, t in sorted(r.presses.items())]] for r in j.readings]]


def record(cards: int, pace_ms: int, seed: int) -> dict:
    """The answers, in the order they were asked, and the game's tally."""
    answers: list = []
    judge, order_check = attribution.judge, attribution.order_check

    def judged(*a, **k):
        got = judge(*a, **k)
        answers.append(_judgement(got))
        return got

    def checked(*a, **k):
        got = order_check(*a, **k)
        answers.append(["order", float(got.swapped_p), float(got.as_judged_p)])
        return got

    attribution.judge, attribution.order_check = judged, checked
    try:
        tally = simulate(cards, pace_ms, seed=seed)
    finally:
        attribution.judge, attribution.order_check = judge, order_check
    counts = {k: v for k, v in dataclasses.asdict(tally).items()
              if k not in ("wrongs", "refusals")}
    return {"run": [cards, pace_ms, seed], "answers": answers, "tally": counts}


if __name__ == "__main__":
    runs = [record(*run) for run in RUNS]      # one answer a line
    blocks = []
    for r in runs:
        lines = ",\n".join(json.dumps(a) for a in r["answers"])
        blocks.append(f'{{"run": {json.dumps(r["run"])}, '
                      f'"tally": {json.dumps(r["tally"], sort_keys=True)}, '
                      f'"answers": [\n{lines}]}}')
    sys.stdout.write("[\n" + ",\n".join(blocks) + "\n]\n")
