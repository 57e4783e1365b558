"""Food Poisoning end to end on mock pins (issue "Hawker Wars", Tests).

The rulebook: "Food Poisoning: everyone holds their buzzer like a stomach;
the first to let go loses 2 cards", and the referee's rule for a
first-release race: "a player not holding at the arm time counts as
releasing at the arm time" (docs/rules-notes.md, "Races"). Here the real chain
runs: mock GPIO pins -> the buzzer pipeline (its own thread) -> the table
session (referee, arming, the store on a temporary SQLite file) -> the
Hawker Wars tracker, which takes the loser's 2 cards once they are named.
Times are the real monotonic clock, as under ``companion serve``."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest

from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.pipeline import Pipeline
from tests.kit.helpers import run_until, wait_for
from tests.kit.moments import hawker_at_food_poisoning

@contextmanager
def table(session, names):
    """Mock buzzers 1..n (seat order) on a running pipeline to ``session``."""
    pins = ClockedMockFactory()               # follows the real monotonic clock
    src = MockSource([str(i + 1) for i in range(len(names))], pin_factory=pins)
    pipe = Pipeline(src, session).start()
    try:
        yield src
    finally:
        pipe.close()
        src.close()
        pins.close()
        pins.reset()


def buzzer(names, name) -> str:
    return str(names.index(name) + 1)


def race(session) -> dict:
    return session.snapshot()["race"] or {}


def start_and_wait_for_go(session, countdown_ms=400):
    session.start_race(countdown_ms)
    assert race(session)["phase"] in ("countdown", "live")   # a busy machine may be past GO
    # past GO: live, or decided already (nobody holding decides at GO + the
    # hold, 30 ms: a loaded machine may never see it live)
    assert wait_for(lambda: race(session).get("phase") in ("live", "decided"), timeout=3)


def logged_race(session) -> dict:
    assert wait_for(lambda: session.state["race"] is None
                    or race(session).get("phase") == "decided", timeout=5)
    return [e for _, e in session._log if e["type"] == "race"][-1]


def hand_size(session, name) -> int:
    view = session.private_snapshot(name)["view"]
    return view["ingredients"] + view["actions"]


@pytest.mark.parametrize("names", [["ana", "bo", "cy"], ["ana", "bo"]])
def test_all_hold_one_lets_go_and_loses_two_cards(store, names):
    session = hawker_at_food_poisoning(store, names)
    loser = names[-1]
    with table(session, names) as src:
        for n in names:                                   # everyone holds before GO
            src.press(buzzer(names, n))
        start_and_wait_for_go(session)
        time.sleep(0.08)
        assert race(session)["phase"] == "live"           # nobody let go: still holding
        src.release(buzzer(names, loser))
        assert wait_for(lambda: race(session).get("phase") == "decided", timeout=3)
        snap_race = race(session)
        for n in names:
            if n != loser:
                src.release(buzzer(names, n))
    ev = logged_race(session)
    assert ev["kind"] == "first-release" and ev["announced"] is True
    assert ev["loser"] == loser and ev["tied"] == [] and not ev.get("virtual")
    assert snap_race["text"] == f"{loser} let go first and loses 2 cards"
    # the tracker takes 2 cards: the loser chooses which (the default setting)
    before = hand_size(session, loser)
    assert session.snapshot()["view"]["loss"]["player"] == loser
    mine = [e for e in session.private_snapshot(loser)["events"] if e["type"] == "lose"]
    assert mine and all(len(e["cards"]) == 2 and e["player"] == loser for e in mine)
    assert all(e["type"] != "lose" for n in names if n != loser
               for e in session.private_snapshot(n)["events"])
    session.log_private(loser, mine[0])
    assert hand_size(session, loser) == before - 2
    public = session.snapshot()["view"]
    assert [p["hand"] for p in public["players"] if p["name"] == loser] == [before - 2]
    assert not public["loss"]


def test_who_let_go_next_shows_after_the_verdict_and_a_grab_again_does_not(store):
    """The race card's runners-up in Food Poisoning are the later let-gos:
    cy lets go first (loses), bo next, after the verdict; cy grabbing the
    buzzer again is nobody's let-go, and ana, still holding, is not listed."""
    names = ["ana", "bo", "cy"]
    # a runner-up margin and a deadline no loaded machine outlasts between
    # cy's let-go and bo's (the verdict and its log are waited for between)
    session = hawker_at_food_poisoning(store, names, runner_up_ms=60_000,
                                       announced_wait_ms=60_000)
    with table(session, names) as src:
        for n in names:
            src.press(buzzer(names, n))
        start_and_wait_for_go(session)
        time.sleep(0.08)
        src.release(buzzer(names, "cy"))
        assert wait_for(lambda: race(session).get("phase") == "decided", timeout=3)
        logged_race(session)
        time.sleep(0.05)                                  # past the buzzer's debounce
        src.press(buzzer(names, "cy"))                    # grabs it again
        time.sleep(0.05)
        src.release(buzzer(names, "bo"))
        assert wait_for(lambda: [o["player"] for o in race(session)["order"]] == ["cy", "bo"],
                        timeout=5), race(session)["order"]
        order = race(session)["order"]
        assert [o.get("after_verdict", False) for o in order] == [False, True]
        assert order[1]["offset_us"] > 0
        src.release(buzzer(names, "cy"))
        src.release(buzzer(names, "ana"))


