"""The statistics page (``GET /stats``) and a player's page over a store of
10,000 races (200 nights of 50, four players): the time to answer, through
the Flask app, p50 and p95 over 40 requests after the first (the first reads
every game once; later ones reuse the figures while no log grew), that
first one, and the page after each of 20 races logged (a game night: one
game read again, every figure computed again). Every game has finished, so
the page also rates them (OpenSkill) and lists the newest for BG Stats;
``ratings_ms`` is the rating of 2,000 finished 4-player games from scratch."""

from __future__ import annotations

import random
import statistics
import time

from companion.record.ratings import Finished, rate
from companion.record.store import Store
from companion.table.session import TableSession
from companion.web import create_app
from tests.kit.nights import fill, race_event

RACES = 10_000


def _times(client, url: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        resp = client.get(url)
        out.append((time.perf_counter() - t) * 1000)
        assert resp.status_code == 200, resp.status_code
    return out


def run():
    store = Store(":memory:")
    fill(store, RACES, finished=True)
    app = create_app({"PIN": "bench-pin-1", "TESTING": True},
                     session=TableSession(store))
    client = app.test_client()
    first = _times(client, "/stats", 1)[0]
    yield ("stats_page_first_ms", first, f"ms: /stats, {RACES} races, every game read")
    for name, url in (("stats_page", "/stats"), ("stats_player_page", "/stats/player/Cy")):
        t = sorted(_times(client, url, 40))
        yield (f"{name}_ms_p50", statistics.median(t), f"ms over 40 requests, {RACES} races")
        yield (f"{name}_ms_p95", t[int(0.95 * (len(t) - 1))], "ms (want <= 200)")
    rng, gid, after = random.Random(1), store.list_games()[0]["id"], []
    for i in range(20):
        store.append(gid, race_event(rng, ("Ana", "Bo", "Cy", "Dee"), (10_000 + i) * 10**9))
        after += _times(client, "/stats", 1)
    after.sort()
    yield ("stats_page_after_a_race_ms_p95", after[int(0.95 * (len(after) - 1))],
           "ms: the page after each of 20 races logged")

    rng = random.Random(2)
    names = ["Ana", "Bo", "Cy", "Dee", "Eve", "Fay"]
    games = [Finished(i, "chope", f"2025-{1 + i // 200:02d}-01",
                      tuple((n,) for n in rng.sample(names, 4))) for i in range(2000)]
    t = time.perf_counter()
    rate(games)
    yield ("ratings_ms", (time.perf_counter() - t) * 1000, "ms: 2,000 finished 4-player games rated")
