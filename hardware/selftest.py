"""The timing self-test: how well does this box stamp an edge, and what tie window fits it?

With a jumper from a test output to an input, it fires pulses and measures,
for each path, the error of the stamp (stamp minus when the pulse really
went) and its jitter:

* ``gpio``: the Pi's own GPIO path: an output written at a time read from
  the monotonic clock, against the kernel's stamp of the edge on the input
  it is jumpered to (``--pi-out``, ``--pi-in``, BCM numbers);
* ``pico``: the Pico box's path: its test output pulsed by the box (GP9)
  against its own capture on the self-test input (GP8), both in its ticks;
* ``both``: one pulse of the Pico's test output seen by the Pico and by the
  Pi (a wire from GP9 to ``--pi-in`` too): the Pico's stamp mapped onto the
  Pi's clock against the kernel's stamp, so the two boxes' clocks are
  compared edge by edge.

It suggests a tie window for the box: presses closer than the timing can
tell apart should be a tie, not a coin toss. Without ``--real`` it runs the
same measurements on stand-ins (gpiozero mock pins with a modelled kernel
latency; the real firmware under the MicroPython unix port on a simulated
board, through a pty), which is what the tests do::

    python -m hardware.selftest                          # stand-ins, all paths
    python -m hardware.selftest --real --gpio --pi-out 21 --pi-in 20
    python -m hardware.selftest --real --pico [--port /dev/buzzerbox]

It prints a report and exits 0 when every path measured, 1 when one could
not, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

NS_PER_US = 1_000
MS = 1_000_000


@dataclass(frozen=True)
class PathReport:
    """One path's stamps against the truth, in nanoseconds."""

    path: str
    pulses: int
    median_ns: int       # the typical error (a fixed delay: harmless in a race)
    jitter_ns: int       # p99 - p1 of the error: what can reorder two presses
    worst_ns: int        # the largest |error|
    resolution_ns: int
    p99_ns: int = 0      # the 99th percentile of |error - median|: how far stamps stray

    def to_line(self) -> str:
        return (f"{self.path:5s} {self.pulses:4d} edges  error median {self.median_ns / 1000:8.1f} us"
                f"  jitter {self.jitter_ns / 1000:8.1f} us  worst {self.worst_ns / 1000:8.1f} us")


def summarise(path: str, errors: list[int], resolution_ns: int) -> PathReport:
    """Median, p1-p99 spread and worst of a list of errors."""
    if not errors:
        raise ValueError(f"no pulse was seen on the {path} path")
    e = sorted(errors)
    q = lambda xs, p: xs[min(len(xs) - 1, max(0, round(p * (len(xs) - 1))))]  # noqa: E731
    median = int(statistics.median(e))
    spread = sorted(abs(x - median) for x in e)
    return PathReport(path, len(e), median, q(e, 0.99) - q(e, 0.01),
                      max(abs(x) for x in e), resolution_ns, q(spread, 0.99))


#: The clock check's limit: |median| + p99 of the ``both`` path.
CLOCK_CHECK_NS = MS


def clock_check(r: PathReport, limit_ns: int = CLOCK_CHECK_NS) -> tuple[bool, str]:
    """Clock sync kept as a check, not a goal: the box's stamps mapped onto
    the Pi's clock against the Pi's own stamps of the same pulses pass when
    |median| + p99 <= ``limit_ns`` (1 ms: races on one box never depend on
    it; it matters only where phone presses meet box presses)."""
    total = abs(r.median_ns) + r.p99_ns
    ok = total <= limit_ns
    return ok, (f"clock check ({r.path}): median {r.median_ns / 1000:+.1f} us, p99 "
                f"{r.p99_ns / 1000:.1f} us; |median| + p99 = {total / 1000:.1f} us "
                f"{'<=' if ok else '>'} {limit_ns / 1000:.0f} us: {'pass' if ok else 'FAIL'}")


