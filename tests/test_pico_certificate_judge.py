"""The fairness certificate's judge (companion/pico/certificate.py: judge):
each trial's stamps framed by the driver's schedule, every ordered pair of
buzzers driven both ways, the stamped separation within a tick of the
driven one. Deliberately unfair boxes (hardware/fairness.py) are refused
with the reason; an honest one is certified (issue 32, 2)."""

from __future__ import annotations

import pytest

from companion.pico import certificate as C
from hardware import fairness as F

REASON = {
    "b_always_a_tick_first": "the buzzer driven second stamped first",
    "one_buzzer_5us_late": "bit 4 +",
    "ties_to_the_lower_buzzer": "the buzzer driven second stamped first",
    "10pct_of_trials_lost": "a trial lost",
    "a_duplicated_stamp": "a press stamped more than once",
    "swapped_buzzer_ids": "a buzzer stamped that was not driven",
    "a_drifting_clock": "a stamp in no trial's window",
    "separation_2_ticks_long": "more than a tick off the driven one",
    "stamps_out_of_order": "stamps out of order",
}


def test_an_honest_box_is_certified_over_every_ordered_pair():
    v = F.judge_box(F.honest_box)
    assert v.certified and v.reasons == ()
    assert set(v.ties) == set(range(6)) and all(n > 0 for n in v.ties.values())
    assert None not in v.stamped


@pytest.mark.parametrize("kind", sorted(F.UNFAIR_BOXES))
def test_an_unfair_box_is_refused_with_the_reason(kind):
    v = F.judge_box(F.UNFAIR_BOXES[kind])
    assert not v.certified
    assert any(REASON[kind] in r for r in v.reasons), v.reasons


def test_every_kind_of_unfair_box_has_a_reason():
    assert set(REASON) == set(F.UNFAIR_BOXES) and len(REASON) >= 8


def test_pairs_never_driven_are_a_refusal():
    """The issue's driver: buzzer 1 first, buzzers 1 and 2 only."""
    schedule = C.box_schedule([(0, 1)], 2_000, 10)
    import random
    v = C.judge(schedule, F.honest_box(schedule, random.Random(1)), F.BOX_TICK_HZ,
                range(6), C.BOX_WINDOW_NS)
    assert not v.certified and "never driven" in v.reasons[0] and "0->2" in v.reasons[0]


def test_the_issue_box_b_a_tick_before_a_is_not_paired_with_the_next_trial():
    """Sorting every stamp paired this A with the next trial's B, 3 ms on."""
    schedule = C.box_schedule([(0, 1), (1, 0)], 1_000, 3)
    stamps = []
    for t in schedule:
        a = 1_000_000 + t.at_ns // 1000
        stamps += [(a - 1, t.second), (a, t.first)]
    v = C.judge(schedule, stamps, F.BOX_TICK_HZ, (0, 1), C.BOX_WINDOW_NS)
    assert v.stamped == (-1,) * 6 and not v.certified


def test_a_lost_trial_counts_as_a_trial_not_ordered():
    schedule = C.box_schedule([(0, 1), (1, 0)], 2_000, 5)
    stamps = [(1_000_000 + t.at_ns // 1000 + d, b) for k, t in enumerate(schedule) if k != 4
              for d, b in ((0, t.first), (2, t.second))]
    v = C.judge(schedule, stamps, F.BOX_TICK_HZ, (0, 1), C.BOX_WINDOW_NS)
    row = C.rows(schedule, v, F.BOX_TICK_HZ)[0]
    assert v.stamped[4] is None and "a trial lost" in v.reasons[0] and row["trials"] == 10 and row["ordered"] == 0.9


def test_a_refused_verdict_is_kept_without_a_fair_separation_and_loads(tmp_path):
    v = F.judge_box(F.UNFAIR_BOXES["10pct_of_trials_lost"], (1_000,))
    rows = [F.Row(1_000, 120, 1.0, 1.0, 1.0, 0.0, 1.0)]
    path = F.save(rows, "/dev/buzzerbox", tmp_path / "cert.json", verdict=v)
    cert = C.load(path)
    assert cert["certified"] is False and cert["fair_separation_us"] is None
    assert "a trial lost" in cert["reasons"][0] and "REFUSED" in F.last(path)
    ok = F.save(rows, "/dev/buzzerbox", tmp_path / "ok.json", verdict=F.judge_box(F.honest_box))
    assert C.load(ok)["certified"] is True and C.load(ok)["fair_separation_us"] == 1.0
