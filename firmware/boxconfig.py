# The Pico box's pins (MicroPython). Mirrors the [pico] table of
# hardware/pinmap.toml (tests/test_pinmap.py checks that they agree); the
# Pi learns it from the HELLO frame. GP numbers are the Pico's GPIOs.
#
# The ten sampled inputs must be consecutive GPIOs (one `in pins, 10`),
# starting at IN_BASE; their order is their bit in the PIO's sample word.

FIRMWARE = (1, 2, 0)      # 1.1: the fairness driver drives every ordered pair, trial markers; 1.2: SYNC_HELD (the four-timestamp clock check)

IN_BASE = 2
# (role, number, gpio) for bits 0..9; roles as in boxproto (1 buzzer,
# 2 self-test input, 3 test output, 4 cue, 5 sync mark)
INPUTS = (
    (1, 1, 2), (1, 2, 3), (1, 3, 4), (1, 4, 5), (1, 5, 6), (1, 6, 7),
    (2, 0, 8),    # self-test input: a jumper from the test output lands here
    (3, 0, 9),    # test output: pulses for the timing self-test
    (4, 0, 10),   # cue LED: GO is sampled like a press, on the same clock
    (5, 0, 11),   # sync mark: toggled to stamp "now" (heartbeats, clock sync)
)
# inputs read as pressed when LOW (buttons to GND, internal pull-ups)
ACTIVE_LOW = 0b0001111111
# buzzer LEDs: (buzzer number, gpio)
LEDS = ((1, 12), (2, 13), (3, 14), (4, 15), (5, 16), (6, 17))
PIEZO = 18            # an active piezo, switched with the cue LED
STATUS_LED = 25       # the Pico's own LED: lit while the host is listening

BIT_SELFTEST_IN = 6
BIT_TEST_OUT = 7
BIT_CUE = 8
BIT_MARK = 9
BUZZER_BITS = 0b0000111111
DEBOUNCED_BITS = 0b0001111111   # buzzers and the self-test input

DEBOUNCE_US = 20_000
# A change of a debounced input counts only if the input is still at its new
# level MIN_HOLD_US after its leading edge (1 000 to 5 000; the stamp stays
# the leading edge): a glitch shorter than this (static, a long cable's
# crosstalk) is no press. 5 ms: docs/pico.md, "No glitch is a press".
MIN_HOLD_US = 5_000
STUCK_MS = 10_000
HEARTBEAT_US = 250_000
