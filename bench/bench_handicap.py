"""A 5-year-old against an adult, with and without the suggested head start.

Each race is an announced first-press race (GO known) judged by the referee
(:func:`companion.races.referee.judge`) from the two presses. Reactions are
drawn as tests/kit/pacesim.py draws them: a floor + a log-normal
(``random.lognormvariate``): the adult 100 ms + median 170 ms (median 270 ms),
the child 150 ms + median 315 ms (median 465 ms). The head start is the
suggested one, the difference of the medians (195 ms); the head start the
table would suggest from 100 measured races each
(:func:`companion.record.reflexes.suggest_handicaps`) is printed too, with
the child's wins at that one.

The spread: ``sigma`` 0.3 (the headline) is a simple reaction to an
announced GO (an adult's SD ~50 ms, a 5-year-old's ~95 ms); pacesim's own
0.69 is a reaction to an unannounced card flip in a busy game, and is
printed too (the adult then wins only ~80 % without a head start).
"""

from __future__ import annotations

import math
import random

from companion.races.edges import Edge
from companion.races.referee import FIRST_PRESS, MS, RaceSpec, judge
from companion.record.reflexes import suggest_handicaps

ADULT = (100, 170)      # floor, log-normal median (ms): median 270 ms
CHILD = (150, 315)      # median 465 ms
RACES = 1_000


def reaction_ns(rng: random.Random, person: tuple[int, int], sigma: float) -> int:
    floor, median = person
    return int((floor + rng.lognormvariate(math.log(median), sigma)) * MS)


def child_win_pct(sigma: float, head_start_ns: int, races: int = RACES, seed: int = 35) -> float:
    rng = random.Random(seed)
    spec = RaceSpec(FIRST_PRESS, ("adult", "child"), arm_ns=0,
                    handicap_ns={"child": head_start_ns})
    wins = 0
    for _ in range(races):
        edges = [Edge("adult", True, reaction_ns(rng, ADULT, sigma)),
                 Edge("child", True, reaction_ns(rng, CHILD, sigma))]
        wins += judge(spec, edges).winner == "child"
    return 100.0 * wins / races


MEDIANS_NS = (CHILD[0] + CHILD[1] - ADULT[0] - ADULT[1]) * MS     # 195 ms


def suggested_ns(sigma: float, seed: int = 36, measured: int = 100) -> int:
    """The head start the table suggests after ``measured`` races each."""
    rng = random.Random(seed)
    got = {"adult": [reaction_ns(rng, ADULT, sigma) // 1000 for _ in range(measured)],
           "child": [reaction_ns(rng, CHILD, sigma) // 1000 for _ in range(measured)]}
    return suggest_handicaps(got)["child"] * MS


def run():
    for sigma, tag in ((0.3, ""), (0.69, "_pacesim_sigma")):
        yield (f"handicap_child_win_pct{tag}", child_win_pct(sigma, MEDIANS_NS),
               f"% of {RACES} races, head start {MEDIANS_NS // MS} ms (the medians' "
               f"difference; sigma {sigma}; want 40-60)")
        h = suggested_ns(sigma)
        yield (f"handicap_suggested_ms{tag}", h / MS, "ms: suggested from 100 measured races each")
        yield (f"handicap_child_win_pct_suggested{tag}", child_win_pct(sigma, h),
               f"% of {RACES} races with that head start")
        yield (f"handicap_adult_win_pct_without{tag}", 100.0 - child_win_pct(sigma, 0),
               f"% of {RACES} races with none (want >= 90)")
