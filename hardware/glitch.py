"""Glitches against the box's minimum hold, in the PIO emulator.

The firmware's own capture program (``boxpio.SOURCE``) runs in
rp2040-pio-emulator at its 25 MHz (a fifth of 125 MHz) on a pin trace, and
the words it pushes go, unchanged, through the firmware's own core
(``boxcore.Box.word``, under CPython) in debounced mode. Long quiet stretches
are not emulated: the trace is cut into segments, each emulated from a fresh
start at a multiple of the capture's tick (so its samples fall where a
continuous run's would) and its counter shifted by that many ticks; a quiet
input pushes no word, so the core sees what one long run would give it.

``glitch_presses`` counts the presses from glitches (an input low for 0.1 to
500 us, from idle or, released, while held), which must be 0;
``pressed`` gives the presses and releases of a list of real presses, which
keep their leading edge's stamp (bench/bench_pico_glitch.py, tests/test_pio_glitch.py).
"""

from __future__ import annotations

import functools
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))
import boxconfig  # noqa: E402
import boxcore  # noqa: E402
import boxpio  # noqa: E402

DIV = 5                                   # system cycles per capture cycle (125 / 25 MHz)
TICK = boxpio.CYCLES_PER_TICK * DIV       # system cycles per tick (125: 1 us)
MASK22 = (1 << 22) - 1
IDLE = 0b0001111111                       # buttons pulled up (high), outputs low
SPACING_TICKS = 10_000                    # between glitches of one input: past the hold


@functools.cache
def _program() -> tuple[int, ...]:
    import adafruit_pioasm              # the emulation's tools (the test extra)
    return tuple(adafruit_pioasm.Program(boxpio.SOURCE).assembled)


def segment_words(changes, length_ticks: int) -> list[int]:
    """The capture program from a fresh start for ``length_ticks`` ticks,
    its pins IDLE but for ``changes`` ((ns from the start, input bit,
    level)) in time order: the raw words it pushed."""
    from pioemu import clock_cycles_reached, emulate
    prog = list(_program())
    k, v = 0, IDLE
    cyc = [(round(ns * 125 / 1000), bit, level) for ns, bit, level in changes]

    def pins(clock: int) -> int:
        nonlocal k, v
        t = clock * DIV
        while k < len(cyc) and cyc[k][0] <= t:
            _, bit, level = cyc[k]
            v = (v | 1 << bit) if level else (v & ~(1 << bit))
            k += 1
        return v

    pins.__annotations__ = {"clock": int}         # how pioemu tells the kind of source
    words = []
    for _, after in emulate(prog, stop_when=clock_cycles_reached(length_ticks * 25 + 2),
                            input_source=pins, shift_isr_right=False,
                            wrap_target=boxpio.WRAP_TARGET, wrap_top=boxpio.WRAP):
        while after.receive_fifo:
            words.append(after.receive_fifo.popleft())
    return words


class _Hw:
    """What boxcore.Box needs of the hardware when it is fed words
    directly: a clock the harness sets, nothing written anywhere."""

    tick_hz = 1_000_000
    sysclk = 125_000_000
    ring_words = 256
    ring_base = 0

    def __init__(self):
        import array
        self.ring = array.array("H", bytes(2 * 256))
        self.now = 0

    def written(self):
        return 0

    def ticks_us(self):
        return self.now

    def diff(self, a, b):
        return a - b

    def add(self, a, d):
        return a + d

    def __getattr__(self, name):                  # set_mark, rearm, writable...: nothing
        return lambda *a: 0


class Core:
    """The firmware's core fed the emulator's words, a segment at a time."""

    def __init__(self, min_hold_us: int = boxconfig.MIN_HOLD_US):
        cfg = type("Cfg", (), {k: getattr(boxconfig, k) for k in dir(boxconfig)
                               if k.isupper()})
        cfg.MIN_HOLD_US = min_hold_us
        cfg.STUCK_MS = 0                          # held for the whole run: not stuck
        self.box = boxcore.Box(_Hw(), cfg)
        self.records: list[tuple[int, int, int]] = []

    def feed(self, start_tick: int, words, end_tick: int) -> None:
        """Words of a segment emulated from ``start_tick``, then the box's
        timers at ``end_tick`` (what the main loop does after a drain)."""
        box = self.box
        for w in words:
            w = (w & ~MASK22) | ((w - start_tick) & MASK22)     # the counter counts down
            box.word(w >> 16, w & 0xFFFF)
        box.tick_us = 0
        box.hw.now = end_tick - box.tick
        box.timers(box.hw.now)
        # the records the box keeps for its next edge frame (preallocated
        # arrays of local ticks): taken here instead of framed
        self.records += [(box.tick64(box.rec_tick[k]), box.rec_changed[k], box.rec_levels[k])
                         for k in range(box.n_recs)]
        box.n_recs = 0

    def edges(self, bit: int) -> list[tuple[int, bool]]:
        """(tick, pressed) of every edge reported for input ``bit``."""
        return [(t, bool(lv >> bit & 1)) for t, ch, lv in self.records if ch >> bit & 1]


