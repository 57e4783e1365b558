"""Handicaps (issue 35): a head start per player, taken off their counted
press by the referee before the verdict; 0 changes nothing; off at a league
table."""

from __future__ import annotations

import random

import pytest

from companion.games import RulesError, register_game, unregister_game
from companion.races.edges import Edge
from companion.races.referee import (FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, LiveRace,
                                     RaceError, RaceSpec, Referee, judge)
from companion.record.history import normalise_players
from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.helpers import MS, Clock, press, run
from tests.kit.toygame import CoinRace

KINDS = (FIRST_PRESS, LAST_PRESS, FIRST_RELEASE)


def taps(rng, players, arm):
    edges = []
    for p in players:
        t = arm + rng.randrange(-50, 600) * MS
        edges += [Edge(p, True, t), Edge(p, False, t + rng.randrange(30, 200) * MS)]
    return edges


@pytest.mark.parametrize("kind", KINDS)
def test_a_handicap_of_zero_changes_nothing(kind):
    rng = random.Random(35)
    players = ("ana", "bo", "cy")
    for _ in range(200):
        arm = 1_000 * MS
        edges = taps(rng, players, arm)
        plain = RaceSpec(kind, players, arm_ns=arm, tie_window_ns=rng.choice((0, 5 * MS)))
        zero = RaceSpec(kind, players, arm_ns=arm, tie_window_ns=plain.tie_window_ns,
                        handicap_ns={"cy": 0, "ana": 0})
        assert zero == plain and zero.to_json() == plain.to_json()
        assert judge(zero, edges).to_json() == judge(plain, edges).to_json()


def test_the_head_start_decides_the_race_and_the_order_keeps_real_stamps():
    arm = 0
    edges = [Edge("ana", True, 270 * MS), Edge("cy", True, 400 * MS)]
    spec = RaceSpec(FIRST_PRESS, ("ana", "cy"), arm_ns=arm, handicap_ns={"cy": 150 * MS})
    v = judge(spec, edges)
    assert v.winner == "cy"
    assert v.order == [("cy", 400 * MS), ("ana", 270 * MS)]
    out = v.to_json()
    assert out["handicap_ns"] == {"cy": 150 * MS}
    assert [(o["player"], o["offset_ns"]) for o in out["order"]] == [("cy", 0), ("ana", 20 * MS)]
    assert out["order"][0]["handicap_ns"] == 150 * MS
    # without it the adult wins
    assert judge(RaceSpec(FIRST_PRESS, ("ana", "cy"), arm_ns=arm), edges).winner == "ana"


def test_a_head_start_never_excuses_a_false_start_and_ties_use_the_counted_times():
    spec = RaceSpec(FIRST_PRESS, ("ana", "cy"), arm_ns=1_000 * MS,
                    handicap_ns={"cy": 300 * MS}, tie_window_ns=2 * MS)
    v = judge(spec, [Edge("cy", True, 990 * MS), Edge("ana", True, 1_100 * MS)])
    assert v.false_starts == ["cy"] and v.winner == "ana"
    v = judge(spec, [Edge("cy", True, 1_401 * MS), Edge("ana", True, 1_100 * MS)])
    assert v.tied == ["ana", "cy"] and v.winner is None


def test_last_press_head_start_and_release_races_take_none():
    edges = [Edge("ana", True, 300 * MS), Edge("cy", True, 420 * MS)]
    spec = RaceSpec(LAST_PRESS, ("ana", "cy"), handicap_ns={"cy": 200 * MS})
    assert judge(spec, edges).loser == "ana"
    assert judge(RaceSpec(LAST_PRESS, ("ana", "cy")), edges).loser == "cy"
    rel = RaceSpec(FIRST_RELEASE, ("ana", "cy"), arm_ns=100 * MS, handicap_ns={"cy": 200 * MS})
    held = [Edge("ana", True, 0), Edge("cy", True, 0), Edge("cy", False, 300 * MS),
            Edge("ana", False, 400 * MS)]
    assert judge(rel, held).loser == "cy" and "handicap_ns" not in judge(rel, held).to_json()


@pytest.mark.parametrize("bad", [{"zed": MS}, {"cy": -1}, {"cy": 2_001 * MS}, {"cy": 1.5},
                                 [("cy",)], 7])
