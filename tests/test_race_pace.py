"""The race rule at a real table's pace, as properties (Hypothesis) over
simulated games played through the real session by simulated people
(tests/kit/pacesim.py): reactions of 150 ms + a log-normal (median 345 ms,
p99 ~1.1 s), a tenth of the games with a player who never slams, missed
Mynahs, false slams on Food cards, double slams, near ties, bounce,
delivery latency, and a host who logs 0.1 to 2 s after a flip (a quarter
before any slam, a fifth after the next flip, 2 % forgotten and logged out
of order) and answers every question with the truth. The goal
(docs/rules-notes.md, "Which card a press belongs to") is that every race
card goes to its true slammer (or loser), or the card asks the host and the
host's true answer settles it: none silently wrong. The race judge does not
reach it yet at every pace (README, "Benchmarks": 0.3 to 1.3 % of race cards
at 2,000 cards a pace, from 1 to 6 % before it); these tests hold the
figures it does reach, so a change that makes them worse fails."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.kit.pacesim import CLASSES, Pace, SimulatedTable, simulate

#: the same twelve games on every run (derandomize): the judge still errs
#: at the fastest paces (README, "Benchmarks"), and a seed drawn afresh
#: each run would make CI's verdict a lottery; new seeds are tried by
#: changing the examples, not by chance
SLOW = {"max_examples": 12, "deadline": None, "derandomize": True,
        "suppress_health_check": [HealthCheck.too_slow]}


def _wrongs(tally):
    return [w for w in tally.wrongs if w["verdict"] in ("wrong", "wrong_after_answer")]


@pytest.mark.slow   # 12 simulated games of 24 race cards: the full suite and CI run it
@settings(**SLOW)
@given(seed=st.integers(0, 2**32 - 1), pace_ms=st.integers(800, 4_000))
@example(seed=113277, pace_ms=800)  # Ana and Dee missed a Mynah; Dee's next slam came 0.8 s on
def test_a_true_answer_always_settles_a_card_the_host_is_asked_about(seed, pace_ms):
    """Whatever the pace, a question always offers the truth (or lets the
    host point at it): the host's true answer is never wrong."""
    tally = simulate(24, pace_ms, seed=seed)
    assert tally.cards >= 24
    assert tally.wrong_after_answer == 0, (seed, pace_ms, _wrongs(tally))
    assert tally.wrong <= 2, (seed, pace_ms, _wrongs(tally))


@pytest.mark.slow
@pytest.mark.parametrize("pace_ms,wrong_pct,flagged_pct", [(1_000, 2.5, 15), (2_500, 1.0, 7),
                                                          (4_000, 1.0, 6)])
def test_the_judge_holds_its_figures(pace_ms, wrong_pct, flagged_pct):
    """400 race cards at a fixed seed: at most these shares wrong and asked
    (the rule before the judge gave 5.7, 3.5 and 1.0 % wrong and asked about
    15.6, 19.7 and 25 % of the cards at these paces)."""
    tally = simulate(400, pace_ms, seed=pace_ms)
    assert tally.pct(tally.wrong) <= wrong_pct, _wrongs(tally)
    assert tally.pct(tally.flagged) <= flagged_pct
    assert tally.wrong_after_answer == 0 and tally.unjudged == 0


@pytest.mark.slow
def test_a_host_who_logs_late_and_out_of_order_is_asked_rather_than_misled():
    # flips 0.8 to 1.2 s apart; the host logs 1.5 to 2 s after each flip,
    # half the cards after the next flip, and forgets one card in ten
    pace = Pace(pace_ms=1_000, jitter=0.2, log_ms=(1_500, 2_000), quick_log_chance=0.0,
                late_log_chance=0.5, forget_chance=0.1)
    tally = simulate(200, 1_000, seed=11, pace=pace)
    assert tally.pct(tally.wrong) <= 5, _wrongs(tally)
    assert tally.wrong_after_answer == 0


@pytest.mark.slow   # checks the simulator, not the product: 300-400 simulated cards
def test_the_simulator_meets_every_situation():
    """A few hundred race cards meet every class of trouble at least once
    (they do not depend on the rule: the people and the host draw them)."""
    tally = simulate(300, 1_500, seed=1)
    met = {c: d["cards"] for c, d in tally.classes.items()}
    assert all(met[c] >= 1 for c in CLASSES), met
    assert tally.winning_presses > 0.9 * tally.cards


def test_reactions_are_the_literatures():
    table = SimulatedTable(random.Random(3), Pace())
    times = sorted(table._react() / 1e6 for _ in range(20_000))
    assert 150 < times[0]
    assert 330 < times[10_000] < 360            # median ~345 ms
    assert 580 < times[18_000] < 670            # p90 ~625 ms
    assert 950 < times[19_800] < 1_300          # p99 ~1.1 s


@pytest.mark.slow   # checks the simulator, not the product: 300-400 simulated cards
def test_the_simulator_catches_a_rule_too_kind_to_the_table():
    """The check can fail: a judge that takes any reading at least half
    likely (race_sure_permille 500) instead of asking gives wrong cards,
    and asks less."""
    kind = simulate(200, 1_500, seed=7, settings={"race_sure_permille": 500})
    strict = simulate(200, 1_500, seed=7)
    assert kind.wrong > strict.wrong and kind.flagged < strict.flagged
