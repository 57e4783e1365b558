# Stand-in for MicroPython's `machine` on the unix port (tests only): pins,
# registers, the system clock and the watchdog of the simulated board in
# simboard.py. Pins leave reset as the RP2040's do: inputs pulled down.

from simboard import board


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        if pull == Pin.PULL_UP:
            board.pull_up(id)
        if mode == Pin.OUT and value is not None:
            board.drive(id, 1 if value else 0)

    def value(self, v=None):
        if v is None:
            return board.level(self.id)
        board.drive(self.id, 1 if v else 0)

    def __call__(self, v=None):
        return self.value(v)


WATCHDOG_CTRL = {"rp2040": 0x40058000, "rp2350": 0x400D8000}


DMA_BASE = 0x50000000           # the same on both chips
TRANS_COUNT = 0x008             # CHn_TRANS_COUNT at DMA_BASE + 0x40 * n + 0x008


class _Mem16:
    """machine.mem16: the low half of DMA channel 0's TRANS_COUNT (the IO
    registers ignore the width of a read: RP2040 datasheet 2.1.4)."""

    def __getitem__(self, addr):
        if addr == DMA_BASE + TRANS_COUNT:
            return board.dma_count_read() & 0xFFFF
        raise ValueError("no register at 0x%08x in the simulated board" % addr)


mem16 = _Mem16()


class _Mem:
    """machine.mem32: the PIO's FDEBUG register and the watchdog's CTRL."""

    FDEBUG = 0x50200008

    def __getitem__(self, addr):
        if addr == self.FDEBUG:
            board.advance()
            return 1 if board.stall_flag else 0
        if addr == WATCHDOG_CTRL[board.chip]:
            return (1 << 30) if board.wdt_enabled else 0
        return 0

    def __setitem__(self, addr, value):
        if addr == self.FDEBUG and value & 1:
            board.stall_flag = False
        elif addr == WATCHDOG_CTRL[board.chip]:
            board.wdt_enabled = bool(value & (1 << 30))


mem32 = _Mem()


def freq(hz=None):
    return board.sysclk


class WDT:
    """Cannot be stopped once started (only through its CTRL register)."""

    def __init__(self, id=0, timeout=5000):
        if not 1 <= timeout <= 8388:
            raise ValueError("timeout out of range")
        board.wdt_timeout_ms = timeout
        board.wdt_enabled = True
        board.wdt_fed_us = board.now_us()

    def feed(self):
        board.wdt_fed_us = board.now_us()
