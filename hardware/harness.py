"""Check a buzzer box: buttons at rest, each press and its bounce, each LED, the cue.

The same checks run on gpiozero mock pins (the default: presses are driven
automatically, with bounce, at controlled ticks) or on the real pins of a Pi
(``--real`` or ``COMPANION_REAL_PINS=1``: you press each buzzer when asked
and say whether each light came on)::

    python -m hardware.harness                 # mock pins, no Pi needed
    COMPANION_REAL_PINS=1 python -m hardware.harness
    python hardware/harness.py --real --players 4 --timeout 20

It prints a report and exits 0 when every check passed, 1 otherwise, 2 when
it could not run (no pin map, no GPIO).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from companion.buzzers.base import SourceUnavailable, open_source
from companion.buzzers.feedback import Feedback, FeedbackSettings
from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.pinmap import PinMapError, load_pinmap
from companion.buzzers.pipeline import Pipeline, RefereeConsumer
from companion.races.edges import ButtonEdge, Edge
from companion.races.referee import MS, Referee

ENV_REAL = "COMPANION_REAL_PINS"
#: Quiet time after a release that ends a press on real pins.
QUIET_NS = 300 * MS


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class PressReport:
    """One press and release of one buzzer, from its raw edges."""

    bursts: int            # groups of edges closer than the debounce window
    press_bounces: int     # extra edges in the press burst
    press_bounce_ns: int   # first to last edge of the press burst
    release_bounces: int
    release_bounce_ns: int
    held_ns: int           # first edge of the press burst to first of the release
    accepted: int          # edges the referee's debounce keeps (2 for a clean press)


def analyse_press(edges: list[ButtonEdge], debounce_ns: int) -> PressReport:
    """Group one buzzer's raw edges into bursts and measure the bounce."""
    edges = sorted(edges, key=lambda e: e.t_ns)
    bursts: list[list[ButtonEdge]] = []
    for e in edges:
        if bursts and e.t_ns - bursts[-1][-1].t_ns < debounce_ns:
            bursts[-1].append(e)
        else:
            bursts.append([e])
    ref = Referee(["x"], debounce_ns=debounce_ns)
    kept: list = []
    ref.listeners.append(lambda kind, p: kept.append(p) if kind == "edge" else None)
    for e in edges:
        ref.feed(Edge("x", e.pressed, e.t_ns))
    if edges:
        ref.poll(edges[-1].t_ns + debounce_ns)
    if not bursts:
        return PressReport(0, 0, 0, 0, 0, 0, 0)
    first, last = bursts[0], bursts[-1]
    rel = last if len(bursts) > 1 else []
    return PressReport(
        bursts=len(bursts),
        press_bounces=len(first) - 1,
        press_bounce_ns=first[-1].t_ns - first[0].t_ns,
        release_bounces=max(len(rel) - 1, 0),
        release_bounce_ns=(rel[-1].t_ns - rel[0].t_ns) if rel else 0,
        held_ns=(rel[0].t_ns - first[0].t_ns) if rel else 0,
        accepted=len(kept),
    )


def mock_press(source: MockSource, player: str, t0: int) -> None:
    """A realistic bouncy press on a mock pin: 4 bounces over 1.5 ms, held
    120 ms, then a release with 2 bounces over 0.9 ms."""
    source.bounce(player, True, t0, [300_000, 700_000, 1_200_000, 1_500_000])
    source.bounce(player, False, t0 + 120 * MS, [400_000, 900_000])


def _header_pin(factory, gpio: int) -> str:
    try:
        for header, info in factory.board_info.find_pin(f"GPIO{gpio}"):
            return f"{getattr(header, 'name', header)} pin {info.number}"
    except Exception:
        pass
    return "?"


class Recorder(RefereeConsumer):
    """The harness's consumer: every raw edge is kept (to measure bounce)
    before the referee judges it, and waiters are told."""

    def __init__(self, referee: Referee, clock: Callable[[], int]):
        super().__init__(referee, clock)
        self.edges: list[ButtonEdge] = []
        self.cond = threading.Condition()

    def feed_edge(self, edge: ButtonEdge) -> None:
        with self.cond:
            self.edges.append(edge)
            self.cond.notify_all()
        super().feed_edge(edge)


