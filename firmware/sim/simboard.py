# A simulated Pico board for the MicroPython unix port (tests only).
#
# The stand-in `machine` and `rp2` modules beside this file drive it: Pins
# read and write its pin levels, the StateMachine stand-in turns pin changes
# into the PIO program's words (sample << 22 | counter & 0x3fffff, one word
# per tick whose sample differs from the last), and the DMA stand-in writes
# them into the firmware's ring and counts down like the real channel.
# Nothing here runs on a Pico.
#
# Time is the unix port's monotonic clock (time.ticks_us, the same
# CLOCK_MONOTONIC the Pi side reads, mod 2**30), unwrapped. The simulated
# crystal runs `ppm` fast or slow: the counter is the true time scaled by
# (1 + ppm / 1e6). External pin changes (a press) are scheduled at exact
# times, so a test knows when each edge really happened.

import time

MASK22 = (1 << 22) - 1
NPINS = 30


class Board:
    def __init__(self):
        self.levels = [0] * NPINS
        self.pull_up = [False] * NPINS
        self.ppm = 0
        self._last_raw = time.ticks_us()
        self._us = self._last_raw       # unwrapped from here on
        self.in_base = None
        self.in_count = 10
        self.t0 = None                  # when the state machine started
        self.prev_sample = None
        self.prev_tick = -1
        self.pending = []               # (t_us, gpio, level) in time order
        self.ring = None                # (array, base in halves, words)
        self.written = 0
        self.dma_count = 0
        self.stall_flag = False
        self.words = 0
        self.fixed_now = None           # tests may freeze the clock
        self.jumpers = {}               # gpio -> gpio wired to it (the self-test jumper)
        self.watched = set()            # gpios whose changes are printed on stderr
        self.external = set()           # gpios something outside drives (a button)

    # -- time ------------------------------------------------------------------

    def now_us(self):
        if self.fixed_now is not None:
            return self.fixed_now
        raw = time.ticks_us()
        self._us += time.ticks_diff(raw, self._last_raw)
        self._last_raw = raw
        return self._us

    def unwrap(self, t_mod):
        """A ticks_us value (mod 2**30) as the nearest unwrapped time."""
        now = self.now_us()
        d = (t_mod - now) & ((1 << 30) - 1)
        if d >= 1 << 29:
            d -= 1 << 30
        return now + d

    def counter(self, t_us):
        return (t_us - self.t0) * (1_000_000 + self.ppm) // 1_000_000

    # -- pins --------------------------------------------------------------------

    def schedule(self, t_us, gpio, level):
        """An outside change (a button) at an exact time."""
        self.external.add(gpio)
        self.pending.append((t_us, gpio, level))
        self.pending.sort()

    def drive(self, gpio, level):
        """A change the firmware makes (an output), now; a jumper carries it
        to the input wired to it in the same instant."""
        self.advance()
        now = self.now_us()
        self.pending.append((now, gpio, level))
        if gpio in self.jumpers:
            self.pending.append((now, self.jumpers[gpio], level))
        self.pending.sort()
        self.advance()
        if gpio in self.watched:
            import sys
            sys.stderr.write("edge %d %d %d\n" % (gpio, level, time.ticks_us()))

    def level(self, gpio):
        self.advance()
        return self.levels[gpio]

    def sample(self):
        v = 0
        for i in range(self.in_count):
            v |= (self.levels[self.in_base + i] & 1) << i
        return v

    # -- the PIO and the DMA ---------------------------------------------------------

    def start(self, in_base):
        self.in_base = in_base
        self.t0 = self.now_us()
        self.prev_sample = None
        self._push(0)

    def advance(self):
        """Apply every change due by now; push a word per changed tick."""
        now = self.now_us()
        p = self.pending
        while p and p[0][0] <= now:
            t, gpio, level = p.pop(0)
            self.levels[gpio] = level
            if self.t0 is None:
                continue
            tick = self.counter(t)
            if not p or p[0][0] > now or self.counter(p[0][0]) != tick:
                self._push(tick)          # changes in one tick share one sample

    def _push(self, tick):
        s = self.sample()
        if s == self.prev_sample:
            return
        self.prev_sample = s
        word = (s << 22) | ((-tick) & MASK22)
        self.words += 1
        if self.ring is None or self.dma_count <= 0:
            self.stall_flag = True
            return
        arr, base, n = self.ring
        k = base + (self.written % n) * 2
        arr[k] = word & 0xFFFF
        arr[k + 1] = word >> 16
        self.written += 1
        self.dma_count -= 1


board = Board()
