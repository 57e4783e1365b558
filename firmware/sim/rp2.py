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
        import boxpio
        self.id = id
        self.program = program
        self.freq = freq
        self.in_base = in_base.id if in_base is not None else 0
        # rp2_pio.c's divider: sysclk * 256 // freq, 16.8 fixed point
        self.div256 = board.sysclk * 256 // freq if freq else 256
        self.out_base = kw["out_base"].id if kw.get("out_base") is not None else None
        self.words = []
        if self.out_base is None:               # the sampler: its divider sets the counter
            board.set_divider(self.div256, boxpio.CYCLES_PER_TICK)

    def active(self, v=None):
        if v and self.out_base is None:
            board.start(self.in_base)
        return board.t0 is not None

    def put(self, word):
        """The fairness driver (boxpio.DRIVER_SOURCE) as the emulator runs
        it, to the board's microsecond: a trial's two words (the separation,
        the pins), then pin A low now, pin B low the separation later, both
        let go about 8 us after that."""
        self.words.append(word)
        if len(self.words) < 2:
            return
        (sep_word, pins), self.words = self.words, []
        fine, coarse = sep_word >> 16, sep_word & 0xFFFF
        cycles = 1 + 32 * (coarse + 1) + fine + 1
        sep = (cycles * 1_000_000 + board.sysclk // 2) // board.sysclk
        a = self.out_base + _bit(pins & 0x3F)
        b = self.out_base + _bit((pins >> 6) & ~pins & 0x3F)
        now = board.now_us() + 1
        board.schedule_many([(now, a, 0), (now + sep, b, 0), (now + sep + 9, a, 1),
                             (now + sep + 9, b, 1)])


def _bit(mask):
    """The one bit set in ``mask`` (MicroPython has no int.bit_length)."""
    b = 0
    while mask > 1:
        mask >>= 1
        b += 1
    return b


class DMA:
    """One channel as rp2_dma.c drives it and the datasheets describe it
    (see simboard.py): `count` reads TRANS_COUNT (the live count; on the
    RP2350 with its mode in bits 31:28); writing it, or config(count=...),
    sets only the next trigger's; config(trigger=True) and active(1) trigger
    (ignored while the channel runs); active(0) is dma_channel_abort, which
    clears the count; a ctrl with enable=False pauses it; `write` reads
    where the next word goes (an index into the ring here)."""

    def __init__(self):
        # the board has one channel: a new one is a new box's (a soft reset
        # frees the old, rp2_dma.c aborting it), idle until triggered
        self.channel = 0
        self.ctrl = None
        with board.lock:
            board.dma_active = False
            board.dma_enabled = True
            board.dma_count = board.dma_mode = 0

    def pack_ctrl(self, **kw):
        kw.setdefault("enable", True)
        return kw

    def _check(self, count):
        if count >> 32:
            raise ValueError("TRANS_COUNT is 32 bits")
        if board.chip == "rp2350" and (count >> 28) not in (0x0, 0x1, 0xF):
            raise ValueError("TRANS_COUNT mode %d is reserved (RP2350)" % (count >> 28))

    def config(self, read=None, write=None, count=None, ctrl=None, trigger=False):
        # `write` is the firmware's ring (16-bit halves, two a word), or an
        # address this channel's `write` gave (an index into that ring)
        with board.lock:
            if ctrl is not None:
                self.ctrl = ctrl
                board.dma_enabled = bool(ctrl.get("enable", True))
            if count is not None:
                self._check(count)
                board.dma_reload = count
            if isinstance(write, int):
                board.written = write
            elif write is not None:
                board.ring = (write, 0, len(write) // 2)
                board.written = 0
            if trigger:
                board.dma_trigger()
            else:
                board._dma()

    def active(self, v=None):
        with board.lock:
            if v is not None:
                if v:
                    board.dma_trigger()
                else:
                    board.dma_abort()
            return board.dma_active

    @property
    def write(self):
        board.advance()
        return board.written % board.ring[2]

    @property
    def count(self):
        return board.dma_count_read()

    @count.setter
    def count(self, v):
        self._check(v)
        board.dma_reload = v            # TRANS_COUNT: the next trigger's count
