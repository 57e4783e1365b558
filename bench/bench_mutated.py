"""Mutated host events (issue 20's third figure): how the server answers
events the console offers with one value swapped for another JSON type.

Every game, three players, a fixed seed: at each of a few states, every
event the console offers (``host_events``) with each of its keys given
each of :data:`SWAPS` (or dropped) is posted to ``/api/host/event`` through
the Flask test client with the host PIN. An accepted one is undone. Play
goes on with a random offered event the server accepts.

Figures: ``mutated_events_total`` and ``mutated_events_2xx`` / ``_4xx`` /
``_5xx`` (an uncaught exception counts as a 5xx), and ``mutated_events_4xx_moved``
(a refusal that changed the table: must be 0).

    python -m bench mutated
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

PIN = "2468"
PLAYERS = ["ana", "bo", "cy"]
STEPS = 12
#: offered events mutated per state (a sample: a Chomp! reveal offers hundreds)
OFFERS = 4
#: the values a key is given in turn (``...``: the key is dropped)
SWAPS = ([], {}, 0, True, None, "zz", 1.5, ["zz"], {"zz": 1}, [[]], ...)


def mutations(event: dict):
    """``event`` with one key's value swapped for each of :data:`SWAPS`."""
    for key in event:
        if key == "type":
            continue
        for swap in SWAPS:
            out = {k: v for k, v in event.items() if k != key}
            if swap is not ...:
                out[key] = swap
            if out != event:
                yield out


class Probe:
    """A logged-in host on a fresh app; counts answers by class."""

    def __init__(self, app):
        self.app, self.client = app, app.test_client()
        self.csrf = self.client.get("/api/csrf").json["csrf"]
        r = self.client.post("/api/host/login", json={"pin": PIN}, headers=self.h())
        self.csrf = r.json["csrf"]
        self.counts = {"2xx": 0, "4xx": 0, "5xx": 0, "4xx_moved": 0}
        self.examples: list = []

    def h(self):
        return {"X-CSRF-Token": self.csrf}

    def post(self, url, body):
        try:
            return self.client.post(url, json=body, headers=self.h()).status_code
        except Exception as exc:  # noqa: BLE001 - the test client re-raises a 500
            self.examples.append((self.session.game.name, body["event"], repr(exc)))
            return 500

    @property
    def session(self):
        return self.app.extensions["companion"].session

    def throw(self, event: dict) -> int:
        before = self.session.version
        code = self.post("/api/host/event", {"event": event, "expected_version": before})
        if 200 <= code < 300:
            self.counts["2xx"] += 1
            self.post("/api/host/undo", {})
        elif 400 <= code < 500:
            self.counts["4xx"] += 1
            self.counts["4xx_moved"] += self.session.version != before
        else:
            self.counts["5xx"] += 1
        return code


def play(probe: Probe, game: str, rng: random.Random) -> None:
    probe.post("/api/host/new-game", {"game": game, "players": [{"name": p} for p in PLAYERS]})
    for _ in range(STEPS):
        s = probe.session
        if s.game.finished(s.state):
            return
        offered = s.game.host_events(s.state)
        for event in rng.sample(offered, min(OFFERS, len(offered))):
            for bad in mutations(event):
                probe.throw(bad)
        rng.shuffle(offered)
        for event in offered:
            v = s.version
            if probe.post("/api/host/event", {"event": event, "expected_version": v}) < 300:
                break
        else:
            return


def measure(games=None, seed: int = 20) -> dict:
    from companion.games import game_names
    from companion.record.store import Store
    from companion.table.session import TableSession
    from companion.web import create_app

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "t.db")
        session = TableSession(store)
        session.resume()
        app = create_app({"PIN": PIN, "TESTING": True, "DEMO": True, "PLAYERS": PLAYERS},
                         session=session)
        probe = Probe(app)
        for game in games or game_names():
            play(probe, game, random.Random(seed))
        app.extensions["companion"].close()
        store.close()
    out = dict(probe.counts, total=sum(probe.counts[k] for k in ("2xx", "4xx", "5xx")))
    out["examples"] = probe.examples
    return out


def run():
    m = measure()
    for k in ("total", "2xx", "4xx", "5xx", "4xx_moved"):
        yield f"mutated_events_{k}", m[k], "events"


if __name__ == "__main__":
    m = measure()
    print({k: v for k, v in m.items() if k != "examples"})
    seen = set()
    for game, event, exc in m["examples"]:
        if (game, event["type"], exc[:30]) not in seen:
            seen.add((game, event["type"], exc[:30]))
            print(game, event, exc)
