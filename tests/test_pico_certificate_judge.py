"""The fairness certificate's judge (companion/pico/certificate.py: judge):
each trial's stamps framed by the box's own trial markers (never by time),
every ordered pair of buzzers driven both ways, the stamped separation
within a tick of the driven one. Deliberately unfair boxes
(hardware/fairness.py) are refused with the reason; an honest one is
certified (issue 32, 2)."""

from __future__ import annotations

import random

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
    "a_drifting_clock": "a stamp outside its trial's span",
    "separation_2_ticks_long": "more than a tick off the driven one",
    "stamps_out_of_order": "stamps out of order",
    "no_trial_markers": "a stamp outside any trial",
}
HZ = F.BOX_TICK_HZ


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
    asked = C.trials([(0, 1)], 2_000, 10)
    groups, end = F.honest_box(asked, random.Random(1))
    v = C.judge(asked, F.stream_of(groups), HZ, range(6), end)
    assert not v.certified and "never driven" in v.reasons[0] and "0->2" in v.reasons[0]


def test_the_trials_go_round_the_pairs_in_the_boxs_order():
    asked = C.trials(C.ordered_pairs((4, 0, 2)), 1_000, 2)
    assert [(t.first, t.second) for t in asked] == [(0, 2), (0, 4), (2, 0), (2, 4), (4, 0),
                                                    (4, 2)] * 2


def _run(asked, per_trial):
    """A stream: each trial's marker (at 1000 ticks a trial), then the
    stamps ``per_trial(k, trial, tick)`` gives."""
    stream = []
    for k, t in enumerate(asked):
        stream.append(C.Marker(k, t.first, t.second, t.separation_ns, 1_000 * (k + 1)))
        stream += per_trial(k, t, 1_000 * (k + 1) + 100)
    return stream, 1_000 * (len(asked) + 1)


def test_the_issue_box_b_a_tick_before_a_is_not_paired_with_the_next_trial():
    """Sorting every stamp paired this A with the next trial's B, 3 ms on."""
    asked = C.trials([(0, 1), (1, 0)], 1_000, 3)
    stream, end = _run(asked, lambda k, t, a: [(a - 1, t.second), (a, t.first)])
    v = C.judge(asked, stream, HZ, (0, 1), end)
    assert v.stamped == (-1,) * 6 and not v.certified


def test_trials_that_start_late_are_framed_all_the_same():
    """A box that runs late under load: each trial starts anywhere up to
    the next marker. Framing by time windows (half the 3 ms gap) lost these
    trials; the markers keep every one."""
    asked = C.trials(C.ordered_pairs((0, 1, 2)), 2_000, 4)
    late = random.Random(3)

    def pressed(k, t, at):
        at += late.choice((0, 850, 1_400, 2_900)) * (k % 2)   # up to ~3 ms off schedule
        return [(at, t.first), (at + 2, t.second)]

    stream = []
    tick = 1_000
    for k, t in enumerate(asked):
        stream.append(C.Marker(k, t.first, t.second, t.separation_ns, tick))
        stream += pressed(k, t, tick)
        tick += 6_000
    v = C.judge(asked, stream, HZ, (0, 1, 2), tick)
    assert v.certified, v.reasons
    assert v.stamped == (2,) * len(asked)


def test_a_lost_trial_counts_as_a_trial_not_ordered():
    asked = C.trials([(0, 1), (1, 0)], 2_000, 5)
    stream, end = _run(asked, lambda k, t, a: [] if k == 4 else [(a, t.first), (a + 2, t.second)])
    v = C.judge(asked, stream, HZ, (0, 1), end)
    row = C.rows(asked, v, HZ)[0]
    assert v.stamped[4] is None and "a trial lost" in v.reasons[0]
    assert row["trials"] == 10 and row["ordered"] == 0.9


def test_a_lost_marker_spoils_two_trials_and_refuses():
    """The marker of trial 3 dropped (the box's queue was full): its stamps
    land in trial 2, which now has two of each, and trial 3 has none."""
    asked = C.trials([(0, 1), (1, 0)], 2_000, 4)
    stream, end = _run(asked, lambda k, t, a: [(a, t.first), (a + 2, t.second)])
    stream = [x for x in stream if not (isinstance(x, C.Marker) and x.trial == 3)]
    v = C.judge(asked, stream, HZ, (0, 1), end)
    assert v.stamped[2] is None and v.stamped[3] is None and not v.certified
    assert {r.split(" (")[0] for r in v.reasons} == {
        "a press stamped more than once", "a trial lost"}


def test_a_marker_that_is_not_what_was_asked_or_out_of_turn_is_refused():
    asked = C.trials([(0, 1), (1, 0)], 2_000, 3)
    stream, end = _run(asked, lambda k, t, a: [(a, t.first), (a + 2, t.second)])
    wrong = [C.Marker(x.trial, x.second, x.first, x.separation_ns, x.tick)
             if isinstance(x, C.Marker) and x.trial == 2 else x for x in stream]
    v = C.judge(asked, wrong, HZ, (0, 1), end)
    assert v.stamped[2] is None and "a trial driven other than asked" in v.reasons[0]
    again = stream + [C.Marker(1, 1, 0, 2_000, 10**6)]
    v = C.judge(asked, again, HZ, (0, 1), None)
    assert "a trial marker out of turn" in v.reasons[0]


def test_the_last_trial_ends_at_the_boxs_done_stamp():
    asked = C.trials([(0, 1), (1, 0)], 2_000, 2)
    stream, end = _run(asked, lambda k, t, a: [(a, t.first), (a + 2, t.second)])
    assert C.judge(asked, stream, HZ, (0, 1), end).certified
    v = C.judge(asked, stream, HZ, (0, 1), stream[-1][0] - 1)      # "done" before the last press
    assert not v.certified and "outside its trial's span" in v.reasons[0]


def test_a_refused_verdict_is_kept_without_a_fair_separation_and_loads(tmp_path):
    v = F.judge_box(F.UNFAIR_BOXES["10pct_of_trials_lost"], (1_000,))
    rows = [F.Row(1_000, 120, 1.0, 1.0, 1.0, 0.0, 1.0)]
    path = F.save(rows, "/dev/buzzerbox", tmp_path / "cert.json", verdict=v)
    cert = C.load(path)
    assert cert["certified"] is False and cert["fair_separation_us"] is None
    assert "a trial lost" in cert["reasons"][0] and "REFUSED" in F.last(path)
    ok = F.save(rows, "/dev/buzzerbox", tmp_path / "ok.json", verdict=F.judge_box(F.honest_box))
    assert C.load(ok)["certified"] is True and C.load(ok)["fair_separation_us"] == 1.0
