"""Referee throughput in a bounce storm, and verdict latency after the hold.

Every latency runs the one :class:`~companion.buzzers.pipeline.Pipeline`:
``verdict_latency_us_*`` (the headline) the path ``companion serve`` takes,
a mock pin press through the pipeline and the table session to a
subscriber; ``session_verdict_latency_us_*`` the same with the edge handed to
the pipeline directly; ``referee_verdict_latency_us_*`` a bare referee on the
pipeline (``companion buzz``, the harness).
"""

from __future__ import annotations

import random
import statistics
import threading
import time

from companion.races.edges import ButtonEdge, Edge
from companion.races.referee import FIRST_PRESS, MS, US, RaceSpec, Referee

PLAYERS = tuple(f"P{i}" for i in range(6))


def storm(rng: random.Random, t0: int) -> tuple[list[Edge], int]:
    """One race's raw edges: 6 buzzers, each press and release followed by
    5 to 20 bounce edges, in arrival (time) order."""
    edges = []
    end = t0
    for i, p in enumerate(PLAYERS):
        t = t0 + rng.randrange(0, 3 * MS) + i
        for pressed, gap in ((True, 0), (False, 150 * MS)):
            t += gap
            edges.append(Edge(p, pressed, t))
            level = pressed
            for _ in range(rng.randrange(5, 21)):
                t += rng.randrange(20 * US, 600 * US)
                level = not level
                edges.append(Edge(p, level, t))
            if level != pressed:
                t += 30 * US
                edges.append(Edge(p, pressed, t))
        end = max(end, t)
    edges.sort(key=lambda e: e.t_ns)
    return edges, end


def referee_edges_per_s(races: int = 400, seed: int = 1) -> float:
    rng = random.Random(seed)
    batches, t = [], 0
    for _ in range(races):
        edges, end = storm(rng, t)
        batches.append((t, edges, end))
        t = end + 500 * MS
    ref = Referee(PLAYERS)
    verdicts = []
    ref.listeners.append(lambda kind, payload: kind == "verdict" and verdicts.append(payload))
    n = sum(len(b[1]) for b in batches)
    start = time.perf_counter_ns()
    for t0, edges, end in batches:
        ref.start(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=t0))
        feed = ref.feed
        for e in edges:
            feed(e)
        ref.poll(end + 100 * MS)
    elapsed = time.perf_counter_ns() - start
    assert len(verdicts) == races
    return n / (elapsed / 1e9)


def referee_verdict_latency_us(samples: int = 300) -> list[float]:
    """From the end of the decision hold (on the monotonic clock) to the
    verdict in a listener's hands, for a bare referee (what ``companion
    buzz`` and the harness run): a gpiozero mock pin press, the one
    :class:`~companion.buzzers.pipeline.Pipeline` sleeping until the
    referee's next deadline, the live race, the listener."""
    from companion.buzzers.mock import MockSource
    from companion.buzzers.runner import BuzzerRunner

    ref = Referee(PLAYERS, hold_ns=5 * MS)
    src = MockSource(PLAYERS)             # pins on gpiozero's MockFactory, real time
    runner = BuzzerRunner(src, ref)
    got = threading.Event()
    latencies: list[float] = []

    def on(kind, payload):
        if kind == "verdict":
            latencies.append((time.monotonic_ns() - payload.decides_at()) / 1000)
            got.set()

    ref.listeners.append(on)
    runner.start()
    try:
        for i in range(samples):
            got.clear()
            runner.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=time.monotonic_ns()))
            p = PLAYERS[i % len(PLAYERS)]
            src.press(p)
            got.wait(1)
            src.release(p)
            time.sleep(0.025)             # past the debounce window
        return latencies
    finally:
        runner.stop()
        src.close()


