# The buzzer box's hardware (MicroPython on a Pico): PIO, DMA, pins, USB.
#
# Everything boxcore.Box touches goes through this one object. Under the
# MicroPython unix port, firmware/sim/ supplies stand-ins for `machine` and
# `rp2` (and simulated pins, and a USB serial with the Pico's behaviour), so
# this file runs in the tests too.

import array
import select
import sys
import time

import machine
import rp2
from uctypes import addressof

import boxconfig as C
import boxpio

RING_BITS = 12                 # a 4 KiB ring: 1024 words of 4 bytes (the slam's budget)
RING_BYTES = 1 << RING_BITS
# The DMA channel is set up once and never touched again: re-arming it would
# mean DMA.active(0), which is dma_channel_abort, and an abort clears the
# transfer counter (RP2040 datasheet 2.5.5.3), so the words written could no
# longer be counted. Each count is a multiple of 2**16, so "words written mod
# 2**16" is minus the count's low half, whatever the count has done:
# * RP2350: bits 31:28 of TRANS_COUNT are a mode, and 0x1 (TRIGGER_SELF)
#   re-triggers the channel from the count each time it reaches 0: endless.
# * RP2040: no modes; a 32-bit count, 2**32 - 2**16 words: 11 years at the
#   idle 12 words a second (heartbeats and clock sync toggling the mark), 49
#   days of the worst slam (about 1000 words a second) without a break.
DMA_COUNT = {"rp2040": 0xFFFF0000, "rp2350": 0x1 << 28 | 0x0FFF0000}
DMA_BASE = 0x50000000          # the same on both chips
TRANS_COUNT = 0x008            # CHn_TRANS_COUNT at DMA_BASE + 0x40 * n + 0x008
PIO0_BASE = 0x50200000
FDEBUG = PIO0_BASE + 0x008     # RXSTALL of SM n is bit n
SM = 0
DREQ_PIO0_RX0 = 4
# the watchdog's CTRL register (ENABLE is bit 30): machine.WDT cannot be
# stopped, but the box must stop it when it leaves for the REPL (an update)
WATCHDOG_CTRL = {"rp2040": 0x40058000, "rp2350": 0x400D8000}
WATCHDOG_ENABLE = 1 << 30
PULL_SETTLE_MS = 2             # pull-ups raising the buzzer cables before sampling
WATCHDOG_MS = 8000             # the longest the RP2040's watchdog allows (8.3 s)


def chip():
    return "rp2350" if "RP2350" in getattr(sys.implementation, "_machine", "") else "rp2040"


def _poller(stream, event):
    """poll(0) for one event of one stream, as a function. A test's
    stand-in answers itself (the unix port's poll waits 1 ms for objects
    that are not files)."""
    if hasattr(stream, "ready"):
        return lambda: stream.ready(event)
    p = select.poll()
    p.register(stream, event)
    return lambda: bool(p.poll(0))


class Usb:
    """USB serial as MicroPython has it on the Pico: poll says POLLOUT with
    a single byte free, and a write that does not fit waits up to 500 ms and
    then returns a short count. So the box writes one byte per byte of room
    it was promised: write() never waits and says how much it took."""

    def __init__(self, stdin=sys.stdin, stdout=sys.stdout):
        self._in = stdin.buffer
        self._out = stdout.buffer
        self._readable = _poller(stdin, select.POLLIN)
        self._writable = _poller(stdout, select.POLLOUT)
        self._one = bytearray(1)

    def read(self, limit=64, stop=-1):
        """Up to ``limit`` bytes the host sent, without waiting; stops just
        after a ``stop`` byte (the rest stays for whoever reads next)."""
        got = bytearray()
        while len(got) < limit and self._readable():
            b = self._in.read(1)
            if not b:
                break
            got.append(b[0])
            if b[0] == stop:
                break
        return got

    def writable(self):
        return self._writable()

    def write(self, data, start=0):
        """Bytes of ``data`` from ``start`` on taken now (0: no room)."""
        i = start
        one = self._one
        while i < len(data) and self._writable():
            one[0] = data[i]
            if not self._out.write(one):
                break
            i += 1
        return i - start


