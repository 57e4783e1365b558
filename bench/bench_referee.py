"""Referee throughput in a bounce storm, and verdict latency after the hold."""

from __future__ import annotations

import random
import statistics
import threading
import time

from companion.edges import Edge
from companion.referee import FIRST_PRESS, MS, US, RaceSpec, Referee

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


def verdict_latency_us(samples: int = 300) -> list[float]:
    """From the end of the decision hold (on the monotonic clock) to the
    verdict in a subscriber's hands, through the real path: a gpiozero mock
    pin press, the :class:`BuzzerRunner` thread that sleeps until the
    referee's next deadline, the live race, the listener."""
    from companion.buzzers.mock import MockSource
    from companion.buzzers.runner import BuzzerRunner

    ref = Referee(PLAYERS, hold_ns=5 * MS)
    src = MockSource(PLAYERS)             # pins on gpiozero's MockFactory, real time
    runner = BuzzerRunner(src, ref)
    got = threading.Event()
    latencies: list[float] = []
    races = []

    def on(kind, payload):
        if kind == "verdict":
            latencies.append((time.monotonic_ns() - payload.decides_at()) / 1000)
            got.set()

    ref.listeners.append(on)
    runner.start()
    try:
        for i in range(samples):
            got.clear()
            races.append(runner.start_race(RaceSpec(FIRST_PRESS, PLAYERS,
                                                    arm_ns=time.monotonic_ns())))
            p = PLAYERS[i % len(PLAYERS)]
            src.press(p)
            got.wait(1)
            src.release(p)
            time.sleep(0.025)             # past the debounce window
        return latencies
    finally:
        runner.stop()
        src.close()


def run():
    eps = max(referee_edges_per_s(seed=s) for s in (1, 2, 3))
    lat = sorted(verdict_latency_us())
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    return [("referee_edges_per_s", eps, "edges/s"),
            ("verdict_latency_us_p99", p99, "us"),
            ("verdict_latency_us_median", statistics.median(lat), "us")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
