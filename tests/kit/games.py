"""Small games for the tests and benchmarks, registered by hand
(``companion.games.register_game``):

* :class:`Relay`: "go, then race": ``go`` asks for an announced last-press
  race of every player (a Mynah-like slap that waits for everyone), whose
  ``race`` event the desk logs; the loser loses a point. Never finishes.
* :class:`Counter`: ``add`` ``n`` to a player's total; no race, never finishes.
* :class:`Grab`: a ``coin`` asks for an unannounced first-press race, a
  ``bell`` an announced one (the table's one way out, its log).

The toy Coin race (a chance node, settings, a first-press race) is
:mod:`tests.kit.toygame`.
"""

from __future__ import annotations

import pytest

from companion import games
from companion.games import Game, RaceReason, RaceRequest, RulesError, rank_by


class Relay(Game):
    """``go``, then its announced last-press race of every player."""

    name = "relay"
    title = "Relay"
    #: the race's reason, and its request's ``info`` (``wait_ms``: how long
    #: the race waits); not ``info``, which is every game's description method
    reason = "siam"
    race_info: dict = {"wait_ms": 60_000}

    def _setup(self, players, options):
        return {"players": players, "racing": False, "lost": {p: 0 for p in players}}

    def _apply(self, s, ev):
        if ev["type"] == "go" and not s["racing"]:
            s["racing"] = True
        elif ev["type"] == "race" and s["racing"]:
            s["racing"] = False
            if ev.get("loser"):
                s["lost"][ev["loser"]] += 1
        else:
            raise RulesError("go, then its race", "format")
        return s

    def race_request(self, s):
        if not s["racing"]:
            return None
        return RaceRequest("last-press", tuple(s["players"]), self.reason, announced=True,
                           players=tuple(s["players"]), info=dict(self.race_info))

    def scores(self, s):
        return {p: -n for p, n in s["lost"].items()}

    def current_player(self, s):
        return None

    def finished(self, s):
        return False

    def ranking(self, s):
        return rank_by(s["players"], lambda p: -s["lost"][p])

    def public_view(self, s):
        return {"racing": s["racing"], "lost": dict(s["lost"])}


class Counter(Game):
    """``{"type": "add", "player": p, "n": n}`` adds ``n`` to ``p``'s total."""

    name = "counter"
    title = "Counter"

    def _setup(self, players, options):
        return {"players": players, "totals": {p: 0 for p in players}, "n": 0}

    def _apply(self, s, ev):
        if ev["type"] != "add" or ev.get("player") not in s["players"]:
            raise RulesError("only 'add' by a player", "format")
        s["totals"][ev["player"]] += ev["n"]
        s["n"] += 1
        return s

    def legal_events(self, s):
        return [{"type": "add", "player": p, "n": 1} for p in s["players"]]

    def scores(self, s):
        return dict(s["totals"])

    def current_player(self, s):
        return None

    def finished(self, s):
        return False

    def ranking(self, s):
        return rank_by(s["players"], lambda p: s["totals"][p])

    def public_view(self, s):
        return dict(s)


SEATS = [{"name": "ana", "buzzer": "1"}, {"name": "bo", "buzzer": "2"},
         {"name": "cy", "buzzer": "3"}]


class Grab(Game):
    """A toy: a ``coin`` asks for an unannounced first-press race, a
    ``bell`` for an announced one; the winner takes a point. With the option
    ``stubborn`` the tracker refuses every verdict."""

    name = "grab_stream"
    title = "Grab"
    min_players = 2
    max_players = 4
    race_reasons = (RaceReason("grab", "first-press", "Grab!", winner="{winner} grabs it"),
                    RaceReason("bell", "first-press", "Bell!", announced=True,
                               winner="{winner} rings first"))

    def default_options(self):
        return {"stubborn": False}

    def _setup(self, players, options):
        return {"players": players, "scores": {p: 0 for p in players}, "pending": None,
                "stubborn": options["stubborn"]}

    def _apply(self, s, ev):
        if s["pending"] is None and ev["type"] in ("coin", "bell"):
            s["pending"] = ev["type"]
            return s
        if s["pending"] is not None and ev["type"] == "race":
            if s["stubborn"]:
                raise RulesError("this table refuses every verdict", "race")
            if ev.get("winner"):
                s["scores"][ev["winner"]] += 1
            s["pending"] = None
            return s
        raise RulesError(f"no {ev['type']} now", "turn")

    def race_request(self, s):
        if s["pending"] == "coin":
            return RaceRequest("first-press", tuple(s["players"]), "grab",
                               players=tuple(s["players"]))
        if s["pending"] == "bell":
            return RaceRequest("first-press", tuple(s["players"]), "bell", announced=True,
                               players=tuple(s["players"]))
        return None

    def scores(self, s):
        return dict(s["scores"])

    def current_player(self, s):
        return None

    def finished(self, s):
        return False

    def ranking(self, s):
        return rank_by(s["players"], s["scores"].get)

    def public_view(self, s):
        return {"pending": s["pending"]}


@pytest.fixture(autouse=True, scope="module")
def grab_registered():
    """Grab registered for the module that imports this fixture."""
    games.register_game(Grab, replace=True)
    try:
        yield
    finally:
        games.unregister_game(Grab.name)