def suggest_tie_window_us(reports: list[PathReport]) -> int:
    """A tie window for the box: twice the worst jitter of the paths measured
    (two presses each off by up to the jitter) and never below the stamps'
    resolution, rounded up to a 1-2-5 step in microseconds."""
    need = max(max(2 * r.jitter_ns, r.resolution_ns) for r in reports)
    us = max(1, -(-need // NS_PER_US))
    step = 1
    while True:
        for m in (1, 2, 5):
            if m * step >= us:
                return m * step
        step *= 10


# ---------------------------------------------------------------------------
# The Pi's GPIO path


class MockGpioPath:
    """gpiozero mock pins: the output is written at the mock clock's now and
    the input follows after a modelled kernel latency (20-60 us, the odd
    one 200 us), stamped by the factory like lgpio's kernel stamp."""

    def __init__(self, pi_out: int, pi_in: int, seed: int = 1):
        from companion.buzzers.mock import ClockedMockFactory
        self.factory = ClockedMockFactory(start_ns=10**9)
        self.out = self.factory.pin(pi_out)
        self.inp = self.factory.pin(pi_in)
        self.rng = random.Random(seed)
        self.stamps: list[int] = []
        self.inp.function = "input"
        self.inp.edges = "both"
        self.inp.when_changed = self._changed      # a weak reference: keep the method
        self.resolution_ns = 1_000

    def _changed(self, ticks, state):
        self.stamps.append(round(ticks * 1e9))

    def pulse(self) -> tuple[int, int]:
        f = self.factory
        f.clock_ns += 10 * MS
        t_write = f.clock_ns
        lat = 20_000 + int(self.rng.random() * 40_000)
        if self.rng.random() < 0.02:
            lat = 200_000
        f.clock_ns = t_write + lat
        self.inp.drive_high() if self.inp.state == 0 else self.inp.drive_low()
        return t_write, self.stamps[-1]

    def close(self):
        self.factory.close()


class RealGpioPath:
    """Real pins through gpiozero's lgpio factory: the kernel stamps the edge."""

    def __init__(self, pi_out: int, pi_in: int):
        from gpiozero import DigitalOutputDevice

        from companion.buzzers.gpio import BuzzerInput, ticks_to_ns
        self.out = DigitalOutputDevice(pi_out)
        self.stamps: list[int] = []
        self._to_ns = ticks_to_ns
        self.inp = BuzzerInput(pi_in, on_change=lambda t, p: self.stamps.append(ticks_to_ns(t)))
        self.resolution_ns = 1_000

    def pulse(self) -> tuple[int, int]:
        n = len(self.stamps)
        before = time.monotonic_ns()
        self.out.toggle()
        after = time.monotonic_ns()
        end = time.monotonic() + 0.5
        while len(self.stamps) == n and time.monotonic() < end:
            time.sleep(0.0005)
        if len(self.stamps) == n:
            raise RuntimeError("no edge on the input: is the jumper fitted?")
        time.sleep(0.01)
        return (before + after) // 2, self.stamps[n]

    def close(self):
        self.out.close()
        self.inp.close()


def measure_gpio(path, pulses: int) -> PathReport:
    errors = []
    for _ in range(pulses):
        t_write, stamp = path.pulse()
        errors.append(stamp - t_write)
    return summarise("gpio", errors, path.resolution_ns)


# ---------------------------------------------------------------------------
# The Pico's path


def pico_pairs(test_edges, out_bit: int, in_bit: int) -> list[tuple[int, int]]:
    """Pair each test-output edge with the next self-test-input edge it
    caused: (output tick, input tick). The output reads active when high,
    the input (a button input, pulled up) when low, so a rising output shows
    as the input's release. In one sample the output comes first."""
    pairs = []
    pending: dict[bool, int] = {}
    for tick, bit, level in sorted(test_edges, key=lambda e: (e[0], e[1] != out_bit)):
        if bit == out_bit:
            pending[level] = tick
        elif bit == in_bit and (not level) in pending:
            pairs.append((pending.pop(not level), tick))
    return pairs


def measure_pico(src, pulses: int, width_us: int = 2_000, gap_us: int = 8_000,
                 pi_stamps: Callable[[], list[tuple[int, int]]] | None = None
                 ) -> list[PathReport]:
    """Pulse the box's test output and compare its stamps; with ``pi_stamps``
    (the Pi's own (level, t_ns) stamps of the same output), the box's
    stamps mapped onto the Pi's clock too."""
    from companion.pico import protocol as P
    bits = {i.role: i.bit for i in src.hello.inputs}
    out_bit, in_bit = bits[P.ROLE_TEST_OUT], bits[P.ROLE_SELFTEST_IN]
    src.test_edges.clear()
    if not src.pulse(width_us, gap_us, pulses):
        raise RuntimeError("the box refused the pulse command")
    end = time.monotonic() + (width_us + gap_us) * pulses / 1e6 + 2
    while time.monotonic() < end and len(pico_pairs(src.test_edges, out_bit, in_bit)) < 2 * pulses:
        time.sleep(0.02)
    pairs = pico_pairs(src.test_edges, out_bit, in_bit)
    tick_ns = 10**9 // src.hello.tick_hz
    reports = [summarise("pico", [(b - a) * tick_ns for a, b in pairs], tick_ns)]
    if pi_stamps is not None:
        outs = [(lvl, src.map.to_ns(t)) for t, b, lvl in sorted(src.test_edges) if b == out_bit]
        seen = pi_stamps()
        errors = []
        for level, t_box in outs:
            near = [t for lv, t in seen if lv == level and abs(t - t_box) < 5 * MS]
            if near:
                errors.append(min(near, key=lambda t: abs(t - t_box)) - t_box)
        bound = src.error_bound_ns() or tick_ns
        reports.append(summarise("both", errors, max(tick_ns, bound)))
    return reports


# ---------------------------------------------------------------------------


def run(real: bool, paths: set[str], pulses: int, pi_out: int, pi_in: int, port: str | None,
        out=sys.stdout) -> tuple[list[PathReport], list[str]]:
    """Measure ``paths``; the reports and the problems met."""
    reports: list[PathReport] = []
    problems: list[str] = []
    if "gpio" in paths:
        try:
            path = RealGpioPath(pi_out, pi_in) if real else MockGpioPath(pi_out, pi_in)
            try:
                reports.append(measure_gpio(path, pulses))
            finally:
                path.close()
        except Exception as exc:
            problems.append(f"gpio: {exc}")
    if paths & {"pico", "both"}:
        try:
            reports += _pico(real, paths, pulses, pi_in, port)
        except Exception as exc:
            problems.append(f"pico: {exc}")
    return reports, problems


def _real_box(port):
    """The box's port named (never "the first Pico found") and borrowed from
    the table that holds it, if one does: the table shows the box away and
    takes it back when the self-test ends (companion/pico/lease.py)."""
    from companion.pico.lease import borrow
    from companion.pico.transport import named_port
    return borrow(named_port(port), "the self-test (python -m hardware.selftest)")


def _pico(real, paths, pulses, pi_in, port):
    if real:
        with _real_box(port) as lease:
            return _real_pico(paths, pulses, pi_in, lease.port)
    return _sim_pico(paths, pulses)


def _real_pico(paths, pulses, pi_in, port):
    from companion.buzzers.pico import PicoSource
    src = PicoSource(["1", "2", "3", "4", "5", "6"], port=port, raw=True)
    inp = None
    try:
        _settle(src)
        stamps = None
        if "both" in paths:
            from companion.buzzers.gpio import BuzzerInput, ticks_to_ns
            seen: list[tuple[int, int]] = []
            inp = BuzzerInput(pi_in, on_change=lambda t, p: seen.append(
                (0 if p else 1, ticks_to_ns(t))))       # active low: pressed = low
            stamps = lambda: seen  # noqa: E731
        return measure_pico(src, pulses, pi_stamps=stamps)
    finally:
        if inp is not None:
            inp.close()
        src.close()


def _sim_pico(paths, pulses):
    from companion.buzzers.pico import PicoSource
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware" / "sim"))
    from ptybox import SimBox
    with SimBox(Path(tempfile.mkdtemp(prefix="selftest-"))) as box:
        box.jumper(9, 8)
        box.watch(9)
        src = PicoSource(["1", "2", "3", "4", "5", "6"], port=box.port, raw=True)
        try:
            _settle(src)
            rng = random.Random(3)
            # the Pi's stamp of the same edge: its true time plus a kernel latency
            stamps = None
            if "both" in paths:
                stamps = lambda: [(lvl, t + 20_000 + int(rng.random() * 40_000))  # noqa: E731
                                  for lvl, t in box.edges(9, src.now_ns())]
            return measure_pico(src, pulses, pi_stamps=stamps)
        finally:
            src.close()


def _settle(src, timeout_s: float = 10.0) -> None:
    """Wait for the box's clock to be synced to within a millisecond."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        b = src.error_bound_ns()
        if b is not None and b < MS and src.sync.exchanges >= 16:
            return
        time.sleep(0.05)


def _fairness(args) -> int:
    from hardware import fairness
    if args.last:
        text = fairness.last()
        print(text or "no fairness certificate kept yet: python -m hardware.selftest --real "
                      "--fairness")
        return 0 if text else 1
    if not args.real:
        print("emulated (the firmware's PIO programs in rp2040-pio-emulator, 125 MHz):")
        print(fairness.table(*fairness.certify(trials=1000)))
        return 0
    from companion.buzzers.pico import PicoSource
    with _real_box(args.port) as lease:
        src = PicoSource(["1", "2", "3", "4", "5", "6"], port=lease.port, raw=True)
        try:
            rows, verdict = fairness.certify_box_verdict(src)
            where = f"{src.link.path}, firmware {'.'.join(map(str, src.hello.firmware))}"
        finally:
            src.close()
    print(fairness.table(rows, verdict))
    print(f"kept in {fairness.save(rows, where, verdict=verdict)}")
    return 0 if verdict.certified else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hardware.selftest",
                                 description="Measure each buzzer path's timing and suggest a "
                                             "tie window.")
    ap.add_argument("--real", action="store_true", help="real pins and a real Pico")
    ap.add_argument("--gpio", action="store_true", help="the Pi's GPIO path")
    ap.add_argument("--pico", action="store_true", help="the Pico box's path")
    ap.add_argument("--both", action="store_true", help="one pulse seen by the Pi and the Pico")
    ap.add_argument("--pulses", type=int, default=50)
    ap.add_argument("--pi-out", type=int, default=21, help="BCM output for the gpio path (21)")
    ap.add_argument("--pi-in", type=int, default=20, help="BCM input jumpered to it (20)")
    ap.add_argument("--port", help="the Pico's serial port (default: $COMPANION_PICO_PORT, "
                                   "/dev/buzzerbox, or the one Pico plugged in); a table "
                                   "holding it lends it for the test")
    ap.add_argument("--fairness", action="store_true",
                    help="the Pico box's fairness certificate, 1000 trials a separation "
                         "(hardware/fairness.py): on the box with --real (and kept), else "
                         "emulated")
    ap.add_argument("--last", action="store_true", help="with --fairness: the last one kept")
    args = ap.parse_args(argv)
    if args.fairness:
        return _fairness(args)
    if not 2 <= args.pulses <= 10_000:
        ap.error("--pulses must be 2 to 10000")
    paths = {p for p in ("gpio", "pico", "both") if getattr(args, p)} or {"gpio", "pico", "both"}
    print(f"timing self-test on {'real hardware' if args.real else 'stand-ins'}: "
          f"{', '.join(sorted(paths))}, {args.pulses} pulses each")
    reports, problems = run(args.real, paths, args.pulses, args.pi_out, args.pi_in, args.port)
    for r in reports:
        print("  " + r.to_line())
    for p in problems:
        print(f"  could not measure {p}")
    what = {"gpio": "buzzers on the Pi's GPIO", "pico": "buzzers on the Pico box",
            "both": "a race across both boxes"}
    for r in reports:
        print(f"suggested tie window for {what[r.path]}: {suggest_tie_window_us([r])} us "
              f"(--tie-window-us; presses closer than this are a tie)")
    checks = [clock_check(r) for r in reports if r.path == "both"]
    for _, line in checks:
        print(line)
    return 1 if problems or not reports or not all(ok for ok, _ in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