def _run(core: Core, segments) -> list[tuple[int, int]]:
    """Each segment: (start tick, changes in ns from its start, length in
    ticks). The words fed, as (global tick, sample)."""
    out = []
    for start, changes, length in segments:
        words = segment_words(changes, length)
        core.feed(start, words, start + length)
        out += [(start + ((-w) & MASK22), w >> 22) for w in words]
    return out


def glitches(n: int, rng: random.Random, low_us=0.1, high_us=500.0, bits=range(6),
             held: bool = False):
    """``n`` glitches, widths log-uniform from ``low_us`` to ``high_us``,
    each at a random phase, on the buzzers in turn: segments (see _run),
    widest last in a group so one segment holds one glitch per buzzer."""
    widths = sorted(math.exp(rng.uniform(math.log(low_us), math.log(high_us)))
                    for _ in range(n))
    bits = list(bits)
    segs = []
    level = 1 if held else 0         # the glitch's level: a press from idle, a release while held
    for g in range(0, n, len(bits)):
        group = widths[g:g + len(bits)]
        start = (len(segs) + 1) * SPACING_TICKS
        changes = [(0, b, 1 - level) for b in bits] if held else []
        for b, w in zip(bits, group):
            at = 3_000 + rng.randrange(1_000)             # ns: 3 to 4 us in, any phase
            changes += [(at, b, level), (at + round(w * 1000), b, 1 - level)]
        segs.append((start, sorted(changes), 6 + math.ceil(max(group))))
    return segs


def glitch_presses(n: int = 10_000, seed: int = 1, held: bool = False) -> tuple[int, int]:
    """(presses or releases reported, glitches) for ``n`` emulated glitches
    of 0.1 to 500 us: every one of them must be dropped. ``held``: each
    buzzer held down, the glitch a release (no release, no new press)."""
    core = Core()
    segs = glitches(n, random.Random(seed), held=held)
    if held:                                      # press and hold every buzzer first
        core.feed(0, segment_words([(1_000, b, 0) for b in range(6)], 20), 20)
        core.feed(SPACING_TICKS - 1, [], SPACING_TICKS - 1)
        assert len(core.records) == 1, core.records               # the six presses, one stamp
        core.records = []
    _run(core, segs)
    return len(core.records), n


def pressed(presses, rng: random.Random):
    """Real presses: each (bit, tick, hold in ticks) pulled low at the tick
    plus a random phase, bouncing open (20 to 300 us, one to three times in
    its first 1.5 ms), released after the hold with a bounce too. The core
    (its records), the edges reported before each press's hold was over,
    and the true leading edges: (bit, tick of the first sample that saw it
    low, of the first that saw it high again)."""
    core = Core()
    truth, early = [], []
    for bit, at, hold in presses:
        ph = rng.randrange(1_000)
        fall, t = [(2_000 + ph, bit, 0)], 2_000 + ph
        for _ in range(rng.randrange(1, 4)):             # bounces: open, closed again
            t += rng.randrange(100_000, 400_000)
            open_ns = rng.randrange(20_000, 300_000)
            fall += [(t, bit, 1), (t + open_ns, bit, 0)]
            t += open_ns
        words = _run(core, [(at - 2, fall, 2_000)])
        early += [e for e in core.edges(bit) if e[0] >= at - 2]
        down = next(tk for tk, smp in words if not smp >> bit & 1)
        rise = [(0, bit, 0), (2_000 + ph, bit, 1), (60_000 + ph, bit, 0), (90_000 + ph, bit, 1)]
        words = _run(core, [(at + hold - 2, rise, 200)])
        up = next(tk for tk, smp in words if smp >> bit & 1)
        for ms in range(20, 40):                     # the main loop goes on: its timers
            core.feed(at + hold + 1_000 * ms, [], at + hold + 1_000 * ms)
        truth.append((bit, down, up))
    return core, early, truth
