"""The game's log as its own object (companion.table.gamelog.GameLog), handed to
the session and its races alike; the race code hands the views a frozen
shot of the race (companion.table.raceshots) and judges an interrupted race once."""

from __future__ import annotations

import dataclasses

import pytest


from companion.table import raceshots
from companion.races.edges import Edge
from companion.table.gamelog import GameLog
from companion.games import RulesError, get_game
from companion.table.session import TableSession
from companion.record.store import StaleVersion, Store, StoreError

from tests.kit.helpers import S, Clock, press, run
from tests.kit.games import SEATS, Grab, grab_registered  # noqa: F401 - the fixture




def new_log(store=None) -> GameLog:
    return GameLog.create(store or Store(":memory:"), get_game(Grab.name), SEATS,
                          {"stubborn": False})


def test_append_is_durable_and_moves_the_version():
    g = new_log()
    eid = g.append({"type": "coin"})
    assert g.version == eid and g.rows == [(eid, {"type": "coin"})]
    assert g.store.events(g.game_id) == [(eid, {"type": "coin"})]
    assert g.state["pending"] == "coin"


def test_a_failed_append_rolls_the_replay_back(mocker):
    g = new_log()
    mocker.patch.object(g.store, "append", side_effect=StoreError("disk full"))
    with pytest.raises(StoreError):
        g.append({"type": "coin"})
    assert g.version == 0 and g.rows == [] and g.events == [] and g.state["pending"] is None


def test_a_refused_event_changes_nothing():
    g = new_log()
    with pytest.raises(RulesError):
        g.append({"type": "race", "winner": "ana"})
    assert g.version == 0 and g.store.events(g.game_id) == []


def test_a_stale_version_is_refused_with_the_last_line():
    g = new_log()
    first = g.append({"type": "coin"})
    g.append({"type": "race", "winner": "bo"})
    with pytest.raises(StaleVersion, match="last: "):
        g.append({"type": "bell"}, expected_version=first)


def test_a_race_record_is_judged_again_from_its_edges():
    g = new_log()
    g.append({"type": "coin"})
    spec = {"kind": "first-press", "players": ["ana", "bo", "cy"],
            "eligible": ["ana", "bo", "cy"], "arm_ns": 0, "deadline_ns": 10 * S}
    edges = [Edge("bo", True, S).to_json(), Edge("ana", True, 2 * S).to_json()]
    with pytest.raises(RulesError, match="does not match its edges"):
        g.append({"type": "race", "spec": spec, "edges": edges, "winner": "ana"})
    assert g.version == 1


def test_the_session_and_its_races_share_one_log():
    s = TableSession(Store(":memory:"), clock=Clock())
    s.new_game(Grab.name, SEATS)
    assert s.races.gamelog is s.gamelog
    s.log({"type": "coin"})
    assert s.version == s.gamelog.version == s.races.gamelog.version == 1


def test_the_views_get_a_frozen_shot_and_the_race_code_finds_the_runners_up():
    clock = Clock()
    s = TableSession(Store(":memory:"), clock=clock, settings={"runner_up_ms": 500})
    s.new_game(Grab.name, SEATS)
    s.log({"type": "coin"})
    clock.advance(100)
    press(s, clock, "1")                          # ana first
    run(s, clock, 100)                            # decided and logged
    press(s, clock, "2")                          # bo, after the verdict
    shot = s.races.shot(clock.t)
    assert isinstance(shot, raceshots.DecidedShot)
    with pytest.raises(dataclasses.FrozenInstanceError):
        shot.info = {}
    assert [r["player"] for r in shot.runner_ups] == ["bo"]
    race = s.snapshot()["race"]
    assert [o["player"] for o in race["order"]] == ["ana", "bo"]
    assert race["order"][1]["after_verdict"] is True


def test_an_interrupted_race_is_judged_once(tmp_path, mocker):
    path = tmp_path / "t.db"
    clock = Clock()
    s = TableSession(Store(path), clock=clock)
    s.new_game(Grab.name, SEATS)
    s.log({"type": "bell"})
    s.start_race(1000)
    run(s, clock, 1100)
    press(s, clock, "2")                          # bo presses, then the power goes
    s.store.close()

    judge = mocker.spy(raceshots, "judge")
    again = TableSession(Store(path), clock=Clock(2 * S))
    again.resume()
    for _ in range(5):
        race = again.snapshot()["race"]
        assert race["phase"] == "interrupted" and [o["player"] for o in race["order"]] == ["bo"]
    again.host_snapshot()
    assert judge.call_count == 1
    again.store.close()


def test_a_press_that_reached_the_race_after_its_verdict_was_due_is_a_runner_up():
    """A busy table thread may take a press before the poll that decides the
    race: stamped after the decision time, the race records it but leaves it
    out of the verdict (decided on the stamps); the race card still lists it
    after the verdict, as it would had the poll come first."""
    clock = Clock()
    s = TableSession(Store(":memory:"), clock=clock, settings={"runner_up_ms": 500})
    s.new_game(Grab.name, SEATS)
    s.log({"type": "coin"})
    clock.advance(100)
    t_ana = press(s, clock, "1")                  # ana first
    clock.advance(60)                             # past the hold, and no tick yet
    t_bo = press(s, clock, "2")                   # bo, after the verdict was due
    run(s, clock, 100)                            # decided and logged
    [race] = [e for e in s.gamelog.events if e["type"] == "race"]
    assert [o["player"] for o in race["order"]] == ["ana"]
    assert ["bo", t_bo] in [[e["player"], e["t_ns"]] for e in race["edges"]]
    order = s.snapshot()["race"]["order"]
    assert [(o["player"], o.get("after_verdict", False)) for o in order] == [
        ("ana", False), ("bo", True)]
    assert order[1]["offset_us"] == (t_bo - t_ana) / 1000


def test_a_first_release_races_runners_up_are_the_later_let_gos_not_presses():
    """Food Poisoning (first to let go loses): after Bo lets go, Cy letting
    go 200 ms later is the runner-up; Bo pressing again is nobody's."""
    spec = {"kind": "first-release", "players": ["ana", "bo", "cy"],
            "eligible": ["ana", "bo", "cy"], "arm_ns": 0, "deadline_ns": 60 * S}
    event = {"type": "race", "spec": spec, "loser": "bo",
             "order": [{"player": "bo", "t_ns": S}]}
    edges = [Edge("bo", False, S), Edge("bo", True, S + 100_000_000),
             Edge("cy", False, S + 200_000_000), Edge("ana", False, 3 * S)]
    got = raceshots.runner_ups(event, edges, close_ns=S + 600_000_000)
    assert [(r["player"], r["offset_us"]) for r in got] == [("cy", 200_000.0)]
