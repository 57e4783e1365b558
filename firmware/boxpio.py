# The PIO program that samples every input of the box at once (MicroPython).
#
# SOURCE is the one text of the program: the firmware loads the words that
# adafruit_pioasm assembles from it (WORDS, kept equal to it by
# tests/test_pio.py, which also runs SOURCE cycle by cycle in the
# rp2040-pio-emulator). Regenerate WORDS after an edit:
#
#     python -c "import adafruit_pioasm, boxpio; print(adafruit_pioasm.Program(boxpio.SOURCE).assembled)"
#
# How it works. x is a free-running counter, decremented once a tick; y holds
# the previous sample. Every path through the loop takes CYCLES_PER_TICK
# cycles, so the counter ticks at exactly freq / CYCLES_PER_TICK. The state
# machine runs at SM_FREQ = 25 MHz, an integer division of the system clock
# on both chips (5 of the RP2040's 125 MHz, 6 of the RP2350's 150 MHz): the
# clock divider is 16.8 fixed point, and a fractional divider (11 MHz from
# 125 MHz) would make the counter run 31 ppm fast (+260 ppm at 150 MHz)
# while the box announces 1 MHz. tick_hz() gives the rate the counter really
# runs at for a system clock, which is what HELLO announces. Each tick,
# ONE instruction (in pins, 10) samples all ten inputs together; if the
# sample differs from y, one word goes to the RX FIFO:
#
#     bits 31..22: the ten inputs (1 = high)   bits 21..0: the counter
#
# so inputs that changed in the same sample share one timestamp by
# construction. `push noblock` never stalls the counter: when the FIFO is
# full the word is dropped and the PIO's RXSTALL flag is set, which the
# firmware reads as an overflow. A DMA channel empties the FIFO into a RAM
# ring as words arrive (boxhw.py), so in practice the FIFO never fills.

IN_COUNT = 10
COUNTER_BITS = 22
CYCLES_PER_TICK = 25
TICK_HZ = 1_000_000
SM_FREQ = TICK_HZ * CYCLES_PER_TICK


def divider(sysclk, freq=SM_FREQ):
    """The clock divider rp2.StateMachine sets for ``freq``, in 1/256ths
    (rp2_pio.c: sysclk * 256 // freq, truncated)."""
    return sysclk * 256 // freq


def tick_hz(sysclk):
    """The counter's true rate at system clock ``sysclk``, to the nearest
    Hz (exactly TICK_HZ when SM_FREQ divides sysclk)."""
    den = divider(sysclk) * CYCLES_PER_TICK
    return (sysclk * 256 + den // 2) // den

SOURCE = """
.program buzzer_sampler
    mov osr, null          ; counter = 0 (kept in osr between ticks)
    mov y, ~null           ; no sample equals this: the first one is pushed
.wrap_target
tick:
    mov isr, null [14]     ; pads every path to 25 cycles: a 25 MHz machine, 1 MHz
    in pins, 10            ; THE sample: every input in one instruction
    mov x, isr
    jmp x!=y change
    mov x, osr [4]         ; no change: pad to the change path's cycles
count:
    jmp x-- next           ; tick (both outcomes go on to next)
next:
    mov osr, x
.wrap
change:
    mov y, x               ; remember this sample
    mov x, osr
    in x, 22               ; isr = sample << 22 | counter & 0x3fffff
    push noblock           ; never stall the counter; a full FIFO sets RXSTALL
    jmp count
"""

WORDS = (0xA0E3, 0xA04B, 0xAEC3, 0x400A, 0xA026, 0x00A9, 0xA427, 0x0048, 0xA0E1,
         0xA041, 0xA027, 0x4036, 0x8000, 0x0007)
WRAP_TARGET = 2
WRAP = 8


def program(rp2):
    """The program for rp2.StateMachine, built with rp2's own assembler from
    WORDS (its word() directive), so no second source of it exists."""
    words = WORDS
    top = WRAP
    bottom = WRAP_TARGET

    def buzzer_sampler():
        for i in range(len(words)):
            if i == bottom:
                wrap_target()  # noqa: F821 - supplied by rp2.asm_pio
            word(words[i])     # noqa: F821
            if i == top:
                wrap()         # noqa: F821

    return rp2.asm_pio(in_shiftdir=rp2.PIO.SHIFT_LEFT, fifo_join=rp2.PIO.JOIN_RX)(
        buzzer_sampler)


# The fairness driver: a second state machine that pulls two buzzer inputs
# low at a known separation, so the box can certify its own ordering with no
# jig (hardware/fairness.py runs it against SAMPLER in the PIO emulator).
# Its out pins are the six buzzer inputs (out_base: buzzer 1's GPIO), their
# output latches 0; `out pindirs` turns a pin into an output (driven low,
# against its pull-up) or back into an input (released: the pull-up raises
# it). It never drives a pin high. Two words from the FIFO a trial: the
# separation in system clock cycles, fine << 16 | coarse, where the
# separation is 1 + 32 * (coarse + 1) + (fine + 1) cycles; then the pins,
# A | (A and B) << 6 (driver_pins: any buzzer first, any other second; the
# six bits above are 0, the release).
DRIVER_SOURCE = """
.program fair_driver
    pull block             ; fine << 16 | coarse
    out x, 16              ; coarse: 32-cycle steps
    out y, 16              ; fine: 1-cycle steps
    pull block             ; the pins: A | (A and B) << 6 (and 0 above: released)
    out pindirs, 6         ; pin A driven low
coarse:
    jmp x-- coarse [31]
fine:
    jmp y-- fine
    out pindirs, 6         ; pin B driven low too
    set x, 31 [31]
hold:
    jmp x-- hold [31]      ; both held low about 1000 cycles
    out pindirs, 6         ; released: inputs again
"""

DRIVER_WORDS = (0x80A0, 0x6030, 0x6050, 0x80A0, 0x6086, 0x1F45, 0x0086, 0x6086, 0xFF3F,
                0x1F49, 0x6086)
DRIVER_PINS = 6               # the out pins: the six buzzer inputs from buzzer 1's GPIO


def driver_program(rp2):
    """The fairness driver for rp2.StateMachine (from DRIVER_WORDS, kept
    equal to DRIVER_SOURCE by tests/test_pio.py): its six pins start as
    inputs with their output latch low."""
    words = DRIVER_WORDS

    def fair_driver():
        for w in words:
            word(w)            # noqa: F821 - supplied by rp2.asm_pio

    # out x, 16 takes the low half first (the emulator's default; rp2's is
    # SHIFT_LEFT)
    return rp2.asm_pio(out_init=(rp2.PIO.IN_LOW,) * DRIVER_PINS,
                       out_shiftdir=rp2.PIO.SHIFT_RIGHT)(fair_driver)


def driver_word(cycles):
    """The FIFO word for a separation of ``cycles`` system clock cycles
    (at least 35)."""
    rest = cycles - 1 - 32
    coarse = rest // 32
    fine = rest - 32 * coarse - 1
    if fine < 0:
        coarse, fine = coarse - 1, fine + 32
    return fine << 16 | coarse


def driver_pins(first, second):
    """The FIFO word that pulls input bit ``first`` low, then ``second``
    with it, then lets both go (bits 0..5: the buzzers)."""
    a = 1 << first
    return a | (a | 1 << second) << DRIVER_PINS
