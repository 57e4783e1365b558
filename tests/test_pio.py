"""The box's PIO program, run cycle by cycle in an RP2040 PIO emulator
(PyPI rp2040-pio-emulator), assembled by adafruit_pioasm from the one source
text the firmware also carries (firmware/boxpio.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import adafruit_pioasm
import pytest
from pioemu import clock_cycles_reached, emulate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "firmware"))
import boxpio  # noqa: E402

PROGRAM = adafruit_pioasm.Program(boxpio.SOURCE)
PUSH_PC = 12          # the program's `push noblock`
SAMPLE_PC = 3         # its `in pins, 10`
MASK22 = (1 << 22) - 1


def test_the_firmware_loads_exactly_what_pioasm_assembles_from_the_one_source():
    assert tuple(PROGRAM.assembled) == boxpio.WORDS
    assert PROGRAM.pio_kwargs["wrap_target"] == boxpio.WRAP_TARGET
    assert PROGRAM.pio_kwargs["wrap"] == boxpio.WRAP


def test_the_fairness_driver_loads_what_pioasm_assembles_shifting_right():
    assert tuple(adafruit_pioasm.Program(boxpio.DRIVER_SOURCE).assembled) == boxpio.DRIVER_WORDS
    calls = {}

    class FakeRp2:
        class PIO:
            IN_LOW, SHIFT_LEFT, SHIFT_RIGHT = 0, 0, 1

        @staticmethod
        def asm_pio(**kw):
            def dec(f):
                words = []
                f.__globals__["word"] = words.append
                try:
                    f()
                finally:
                    f.__globals__.pop("word", None)
                calls.update(kw=kw, words=words)
            return dec

    boxpio.driver_program(FakeRp2)
    assert tuple(calls["words"]) == boxpio.DRIVER_WORDS
    assert calls["kw"]["out_shiftdir"] == FakeRp2.PIO.SHIFT_RIGHT     # the low half first
    assert calls["kw"]["out_init"] == (FakeRp2.PIO.IN_LOW,) * 6        # six inputs, latch low


def test_rp2s_assembler_gets_the_same_words_and_wrap_points():
    calls = {}

    class FakeRp2:
        class PIO:
            SHIFT_LEFT, JOIN_RX = 0, 2

        @staticmethod
        def asm_pio(**kw):
            def dec(f):
                words, marks = [], {}
                g = f.__globals__
                g.update(word=words.append,
                         wrap_target=lambda: marks.__setitem__("target", len(words)),
                         wrap=lambda: marks.__setitem__("wrap", len(words) - 1))
                try:
                    f()
                finally:
                    for k in ("word", "wrap_target", "wrap"):
                        g.pop(k, None)
                calls.update(kw=kw, words=words, marks=marks)
                return words
            return dec

    boxpio.program(FakeRp2)
    assert tuple(calls["words"]) == boxpio.WORDS
    assert calls["marks"] == {"target": boxpio.WRAP_TARGET, "wrap": boxpio.WRAP}
    assert calls["kw"]["fifo_join"] == FakeRp2.PIO.JOIN_RX


class Run:
    """The program on the emulator, with pins given as (from_cycle, levels)
    steps and a drain that empties the RX FIFO every ``drain_every`` cycles
    (None: never). ``dropped``: pushes the emulator executed that left the
    FIFO as it was (full): the words the hardware drops and flags RXSTALL
    for."""

    def __init__(self, steps, cycles, drain_every=1):
        self.steps = sorted(steps)
        self.words: list[tuple[int, int, int]] = []     # (cycle, sample, count)
        self.samples: list[int] = []
        self.dropped = 0
        last_drain = 0
        def pins(clock):
            return self.pins(clock)
        pins.__annotations__ = {"clock": int}       # how pioemu tells the kind of source
        gen = emulate(PROGRAM.assembled, stop_when=clock_cycles_reached(cycles),
                      input_source=pins, shift_isr_right=False,
                      wrap_target=boxpio.WRAP_TARGET, wrap_top=boxpio.WRAP)
        for before, after in gen:
            if before.program_counter == SAMPLE_PC:
                self.samples.append(before.clock)
            if (before.program_counter == PUSH_PC
                    and list(after.receive_fifo) == list(before.receive_fifo)):
                self.dropped += 1
            if drain_every is not None and after.clock - last_drain >= drain_every:
                last_drain = after.clock
                while after.receive_fifo:
                    self._take(after.clock, after.receive_fifo.popleft())
        self.fifo_left = list(after.receive_fifo)

    def pins(self, clock: int) -> int:
        v = 0
        for start, levels in self.steps:
            if start <= clock:
                v = levels
        return v

    def _take(self, clock, word):
        self.words.append((clock, word >> 22, (-(word & MASK22)) & MASK22))


def test_every_path_through_the_loop_takes_the_same_cycles_so_the_counter_is_exact():
    r = Run([(0, 0), (200, 0b1), (460, 0b11), (800, 0b10)], 1500)
    gaps = {b - a for a, b in zip(r.samples, r.samples[1:])}
    assert gaps == {boxpio.CYCLES_PER_TICK}           # changed or not, 25 cycles a tick
    # each word's count is the tick of its sample: cycle / 11 from the start
    first = r.samples[0]
    for cycle, sample, count in r.words[1:]:
        sample_cycle = first + count * boxpio.CYCLES_PER_TICK
        assert r.pins(sample_cycle) == sample
        assert r.pins(sample_cycle - boxpio.CYCLES_PER_TICK) != sample


@pytest.mark.parametrize("sysclk", [125_000_000, 150_000_000])
def test_the_counter_ticks_at_the_stated_rate(sysclk):
    # the emulated program's cycles per tick, at the divider rp2.StateMachine
    # sets (16.8 fixed point) for SM_FREQ on each chip's system clock, give
    # exactly the rate the box announces: an integer divider, no drift
    r = Run([(0, 0), (1000, 1), (1000 + 400 * 25, 0)], 12_000)
    counts = [c for _, _, c in r.words]
    cycles = (r.words[2][0] - r.words[1][0])
    ticks = counts[2] - counts[1]
    assert ticks == 400
    div256 = boxpio.divider(sysclk)
    assert div256 % 256 == 0                           # no fractional part
    per_tick_ns = ticks and (div256 // 256) * (cycles // ticks) * 10**9 // sysclk
    assert per_tick_ns * boxpio.tick_hz(sysclk) == 10**9


def test_edges_on_several_pins_in_one_sample_share_one_word():
    r = Run([(0, 0b0000000000), (300, 0b0000100101)], 800)
    assert [(s, c) for _, s, c in r.words][1:] == [(0b100101, r.words[1][2])]
    assert len(r.words) == 2


def test_nothing_is_pushed_without_a_change():
    r = Run([(0, 0b1111)], 5000)
    assert len(r.words) == 1 and r.words[0][1] == 0b1111     # only the first sample
    assert r.dropped == 0


def test_a_burst_faster_than_the_drain_overflows_is_flagged_and_never_stalls_the_counter():
    # a change every 3 ticks, the drain comes only every 40 ticks: the FIFO
    # (4 deep in the emulator) fills and the emulator drops pushes
    # the push is `push noblock` (PUSH, block bit 5 clear): on a full FIFO
    # the RP2040 drops the word and sets FDEBUG.RXSTALL instead of stalling
    push = boxpio.WORDS[PUSH_PC]
    assert push >> 13 == 0b100 and not push & 0x80 and not push & 0x20
    steps = [(0, 0)] + [(i * 75 + 10, i % 2) for i in range(1, 60)]
    r = Run(steps, 60 * 75 + 1000, drain_every=40 * 25)
    changes = 1 + 59
    assert r.dropped > 0
    assert len(r.words) + len(r.fifo_left) + r.dropped == changes   # every change: kept or dropped
    # the counter never stopped: every word kept still carries its true tick
    first = r.samples[0]
    for _, sample, count in r.words[1:]:
        assert r.pins(first + count * boxpio.CYCLES_PER_TICK) == sample
