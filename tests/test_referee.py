"""The race rules (docs/rules-notes.md, "Races"), one test each, plus properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from companion.races.edges import Edge
from companion.races.referee import (DEFAULT_HOLD_NS, FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, MS, US,
                               Debouncer, LiveRace, edge_order, RaceError, RaceSpec, Referee, debounce, judge)

P = ("A", "B", "C")


def press(p, t):
    return Edge(p, True, t)


def release(p, t):
    return Edge(p, False, t)


def spec(kind=FIRST_PRESS, **kw):
    return RaceSpec(kind, kw.pop("players", P), **kw)


# -- first-press -------------------------------------------------------------

def test_first_press_earliest_counted_press_wins():
    v = judge(spec(), [press("B", 5 * MS), press("A", 3 * MS), press("C", 4 * MS)])
    assert v.winner == "A" and v.tied == []
    assert [p for p, _ in v.order] == ["A", "C", "B"]
    assert v.to_json()["order"][1] == {"player": "C", "t_ns": 4 * MS, "offset_ns": MS,
                                       "offset_us": 1000.0}


def test_first_press_only_first_press_of_each_player_counts():
    v = judge(spec(), [press("A", 10 * MS), release("A", 40 * MS), press("A", 60 * MS),
                       press("B", 50 * MS)])
    assert v.winner == "A"
    assert v.order == [("A", 10 * MS), ("B", 50 * MS)]


def test_first_press_within_tie_window_of_earliest_is_a_tie():
    v = judge(spec(tie_window_ns=500 * US),
              [press("A", 1_000 * US), press("B", 1_400 * US), press("C", 1_600 * US)])
    assert v.winner is None and v.tied == ["A", "B"]


def test_equal_timestamps_tie():
    v = judge(spec(), [press("A", 1000), press("B", 1000)])
    assert v.winner is None and sorted(v.tied) == ["A", "B"]


def test_one_microsecond_apart_is_not_a_tie_with_zero_window():
    v = judge(spec(tie_window_ns=0), [press("A", 1000), press("B", 2000)])
    assert v.winner == "A" and v.tied == []


def test_press_exactly_at_arm_time_counts():
    v = judge(spec(arm_ns=5000), [press("A", 5000), press("B", 6000)])
    assert v.winner == "A" and v.false_starts == []


def test_false_start_is_listed_and_cannot_win():
    v = judge(spec(arm_ns=10 * MS), [press("A", 9 * MS), release("A", 50 * MS),
                                     press("A", 60 * MS), press("B", 80 * MS)])
    assert v.false_starts == ["A"] and v.winner == "B"
    assert "A" not in [p for p, _ in v.order]


def test_lockout_lets_a_false_starter_back_in():
    edges = [press("A", 9 * MS), release("A", 50 * MS), press("A", 120 * MS),
             press("B", 150 * MS)]
    v = judge(spec(arm_ns=10 * MS, lockout_ns=100 * MS), edges)
    assert v.false_starts == ["A"] and v.winner == "A"
    # a press still inside the lockout does not count
    v = judge(spec(arm_ns=10 * MS, lockout_ns=200 * MS), edges)
    assert v.winner == "B"


def test_ineligible_press_is_listed_and_never_wins():
    v = judge(spec(eligible=("B", "C")), [press("A", 1 * MS), press("C", 2 * MS)])
    assert v.ineligible == ["A"] and v.winner == "C"


def test_press_after_deadline_does_not_count():
    v = judge(spec(deadline_ns=10 * MS), [press("A", 11 * MS)])
    assert v.winner is None and v.tied == [] and v.order == []


def test_no_press_no_winner():
    v = judge(spec(), [])
    assert v.winner is None and v.loser is None and v.tied == []
    assert v.no_edge == list(P)


# -- last-press ----------------------------------------------------------------

def test_last_press_latest_press_loses():
    v = judge(spec(LAST_PRESS), [press("A", 1 * MS), press("B", 3 * MS), press("C", 2 * MS)])
    assert v.loser == "B" and v.winner is None


def test_last_press_player_without_press_is_later_than_any_press():
    v = judge(spec(LAST_PRESS), [press("A", 1 * MS), press("B", 900 * MS)])
    assert v.loser == "C"


def test_last_press_press_after_deadline_counts_as_no_press():
    v = judge(spec(LAST_PRESS, deadline_ns=100 * MS),
              [press("A", 1 * MS), press("B", 2 * MS), press("C", 101 * MS)])
    assert v.loser == "C"


def test_last_press_several_without_press_tie_no_loser():
    v = judge(spec(LAST_PRESS), [press("A", 1 * MS)])
    assert v.loser is None and v.tied == ["B", "C"]


def test_last_press_latest_two_within_tie_window_tie():
    v = judge(spec(LAST_PRESS, tie_window_ns=1 * MS),
              [press("A", 1 * MS), press("B", 5_000 * US), press("C", 5_800 * US)])
    assert v.loser is None and v.tied == ["B", "C"]


def test_last_press_ineligible_player_cannot_lose():
    v = judge(spec(LAST_PRESS, eligible=("A", "B")), [press("A", 1 * MS), press("B", 2 * MS)])
    assert v.loser == "B" and v.no_edge == []


# -- first-release -------------------------------------------------------------

def test_first_release_earliest_release_loses():
    edges = [press(p, 0) for p in P] + [release("B", 30 * MS), release("A", 50 * MS)]
    v = judge(spec(FIRST_RELEASE, arm_ns=10 * MS), edges)
    assert v.loser == "B"
    assert v.order == [("B", 30 * MS), ("A", 50 * MS)]


def test_first_release_not_holding_at_arm_releases_at_arm():
    edges = [press("A", 0), press("B", 0), release("B", 30 * MS)]
    v = judge(spec(FIRST_RELEASE, arm_ns=10 * MS), edges)
    assert v.loser == "C" and v.order[0] == ("C", 10 * MS)


def test_first_release_two_not_holding_tie():
    v = judge(spec(FIRST_RELEASE, arm_ns=10 * MS), [press("A", 0)])
    assert v.loser is None and v.tied == ["B", "C"]


def test_first_release_release_within_tie_window_ties():
    edges = [press(p, 0) for p in P] + [release("A", 30_000 * US), release("C", 30_200 * US)]
    v = judge(spec(FIRST_RELEASE, arm_ns=10 * MS, tie_window_ns=500 * US), edges)
    assert v.loser is None and v.tied == ["A", "C"]


# -- debounce ------------------------------------------------------------------

def test_debounce_first_edge_of_a_burst_keeps_its_timestamp():
    raw = [press("A", 1000), release("A", 1500), press("A", 2500), release("A", 3000),
           press("A", 4000)]
    assert debounce(raw, 20 * MS)["A"] == [press("A", 1000)]


def test_debounce_edges_after_the_window_are_new_events():
    raw = [press("A", 0), release("A", 25 * MS), press("A", 60 * MS)]
    assert debounce(raw, 20 * MS)["A"] == raw


def test_debounce_short_tap_keeps_its_release():
    raw = [press("A", 0), release("A", 8 * MS)]
    assert debounce(raw, 20 * MS)["A"] == raw


def test_debounce_is_idempotent():
    rng = random.Random(4)
    t, raw, level = 0, [], False
    for _ in range(300):
        t += rng.randrange(1, 30 * MS)
        level = not level
        raw.append(Edge("A", level, t))
    once = debounce(raw, 20 * MS)["A"]
    assert debounce(once, 20 * MS)["A"] == once


def test_debouncer_settles_on_the_clock():
    d = Debouncer(20 * MS)
    assert d.feed(press("A", 0)) == [press("A", 0)]
    assert list(d.feed(release("A", 5 * MS))) == []
    assert d.settles_at() == 20 * MS
    assert d.settle(19 * MS) == []
    assert d.settle(20 * MS) == [release("A", 5 * MS)]


# -- spec validation -----------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(kind="fastest"), dict(arm_ns=-1), dict(tie_window_ns=1.5),
                                dict(eligible=("Z",)), dict(players=())])
def test_bad_race_spec_is_rejected(kw):
    kind = kw.pop("kind", FIRST_PRESS)
    with pytest.raises(RaceError):
        RaceSpec(kind, kw.pop("players", P), **kw)


def test_unknown_player_edge_is_rejected():
    with pytest.raises(RaceError, match="unknown player"):
        judge(spec(), [press("Z", 1)])


# -- properties ------------------------------------------------------------------

KIND = st.sampled_from([FIRST_PRESS, LAST_PRESS, FIRST_RELEASE])


@st.composite
def race(draw):
    kind = draw(KIND)
    players = ("A", "B", "C", "D")[: draw(st.integers(2, 4))]
    edges = []
    for p in players:
        t, level = draw(st.integers(0, 50 * MS)), False
        for _ in range(draw(st.integers(0, 4))):
            t += draw(st.integers(0, 60 * MS))
            level = not level
            edges.append(Edge(p, level, t))
    s = RaceSpec(kind, players, arm_ns=draw(st.integers(0, 80 * MS)),
                 tie_window_ns=draw(st.sampled_from([0, 1000, 2 * MS])),
                 lockout_ns=draw(st.sampled_from([None, 30 * MS])))
    return s, edges


@settings(max_examples=300, deadline=None)
@given(race(), st.randoms())
def test_verdict_does_not_depend_on_arrival_order(r, rnd):
    s, edges = r
    shuffled = list(edges)
    rnd.shuffle(shuffled)
    assert judge(s, shuffled) == judge(s, edges)


@settings(max_examples=300, deadline=None)
@given(race(), st.data())
def test_bounces_inside_the_window_never_change_a_verdict(r, data):
    s, edges = r
    clean = debounce(edges, s.debounce_ns)
    base = judge(s, [e for es in clean.values() for e in es])
    noisy = []
    for es in clean.values():
        for i, e in enumerate(es):
            noisy.append(e)
            nxt = es[i + 1].t_ns if i + 1 < len(es) else None
            room = s.debounce_ns - 1 if nxt is None else min(s.debounce_ns - 1, nxt - e.t_ns - 1)
            settled = i > 0 and e.t_ns - es[i - 1].t_ns < s.debounce_ns
            n = data.draw(st.integers(0, min(10, room))) if room > 2 and not settled else 0
            ts = sorted(data.draw(st.lists(st.integers(1, room), min_size=n, max_size=n,
                                           unique=True))) if n else []
            ts = ts[: len(ts) - len(ts) % 2]   # pairs: every bounce settles back
            for k, t in enumerate(ts):
                level = (not e.pressed) if k % 2 == 0 else e.pressed
                noisy.append(Edge(e.player, level, e.t_ns + t))
    v = judge(s, noisy)
    assert v == base


@settings(max_examples=200, deadline=None)
@given(race())
def test_live_race_verdict_equals_judge(r):
    s, edges = r
    clean = debounce(edges, s.debounce_ns)
    live = LiveRace(s)
    for e in sorted((e for es in clean.values() for e in es), key=edge_order):
        live.feed(e)
    assert live.finish() == judge(s, edges)


# -- live race -------------------------------------------------------------------

def test_live_race_publishes_provisional_order_at_once_and_verdict_after_hold():
    race = LiveRace(spec(tie_window_ns=1 * MS), hold_ns=30 * MS)
    assert race.feed(press("B", 100 * MS))
    assert race.order() == [("B", 100 * MS)]
    assert race.decides_at() == 131 * MS
    assert race.poll(130 * MS) is None
    race.feed(press("A", 100_500 * US))          # late-delivered, inside the tie window
    v = race.poll(131 * MS)
    assert v is not None and v.winner is None and v.tied == ["B", "A"]


def test_live_race_out_of_order_edges_give_the_judged_verdict():
    race = LiveRace(spec())
    race.feed(press("B", 10 * MS))
    race.feed(press("A", 5 * MS))
    assert race.order()[0] == ("A", 5 * MS)
    assert race.finish().winner == "A"


def test_live_last_press_decides_when_everyone_pressed():
    race = LiveRace(spec(LAST_PRESS), hold_ns=10 * MS)
    for i, p in enumerate(P):
        race.feed(press(p, (i + 1) * MS))
    assert race.decides_at() == 13 * MS
    assert race.poll(13 * MS).loser == "C"


def test_live_race_record_rejudges_to_the_same_verdict():
    race = LiveRace(spec(arm_ns=2 * MS))
    for e in [press("A", 1 * MS), press("B", 3 * MS), press("C", 4 * MS)]:
        race.feed(e)
    v = race.finish()
    rec = race.record()
    again = judge(RaceSpec.from_json(rec["spec"]), [Edge.from_json(e) for e in rec["edges"]])
    assert again == v and rec["winner"] == "B" and rec["false_starts"] == ["A"]


# -- referee front: stuck buttons, faults ----------------------------------------------

def test_stuck_button_becomes_a_fault_and_others_play_on():
    ref = Referee(P, stuck_ns=1000 * MS)
    seen = []
    ref.listeners.append(lambda kind, payload: seen.append((kind, payload)))
    ref.feed(press("A", 0))
    ref.poll(1001 * MS)
    assert "A" in ref.stuck and any(k == "fault" and f.kind == "stuck" for k, f in seen)
    race = ref.start(spec(arm_ns=1100 * MS))
    assert "A" not in race.spec.eligible
    ref.feed(press("A", 1200 * MS))       # ignored: still stuck
    ref.feed(press("B", 1300 * MS))
    ref.poll(1300 * MS + DEFAULT_HOLD_NS)
    assert race.verdict.winner == "B"
    ref.feed(release("A", 1500 * MS))
    assert "A" not in ref.stuck and ref.faults[-1].kind == "cleared"


def test_holding_during_a_first_release_race_is_not_stuck():
    ref = Referee(P, stuck_ns=100 * MS)
    for p in P:
        ref.feed(press(p, 0))
    race = ref.start(spec(FIRST_RELEASE, arm_ns=50 * MS))
    ref.poll(5000 * MS)
    assert not ref.stuck
    ref.feed(release("C", 6000 * MS))
    ref.poll(6000 * MS + DEFAULT_HOLD_NS)
    assert race.verdict.loser == "C"


def test_referee_rejects_unknown_player():
    with pytest.raises(RaceError):
        Referee(P).feed(press("Z", 0))


def test_referee_bounce_storm_keeps_verdict_and_timestamps():
    rng = random.Random(7)
    ref = Referee(P)
    race = ref.start(spec())
    raw = []
    for i, p in enumerate(P):
        t = (10 + i) * MS
        raw.append(press(p, t))
        level = True
        for k in range(rng.randrange(5, 20)):
            t += rng.randrange(50 * US, 900 * US)
            level = not level
            raw.append(Edge(p, level, t))
        if not level:
            raw.append(Edge(p, True, t + 10 * US))
    for e in sorted(raw, key=lambda e: e.t_ns):
        ref.feed(e)
    ref.poll(200 * MS)
    assert race.verdict.order == [("A", 10 * MS), ("B", 11 * MS), ("C", 12 * MS)]
    assert race.verdict.winner == "A"


def test_stuck_timer_restarts_after_a_first_release_race():
    ref = Referee(P, stuck_ns=100 * MS)
    for p in P:
        ref.feed(press(p, 0))
    race = ref.start(spec(FIRST_RELEASE, arm_ns=10 * MS))
    ref.feed(release("A", 5000 * MS))
    ref.poll(5000 * MS + DEFAULT_HOLD_NS)
    assert race.verdict.loser == "A"
    assert not ref.stuck                       # B and C held legitimately
    assert ref.next_deadline() >= 5000 * MS + DEFAULT_HOLD_NS + 100 * MS
    ref.poll(5000 * MS + DEFAULT_HOLD_NS + 100 * MS)
    assert ref.stuck == {"B", "C"}


def test_next_deadline_is_never_in_the_past_during_a_holding_race():
    ref = Referee(P, stuck_ns=100 * MS)
    for p in P:
        ref.feed(press(p, 0))
    ref.start(spec(FIRST_RELEASE, arm_ns=10 * MS, deadline_ns=10_000 * MS))
    ref.poll(1000 * MS)
    assert ref.next_deadline() > 1000 * MS


def test_starting_a_race_publishes_the_unfinished_ones_verdict():
    ref = Referee(P)
    verdicts = []
    ref.listeners.append(lambda k, r: k == "verdict" and verdicts.append(r.verdict))
    ref.start(spec(LAST_PRESS))
    ref.feed(press("A", 1 * MS))
    ref.start(spec())
    assert len(verdicts) == 1 and verdicts[0].tied == ["B", "C"]


def test_a_failing_listener_costs_nothing():
    ref = Referee(P)

    def broken(kind, payload):
        raise RuntimeError("page closed")

    ref.listeners.append(broken)
    race = ref.start(spec())
    ref.feed(press("B", 1 * MS))
    assert race.order() == [("B", 1 * MS)] and ref.errors


def test_a_stuck_button_is_found_by_the_next_edge_even_without_a_poll():
    ref = Referee(P, stuck_ns=1000 * MS)
    ref.feed(press("A", 0))
    ref.feed(press("B", 500 * MS))        # not yet: A has held for 500 ms
    assert not ref.stuck
    ref.feed(release("B", 999 * MS))
    assert not ref.stuck
    ref.feed(press("C", 1000 * MS))       # A has held for the whole stuck time
    assert ref.stuck == {"A"}
    ref.feed(release("C", 1400 * MS))
    ref.feed(press("C", 1600 * MS))       # B released in time: never stuck
    assert ref.stuck == {"A"}


# -- out of turn just after the first press (Chomp!'s Bad Chomp) --------------

def test_an_out_of_turn_press_just_after_the_first_press_is_listed_ineligible():
    from companion.races.referee import DEFAULT_OUT_OF_TURN_NS
    s = spec(eligible=("A", "B"), out_of_turn_ns=DEFAULT_OUT_OF_TURN_NS)
    assert RaceSpec.from_json(s.to_json()) == s
    edges = [press("A", 10 * MS), press("C", 40 * MS)]
    assert judge(s, edges).ineligible == ["C"]
    late = [press("A", 10 * MS), press("C", 10 * MS + DEFAULT_OUT_OF_TURN_NS + 1)]
    assert judge(s, late).ineligible == []                  # past the window: not this race's
    assert judge(s, [press("C", 900 * MS)]).ineligible == ["C"]  # nobody counted: to the deadline


def test_the_live_race_waits_for_an_out_of_turn_press_only_while_one_may_come():
    from companion.races.referee import DEFAULT_OUT_OF_TURN_NS
    assert LiveRace(spec(eligible=("A", "B"))).decides_at() is None    # unset: no wait
    race = LiveRace(spec(eligible=("A", "B"), out_of_turn_ns=DEFAULT_OUT_OF_TURN_NS))
    race.feed(press("A", 10 * MS))
    assert race.decides_at() == 10 * MS + DEFAULT_OUT_OF_TURN_NS + DEFAULT_HOLD_NS
    race.feed(press("C", 40 * MS))                          # C has slapped: nothing to wait for
    # ... but C's own hold (a verdict at A's would cut C's slap out of it)
    assert race.decides_at() == 40 * MS + DEFAULT_HOLD_NS
    assert race.poll(40 * MS + DEFAULT_HOLD_NS).ineligible == ["C"]
    everyone = LiveRace(spec(out_of_turn_ns=DEFAULT_OUT_OF_TURN_NS))  # all eligible: no wait
    everyone.feed(press("A", 1))
    assert everyone.decides_at() == 1 + DEFAULT_HOLD_NS


def test_a_stuck_player_is_not_waited_for():
    from companion.races.referee import DEFAULT_OUT_OF_TURN_NS
    ref = Referee(P, stuck_ns=100 * MS)
    ref.feed(press("C", 0))
    ref.poll(100 * MS)
    assert ref.stuck == {"C"}
    race = ref.start(spec(arm_ns=200 * MS, out_of_turn_ns=DEFAULT_OUT_OF_TURN_NS))
    ref.feed(press("A", 300 * MS))
    assert ref.next_deadline() == 300 * MS + DEFAULT_HOLD_NS
    ref.poll(300 * MS + DEFAULT_HOLD_NS)
    assert race.verdict.winner == "A"


def test_a_buzzer_flagged_stuck_while_held_races_a_first_release_race():
    ref = Referee(P, stuck_ns=100 * MS)
    for p in P:
        ref.feed(press(p, 0))
    ref.poll(5000 * MS)                                     # held 5 s before the race
    assert ref.stuck == set(P)
    race = ref.start(spec(FIRST_RELEASE, arm_ns=5100 * MS))
    assert not ref.stuck and race.spec.eligible == P
    assert [f.kind for f in ref.faults] == ["stuck"] * 3 + ["cleared"] * 3
    ref.feed(release("B", 6000 * MS))
    ref.poll(6000 * MS + DEFAULT_HOLD_NS)
    assert race.verdict.loser == "B"
    ref.poll(6000 * MS + DEFAULT_HOLD_NS + 100 * MS)        # still down after the verdict
    assert ref.stuck == {"A", "C"}


@pytest.mark.parametrize("after_ms", [30, 120, 400])
def test_the_last_press_out_of_turn_is_charged_when_it_ends_the_wait(after_ms):
    """Chomp!'s Bad Chomp window with one player who may not chomp (three at
    the table): Bo slaps first, Cy (who may not) ``after_ms`` later. Cy's
    slap ends the wait; before, the verdict then fell back to Bo's hold, long
    past, and was cut there: Cy's slap was left out and never charged."""
    spec = RaceSpec("first-press", ("ana", "bo", "cy"), eligible=("ana", "bo"), arm_ns=0,
                    out_of_turn_ns=500 * MS)
    ref = Referee(spec.players)
    race = ref.start(spec)
    win, bad = 250 * MS, (250 + after_ms) * MS
    ref.feed(Edge("bo", True, win))
    ref.poll(win + ref.hold_ns)
    assert race.verdict is None                 # waiting for Cy's possible Bad Chomp
    ref.feed(Edge("cy", True, bad))
    ref.poll(bad + 1)
    while race.verdict is None:
        ref.poll(ref.next_deadline())
    assert race.verdict.winner == "bo" and race.verdict.ineligible == ["cy"]
    assert race.verdict.ineligible == judge(spec, race.edges).ineligible
