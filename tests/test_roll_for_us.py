""""Roll for us": a table that lost its die asks the companion to roll.

Issue 12: "Chance comes from the table: the host logs the roll of the real
die (with a "roll for us" option for a table that lost its die, drawn by the
companion outside the tracker and logged like any roll)." The rulebook's die
is a plain six-sided one ("Matériel: ... 1 dé"), so each face must come up
one time in six; the draw is the host's (login and CSRF), and only when the
next thing the table does is that roll.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from companion.games import get_game
from companion.games.base import draw_outcome


def chopote(host, players=("ana", "bo")):
    r = host.post("/api/host/new-game", json={
        "game": "chopote", "players": [{"name": p} for p in players], "options": {}})
    assert r.status_code == 200, r.json
    return r.json["state"]


def draw(host, version):
    return host.post("/api/host/draw", json={"expected_version": version})


def test_the_console_offers_a_roll_when_the_next_step_is_the_die(host):
    state = chopote(host)
    offer = state["draw"]
    assert offer["type"] == "roll" and offer["field"] == "value"
    assert [o["value"] for o in offer["outcomes"]] == [1, 2, 3, 4, 5, 6]
    assert {o["p"] for o in offer["outcomes"]} == {"1/6"}
    assert all(o["event"] in state["legal_events"] for o in offer["outcomes"])


def test_a_drawn_roll_is_logged_like_any_roll(host, session):
    state = chopote(host)
    r = draw(host, state["version"])
    assert r.status_code == 200, r.json
    drawn = r.json["drawn"]
    assert drawn == {"type": "roll", "player": "ana", "value": drawn["value"]}
    assert drawn["value"] in range(1, 7)
    assert r.json["drawn_by"] == "companion" and r.json["p"] == "1/6"
    # the same event in the same log: no extra key (the events' keys are strict)
    assert session.replay.events[-1] == drawn
    exported = session.export_game(session.game_id)
    assert '"drawn_by"' not in exported
    # the console's log line says who rolled
    line = r.json["state"]["log"][-1]
    assert line["line"].endswith("drawn by the companion")
    assert line["drawn_by"] == "companion"
    assert r.json["state"]["version"] == session.version
    # the scoreboard's state shows it as the opening roll of ana
    assert session.snapshot()["view"]["opening"]["rolls"] == {"ana": drawn["value"]}


@pytest.mark.slow
def test_a_draw_follows_the_die_faces_probabilities(host, session):
    """Many draws on one fixed state: every face comes up, and the counts
    pass a chi-square test with a bound so loose it never flakes
    (p < 1e-9 for 5 degrees of freedom is about 52)."""
    state = chopote(host)
    version = state["version"]
    counts = {v: 0 for v in range(1, 7)}
    n = 360
    for _ in range(n):
        r = draw(host, version)
        assert r.status_code == 200, r.json
        counts[r.json["drawn"]["value"]] += 1
        u = host.post("/api/host/undo", json={"expected_version": r.json["state"]["version"]})
        assert u.status_code == 200, u.json
        version = u.json["state"]["version"]
    assert all(c > 0 for c in counts.values()), counts
    expected = n / 6
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 52, (chi2, counts)
    assert session.snapshot()["view"]["opening"]["rolls"] == {}     # every draw undone


def test_draw_outcome_is_exact_for_uneven_probabilities():
    """The draw puts the probabilities on one denominator: with a source that
    walks every ticket once, each outcome is drawn exactly its share."""
    offer = {"outcomes": [{"event": {"type": "spin", "n": k}, "value": k, "p": str(p)}
                          for k, p in ((1, Fraction(1, 2)), (2, Fraction(1, 3)),
                                       (3, Fraction(1, 6)))]}

    class Walk:
        def __init__(self):
            self.next = 0

        def randrange(self, n):
            assert n == 6
            self.next += 1
            return self.next - 1

    rng = Walk()
    got = [draw_outcome(offer, rng)["value"] for _ in range(6)]
    assert sorted(got) == [1, 1, 1, 2, 2, 3]
    # and with real randomness the shares hold loosely
    seeded = random.Random(5)
    tally = [draw_outcome(offer, seeded)["value"] for _ in range(6000)]
    assert 2700 < tally.count(1) < 3300 and 1700 < tally.count(2) < 2300


def test_refused_when_the_next_step_is_a_move(host, session):
    state = chopote(host)
    for value in (5, 2, 6):                       # ana starts, then rolls a 6
        r = host.post("/api/host/event", json={
            "event": {"type": "roll", "player": session.game.current_player(session.state),
                      "value": value}, "expected_version": state["version"]})
        assert r.status_code == 200, r.json
        state = r.json["state"]
    assert state["draw"] is None                  # a bottle to move, not a roll
    before = session.version
    r = draw(host, before)
    assert r.status_code == 409
    assert r.json["rule"] == "draw" and "die" in r.json["error"]
    assert session.version == before              # nothing logged


def test_refused_for_a_card_draw(host, session):
    """Chope! flips cards: the table has its deck, the companion never invents a card."""
    r = host.post("/api/host/new-game", json={
        "game": "chope", "players": [{"name": "ana"}, {"name": "bo"}], "options": {}})
    assert r.status_code == 200, r.json
    assert r.json["state"]["draw"] is None
    r = draw(host, r.json["state"]["version"])
    assert r.status_code == 409 and r.json["rule"] == "draw"


def test_a_stale_console_draws_nothing(host, session):
    state = chopote(host)
    host.post("/api/host/event", json={"event": {"type": "roll", "player": "ana", "value": 3},
                                       "expected_version": state["version"]})
    version = session.version
    r = draw(host, state["version"])
    assert r.status_code == 409
    assert session.version == version


def test_the_host_login_and_csrf_are_required(client, host, session):
    state = chopote(host)
    stranger = client.application.test_client()
    token = stranger.get("/api/csrf").json["csrf"]
    r = stranger.post("/api/host/draw", json={"expected_version": state["version"]},
                      headers={"X-CSRF-Token": token})
    assert r.status_code == 401
    r = host.client.post("/api/host/draw", json={"expected_version": state["version"]})
    assert r.status_code == 403 and r.json["rule"] == "csrf"
    r = host.client.post("/api/host/draw", json={"expected_version": state["version"]},
                         headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    assert session.replay.events == []


@pytest.mark.parametrize("body", [{"expected_version": "7"}, {"expected_version": True}])
def test_a_bad_version_is_a_clear_400(host, body):
    chopote(host)
    r = host.post("/api/host/draw", json=body)
    assert r.status_code == 400 and "expected_version" in r.json["error"]


def test_no_game_no_draw(host, session):
    assert session.game is None
    r = host.post("/api/host/draw", json={})
    assert r.status_code == 409 and "no game" in r.json["error"]


def test_the_roll_is_the_games_hook_and_the_route_only_calls_it():
    """"Roll for us" lives on the game (Game.roll_offer / roll_for_us), not in
    the web blueprint: called on a bare tracker it draws a face of the die by
    its probability and leaves the state alone; a card game offers nothing."""
    game = get_game("chopote")
    state = game.setup(["ana", "bo"])
    offer = game.roll_offer(state)
    assert [o["value"] for o in offer["outcomes"]] == [1, 2, 3, 4, 5, 6]

    class Last:
        def randrange(self, n):
            return n - 1

    assert game.roll_for_us(state, Last())["event"] == {"type": "roll", "player": "ana",
                                                         "value": 6}
    assert game.roll_offer(state) == offer                 # nothing applied
    chope = get_game("chope")
    assert chope.roll_offer(chope.setup(["ana", "bo"])) is None
    assert chope.roll_for_us(chope.setup(["ana", "bo"])) is None
