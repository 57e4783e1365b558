"""A toy game in a few lines: what a new game must provide, and nothing else.

Coin race: each round the host logs a coin flip (chance, 1/2 each side), then
the buzzers settle a first-press race among all players ("Grab!"). Heads: the
first to press scores a point; tails: the first to press loses one (never
below 0) under the default ``tails`` setting. First to ``target`` points wins.

Used by tests/test_game_seam.py (registered with ``register_game``, played
through the conformance machinery) and by the web tests (the page and the API
must show a game they have never heard of).

>>> g = CoinRace()
>>> s = g.apply(g.setup(["ana", "bo"]), {"type": "flip", "side": "heads"})
>>> g.race_request(s).eligible
('ana', 'bo')
>>> g.scores(g.apply(s, {"type": "race", "reason": "grab", "winner": "bo"}))
{'ana': 0, 'bo': 1}
"""

from __future__ import annotations

from fractions import Fraction

from companion.games import Game, RaceReason, RaceRequest, RulesError, Setting, rank_by


class CoinRace(Game):
    name = "coinrace"
    title = "Coin race"
    min_players, max_players = 2, 6
    settings = (
        Setting("target", 3, "int", minimum=1, maximum=5, label="Points to win"),
        Setting("tails", "minus", "choice", ("minus", "nothing"), label="On tails, the grabber",
                choice_labels=("loses a point", "scores nothing")),
        Setting("false_start_costs", False, "bool", label="A false start costs a point"),
    )
    race_reasons = (RaceReason("grab", "first-press", "Grab!", announced=True,
                               winner="{winner} grabs the coin"),)

    def _setup(self, players, options):
        return {"players": players, "rules": options, "scores": dict.fromkeys(players, 0),
                "coin": None, "round": 1}

    def _apply(self, s, ev):
        if ev["type"] == "flip":
            if s["coin"] is not None:
                raise RulesError("grab the coin before the next flip", "race")
            if ev.get("side") not in ("heads", "tails"):
                raise RulesError("a coin shows 'heads' or 'tails'", "coin")
            s["coin"] = ev["side"]
        elif ev["type"] == "race":
            _, winner, _, _, false_starts, _ = self.check_race(s, ev)
            if s["rules"]["false_start_costs"]:
                for p in false_starts:
                    s["scores"][p] = max(0, s["scores"][p] - 1)
            if winner is not None:
                step = 1 if s["coin"] == "heads" else -1 if s["rules"]["tails"] == "minus" else 0
                s["scores"][winner] = max(0, s["scores"][winner] + step)
            s["coin"], s["round"] = None, s["round"] + 1
        else:
            raise RulesError(f"unknown event {ev['type']!r}", "events")
        return s

    def chance_outcomes(self, s):
        if self.finished(s) or s["coin"] is not None:
            return []
        return [({"type": "flip", "side": side}, Fraction(1, 2)) for side in ("heads", "tails")]

    def race_request(self, s):
        if s["coin"] is None:
            return None
        return RaceRequest("first-press", tuple(s["players"]), "grab", announced=True,
                           players=tuple(s["players"]), info={"coin": s["coin"]})

    def scores(self, s):
        return dict(s["scores"])

    def current_player(self, s):
        return None

    def finished(self, s):
        return max(s["scores"].values()) >= s["rules"]["target"]

    def ranking(self, s):
        return rank_by(s["players"], s["scores"].__getitem__)

    def public_view(self, s):
        return {"players": [{"name": p, "score": n} for p, n in s["scores"].items()],
                "coin": s["coin"], "round": s["round"], "finished": self.finished(s)}

    def check_invariants(self, s):
        assert all(0 <= n <= s["rules"]["target"] for n in s["scores"].values())
        assert sum(n >= s["rules"]["target"] for n in s["scores"].values()) <= 1
