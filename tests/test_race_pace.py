"""The race rule at a real table's pace, as properties (Hypothesis) over
generated card streams played through the real session (companion.pacesim):
flips 0.8 to 4 s apart, slams 150 to 700 ms after a flip, the host logging
0.1 to 2 s after it (often two cards after both slams), bounce, the
flipper's reflex presses. Invariant (docs/rules-notes.md, "Which card a
press belongs to"): every race card goes to its true slammer (or loser), or
the card asks the host; none is silently wrong."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from companion.pacesim import Pace, simulate

SLOW = dict(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(**SLOW)
@given(seed=st.integers(0, 2**32 - 1), pace_ms=st.integers(800, 4_000))
def test_every_card_goes_to_its_true_slammer_or_asks(seed, pace_ms):
    tally = simulate(24, pace_ms, seed=seed)
    assert tally.wrong == 0, (seed, pace_ms, tally.wrongs)
    assert tally.cards >= 24


@settings(**SLOW)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_host_who_logs_every_card_late_is_still_never_wrong(seed):
    # the host logs 1.5 to 2 s after each flip, flips come 0.8 to 1.2 s apart:
    # two cards are logged after both slams, again and again
    pace = Pace(pace_ms=1_000, jitter=0.2, log_ms=(1_500, 2_000))
    tally = simulate(24, 1_000, seed=seed, pace=pace)
    assert tally.wrong == 0, (seed, tally.wrongs)


@pytest.mark.parametrize("pace_ms", [2_500, 4_000])
def test_at_a_relaxed_pace_the_host_is_never_asked(pace_ms):
    tally = simulate(120, pace_ms, seed=pace_ms)
    assert (tally.wrong, tally.flagged) == (0, 0), tally.wrongs


def test_the_simulator_catches_a_rule_too_kind_to_the_table():
    """The check can fail: with a runner-up margin shorter than the table's
    slams spread (100 ms for 150 to 700 ms reactions), slow runner-ups are
    taken as the next card's slam and the simulator counts wrong cards."""
    tally = simulate(200, 1_500, seed=7, settings={"runner_up_ms": 100, "min_gap_ms": 2_000})
    assert tally.wrong > 0
