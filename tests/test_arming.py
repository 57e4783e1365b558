"""Pure race arming (docs/rules-notes.md, "Races"): bursts, claiming, countdown -> GO, windows.

Everything here is a function of edges, log events and integer nanoseconds:
no clock, no lock, no store.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from companion.races import arming
from companion.races.arming import (Arming, ArmingSettings, RaceWindow, arm_announced,
                              arm_unannounced, bursts, claim, claim_windows,
                              forget_before, go_in_ms, phase, race_spec, request_wait_ns)
from companion.races.edges import Edge
from companion.games import RaceRequest
from companion.races.referee import RaceError

US = 1_000
MS = 1_000_000
S = 1_000 * MS
T0 = 100 * S

RAW = {"quiet_gap_ms": 1_500, "claim_window_ms": 10_000, "wait_ms": 5_000,
       "countdown_ms": 3_000, "announced_wait_ms": 5_000, "tie_window_us": 0,
       "lockout_ms": None, "runner_up_ms": 600, "min_gap_ms": 250, "confirm_ms": 6_000,
       "log_lag_ms": 1_850}
SETTINGS = ArmingSettings.from_settings(RAW)


def tap(player, t, hold_ms=60):
    return [Edge(player, True, t), Edge(player, False, t + hold_ms * MS)]


def race_event(arm_ns, *press_ns):
    """A logged race as the session records it (spec and edges)."""
    return {"type": "race", "reason": "chope", "spec": {"arm_ns": arm_ns},
            "edges": [{"player": "x", "edge": "press", "t_ns": t} for t in press_ns]}


# ---------------------------------------------------------------------------
# settings


def test_settings_are_integer_nanoseconds():
    s = ArmingSettings.from_settings({
        "quiet_gap_ms": 2, "claim_window_ms": 3, "wait_ms": 4, "countdown_ms": 5,
        "announced_wait_ms": 6, "tie_window_us": 7, "lockout_ms": 8})
    assert (s.quiet_gap_ns, s.claim_window_ns, s.wait_ns, s.countdown_ns,
            s.announced_wait_ns, s.tie_window_ns, s.lockout_ns) == (
        2 * MS, 3 * MS, 4 * MS, 5 * MS, 6 * MS, 7_000, 8 * MS)
    assert all(isinstance(v, int) for v in (s.quiet_gap_ns, s.tie_window_ns, s.horizon_ns))
    assert SETTINGS.lockout_ns is None


# ---------------------------------------------------------------------------
# bursts: presses closer than the quiet gap belong together


def test_presses_closer_than_the_quiet_gap_form_one_burst():
    edges = tap("bo", T0) + tap("cy", T0 + 800 * MS) + tap("ana", T0 + 2_200 * MS)
    [b] = bursts(edges, SETTINGS.quiet_gap_ns)
    assert [e.player for e in b if e.pressed] == ["bo", "cy", "ana"]
    assert len(b) == 6                                  # the releases come along


def test_a_quiet_gap_longer_than_the_setting_starts_a_new_burst():
    edges = tap("bo", T0) + tap("cy", T0 + 1_501 * MS)
    got = bursts(edges, SETTINGS.quiet_gap_ns)
    assert [[e.player for e in b if e.pressed] for b in got] == [["bo"], ["cy"]]


def test_a_gap_of_exactly_the_quiet_gap_stays_in_the_burst():
    edges = tap("bo", T0) + tap("cy", T0 + 1_500 * MS)
    assert len(bursts(edges, SETTINGS.quiet_gap_ns)) == 1


def test_a_release_before_any_press_belongs_to_no_burst():
    edges = [Edge("bo", False, T0)] + tap("cy", T0 + 5 * S)
    [b] = bursts(edges, SETTINGS.quiet_gap_ns)
    assert b[0] == Edge("cy", True, T0 + 5 * S)


def test_bursts_do_not_depend_on_the_order_edges_arrived_in():
    edges = tap("bo", T0) + tap("cy", T0 + 300 * MS) + tap("ana", T0 + 9 * S) + [
        Edge("cy", True, T0 + 9 * S)]                         # same nanosecond as ana
    assert bursts(reversed(edges), SETTINGS.quiet_gap_ns) == bursts(edges,
                                                                    SETTINGS.quiet_gap_ns)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans(),
                          st.integers(0, 20 * S)), max_size=40))
def test_bursts_partition_every_edge_from_the_first_press_on(raw):
    edges = [Edge(p, pr, t) for p, pr, t in raw]
    got = bursts(edges, SETTINGS.quiet_gap_ns)
    first_press = min((e.t_ns for e in edges if e.pressed), default=None)
    # from the first press on, in the referee's order (a release first at equal times)
    kept = [e for e in edges if first_press is not None and (
        e.t_ns > first_press or (e.t_ns == first_press and e.pressed))]
    key = (lambda e: (e.t_ns, e.player, e.pressed))
    assert sorted((e for b in got for e in b), key=key) == sorted(kept, key=key)
    for b in got:
        assert b[0].pressed                                   # a burst starts at a press
        presses = [e.t_ns for e in b if e.pressed]
        assert all(y - x <= SETTINGS.quiet_gap_ns for x, y in zip(presses, presses[1:]))
    starts = [b[0].t_ns for b in got]
    for prev, nxt in zip(got, got[1:]):
        last_press = max(e.t_ns for e in prev if e.pressed)
        assert nxt[0].t_ns - last_press > SETTINGS.quiet_gap_ns
    assert starts == sorted(starts)


# ---------------------------------------------------------------------------
# which presses a logged card claims (docs/rules-notes.md, "Which card a press
# belongs to")


def chope(arm_ns, *presses, eligible=("bo", "cy", "dee"), kind="first-press", close=None):
    """A logged first-press (or last-press) race with its counted presses."""
    ev = {"type": "race", "reason": "chope",
          "spec": {"kind": kind, "arm_ns": arm_ns, "deadline_ns": arm_ns + 5 * S,
                   "eligible": list(eligible)},
          "edges": [{"player": p, "edge": "press", "t_ns": t} for p, t in presses],
          "order": [{"player": p, "t_ns": t} for p, t in presses]}
    if close is not None:
        ev["close_ns"] = close
    return ev


def test_a_card_logged_after_its_slam_claims_it_and_its_runner_ups_only():
    edges = tap("bo", T0) + tap("cy", T0 + 300 * MS) + tap("dee", T0 + 1_200 * MS)
    armed = arm_unannounced(edges, [], T0 + 1_500 * MS, SETTINGS, kind="first-press")
    assert armed.arm_ns == T0 and not armed.announced        # armed at the first press
    assert armed.deadline_ns == T0 + SETTINGS.wait_ns
    # dee pressed 1.2 s after bo: past the runner-up margin, the next card's
    assert [e.player for e in armed.burst if e.pressed] == ["bo", "cy"]


def test_a_press_older_than_the_claim_window_is_not_taken():
    edges = tap("bo", T0)
    armed = arm_unannounced(edges, [], T0 + 10_001 * MS, SETTINGS)
    assert armed.burst == () and armed.arm_ns == T0 + 10_001 * MS    # waits from its log
    assert arm_unannounced(edges, [], T0 + 10_000 * MS, SETTINGS).arm_ns == T0


def test_a_press_after_the_card_was_logged_is_not_claimed_backwards():
    assert claim(tap("bo", T0 + 5 * S), T0, SETTINGS) == ()


def test_a_first_press_race_is_over_at_its_runner_up_margin():
    first = chope(T0, ("bo", T0))
    assert arming.race_close_ns(first, SETTINGS) == T0 + SETTINGS.runner_up_ns
    assert arming.press_window(T0 + 200 * MS, [first], SETTINGS)["window"] == "race"
    assert arming.press_window(T0 + 700 * MS, [first], SETTINGS) == {
        "window": "open", "closes_ns": T0 + 700 * MS + SETTINGS.claim_window_ns}
    # a slam 0.9 s after bo's is the next card's, however soon it is logged
    edges = tap("bo", T0) + tap("cy", T0 + 900 * MS)
    armed = arm_unannounced(edges, [first], T0 + 1_000 * MS, SETTINGS, kind="first-press")
    assert armed.arm_ns == T0 + 900 * MS and armed.confirm is None


def test_a_last_press_race_is_over_when_every_eligible_player_pressed():
    siam = chope(T0, ("ana", T0), ("bo", T0 + 100 * MS), ("cy", T0 + 2 * S),
                 eligible=("ana", "bo", "cy"), kind="last-press")
    assert arming.race_close_ns(siam, SETTINGS) == T0 + 2 * S
    incomplete = chope(T0, ("ana", T0), eligible=("ana", "bo"), kind="last-press")
    assert arming.race_close_ns(incomplete, SETTINGS) == T0 + 5 * S     # its deadline


def test_cards_take_presses_in_the_order_they_were_logged():
    # two Tables flipped 0.9 s apart, slammed, then both logged after both slams
    edges = tap("bo", T0) + tap("cy", T0 + 150 * MS) + tap("dee", T0 + 900 * MS) \
        + tap("bo", T0 + 1_000 * MS)
    first = arm_unannounced(edges, [], T0 + 1_400 * MS, SETTINGS, kind="first-press")
    assert first.arm_ns == T0
    logged = chope(first.arm_ns, ("bo", T0), ("cy", T0 + 150 * MS))
    second = arm_unannounced(edges, [logged], T0 + 1_600 * MS, SETTINGS, kind="first-press",
                             eligible=("bo", "cy", "dee"))
    assert second.arm_ns == T0 + 900 * MS and second.confirm is None
    assert [e.player for e in second.burst if e.pressed] == ["dee", "bo"]


def test_a_second_press_by_the_same_player_is_the_next_cards():
    edges = tap("bo", T0) + tap("bo", T0 + 400 * MS)
    logged = chope(T0, ("bo", T0))
    armed = arm_unannounced(edges, [logged], T0 + 600 * MS, SETTINGS, kind="first-press",
                            eligible=("bo", "cy"))
    assert armed.arm_ns == T0 + 400 * MS


def test_a_late_runner_up_that_could_be_the_next_cards_slam_asks_the_host():
    # cy pressed 450 ms after bo: cy's runner-up for the last Table, or the
    # first slam of this one? dee's press at 1 s says nothing either way
    edges = tap("bo", T0) + tap("cy", T0 + 450 * MS) + tap("dee", T0 + 1_000 * MS)
    logged = chope(T0, ("bo", T0))
    armed = arm_unannounced(edges, [logged], T0 + 1_200 * MS, SETTINGS, kind="first-press",
                            eligible=("cy", "dee"))
    assert armed.confirm and "cy" in armed.confirm
    assert [c["player"] for c in armed.choices] == ["cy", "dee"]
    # ... but not when the answer changes nothing: the same winner either way
    same = tap("bo", T0) + tap("cy", T0 + 450 * MS) + tap("cy", T0 + 1_000 * MS)
    armed = arm_unannounced(same, [logged], T0 + 1_200 * MS, SETTINGS, kind="first-press",
                            eligible=("cy", "dee"))
    assert armed.confirm is None and armed.arm_ns == T0 + 1_000 * MS
    # ... nor when it came too soon after the race's presses to be a new card's
    close = tap("bo", T0) + tap("cy", T0 + 150 * MS) + tap("dee", T0 + 1_000 * MS)
    armed = arm_unannounced(close, [logged], T0 + 1_200 * MS, SETTINGS, kind="first-press",
                            eligible=("cy", "dee"))
    assert armed.confirm is None and armed.arm_ns == T0 + 1_000 * MS


def test_a_doubtful_old_press_asks_the_host_even_beside_a_fresher_one():
    old = tap("bo", T0)
    got = arming.find_claim(old, T0 + 7 * S, SETTINGS)         # long before its own log
    assert got.start_ns == T0 and "7.0 s before" in got.confirm
    both = old + tap("cy", T0 + 5 * S)
    # bo's slam, logged by a slow host, or a stray with cy's the real one?
    got = arming.find_claim(both, T0 + 7 * S, SETTINGS, eligible=("bo", "cy"),
                            kind="first-press")
    assert got.confirm and [c["player"] for c in got.choices] == ["bo", "cy"]
    # the same winner either way: the fresh one, no question
    same = old + tap("bo", T0 + 5 * S)
    got = arming.find_claim(same, T0 + 7 * S, SETTINGS, eligible=("bo", "cy"),
                            kind="first-press")
    assert got.start_ns == T0 + 5 * S and got.confirm is None
    armed = arm_unannounced(old, [], T0 + 7 * S, SETTINGS)
    assert armed.confirm and armed.arm_ns == T0


def test_claim_windows_show_the_presses_still_claimable_as_they_drain():
    edges = tap("bo", T0) + tap("cy", T0 + 200 * MS) + tap("ana", T0 + 4 * S)
    wins = claim_windows(edges, T0 + 6 * S, SETTINGS)
    assert [w["players"] for w in wins] == [["bo", "cy"], ["ana"]]
    assert wins[0]["closes_ns"] == T0 + 10 * S and wins[0]["closes_in_ms"] == 4_000
    assert [w["players"] for w in claim_windows(edges, T0 + 12 * S, SETTINGS)] == [["ana"]]
    logged = arming.Prior.of(chope(T0, ("bo", T0), ("cy", T0 + 200 * MS),
                                   eligible=("bo", "cy", "ana")), edges, SETTINGS)
    assert [w["players"] for w in claim_windows(edges, T0 + 6 * S, SETTINGS, logged)] == [["ana"]]


def test_old_edges_are_forgotten_only_past_the_horizon():
    edges = tap("bo", T0) + tap("cy", T0 + 1 * S)
    assert forget_before(edges, T0 + SETTINGS.horizon_ns, SETTINGS) == 0
    assert forget_before(edges, T0 + SETTINGS.horizon_ns + 1, SETTINGS) == 1
    assert forget_before(edges, T0 + 2 * S + SETTINGS.horizon_ns, SETTINGS) == 4


# ---------------------------------------------------------------------------
# announced races: countdown -> GO


def test_an_announced_race_goes_after_its_countdown_and_ends_after_the_wait():
    armed = arm_announced(T0, SETTINGS)
    assert armed.announced and armed.go_ns == T0 + 3 * S
    assert armed.deadline_ns == T0 + 8 * S and armed.burst == ()
    short = arm_announced(T0, SETTINGS, countdown_ns=500 * MS, wait_ns=2 * S)
    assert (short.go_ns, short.deadline_ns) == (T0 + 500 * MS, T0 + 2_500 * MS)
    with pytest.raises(ValueError):
        arm_announced(T0, SETTINGS, countdown_ns=-1)


def test_phase_is_countdown_before_go_live_from_go_and_decided_with_a_verdict():
    go = T0 + 3 * S
    assert phase(False, True, go, go - 1) == "countdown"
    assert phase(False, True, go, go) == "live"                # GO itself counts
    assert phase(True, True, go, go - 1) == "decided"
    assert phase(False, False, go, go - 1) == "live"           # unannounced: no countdown
    assert go_in_ms(go, T0) == 3_000 and go_in_ms(go, go + S) == 0
    assert go_in_ms(go, go - 1) == 0                           # whole milliseconds


def test_a_request_may_set_its_own_wait():
    assert request_wait_ns({"wait_ms": 7000}) == 7 * S
    assert request_wait_ns({}) is None and request_wait_ns(None) is None
    with pytest.raises(ValueError, match="wait_ms"):
        request_wait_ns({"wait_ms": "soon"})


# ---------------------------------------------------------------------------
# race windows and the referee's spec


def test_a_race_window_holds_both_ends_and_drains():
    w = Arming(False, T0, T0 + 5 * S).window
    assert T0 in w and T0 + 5 * S in w and T0 - 1 not in w and T0 + 5 * S + 1 not in w
    assert w.remaining_ns(T0 - S) == 5 * S and w.remaining_ns(T0 + 2 * S) == 3 * S
    assert RaceWindow(0, 10).remaining_ns(11) == 0


def test_the_spec_takes_the_window_and_the_request_can_widen_the_tie():
    req = RaceRequest("first-press", ("bo", "cy"), "chope", players=("ana", "bo", "cy"),
                      info={"tie_window_us": 250})
    spec = race_spec(req, Arming(False, T0, T0 + 5 * S), SETTINGS, ["ana", "bo", "cy"],
                     20 * MS)
    assert (spec.arm_ns, spec.deadline_ns, spec.tie_window_ns) == (T0, T0 + 5 * S, 250_000)
    assert spec.eligible == ("bo", "cy") and spec.players == ("ana", "bo", "cy")
    plain = RaceRequest("last-press", ("ana", "bo"), "siam")
    spec = race_spec(plain, Arming(True, T0, T0 + S), SETTINGS, ["ana", "bo"], 20 * MS)
    assert spec.players == ("ana", "bo") and spec.tie_window_ns == 0
    with pytest.raises(RaceError):
        race_spec(RaceRequest("fastest", ("ana",), "x"), Arming(True, T0, T0 + S), SETTINGS,
                  ["ana"], 20 * MS)


def test_a_press_older_than_the_log_lag_cannot_be_the_cards_first_slam():
    # cy's runner-up came 2.3 s before this card's log: the host logs within
    # log_lag_ms (2 s) of a flip, so it was the last Table's, no question
    edges = tap("bo", T0) + tap("cy", T0 + 450 * MS) + tap("dee", T0 + 1_800 * MS)
    logged = chope(T0, ("bo", T0))
    armed = arm_unannounced(edges, [logged], T0 + 2_750 * MS, SETTINGS, kind="first-press",
                            eligible=("cy", "dee"))
    assert armed.confirm is None and armed.arm_ns == T0 + 1_800 * MS


def test_a_reflex_press_by_the_last_tables_flipper_is_its_own_noise():
    # ana flipped the last Table and slapped her own buzzer 100 ms after bo's
    # chope: too soon to be the next card's slam; the next Table is cy's
    edges = tap("bo", T0) + tap("ana", T0 + 100 * MS) + tap("cy", T0 + 1_500 * MS)
    logged = chope(T0, ("bo", T0), eligible=("bo", "cy", "dee"))
    armed = arm_unannounced(edges, [logged], T0 + 1_700 * MS, SETTINGS, kind="first-press",
                            eligible=("bo", "cy", "dee"))
    assert armed.arm_ns == T0 + 1_500 * MS and armed.confirm is None


def test_a_second_press_inside_the_last_races_window_is_asked_about_even_alone():
    # bo choped the last Table, then pressed again 400 ms later: his slam of
    # this card (flipped right after), or a nervous second press? Nobody
    # else has pressed yet: the card asks rather than give it to bo
    edges = tap("bo", T0) + tap("cy", T0 + 100 * MS) + tap("bo", T0 + 500 * MS)
    logged = chope(T0, ("bo", T0), ("cy", T0 + 100 * MS))
    armed = arm_unannounced(edges, [logged], T0 + 700 * MS, SETTINGS, kind="first-press",
                            eligible=("bo", "cy", "dee"))
    assert armed.confirm and [c["player"] for c in armed.choices] == ["bo"]
