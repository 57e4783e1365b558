"""Store and session benchmarks (issue #4).

``run()`` returns ``[(name, value, unit), ...]``:

* ``event_append_ms_p99``: the 99th percentile of one durable
  :meth:`companion.record.store.Store.append` (WAL, synchronous=FULL, with an
  expected-version check), 1000 appends of a card-sized event to a file in
  the system's temporary directory. Goal: at most 5 ms.
* ``resume_s``: reopening a 2000-event game (open the store, replay the log
  through the tracker, restore the session), the median of 3. The game is a
  real Chope! game (random legal play, with undos) when that tracker is
  available, else a bench tracker of similar state size. Goal: at most 1 s.

* ``live_press_ms_p99``: the 99th percentile of one
  :meth:`~companion.table.session.TableSession.feed_edge` of a press that a live
  race takes, on a file store: the edge path. The press reaches the disk
  through the store's background writer, never under the session lock, so
  this stays far below one durable append. 200 races of 4 presses.

Run it alone with ``python -m bench.bench_store`` (or ``python bench/bench_store.py``).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion import games  # noqa: E402
from companion.games import Game, RulesError, rank_by  # noqa: E402
from companion.races.edges import Edge  # noqa: E402
from companion.record.store import Store  # noqa: E402
from companion.table.session import TableSession  # noqa: E402
from tests.kit.games import Relay  # noqa: E402

APPENDS = 1000
MS = 1_000_000
RESUME_EVENTS = 2000


class _BenchDeck(Game):
    """A card-moving tracker with a state about the size of a real game's."""

    name = "bench_deck"
    title = "Bench deck"

    def _setup(self, players, options):
        return {"players": players, "deck": [f"card-{i}" for i in range(110)],
                "piles": {p: [] for p in players}, "discard": [], "turn": 0}

    def _apply(self, s, ev):
        if ev["type"] != "flip":
            raise RulesError("flip only")
        if not s["deck"]:
            s["deck"], s["discard"] = s["discard"], []
        card = s["deck"].pop()
        s["piles"][s["players"][s["turn"]]].append(card)
        if len(s["piles"][s["players"][s["turn"]]]) > 20:
            s["discard"].extend(s["piles"][s["players"][s["turn"]]][:10])
            del s["piles"][s["players"][s["turn"]]][:10]
        s["turn"] = (s["turn"] + 1) % len(s["players"])
        return s

    def legal_events(self, s):
        return [{"type": "flip", "card": "any"}]

    def scores(self, s):
        return {p: len(v) for p, v in s["piles"].items()}

    def current_player(self, s):
        return s["players"][s["turn"]]

    def finished(self, s):
        return False

    def ranking(self, s):
        return rank_by(s["players"], lambda p: len(s["piles"][p]))

    def public_view(self, s):
        return {"piles": {p: len(v) for p, v in s["piles"].items()}, "deck": len(s["deck"])}


class _BenchSlap(Relay):
    """``go`` asks for an announced last-press race of every player
    (tests.kit.games's Relay, under its own name)."""

    name = "bench_slap"
    title = "Bench slap"
    reason, info = "slap", {}


def _game_name() -> str:
    try:
        g = games.get_game("chope")
        g.legal_events(g.setup(["ana", "bo", "cy", "di"], {}))
        return "chope"
    except Exception:
        games.register_game(_BenchDeck, replace=True)
        return _BenchDeck.name


def _build_game(path: Path, game: str, n: int) -> int:
    """A game of exactly ``n`` logged events (random legal play; undo when it ends)."""
    rng = random.Random(7)
    with Store(path) as store:
        session = TableSession(store)
        gid = session.new_game(game, ["ana", "bo", "cy", "di"])
        count = 0
        while count < n:
            legal = session.legal_events()
            if not legal or (count and rng.random() < 0.03):
                session.undo()
            else:
                session.log(rng.choice(legal))
            count += 1
        return gid


def bench_append(tmp: Path) -> float:
    with Store(tmp / "append.db") as store:
        gid = store.create_game("chope", [{"name": "ana", "colour": "#e53935", "buzzer": "b1"}],
                                {})
        event = {"type": "flip", "card": "chicken rice", "player": "ana", "note": "x" * 120}
        version = 0
        times = []
        for _ in range(APPENDS):
            t = time.perf_counter_ns()
            version = store.append(gid, event, expected_version=version)
            times.append(time.perf_counter_ns() - t)
    times.sort()
    return times[min(len(times) - 1, int(len(times) * 0.99))] / 1e6


def bench_resume(tmp: Path) -> tuple[float, str]:
    game = _game_name()
    path = tmp / "resume.db"
    _build_game(path, game, RESUME_EVENTS)
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        with Store(path) as store:
            session = TableSession(store)
            assert session.resume()
            assert len(store.events(session.game_id)) == RESUME_EVENTS
        runs.append(time.perf_counter() - t)
    return statistics.median(runs), game


def bench_live_press(tmp: Path, races: int = 200) -> float:
    games.register_game(_BenchSlap, replace=True)
    players = ["ana", "bo", "cy", "di"]
    now = [10 ** 12]
    times = []
    with Store(tmp / "press.db") as store:
        session = TableSession(store, clock=lambda: now[0])
        session.new_game(_BenchSlap.name, players)
        for _ in range(races):
            session.log({"type": "go"})
            session.start_race(0)
            for p in players:
                now[0] += 50 * MS
                edge = Edge(p, True, now[0])
                t = time.perf_counter_ns()
                session.feed_edge(edge)
                times.append(time.perf_counter_ns() - t)
                session.feed_edge(Edge(p, False, now[0] + 30 * MS))
            now[0] += 200 * MS
            session.tick()
            assert session.version and session.snapshot()["race"]["phase"] == "decided"
    times.sort()
    return times[min(len(times) - 1, int(len(times) * 0.99))] / 1e6


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as d:
        tmp = Path(d)
        p99 = bench_append(tmp)
        resume, _game = bench_resume(tmp)
        press = bench_live_press(tmp)
    return [("event_append_ms_p99", round(p99, 3), "ms"), ("resume_s", round(resume, 3), "s"),
            ("live_press_ms_p99", round(press, 3), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value} {unit}")
