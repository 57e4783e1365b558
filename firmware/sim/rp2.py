# Stand-in for MicroPython's `rp2` on the unix port (tests only): a state
# machine that produces the sampler program's words from the simulated
# board's pins (simboard.py), and a DMA channel that writes them into the
# firmware's ring. The program itself is checked cycle by cycle elsewhere
# (tests/test_pio.py, in an RP2040 PIO emulator).

from simboard import board


class PIO:
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3


def asm_pio(**kw):
    """Records the words and wrap points the program emits (rp2.asm_pio's
    own directives), as the real assembler would place them."""

    def dec(f):
        prog = {"words": [], "wrap_target": None, "wrap": None, "kw": kw}
        g = f.__globals__
        saved = {k: g.get(k) for k in ("word", "wrap_target", "wrap")}
        g["word"] = lambda w: prog["words"].append(w)
        g["wrap_target"] = lambda: prog.__setitem__("wrap_target", len(prog["words"]))
        g["wrap"] = lambda: prog.__setitem__("wrap", len(prog["words"]) - 1)
        try:
            f()
        finally:
            for k, v in saved.items():
                if v is None:
                    del g[k]
                else:
                    g[k] = v
        return prog

    return dec


class StateMachine:
    def __init__(self, id, program, freq=None, in_base=None, **kw):
        self.id = id
        self.program = program
        self.freq = freq
        self.in_base = in_base.id if in_base is not None else 0

    def active(self, v=None):
        if v:
            board.start(self.in_base)
        return board.t0 is not None


class DMA:
    def __init__(self):
        self.channel = 0

    def pack_ctrl(self, **kw):
        return kw

    def config(self, read=None, write=None, count=None, ctrl=None, trigger=False):
        # `write` is the firmware's ring: 16-bit halves, two a word
        self.ctrl = ctrl
        board.ring = (write, 0, len(write) // 2)
        board.dma_count = count

    @property
    def count(self):
        board.advance()
        return board.dma_count

    @count.setter
    def count(self, v):
        board.dma_count = v
