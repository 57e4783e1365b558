"""Benchmark: buzzer edges per second from gpiozero mock pins into the referee.

Drives MockFactory pins in a loop (each pin change stamped on the mock clock,
through GpioSource's callback and the runner's queue) and counts the edges
that reach ``Referee.feed``. Run: ``python bench/bench_gpio.py``.
"""

from __future__ import annotations

import time

from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.runner import BuzzerRunner
from companion.races.referee import FIRST_PRESS, MS, RaceSpec, Referee

PLAYERS = ("p1", "p2", "p3", "p4", "p5", "p6")


def edges_per_second(n_edges: int = 60_000, batch: int = 64) -> float:
    """Edges per second through pins -> source -> runner -> referee.feed."""
    factory = ClockedMockFactory(start_ns=1_000 * MS)
    source = MockSource(PLAYERS, pin_factory=factory)
    referee = Referee(PLAYERS, stuck_ns=10**15)
    runner = BuzzerRunner(source, referee)
    runner.start(thread=False)
    runner.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=factory.clock_ns))
    pins = [source.pin(p) for p in PLAYERS]
    t = factory.clock_ns
    try:
        start = time.perf_counter()
        for i in range(n_edges // 2):
            pin = pins[i % len(pins)]
            t += 25 * MS
            factory.clock_ns = t
            pin.drive_low()
            factory.clock_ns = t + 5 * MS
            pin.drive_high()
            if i % batch == batch - 1:
                runner.pump(t + 5 * MS)
        runner.pump(t + 5 * MS)
        elapsed = time.perf_counter() - start
        fed = runner.edges_fed
    finally:
        runner.stop()
        source.close()
    assert fed == n_edges - n_edges % 2, (fed, n_edges)
    return fed / elapsed


def run() -> list[tuple[str, float, str]]:
    edges_per_second(2_000)        # warm up
    return [("gpio_mock_edges_per_s", round(edges_per_second(), 1), "edges/s")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:.0f} {unit}")
