# The buzzer box's hardware (MicroPython on a Pico): PIO, DMA, pins, USB.
#
# Everything boxcore.Box touches goes through this one object. Under the
# MicroPython unix port, firmware/sim/ supplies stand-ins for `machine` and
# `rp2` (and simulated pins), so this file runs in the tests too.

import array
import select
import sys
import time

import machine
import rp2
from uctypes import addressof

import boxconfig as C
import boxpio

RING_BITS = 10                 # a 1 KiB ring: 256 words of 4 bytes
RING_BYTES = 1 << RING_BITS
DMA_COUNT = 0x3FFFFFFF         # transfers before re-arming (small-int sized)
PIO0_BASE = 0x50200000
FDEBUG = PIO0_BASE + 0x008     # RXSTALL of SM n is bit n
SM = 0
DREQ_PIO0_RX0 = 4


class Hardware:
    def __init__(self, config=C):
        self.c = config
        self.tick_hz = boxpio.TICK_HZ
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
        ctrl = self.dma.pack_ctrl(size=2, inc_read=False, inc_write=True,
                                  ring_size=RING_BITS, ring_sel=True,
                                  treq_sel=DREQ_PIO0_RX0 + SM)
        self.dma.config(read=self.sm, write=self.ring_buf, count=DMA_COUNT, ctrl=ctrl,
                        trigger=True)
        self.machine = machine
        machine.mem32[FDEBUG] = 1 << SM      # clear a stale RXSTALL
        self.sm.active(1)
        # USB serial: bytes, never text; never block
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._rpoll = select.poll()
        self._rpoll.register(sys.stdin, select.POLLIN)
        self._wpoll = select.poll()
        self._wpoll.register(sys.stdout, select.POLLOUT)

    # -- clock ------------------------------------------------------------------

    def ticks_us(self):
        return time.ticks_us()

    def diff(self, a, b):
        return time.ticks_diff(a, b)

    def add(self, a, d):
        return time.ticks_add(a, d)

    # -- the sampler ----------------------------------------------------------------

    def written(self):
        """Words the DMA has written, mod 2**16."""
        return (DMA_COUNT - self.dma.count) & 0xFFFF

    def rx_stalled(self):
        """True once after the PIO dropped a word on a full FIFO."""
        if self.machine.mem32[FDEBUG] & (1 << SM):
            self.machine.mem32[FDEBUG] = 1 << SM
            return True
        return False

    def rearm(self):
        """Start the DMA's count afresh (call when idle, long before it ends)."""
        if self.dma.count < DMA_COUNT // 2:
            self.dma.count = DMA_COUNT

    # -- outputs ------------------------------------------------------------------

    def set_mark(self, v):
        self.mark_pin.value(v)

    def set_cue(self, v):
        self.cue_pin.value(v)
        self.piezo.value(v)

    def set_led(self, i, v):
        self.leds[i].value(v)

    def set_test_out(self, v):
        self.test_pin.value(v)

    # -- the host -------------------------------------------------------------------

    def read(self):
        """What the host sent, without waiting (up to 64 bytes a call)."""
        got = b""
        n = 0
        while n < 64 and self._rpoll.poll(0):
            b = self._in.read(1)
            if not b:
                break
            got += b
            n += 1
        return got

    def writable(self):
        return bool(self._wpoll.poll(0))

    def write(self, data):
        """Send a frame if the host can take it now; False (dropped) if not."""
        if not self._wpoll.poll(0):
            return False
        self._out.write(data)
        return True

