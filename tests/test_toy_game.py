"""A new game is one registration: a toy coin-flip race game, declared in a
few lines here and registered with ``register_game()``, is playable through
the session, the JSON API and the page with no other file touched.

The toy game: each round the table flips a coin (chance: heads or tails,
one half each), then everyone races to press first; the winner scores a
point, a tie or nobody scores nothing; the first to ``target`` points (3)
wins. It has no panel script, so the page draws it generically.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from companion.games import (Game, RaceReason, RaceRequest, RulesError, Setting, rank_by,
                             register_game, unregister_game)

from tests.kit.web import HostClient


class CoinRace(Game):
    """Flip a coin, then the first press takes a point; first to 3 wins."""

    name, title = "coin_race", "Coin race"
    min_players, max_players = 2, 4
    settings = (Setting("target", 3, "int", minimum=1, maximum=9, label="Points to win",
                        rule="The first player to 3 points wins."),)
    race_reasons = (RaceReason("grab", "first-press", "Grab!", winner="{winner} grabs the coin",
                               nobody="Nobody grabs it"),)

    def _setup(self, players, options):
        return {"players": players, "target": options["target"], "coin": None,
                "scores": {p: 0 for p in players}}

    def _apply(self, s, event):
        if event["type"] == "flip" and s["coin"] is None:
            if event.get("side") not in ("heads", "tails"):
                raise RulesError("a coin lands on heads or tails", "flip")
            s["coin"] = event["side"]
            return s
        if event["type"] == "race" and s["coin"] is not None:
            _, winner, *_ = self.check_race(s, event)
            if winner:
                s["scores"][winner] += 1
            s["coin"] = None
            return s
        raise RulesError(f"no {event['type']} now: "
                         f"{'race for the coin' if s['coin'] else 'flip the coin'} first", "turn")

    def chance_outcomes(self, s):
        if s["coin"] is not None or self.finished(s):
            return []
        return [({"type": "flip", "side": side}, Fraction(1, 2)) for side in ("heads", "tails")]

    def race_request(self, s):
        if s["coin"] is None:
            return None
        return RaceRequest("first-press", tuple(s["players"]), "grab", players=tuple(s["players"]))

    def scores(self, s):
        return dict(s["scores"])

    def current_player(self, s):
        return None

    def finished(self, s):
        return max(s["scores"].values()) >= s["target"]

    def ranking(self, s):
        return rank_by(s["players"], s["scores"].get)

    def public_view(self, s):
        return {"coin": s["coin"], "target": s["target"],
                "status": f"The coin shows {s['coin']}: grab it!" if s["coin"] else "Flip the coin",
                "players": [{"name": p, "score": s["scores"][p]} for p in s["players"]]}


@pytest.fixture
def coin_race():
    name = register_game(CoinRace)
    yield name
    unregister_game(name)


def grab(winner=None, tied=()):
    return {"type": "race", "reason": "grab", "winner": winner, "loser": None,
            "tied": list(tied), "false_starts": [], "ineligible": []}


# ---------------------------------------------------------------------------
# the session


def test_the_toy_game_plays_to_the_end_through_the_session(coin_race, session):
    session.new_game(coin_race, [{"name": "Ana"}, {"name": "Bo"}])
    assert {"type": "flip", "side": "heads"} in session.legal_events()
    for _ in range(3):
        session.log({"type": "flip", "side": "tails"})
        assert session.host_snapshot()["race_request"]["reason"] == "grab"
        session.log(grab("Bo"))
    snap = session.snapshot()
    assert snap["scores"] == {"Ana": 0, "Bo": 3}
    assert snap["finished"] and snap["ranking"] == [["Bo"], ["Ana"]]


# ---------------------------------------------------------------------------
# the JSON API


def test_the_api_describes_the_toy_game_as_data(coin_race, client):
    games = {g["name"]: g for g in client.get("/api/games").json}
    g = games[coin_race]
    assert g["title"] == "Coin race" and g["script"] is None        # no panel: drawn generically
    assert g["settings"][0]["name"] == "target" and g["settings"][0]["kind"] == "int"
    assert (g["settings"][0]["minimum"], g["settings"][0]["maximum"]) == (1, 9)
    assert g["race_reasons"]["grab"]["winner"] == "{winner} grabs the coin"
    assert client.get(f"/api/games/{coin_race}").json["title"] == "Coin race"
    r = client.get("/api/games/monopoly")
    assert r.status_code == 404 and coin_race in r.json["error"]     # the known games named


def test_the_toy_game_is_played_through_the_json_api(coin_race, client):
    host = HostClient(client)
    r = host.post("/api/host/new-game", {"game": coin_race, "players": ["Ana", "Bo", "Cy"],
                                         "options": {"target": 2}})
    assert r.status_code == 200, r.json
    state = host.get("/api/host/state").json
    assert state["game"] == coin_race and state["legal_events"] == [
        {"type": "flip", "side": "heads"}, {"type": "flip", "side": "tails"}]
    for _ in range(2):
        version = host.get("/api/host/state").json["version"]
        r = host.post("/api/host/event", {"event": {"type": "flip", "side": "heads"},
                                          "expected_version": version})
        assert r.status_code == 200, r.json
        legal = r.json["state"]["legal_events"]
        assert grab("Cy") in legal                       # the race outcomes, from the base class
        r = host.post("/api/host/event", {"event": grab("Cy")})
        assert r.status_code == 200, r.json
    s = client.get("/api/state").json
    assert s["scores"] == {"Ana": 0, "Bo": 0, "Cy": 2} and s["finished"]
    assert s["ranking"][0] == ["Cy"]


def test_the_toy_games_rules_refuse_through_the_api(coin_race, client):
    host = HostClient(client)
    r = host.post("/api/host/new-game", {"game": coin_race, "players": ["Ana", "Bo"],
                                         "options": {"target": 0}})
    assert r.status_code == 400 and r.json["field"] == "options.target"
    assert "target" in r.json["error"] and r.json["rule"] == "setup"
    host.post("/api/host/new-game", {"game": coin_race, "players": ["Ana", "Bo"]})
    r = host.post("/api/host/event", {"event": grab("Ana")})
    assert r.status_code == 400 and "flip the coin" in r.json["error"]
    r = host.post("/api/host/event", {"event": {"type": "flip", "side": "edge"}})
    assert r.status_code == 400 and r.json["rule"] == "flip"


# ---------------------------------------------------------------------------
# the page (Playwright in Debian's chromium, phone sized)

@pytest.mark.browser
def test_the_toy_game_is_played_on_the_page(coin_race, live_server, browser):
    from playwright.sync_api import expect

    from tests.kit.browser import PHONE, open_board, open_host, shot

    t = live_server
    t.session.new_game(coin_race, [{"name": n} for n in ("Ana", "Bo", "Cy")])
    ctx = browser.new_context(**PHONE, color_scheme="dark")
    try:
        ctx.set_default_timeout(8000)
        board = open_board(ctx, t)
        expect(board.locator("#title")).to_have_text("Coin race")
        expect(board.locator("#players li")).to_have_count(3)
        expect(board.locator("#players li").first).to_contain_text("Ana")
        expect(board.locator("#players li small").first).to_have_text("points")
        expect(board.locator("#panel")).to_contain_text("Flip the coin")   # the generic panel

        host = open_host(ctx, t)
        expect(host.locator("#legal button.event")).to_have_count(2)
        heads = host.locator("#legal button.event", has_text="Heads")
        heads.tap()
        expect(board.locator("#panel")).to_contain_text("grab it")
        win = host.locator("#legal button.event", has_text="Bo grabs the coin")
        expect(win).to_have_count(1)
        shot(host, "host-toy-game.png")
        win.first.tap()
        expect(board.locator("#players li[data-player=Bo] .score")).to_contain_text("1")
        # the race card words the verdict the game's way (the console
        # fetches the state afresh; a reloaded scoreboard gets a snapshot)
        expect(host.locator("#verdict")).to_have_text("Bo grabs the coin")
        board.reload()
        board.wait_for_selector("#conn.live")
        expect(board.locator("#verdict")).to_have_text("Bo grabs the coin")
        expect(board.locator("#race-reason")).to_have_text("Grab!")
        assert board.evaluate("document.documentElement.scrollWidth") <= 390
        assert host.evaluate("document.documentElement.scrollWidth") <= 390
        shot(board, "scoreboard-toy-game.png")
        assert board.errors == []
    finally:
        ctx.close()