class Harness:
    """The checks, on the same pipeline as every table: the source's edges
    go through a :class:`~companion.buzzers.pipeline.Pipeline` to a
    :class:`Recorder` (on real pins its thread runs; on mock pins the
    harness pumps it after each scripted press, on the mock clock)."""

    def __init__(self, out, ask: Callable[[str], str] | None, real: bool, pinmap,
                 players: int | None, timeout_s: float, debounce_ns: int, pin_factory,
                 press: Callable):
        self.out = out
        self.ask = ask
        self.real = real
        self.timeout_s = timeout_s
        self.debounce_ns = debounce_ns
        self.press = press
        self.checks: list[Check] = []
        self.pm = load_pinmap(pinmap)
        n = len(self.pm.slots) if players is None else players
        if not 1 <= n <= len(self.pm.slots):
            raise ValueError(f"--players must be 1 to {len(self.pm.slots)}")
        self.names = [f"slot{i}" for i in range(1, n + 1)]
        self._own_factory = None
        if not real and pin_factory is None:
            pin_factory = self._own_factory = ClockedMockFactory(start_ns=1_000 * MS)
        self.source = open_source("gpio" if real else "mock", self.names, self.pm,
                                  pin_factory=pin_factory)
        self.factory = self.source.pin_factory
        if not real and getattr(self.factory, "clock_ns", 0) is None:
            self.factory.clock_ns = 1_000 * MS
        self.feedback = None
        self.pipeline = None
        try:
            self.feedback = Feedback.from_pinmap(self.names, self.pm, pin_factory=self.factory,
                                                 settings=FeedbackSettings(),
                                                 clock=self.source.now_ns)
            self.recorder = Recorder(Referee(self.names, debounce_ns=debounce_ns),
                                     self.source.now_ns)
            self.edges = self.recorder.edges
            self._cond = self.recorder.cond
            self.pipeline = Pipeline(self.source, self.recorder, feedback=self.feedback,
                                     name="harness-pipeline").start(thread=real)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()           # and the feedback with it
        elif self.feedback is not None:
            self.feedback.close()
        self.source.close()
        if self._own_factory is not None:
            self._own_factory.close()
            self._own_factory.reset()

    def say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def check(self, name: str, ok: bool, detail: str = "") -> Check:
        c = Check(name, ok, detail)
        self.checks.append(c)
        self.say(f"[{'PASS' if ok else 'FAIL'}] {name}" + (f": {detail}" if detail else ""))
        return c

    def yes(self, question: str) -> bool:
        answer = (self.ask(question + " [Y/n] ") if self.ask else "y").strip().lower()
        return answer in ("", "y", "yes")

    # -- the checks ---------------------------------------------------------------

    def run(self) -> bool:
        mode = "real pins" if self.real else "mock pins"
        self.say(f"Tabletop Companion buzzer box check ({mode})")
        self.say(f"pin map: {self.pm.source}")
        for name in self.names:
            self.check_rest(name)
        for name in self.names:
            self.check_press(name)
        for name in self.names:
            self.check_led(name)
        self.check_cue()
        failed = [c for c in self.checks if not c.ok]
        self.say(f"summary: {len(self.checks)} checks, {len(self.checks) - len(failed)} passed, "
                 f"{len(failed)} failed")
        return not failed

    def _where(self, gpio: int) -> str:
        return f"GPIO{gpio} ({_header_pin(self.factory, gpio)})"

    def check_rest(self, name: str) -> None:
        slot = self.source.slots[name]
        button = self.source.buttons[name]
        high = bool(button.pin.state)
        ok = high and not button.is_active
        self.check(f"slot {slot.slot} button {self._where(slot.button)} at rest", ok,
                   "released (pulled high)" if ok else
                   "reads pressed (low) at rest: button wired to GND permanently, or shorted")

    def check_press(self, name: str) -> None:
        slot = self.source.slots[name]
        label = f"slot {slot.slot} press"
        self.say(f"-> press and release buzzer {slot.slot} ({self._where(slot.button)})"
                 + ("" if self.real else " (mock: pressing it)"))
        with self._cond:
            start = len(self.edges)
        if self.real:
            self._wait_press(start)
        else:
            t0 = self.source.now_ns() + 500 * MS
            self.press(self.source, name, t0)
            self.factory.clock_ns = max(self.factory.clock_ns, t0 + 500 * MS)
            self.pipeline.pump()
        with self._cond:
            got = self.edges[start:]
        mine = [e for e in got if e.buzzer == name]
        others = sorted({e.buzzer for e in got} - {name})
        if others:
            where = ", ".join(f"slot {self.source.slots[p].slot}" for p in others)
            self.check(label, False, f"edges came from {where}: buttons swapped or crossed?")
            return
        if not mine:
            self.check(label, False, f"no edge on {self._where(slot.button)}: check the wire "
                                     f"from the pin through the button to GND")
            return
        r = analyse_press(mine, self.debounce_ns)
        detail = (f"{r.press_bounces} bounce(s) over {r.press_bounce_ns / MS:.3f} ms; release "
                  f"{r.release_bounces} bounce(s) over {r.release_bounce_ns / MS:.3f} ms; "
                  f"held {r.held_ns / MS:.3f} ms")
        if r.bursts < 2:
            self.check(label, False, "pressed but never released: " + detail)
        elif r.bursts > 2 or r.accepted != 2:
            self.check(label, False, f"{r.bursts} bursts, {r.accepted} debounced edges (a clean "
                                     f"press gives 2): bounce longer than the "
                                     f"{self.debounce_ns / MS:.0f} ms debounce? " + detail)
        else:
            self.check(label, True, detail)

    def _wait_press(self, start: int) -> None:
        deadline = time.monotonic() + self.timeout_s
        with self._cond:
            while time.monotonic() < deadline:
                got = self.edges[start:]
                if got and not got[-1].pressed and any(e.pressed for e in got):
                    if self.source.now_ns() - got[-1].t_ns >= QUIET_NS:
                        return
                    self._cond.wait(0.05)
                    continue
                self._cond.wait(0.05)

    def _led_check(self, label: str, device, gpio: int, question: str) -> None:
        if device is None:
            return
        device.on()
        try:
            if self.real:
                ok = self.yes(question)
                self.check(label, ok, "" if ok else f"check the LED's polarity and resistor on "
                                                    f"{self._where(gpio)}")
            else:
                ok = bool(device.pin.state)
                self.check(label, ok, "pin driven high" if ok else "pin stayed low")
        finally:
            device.off()
        if not self.real and device.pin.state:
            self.check(label + " off", False, "pin stayed high after off()")

    def check_led(self, name: str) -> None:
        slot = self.source.slots[name]
        self._led_check(f"slot {slot.slot} LED {self._where(slot.led)}" if slot.led is not None
                        else "", self.feedback.leds.get(name), slot.led,
                        f"Is buzzer {slot.slot}'s LED lit?")

    def check_cue(self) -> None:
        pm = self.pm
        self._led_check(f"cue LED {self._where(pm.cue_led)}" if pm.cue_led is not None else "",
                        self.feedback.cue_led, pm.cue_led, "Is the cue LED lit?")
        piezo = self.feedback.piezo
        if piezo is None:
            return
        label = f"cue piezo {self._where(pm.piezo)} ({pm.piezo_kind})"
        self.feedback.cue(True, "A4")
        try:
            if self.real:
                time.sleep(0.3)
                self.feedback.cue(False)
                ok = self.yes("Did the piezo beep?")
                self.check(label, ok, "" if ok else "check the piezo's polarity; an active "
                           "piezo needs piezo_kind = \"active\", a passive one \"tonal\"")
            else:
                ok = bool(piezo.pin.state) if hasattr(piezo, "pin") else piezo.value is not None
                self.check(label, ok, "driven" if ok else "pin not driven")
        finally:
            self.feedback.cue(False)


