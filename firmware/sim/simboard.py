# A simulated Pico board for the MicroPython unix port (tests only).
#
# The stand-in `machine` and `rp2` modules beside this file drive it: Pins
# read and write its pin levels, the StateMachine stand-in turns pin changes
# into the PIO program's words (sample << 22 | counter & 0x3fffff, one word
# per tick whose sample differs from the last), and the DMA stand-in writes
# them into the firmware's ring and counts down like the real channel.
# Nothing here runs on a Pico.
#
# As unkind as the hardware: pins leave reset pulled down and a pull-up takes
# PULL_RISE_US to raise a line; the counter runs at the rate the state
# machine's clock divider really gives (sysclk * 256 // freq, 16.8 fixed
# point) for the chip's system clock; the DMA channel is the datasheets'
# (RP2040 2.5, RP2350 12.6): writing its count sets only the next trigger's
# (RELOAD), a trigger copies it into the live counter and is ignored while
# the channel runs, clearing CTRL.EN pauses it (count kept, words wait in
# the 8-word FIFO), an abort clears the live counter and stops it, and at a
# count of 0 it stops, unless the RP2350's mode (bits 31:28 of the count)
# says 0x1 (TRIGGER_SELF: it re-triggers itself from RELOAD) or 0xF (ENDLESS:
# the count never decrements); and with start_dma() the DMA writes the ring
# from its own thread, on the real clock, whatever the reader is doing.
#
# Time is the unix port's monotonic clock (time.ticks_us, the same
# CLOCK_MONOTONIC the Pi side reads, mod 2**30), unwrapped. The simulated
# crystal runs `ppm` fast or slow: the counter is the true time scaled by
# (1 + ppm / 1e6). External pin changes (a press) are scheduled at exact
# times, so a test knows when each edge really happened.

import time

import _thread

MASK22 = (1 << 22) - 1
NPINS = 30
PULL_RISE_US = 50         # a pull-up charging a buzzer cable: not at once
FIFO_WORDS = 8            # the PIO's RX FIFO (joined)
DMA_COUNT_28 = (1 << 28) - 1    # the RP2350's count field (bits 31:28 are its mode)
DMA_TRIGGER_SELF = 0x1
DMA_ENDLESS = 0xF


