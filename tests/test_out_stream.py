"""The table's one way out: a stream of typed events (companion.table.events)
that the pages and the buzzer box's lights both follow.

The lights hear a table only through that stream: a verdict lights the
winner's LED once the game has taken it and it is logged, so a verdict the
game refuses lights nothing (with the lights listening on the referee, it
lit the winner all the same)."""

from __future__ import annotations

import pytest

from companion.buzzers.feedback import Feedback, FeedbackSettings
from companion.buzzers.mock import ClockedMockFactory
from companion.races.edges import Edge
from companion.races.referee import MS
from companion.table.session import TableSession
from companion.record.store import Store
from companion.table.events import (Countdown, Fault, NewState, Press, RaceArmed, RaceShown,
                                   VerdictLogged)

from tests.kit.games import SEATS, Grab, grab_registered  # noqa: F401 - the fixture
from tests.kit.helpers import Clock, press, run, toggles, wait_for

BUZZERS = ["1", "2", "3"]


@pytest.fixture
def pins():
    f = ClockedMockFactory(start_ns=0)
    yield f
    f.close()
    f.reset()


def table(pins, **options):
    clock = Clock()
    s = TableSession(Store(":memory:"), clock=clock)
    s.new_game(Grab.name, SEATS, options)
    fb = Feedback.from_pinmap(BUZZERS, pin_factory=pins, clock=clock,
                              settings=FeedbackSettings(win_ns=60_000 * MS))
    fb.attach(s)
    return s, clock, fb


def lit(fb, buzzer) -> bool:
    return bool(fb.leds[buzzer].pin.state)


def test_a_verdict_the_game_refuses_lights_no_winner_led(pins):
    s, clock, fb = table(pins, stubborn=True)
    try:
        s.log({"type": "coin"})
        clock.advance(100)
        press(s, clock, "2")                       # bo grabs first
        run(s, clock, 200)
        race = s.snapshot()["race"]
        assert race["phase"] == "decided" and race["verdict"]["winner"] == "bo"
        assert race["error"] and "refuses every verdict" in race["error"]
        assert [f["fault"] for f in s.snapshot()["faults"]] == ["race-rejected"]
        assert [e["type"] for _, e in s.store.events(s.game_id)] == ["coin"]   # nothing logged
        assert not any(lit(fb, b) for b in BUZZERS)
    finally:
        fb.close()


def test_a_logged_verdict_lights_the_winners_led(pins):
    s, clock, fb = table(pins)
    try:
        s.log({"type": "coin"})
        clock.advance(100)
        press(s, clock, "2")
        run(s, clock, 200)
        assert [e["type"] for _, e in s.store.events(s.game_id)] == ["coin", "race"]
        assert lit(fb, "2") and not lit(fb, "1") and not lit(fb, "3")
    finally:
        fb.close()


def test_the_lights_follow_no_referee_and_take_the_seating_from_the_stream(pins):
    s, clock, fb = table(pins)
    try:
        assert fb not in s.referee.listeners
        s.set_player("cy", buzzer=None)
        s.set_player("bo", buzzer="3")
        s.set_player("cy", buzzer="2")
        s.log({"type": "coin"})
        clock.advance(100)
        press(s, clock, "3")                       # buzzer 3 is bo's now
        run(s, clock, 200)
        assert s.snapshot()["race"]["verdict"]["winner"] == "bo"
        assert lit(fb, "3") and not lit(fb, "2")
    finally:
        fb.close()


def test_one_stream_of_typed_events_in_order(pins):
    s, clock, fb = table(pins)
    events, pages = [], []
    s.subscribe_events(events.append)
    s.subscribe(pages.append)
    try:
        s.log({"type": "coin"})
        clock.advance(100)
        press(s, clock, "1")
        run(s, clock, 200)
        kinds = [type(e) for e in events]
        armed = kinds.index(RaceArmed)
        pressed = kinds.index(Press)
        verdict = kinds.index(VerdictLogged)
        assert armed < pressed < verdict
        assert kinds[verdict + 1] is NewState and events[verdict + 1].eid == events[verdict].eid
        assert events[verdict].verdict.winner == "ana"
        assert events[pressed].player == "ana" and events[pressed].pressed
        # the pages get every event's JSON but the verdict's (the state carries it)
        assert [u["type"] for u in pages] == [e.kind for e in events if e.kind != "verdict"]
        assert pages[-1] == events[-1].page_update()
    finally:
        fb.close()


def test_an_announced_start_is_a_countdown_event_and_plays_the_cue(pins):
    s, clock, fb = table(pins)
    events = []
    s.subscribe_events(events.append)
    try:
        s.log({"type": "bell"})
        race = s.start_race(3000)
        countdowns = [e for e in events if isinstance(e, Countdown)]
        assert len(countdowns) == 1 and countdowns[0].go_ns == race["go_ns"]
        assert countdowns[0].data["phase"] == "countdown"
        assert fb.next_deadline() is not None       # the cue's steps are planned
        run(s, clock, 3100)                          # GO: shown, not armed again
        assert len([e for e in events if isinstance(e, Countdown)]) == 1
        assert any(isinstance(e, RaceShown) and not isinstance(e, RaceArmed)
                   and e.data["phase"] == "live" for e in events)
    finally:
        fb.close()


def test_a_stuck_buzzer_is_a_fault_event_and_flickers(pins):
    s, clock, fb = table(pins)
    events = []
    s.subscribe_events(events.append)
    try:
        s.feed_edge(Edge("1", True, clock.t))
        run(s, clock, 20_000, step=100)             # held far past stuck_ms
        stuck = [e for e in events if isinstance(e, Fault) and e.fault == "stuck"]
        assert stuck and stuck[0].player == "ana"
        assert wait_for(lambda: toggles(fb.leds["1"].pin) >= 2, 3)
    finally:
        fb.close()