def run(argv=None, stdin=None, stdout=None, *, pin_factory=None,
        press: Callable = mock_press) -> int:
    """The harness's command line; returns the exit status."""
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    p = argparse.ArgumentParser(prog="python -m hardware.harness", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--real", action="store_true",
                   help=f"use the Pi's real pins (also: {ENV_REAL}=1)")
    p.add_argument("--pinmap", help="pin map TOML (default: hardware/pinmap.toml)")
    p.add_argument("--players", type=int, help="how many buzzer slots to check (default: all)")
    p.add_argument("--timeout", type=float, default=15.0,
                   help="seconds to wait for each press on real pins")
    p.add_argument("--debounce-ms", type=int, default=20)
    args = p.parse_args(argv)
    real = args.real or os.environ.get(ENV_REAL, "") not in ("", "0")

    def ask(question: str) -> str:
        out.write(question)
        out.flush()
        return stdin.readline()

    try:
        h = Harness(out, ask if real else None, real, args.pinmap, args.players, args.timeout,
                    args.debounce_ms * MS, pin_factory, press)
    except (PinMapError, ValueError) as exc:
        out.write(f"harness: {exc}\n")
        return 2
    except SourceUnavailable:
        out.write("harness: no GPIO here (needs lgpio and /dev/gpiochip0); run without --real "
                  f"(and without {ENV_REAL}) to check on mock pins\n")
        return 2
    except Exception as exc:   # no GPIO here, pin busy...
        out.write(f"harness: cannot open the pins: {exc}\n")
        return 2
    try:
        return 0 if h.run() else 1
    finally:
        h.close()


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