@pytest.mark.parametrize("names", [["ana", "bo", "cy"], ["ana", "bo"]])
def test_a_player_who_never_held_loses_at_go(store, names):
    session = hawker_at_food_poisoning(store, names)
    slacker = names[0]
    with table(session, names) as src:
        for n in names[1:]:
            src.press(buzzer(names, n))
        start_and_wait_for_go(session)
        assert wait_for(lambda: race(session).get("phase") == "decided", timeout=3)
        for n in names[1:]:
            src.release(buzzer(names, n))
    ev = logged_race(session)
    assert ev["loser"] == slacker and ev["tied"] == []
    assert session.snapshot()["view"]["loss"]["player"] == slacker


def test_a_tie_within_the_tie_window_loses_nobody_anything(store):
    names = ["ana", "bo", "cy"]
    session = hawker_at_food_poisoning(store, names, tie_window_us=2_000)
    with table(session, names) as src:
        for n in names:
            src.press(buzzer(names, n))
        start_and_wait_for_go(session)
        time.sleep(0.05)
        t = time.monotonic_ns()
        src.release(buzzer(names, "ana"), t)              # 1 ms apart: inside 2 ms
        src.release(buzzer(names, "bo"), t + 1_000_000)
        src.pin_factory.clock_ns = None                   # back to real time
        assert wait_for(lambda: race(session).get("phase") == "decided", timeout=3)
        src.release(buzzer(names, "cy"))
    ev = logged_race(session)
    assert ev["loser"] is None and sorted(ev["tied"]) == ["ana", "bo"]
    assert race(session)["text"] == "ana and bo let go together: nobody loses cards"
    view = session.snapshot()["view"]
    assert not view["loss"] and view["race"] is None
    assert [hand_size(session, n) for n in names] == [5, 5, 5]


def test_two_players_both_never_holding_is_a_tie_not_a_loss(store):
    """With 2 players, if neither holds at GO both "let go" at GO together:
    a tie, nobody loses (the referee's rule; no one-player race)."""
    names = ["ana", "bo"]
    session = hawker_at_food_poisoning(store, names)
    with table(session, names):
        start_and_wait_for_go(session)
        assert wait_for(lambda: race(session).get("phase") == "decided", timeout=3)
    ev = logged_race(session)
    assert ev["loser"] is None and sorted(ev["tied"]) == names


