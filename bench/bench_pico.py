"""Benchmarks of the Pico box's link: decoding speed, clock sync error, edge latency.

* ``serial_frames_per_s``: edge frames decoded into ButtonEdges per second
  on one core, through the pico source's own path (COBS, CRC, sequence,
  32-to-64-bit extension, the clock map, the edge). Goal: at least 200000
  (a full-speed USB link carries well under 100000 small frames a second).
* ``pico_sync_error_us_p99``: the clock model's error against the true
  time of an edge, in a simulation with USB-like round trips (each leg
  0.25-1.25 ms plus a jittery tail: 0.5-4 ms round trips), 8 exchanges a
  second, crystals 100 ppm fast and slow; after 20 s of sync, p99 over two
  minutes. A regression figure only (80 at the last change; worse shows up):
  the goal on real hardware is the self-test's clock check (|median| + p99
  <= 1 ms, python -m hardware.selftest --real --pico --both).
* ``pico_edge_latency_ms_p99``: a press on the simulated board (the real
  firmware under the MicroPython unix port) to the edge reaching the
  source's sink (the referee's input), over a pty. Reported, with the
  median (``pico_edge_latency_ms_p50``): on a loaded machine the tail is the
  scheduler's (three processes and four threads share the cores).
* ``pico_soak_clock_jumps``: clock jumps (a tick beyond the board's counter
  when it was read, or a heartbeat older than the one before) in a soak of
  the real firmware under the unix port: ten simulated minutes of play on
  six buzzers with bounce storms, garbage collection pauses, a host that
  stops reading and a cable pulled and put back (firmware/sim/soak.py,
  checked as tests/test_pico_soak.py does). Goal: 0; reported with
  ``pico_soak_invented_edges`` and ``pico_soak_unreported_losses`` (goal 0
  each).
* ``pico_slam_lost_edges`` and ``pico_slam_overflows``: the worst slam the
  box is budgeted for (firmware/sim/slam.py, the real firmware under the
  unix port): ten simulated minutes of all six buzzers pressed within 1 ms,
  each bouncing 20 times, twice a second, with garbage collection pauses of
  5-400 ms (one slam in four meets one) and the drain paying 40 us a word.
  Lost edges: leading edges the host never got with their stamp; overflows:
  overflow faults. Goal: 0 each; reported with ``pico_slam_words`` and
  ``pico_slam_max_local_tick`` (the largest tick the firmware kept: below
  2**30, a Pico's small integer, so its arithmetic never allocates).
* ``pico_fair_separation_us``: the smallest separation of two presses the
  box orders right in every one of 1000 trials (hardware/fairness.py: the
  firmware's driver and capture PIO programs in the emulator, random
  phases, 0.3 to 10 us), over every ordered pair of the six buzzers, with
  the judge's verdict certified. Goal: 1.
* ``pico_certificate_false_pass``: of the deliberately unfair boxes
  (hardware/fairness.py: UNFAIR_BOXES, ten kinds), how many the judge
  certifies. Goal: 0; ``pico_certificate_honest_pass``: the honest box
  certified (1).

Run: ``python -m bench pico``.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from companion.buzzers.pico import PicoSource
from companion.pico import protocol as P
from companion.pico.clocksync import ClockSync, SlewedClock
from tests.kit.pico import usb_leg

HZ = 1_000_000
S = 1_000_000_000
MS = 1_000_000


def _hello() -> P.Hello:
    inputs = tuple(P.Input(i, P.ROLE_BUZZER, i + 1, i + 2) for i in range(6))
    return P.Hello(0, 1, (1, 0, 0), HZ, 1, 0, 0, 20_000, 0, inputs, (), None)


class _Count:
    def __init__(self):
        self.n = 0

    def edge(self, e):
        self.n += 1

    def fault(self, f):
        raise AssertionError(f"unexpected fault {f}")

    def status(self, s):
        pass


def frames_per_second(n_frames: int = 200_000, chunk: int = 4096) -> float:
    """Frames of one edge record each, fed in 4 KiB reads, decoded to edges."""
    src = PicoSource.offline(["1", "2", "3", "4", "5", "6"], _hello())
    src.sync.add_exchange(10 * S, 1_000, 10 * S + 400_000)
    src.map.update(1_000)
    sink = _Count()
    src.start(sink)
    wire = bytearray()
    levels = 0
    for i in range(n_frames):
        bit = 1 << (i % 6)
        levels ^= bit
        rec = ((2_000 + 50 * i) & 0xFFFF_FFFF, bit, levels)
        wire += P.encode(P.Edges((i + 1) & 0xFFFF, (rec,)))
    data = bytes(wire)
    start = time.perf_counter()
    for k in range(0, len(data), chunk):
        src.feed(data[k:k + chunk], 11 * S)
    elapsed = time.perf_counter() - start
    assert sink.n == n_frames, (sink.n, n_frames)
    return n_frames / elapsed


_leg = usb_leg          # one leg of the simulated USB link (tests.kit.pico)


def sync_error_p99_us(seconds: int = 120, rate: int = 8, seeds=(1, 2, 3)) -> float:
    errs = []
    for seed in seeds:
        for ppm in (100, -100):
            rng = random.Random(seed * 1000 + ppm)
            t0, tick0 = 5 * S, 777
            speed = 1 + ppm * 1e-6

            def tick(t):
                return tick0 + int((t - t0) * speed * HZ // S)

            sync = ClockSync(HZ)
            m = SlewedClock(sync)
            t = t0
            for i in range(seconds * rate):
                up, down = _leg(rng), _leg(rng)
                sync.add_exchange(t, tick(t + up), t + up + down)
                m.update(tick(t + up))
                if i >= 20 * rate:
                    edge_t = t + int(rng.random() * S // rate)
                    k = tick(edge_t)
                    truth = t0 + (k - tick0) * S / HZ / speed
                    errs.append(abs(m.to_ns(k) - truth))
                t += S // rate
    errs.sort()
    return errs[int(len(errs) * 0.99)] / 1000


def edge_latency_ms(presses: int = 40) -> tuple[float, float] | None:
    """(median, p99) of press-to-sink latency over the pty, in ms."""
    sim = Path(__file__).resolve().parents[1] / "firmware" / "sim"
    if not Path(sys.executable).with_name("micropython").exists():
        return None
    sys.path.insert(0, str(sim))
    from ptybox import SimBox

    got = []

    class Sink(_Count):
        def edge(self, e):
            got.append((e, time.monotonic_ns()))

        def fault(self, f):
            pass

    with SimBox(Path(tempfile.mkdtemp(prefix="bench-pico-"))) as box:
        src = PicoSource(["1", "2", "3"], port=box.port)
        try:
            src.start(Sink())
            time.sleep(1.5)
            truth = {}
            t = time.monotonic_ns() + 100 * MS
            for i in range(presses):
                n = i % 3 + 1
                box.press(n, t)
                box.release(n, t + 40 * MS)
                truth[(str(n), True, t)] = t
                t += 80 * MS
            time.sleep((t - time.monotonic_ns()) / S + 0.5)
        finally:
            src.close()
    lat = []
    for e, arrived in got:
        if e.pressed:
            true_t = min((t for (b, p, t) in truth if b == e.buzzer), key=lambda t: abs(t - e.t_ns))
            lat.append(arrived - true_t)
    lat.sort()
    if not lat:
        return None
    return lat[len(lat) // 2] / MS, lat[int(len(lat) * 0.99)] / MS


def run() -> list[tuple[str, float, str]]:
    frames_per_second(5_000)            # warm up
    out = [("serial_frames_per_s", round(frames_per_second(), 0), "frames/s"),
           ("pico_sync_error_us_p99", round(sync_error_p99_us(), 1), "us")]
    lat = edge_latency_ms()
    if lat is not None:
        out.append(("pico_edge_latency_ms_p50", round(lat[0], 2), "ms"))
        out.append(("pico_edge_latency_ms_p99", round(lat[1], 2), "ms"))
    out += certificate_figures()
    slam = slam_figures()
    if slam is not None:
        out += [("pico_slam_lost_edges", slam["lost_edges"], "edges"),
                ("pico_slam_overflows", slam["overflows"], "faults"),
                ("pico_slam_words", slam["words"], "words"),
                ("pico_slam_max_local_tick", slam["max_local"], "ticks")]
    soak = soak_figures()
    if soak is not None:
        out += [("pico_soak_clock_jumps", soak["clock_jumps"], "jumps"),
                ("pico_soak_invented_edges", soak["invented_edges"], "edges"),
                ("pico_soak_unreported_losses", soak["unreported_losses"], "changes")]
    return out


def slam_figures(seconds: int = 600) -> dict | None:
    """The worst slam's counts (None without the MicroPython unix port)."""
    from tests.kit import pico as soak

    if not soak.MICROPYTHON.exists():
        return None
    return soak.run_slam(seconds, 32, Path(tempfile.mkdtemp(prefix="bench-slam-")))


def certificate_figures() -> list[tuple[str, float, str]]:
    """The certificate's judge: how many deliberately unfair boxes it
    certifies (0 is right), whether it certifies the honest one (1), and the
    emulated box's fair separation over every ordered pair of buzzers."""
    from hardware import fairness
    false_pass = sum(fairness.judge_box(box).certified for box in fairness.UNFAIR_BOXES.values())
    rows, verdict = fairness.certify(trials=1000)
    return [("pico_certificate_false_pass", false_pass, "boxes"),
            ("pico_certificate_honest_pass", int(fairness.judge_box(fairness.honest_box).certified),
             "boxes"),
            ("pico_fair_separation_us", fairness.fair_separation_us(rows, verdict), "us")]


def soak_figures(seconds: int = 600) -> dict | None:
    """The soak's counts (None without the MicroPython unix port)."""
    from tests.kit import pico as soak

    if not soak.MICROPYTHON.exists():
        return None
    return soak.check(soak.run_soak(seconds, 21, Path(tempfile.mkdtemp(prefix="bench-soak-"))))


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value} {unit}")