class Board:
    def __init__(self):
        self.levels = [0] * NPINS
        self.pull_up_on = [False] * NPINS
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
        self.pushed = 0                 # the tick of the newest word sampled
        self.late = []                  # (scheduled, applied, gpio): changes applied late
        self.chip = "rp2040"
        self.sysclk = 125_000_000
        self.rate = (1, 1)              # counter ticks per us (the divider's truth)
        self.fifo = []                  # words the DMA has not taken (8 at most)
        self.rises = set()              # (t_us, gpio) of pull-ups still rising
        self.dma_active = False         # CTRL.BUSY: a transfer sequence is under way
        self.dma_enabled = True         # CTRL.EN: cleared, the channel pauses
        self.dma_reload = 0             # TRANS_COUNT as written (RELOAD, with the mode)
        self.dma_mode = 0               # the running sequence's mode (RP2350)
        self.dma_aborts = 0
        self.lock = _thread.allocate_lock()
        self._clock_lock = _thread.allocate_lock()
        self.dma_thread = False
        self.wdt_timeout_ms = None      # machine.WDT stand-in
        self.wdt_fed_us = None
        self.wdt_enabled = False
        self.jumpers = {}               # gpio -> gpio wired to it (the self-test jumper)
        self.watched = set()            # gpios whose changes are printed on stderr
        self.external = set()           # gpios something outside drives (a button)

    # -- time ------------------------------------------------------------------

    def now_us(self):
        if self.fixed_now is not None:
            return self.fixed_now
        with self._clock_lock:          # the DMA thread reads the clock too
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
        num, den = self.rate
        return (t_us - self.t0) * (1_000_000 + self.ppm) * num // (1_000_000 * den)

    def set_divider(self, div256, cycles):
        """The state machine's clock divider (1/256ths) and the program's
        cycles per tick: the counter's true rate is sysclk * 256 / div256 /
        cycles, whatever the firmware announces."""
        self.rate = (self.sysclk * 256, div256 * cycles * 1_000_000)

    def pull_up(self, gpio):
        """A pull-up switched on: the line rises PULL_RISE_US later unless
        something outside holds it."""
        if not self.pull_up_on[gpio]:
            self.pull_up_on[gpio] = True
            if gpio not in self.external:
                with self.lock:
                    t = self.now_us() + PULL_RISE_US
                    self.rises.add((t, gpio))
                    self._insert((t, gpio, 1))

    # -- pins --------------------------------------------------------------------

    def _insert(self, item):
        """Into the time-ordered pending changes, after its equals."""
        p = self.pending
        lo, hi = 0, len(p)
        while lo < hi:
            mid = (lo + hi) // 2
            if p[mid] <= item:
                lo = mid + 1
            else:
                hi = mid
        p.insert(lo, item)

    def schedule(self, t_us, gpio, level):
        """An outside change (a button) at an exact time."""
        with self.lock:
            self.external.add(gpio)
            # a button held wins over a pull-up still rising
            self.pending = [p for p in self.pending if (p[0], p[1]) not in self.rises
                            or p[1] != gpio]
            self._insert((t_us, gpio, level))

    def schedule_many(self, changes):
        """Many outside changes (t_us, gpio, level) at once."""
        with self.lock:
            new = list(changes)
            for i in range(1, len(new)):
                if new[i] < new[i - 1]:
                    new.sort()
                    break
            for _, gpio, _ in new:
                self.external.add(gpio)
            old, merged, i = self.pending, [], 0
            for c in new:                   # a merge: MicroPython's sort is
                while i < len(old) and old[i] <= c:   # quadratic on sorted lists
                    merged.append(old[i])
                    i += 1
                merged.append(c)
            merged.extend(old[i:])
            self.pending = merged

    def drive(self, gpio, level):
        """A change the firmware makes (an output), now; a jumper carries it
        to the input wired to it in the same instant."""
        with self.lock:
            self._advance()
            now = self.now_us()
            self._insert((now, gpio, level))
            if gpio in self.jumpers:
                self._insert((now, self.jumpers[gpio], level))
            self._advance()
        if gpio in self.watched:
            import sys
            sys.stderr.write("edge %d %d %d\n" % (gpio, level, time.ticks_us()))

    def level(self, gpio):
        self.advance()
        return self.levels[gpio]

    # -- the watchdog -------------------------------------------------------------

    def wdt_check(self):
        """True if the watchdog would have reset the box by now."""
        if not self.wdt_enabled or self.wdt_fed_us is None:
            return False
        return self.now_us() - self.wdt_fed_us > self.wdt_timeout_ms * 1000

    def sample(self):
        v = 0
        for i in range(self.in_count):
            v |= (self.levels[self.in_base + i] & 1) << i
        return v

    # -- the PIO and the DMA ---------------------------------------------------------

    def start(self, in_base):
        with self.lock:
            self._advance()
            self.in_base = in_base
            self.t0 = self.now_us()
            self.prev_sample = None
            self._push(0)

    def start_dma(self, period_us=20):
        """Let the DMA write the ring from its own thread, every
        ``period_us`` of real time, independent of the firmware's reads."""
        if self.dma_thread:
            return
        self.dma_thread = True

        def run():
            while self.dma_thread:
                self.advance()
                time.sleep_us(period_us)

        _thread.start_new_thread(run, ())

    def stop_dma(self):
        self.dma_thread = False

    def advance(self):
        with self.lock:
            self._advance()

    def _advance(self):
        """Apply every change due by now; push a word per changed tick."""
        now = self.now_us()
        p = self.pending
        while p and p[0][0] <= now:
            t, gpio, level = p.pop(0)
            self.levels[gpio] = level
            if self.t0 is None:
                continue
            tick = self._sampled_at(t, now)
            if tick != self.counter(t):
                self._late(t, now, gpio)
            if not p or p[0][0] > now or self._sampled_at(p[0][0], now) != tick:
                self._push(tick)          # changes in one tick share one sample

    def _sampled_at(self, t, now):
        """The tick of the sample that sees a change at ``t``: its own,
        unless the PIO has already sampled past it (a test's press that
        reached the board late). The real PIO samples in time order, so that
        pin changes now: a word stamped before the last would read as a
        wrap of the counter."""
        tick = self.counter(t)
        return tick if tick >= self.pushed else self.counter(now)

    def _late(self, t, now, gpio):
        """Say that the change meant for ``t`` was applied at ``now``
        (stderr: ``late GPIO T NOW``, ticks_us values), and keep it."""
        import sys
        self.late.append((t, now, gpio))
        if len(self.late) > 100:
            self.late.pop(0)
        sys.stderr.write("late %d %d %d\n" % (gpio, t & 0x3FFFFFFF, now & 0x3FFFFFFF))

    def _push(self, tick):
        s = self.sample()
        if s == self.prev_sample:
            return
        self.prev_sample = s
        self.pushed = tick
        word = (s << 22) | ((-tick) & MASK22)
        self.words += 1
        self.fifo.append(word)
        self._dma()
        if len(self.fifo) > FIFO_WORDS:
            self.fifo.pop()               # push noblock on a full FIFO: dropped
            self.stall_flag = True

    def _dma(self):
        """The DMA takes what waits in the FIFO while it runs and counts."""
        while self.fifo and self.ring is not None and self.dma_active and self.dma_enabled:
            word = self.fifo.pop(0)
            arr, base, n = self.ring
            k = base + (self.written % n) * 2
            arr[k] = word & 0xFFFF
            arr[k + 1] = word >> 16
            self.written += 1
            if self.dma_mode == DMA_ENDLESS:
                continue
            self.dma_count -= 1
            if not self.dma_count:
                if self.dma_mode == DMA_TRIGGER_SELF:
                    self.dma_count = self.dma_reload & DMA_COUNT_28
                else:
                    self.dma_active = False

    def dma_trigger(self):
        """A trigger: RELOAD into the live counter and go; a channel that
        runs (or is paused) or is not enabled ignores it."""
        if self.dma_active or not self.dma_enabled:
            return
        if self.chip == "rp2350":
            self.dma_mode = self.dma_reload >> 28
            self.dma_count = self.dma_reload & DMA_COUNT_28
        else:
            self.dma_mode = 0
            self.dma_count = self.dma_reload
        self.dma_active = self.dma_count > 0 or self.dma_mode == DMA_ENDLESS
        self._dma()

    def dma_abort(self):
        """CHAN_ABORT: "clears the transfer counter and forces the channel
        into an inactive state" (RP2040 datasheet 2.5.5.3)."""
        self.dma_aborts += 1
        self.dma_count = 0
        self.dma_active = False

    def dma_count_read(self):
        """TRANS_COUNT as read: the live count (and the mode, RP2350)."""
        self.advance()
        if self.chip == "rp2350":
            return self.dma_mode << 28 | self.dma_count
        return self.dma_count

    def dma_skip(self, words):
        """As if ``words`` more words had gone through a channel that kept
        up (a long night in an instant): the counter and the ring position
        move on, the ring holds what it held. The reader must skip them too."""
        with self.lock:
            self._advance()
            if self.dma_mode != DMA_ENDLESS:
                if self.dma_mode != DMA_TRIGGER_SELF and words >= self.dma_count:
                    raise ValueError("the channel would have stopped")
                period = self.dma_reload & DMA_COUNT_28
                left = self.dma_count - words
                self.dma_count = left if left > 0 else period - (-left) % period
            self.written += words


board = Board()