# -- Start tapped long after everyone grabbed their buzzer ---------------------
# "Play immediately: All players to hold their stomach with 1 hand for a turn":
# the players grab their buzzers when the card appears; the host may tap
# Start many seconds later. Holding for this race is the game, not a stuck
# button (docs/rules-notes.md, Food Poisoning). Virtual time: the session's
# clock is moved by the test, ticking at every deadline as the pipeline does.

S_NS = 1_000_000_000
MS_NS = 1_000_000


def run_to(session, clock, t_ns, edges=()):
    """Move the clock to ``t_ns``, ticking at each deadline on the way and
    feeding each of ``edges`` (ButtonEdges) at its stamp."""
    run_until(session, clock, t_ns, [(e.t_ns, e) for e in edges])


@pytest.mark.parametrize("start_after_s", [0, 10, 20, 45])
def test_start_tapped_long_after_everyone_grabbed_still_judges_the_first_to_let_go(
        store, start_after_s):
    from companion.races.edges import ButtonEdge
    from tests.kit.helpers import Clock
    names = ["ana", "bo", "cy"]
    clock = Clock()
    session = hawker_at_food_poisoning(store, names, clock=clock)
    grabbed = clock.t + 500 * MS_NS                        # the card appears: all grab
    run_to(session, clock, grabbed + start_after_s * S_NS + 5 * MS_NS,
           [ButtonEdge(buzzer(names, n), True, grabbed + i * MS_NS) for i, n in enumerate(names)])
    session.start_race(400)
    go = race(session)["go_ns"]
    lets_go = go + 1_500 * MS_NS
    run_to(session, clock, lets_go + 2 * S_NS,
           [ButtonEdge(buzzer(names, "bo"), False, lets_go)])
    logged = [e for _, e in session._log if e["type"] == "race"]
    assert logged, f"no verdict: {race(session)}"
    ev = logged[-1]
    assert ev["loser"] == "bo" and ev["tied"] == []
    assert sorted(ev["spec"]["eligible"]) == names
    assert session.snapshot()["view"]["loss"]["player"] == "bo"
    faults = [(f["player"], f["fault"]) for f in session.faults]
    # before Start a buzzer held 10 s is reported; Start clears it: holding is the game
    assert not session.snapshot()["faults"]                 # no alert left on the page
    for n in names:
        stuck = faults.count((n, "stuck"))
        assert stuck == faults.count((n, "cleared")) == (1 if start_after_s >= 10 else 0)


def test_a_buzzer_still_held_long_after_the_verdict_is_reported_stuck(store):
    """The race is decided: nobody has a reason to hold any more. A buzzer
    still down the stuck time after the verdict is reported (a truly stuck
    button), and a press race started then leaves it out."""
    from companion.races.edges import ButtonEdge
    from tests.kit.helpers import Clock
    names = ["ana", "bo", "cy"]
    clock = Clock()
    session = hawker_at_food_poisoning(store, names, clock=clock)
    grabbed = clock.t + 500 * MS_NS
    run_to(session, clock, grabbed + 20 * S_NS,
           [ButtonEdge(buzzer(names, n), True, grabbed) for n in names])
    session.start_race(400)
    lets_go = race(session)["go_ns"] + 1_000 * MS_NS
    run_to(session, clock, lets_go + 1 * S_NS,
           [ButtonEdge(buzzer(names, "bo"), False, lets_go),
            ButtonEdge(buzzer(names, "cy"), False, lets_go + 300 * MS_NS)])
    logged = [e for _, e in session._log if e["type"] == "race"]
    assert logged and logged[-1]["loser"] == "bo"
    decided = clock.t
    run_to(session, clock, decided + 12 * S_NS)             # ana never lets go
    faults = [(f["player"], f["fault"]) for f in session.snapshot()["faults"]]
    assert faults[-1] == ("ana", "stuck")
    assert session.desk.referee.stuck == {"ana"}