def test_a_bad_handicap_is_a_clear_error(bad):
    with pytest.raises(RaceError):
        RaceSpec(FIRST_PRESS, ("ana", "cy"), handicap_ns=bad)


def test_spec_round_trips_with_its_handicaps():
    spec = RaceSpec(FIRST_PRESS, ("ana", "cy"), handicap_ns={"cy": 150 * MS})
    assert RaceSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("kind", (FIRST_PRESS, LAST_PRESS))
def test_the_live_race_waits_for_the_head_start_and_equals_judge(kind):
    """The adult presses first; the child with a head start may still win
    after the adult's hold: the live race must wait for them."""
    rng = random.Random(7)
    players = ("ana", "bo", "cy")
    for _ in range(300):
        h = {"cy": rng.randrange(0, 400) * MS, "bo": rng.choice((0, 100 * MS))}
        spec = RaceSpec(kind, players, arm_ns=0, deadline_ns=3_000 * MS,
                        tie_window_ns=rng.choice((0, 3 * MS)), handicap_ns=h)
        edges = sorted(taps(rng, players, 0), key=lambda e: e.t_ns)
        edges = [e for e in edges if e.t_ns >= 0]
        ref = Referee(players, hold_ns=30 * MS)
        ref.start(spec)
        for e in edges:
            ref.poll(e.t_ns)
            ref.feed(e)
        ref.poll(10_000 * MS)
        live = ref.race
        assert live.verdict is not None
        full = judge(live.spec, edges)      # every press: the decision cannot differ
        assert (live.verdict.winner, live.verdict.loser, live.verdict.tied) == \
            (full.winner, full.loser, full.tied)


def test_the_referee_gives_the_tables_head_starts_to_a_race_without_its_own():
    ref = Referee(("ana", "cy"))
    ref.handicap_ns = {"cy": 150 * MS}
    race = ref.start(RaceSpec(FIRST_PRESS, ("ana", "cy")))
    assert race.spec.handicaps() == {"cy": 150 * MS}
    assert isinstance(race, LiveRace)


def test_players_keep_a_handicap_and_refuse_a_bad_one():
    out = normalise_players([{"name": "ana"}, {"name": "cy", "handicap_ms": 150}])
    assert "handicap_ms" not in out[0] and out[1]["handicap_ms"] == 150
    assert "handicap_ms" not in normalise_players([{"name": "cy", "handicap_ms": 0}])[0]
    for bad in (-5, 2_001, "150", 1.5, True):
        with pytest.raises(RulesError, match="handicap"):
            normalise_players([{"name": "cy", "handicap_ms": bad}])


@pytest.fixture
def coinrace():
    name = register_game(CoinRace)
    yield name
    unregister_game(name)


def _table(allowed=True):
    clock = Clock()
    s = TableSession(Store(":memory:"), clock=clock)
    s.handicaps_allowed = allowed
    return s, clock


def test_a_table_race_records_the_head_start_and_the_child_wins(coinrace):
    s, clock = _table()
    s.new_game(coinrace, [{"name": "ana", "buzzer": "b1"},
                          {"name": "cy", "buzzer": "b2", "handicap_ms": 195}])
    s.log({"type": "flip", "side": "heads"})
    s.start_race(0)
    run(s, clock, 5)
    clock.advance(270)
    press(s, clock, "b1")               # the adult, 270 ms after GO
    clock.advance(150)
    press(s, clock, "b2")               # the child, 150 ms later: 45 ms ahead, counted
    run(s, clock, 400)
    race = [e for _, e in s.store.events(s.game_id)][-1]
    assert race["type"] == "race" and race["winner"] == "cy"
    assert race["spec"]["handicap_ns"] == {"cy": 195 * MS}
    assert race["handicap_ns"] == {"cy": 195 * MS}
    assert s.snapshot()["race"]["verdict"]["handicap_ns"] == {"cy": 195 * MS}
    assert s.host_snapshot()["handicaps"] is True


def test_a_league_table_refuses_head_starts(coinrace):
    s, _ = _table(allowed=False)
    with pytest.raises(RulesError, match="league"):
        s.new_game(coinrace, [{"name": "ana"}, {"name": "cy", "handicap_ms": 150}])
    s.new_game(coinrace, ["ana", "cy"])
    assert s.host_snapshot()["handicaps"] is False
    assert s.referee.handicap_ns == {}