def _session_latency_us(samples: int, through_pins: bool) -> list[float]:
    """The path ``companion serve`` takes: a Chomp! round on a
    :class:`TableSession` (SQLite in a temporary folder), fed by the same
    :class:`~companion.buzzers.pipeline.Pipeline` that ``serve`` runs; the
    verdict decided after the hold, logged as a race event and published to
    a session subscriber (what the SSE broker is). ``through_pins``: the
    edge is a gpiozero mock pin press on the mock source (the whole path);
    else it is handed to the pipeline's sink directly. Measured from the end
    of the hold after the press (stamped just before it: a little early,
    so the figure errs high) to the subscriber."""
    import tempfile

    from companion.buzzers.mock import MockSource
    from companion.buzzers.pipeline import Pipeline
    from companion.record.store import Store
    from companion.table.session import TableSession

    names = ["ana", "bo", "cy"]
    hold_ms = 5
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"{tmp}/bench.db")
        session = TableSession(store, settings={"hold_ms": hold_ms, "countdown_ms": 0})
        src = MockSource(names)          # real-time mock pins, buzzer ids = names
        watch = _VerdictWatch()
        session.subscribe(watch)
        pipe = Pipeline(src, session).start()
        press, release = _ana_buzzer(src, pipe, through_pins)
        others, others_up = _bad_chomps(src, pipe, through_pins)
        try:
            for _ in range(samples):
                watch.got.clear()
                session.new_game("chomp", [{"name": n, "buzzer": n} for n in names])
                session.log({"type": "reveal", "cards": {"ana": "seal", "bo": "shrimp",
                                                         "cy": "shrimp"}})
                session.start_race(countdown_ms=0)
                time.sleep(0.002)
                t = time.monotonic_ns()
                press(t)
                others(t)
                # the verdict is due a hold after the last of the three
                # presses (a Bad Chomp's wait ends at it): stamped before
                # this, so the figure errs high
                watch.from_ns = time.monotonic_ns() + hold_ms * MS
                watch.got.wait(2)
                release(t)
                others_up(t)
                time.sleep(0.03)
        finally:
            pipe.close()
            src.close()
            store.close()
    return watch.latencies


class _VerdictWatch:
    """A session subscriber timing, from :attr:`from_ns`, the first update
    that carries the verdict: a live race update, or the state update after
    the race event was logged durably."""

    def __init__(self):
        self.got = threading.Event()
        self.latencies: list[float] = []
        self.from_ns = 0

    def __call__(self, update) -> None:
        data = update["data"] or {}
        race = data if update["type"] == "race" else data.get("race")
        if not self.got.is_set() and isinstance(race, dict) and race.get("verdict") \
                and race.get("phase") == "decided":
            self.latencies.append((time.monotonic_ns() - self.from_ns) / 1000)
            self.got.set()


def _ana_buzzer(src, pipe, through_pins: bool):
    """``press(t)`` and ``release(t)`` of ana's buzzer: on the mock pins (at
    the real time), or as edges handed to the pipeline (the release 40 ms
    after ``t``)."""
    if through_pins:
        return (lambda t: src.press("ana")), (lambda t: src.release("ana"))
    return (lambda t: pipe.edge(ButtonEdge("ana", True, t)),
            lambda t: pipe.edge(ButtonEdge("ana", False, t + 40 * MS)))


def _bad_chomps(src, pipe, through_pins: bool):
    """``others(t)``, ``others_up(t)``: Bo and Cy, who hold the lowest card and may not chomp,
    slap just after Ana (Bad Chomps). Until they have, the verdict would
    wait the Bad Chomp window after Ana's slap (docs/rules-notes.md, "A Bad
    Chomp just after the winning slap"), half a second in which the
    pipeline's thread sleeps and the CPU drops out of its caches: the
    verdict then takes about 4 times as long (430 against 100 us median on
    the development machine). With their slaps in, it comes at the usual
    hold, as every race without the window does."""
    def edges(t, pressed):
        for who, dt in (("bo", 1_000), ("cy", 2_000)):
            if not through_pins:
                pipe.edge(ButtonEdge(who, pressed, t + dt + (0 if pressed else 40 * MS)))
            elif pressed:
                src.press(who)
            else:
                src.release(who)
    return (lambda t: edges(t, True)), (lambda t: edges(t, False))


def verdict_latency_us(samples: int = 200) -> list[float]:
    """The headline: a mock pin press to the verdict at a session subscriber,
    through the pipeline and session that ``companion serve`` runs."""
    return _session_latency_us(samples, through_pins=True)


def session_verdict_latency_us(samples: int = 150) -> list[float]:
    """The same, the edge handed straight to the pipeline's sink."""
    return _session_latency_us(samples, through_pins=False)


def p99(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def run():
    eps = max(referee_edges_per_s(seed=s) for s in (1, 2, 3))
    lat = verdict_latency_us()
    slat = session_verdict_latency_us()
    rlat = referee_verdict_latency_us()
    return [("referee_edges_per_s", eps, "edges/s"),
            ("verdict_latency_us_p99", p99(lat), "us"),
            ("verdict_latency_us_median", statistics.median(lat), "us"),
            ("session_verdict_latency_us_p99", p99(slat), "us"),
            ("session_verdict_latency_us_median", statistics.median(slat), "us"),
            ("referee_verdict_latency_us_p99", p99(rlat), "us"),
            ("referee_verdict_latency_us_median", statistics.median(rlat), "us")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
