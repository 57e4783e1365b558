# Stand-in for MicroPython's `machine` on the unix port (tests only): pins
# and registers of the simulated board in simboard.py.

from simboard import board


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        if pull == Pin.PULL_UP:
            board.pull_up[id] = True
            if id not in board.external:    # a held button wins over the pull-up
                board.levels[id] = 1
        if mode == Pin.OUT and value is not None:
            board.drive(id, 1 if value else 0)

    def value(self, v=None):
        if v is None:
            return board.level(self.id)
        board.drive(self.id, 1 if v else 0)

    def __call__(self, v=None):
        return self.value(v)


class _Mem:
    """machine.mem32: only the PIO's FDEBUG register is simulated."""

    FDEBUG = 0x50200008

    def __getitem__(self, addr):
        if addr == self.FDEBUG:
            board.advance()
            return 1 if board.stall_flag else 0
        return 0

    def __setitem__(self, addr, value):
        if addr == self.FDEBUG and value & 1:
            board.stall_flag = False


mem32 = _Mem()


def freq(hz=None):
    return 125_000_000