class Hardware:
    def __init__(self, config=C, usb=None, chip_name=None, sleep_ms=time.sleep_ms):
        self.c = config
        self.chip = chip_name or chip()
        self.sysclk = machine.freq()
        self.tick_hz = boxpio.tick_hz(self.sysclk)
        # the sampled inputs: buttons with pull-ups, outputs as outputs
        self.pins = []
        for role, number, gpio in config.INPUTS:
            if role in (1, 2):
                self.pins.append(machine.Pin(gpio, machine.Pin.IN, machine.Pin.PULL_UP))
            else:
                self.pins.append(machine.Pin(gpio, machine.Pin.OUT, value=0))
        self.cue_pin = self.pins[config.BIT_CUE]
        self.mark_pin = self.pins[config.BIT_MARK]
        self.test_pin = self.pins[config.BIT_TEST_OUT]
        self.leds = [machine.Pin(g, machine.Pin.OUT, value=0) for _, g in config.LEDS]
        self.piezo = machine.Pin(config.PIEZO, machine.Pin.OUT, value=0)
        # pins leave reset pulled down: the first sample must not see every
        # buzzer pressed while the pull-ups are still raising the lines
        sleep_ms(PULL_SETTLE_MS)
        self.status_led = machine.Pin(config.STATUS_LED, machine.Pin.OUT, value=0)
        # the ring the DMA fills, aligned on its size as the DMA's ring needs;
        # read as 16-bit halves so that reading a word never allocates
        self.ring = array.array("H", bytes(2 * RING_BYTES))
        self.ring_base = ((-addressof(self.ring)) & (RING_BYTES - 1)) // 2
        self.ring_buf = memoryview(self.ring)[self.ring_base:self.ring_base + RING_BYTES // 2]
        self.ring_words = RING_BYTES // 4
        # the sampler
        self.sm = rp2.StateMachine(SM, boxpio.program(rp2), freq=boxpio.SM_FREQ,
                                   in_base=machine.Pin(config.IN_BASE))
        self.dma = rp2.DMA()
        self.ctrl = self.dma.pack_ctrl(size=2, inc_read=False, inc_write=True,
                                       ring_size=RING_BITS, ring_sel=True,
                                       treq_sel=DREQ_PIO0_RX0 + SM)
        # the count's low half, read as 16 bits (no big integer, no allocation:
        # DMA.count would be one above 2**30)
        self.count_reg = DMA_BASE + 0x40 * self.dma.channel + TRANS_COUNT
        self.dma.config(read=self.sm, write=self.ring_buf, count=DMA_COUNT[self.chip],
                        ctrl=self.ctrl, trigger=True)
        self.machine = machine
        machine.mem32[FDEBUG] = 1 << SM      # clear a stale RXSTALL
        self.sm.active(1)
        # USB serial: bytes, never text; never block
        self.usb = usb if usb is not None else Usb()
        self.wdt = None
        self.driver = None            # the fairness driver, made when first asked for

    # -- clock ------------------------------------------------------------------

    def ticks_us(self):
        return time.ticks_us()

    def diff(self, a, b):
        return time.ticks_diff(a, b)

    def add(self, a, d):
        return time.ticks_add(a, d)

    # -- the sampler ----------------------------------------------------------------

    def written(self):
        """Words the DMA has written, mod 2**16 (its count started at a
        multiple of 2**16 and goes down by one a word)."""
        return -self.machine.mem16[self.count_reg] & 0xFFFF

    def rx_stalled(self):
        """True once after the PIO dropped a word on a full FIFO."""
        if self.machine.mem32[FDEBUG] & (1 << SM):
            self.machine.mem32[FDEBUG] = 1 << SM
            return True
        return False

    # -- outputs ------------------------------------------------------------------

    def set_mark(self, v):
        self.mark_pin.value(v)

    def set_cue(self, v):
        self.cue_pin.value(v)
        self.piezo.value(v)

    def set_led(self, i, v):
        self.leds[i].value(v)

    def set_status(self, v):
        self.status_led.value(v)

    def set_test_out(self, v):
        self.test_pin.value(v)

    def drive_pair(self, cycles, first, second):
        """Pull buzzer input bit ``first`` low, then ``second`` ``cycles``
        system clock cycles later, hold them, let go (the fairness driver on
        state machine 1, at the system clock, its out pins the six buzzer
        inputs; they stay inputs with pull-ups between trials)."""
        if self.driver is None:
            self.driver = rp2.StateMachine(1, boxpio.driver_program(rp2), freq=self.sysclk,
                                           out_base=machine.Pin(self.c.INPUTS[0][2]))
            self.driver.active(1)
        self.driver.put(boxpio.driver_word(cycles))
        self.driver.put(boxpio.driver_pins(first, second))

    # -- the watchdog ----------------------------------------------------------------

    def watchdog_start(self, ms=WATCHDOG_MS):
        self.wdt = machine.WDT(timeout=ms)

    def watchdog_feed(self):
        if self.wdt is not None:
            self.wdt.feed()

    def watchdog_stop(self):
        """Leaving for the REPL: an update must not be cut by a reset."""
        if self.wdt is not None:
            reg = WATCHDOG_CTRL[self.chip]
            machine.mem32[reg] = machine.mem32[reg] & ~WATCHDOG_ENABLE
            self.wdt = None

    # -- the host -------------------------------------------------------------------

    def read(self):
        """What the host sent, without waiting (up to 64 bytes a call; it
        stops after a 0x03, so the bytes after an interrupt stay unread)."""
        return self.usb.read(64, 3)

    def writable(self):
        return self.usb.writable()

    def write(self, data, start=0):
        """Bytes of ``data`` from ``start`` on the host took now (never waits)."""
        return self.usb.write(data, start)
