# The buzzer box's firmware entry point (MicroPython on a Raspberry Pi Pico).
#
# Copied to the Pico with mpremote (docs/pico.md); runs at power-up. Once it
# runs, Ctrl-C is data (a 0x03 byte on the link must not stop the box), so:
#
# * hold buzzer 1 while plugging the box in to get the REPL instead; or
# * run mpremote anyway: its interrupt (CR, Ctrl-C) never occurs in what the
#   Pi sends, so the box leaves its loop for the REPL at once, stops its
#   watchdog, and leaves mpremote's next bytes (CR, Ctrl-A) to the REPL:
#   mpremote's first attempt gets in.
#
# While it plays, a watchdog resets the box if its loop hangs, and an
# exception in the loop starts the box afresh (a new boot id: the Pi syncs
# its clock again); after MAX_RESTARTS of them the watchdog resets it.

import micropython
import os
import time

import boxconfig
import boxcore


SETTLE_MS = 20        # pins leave reset pulled down: let the pull-up charge the cable
HOLD_READS = 5        # buzzer 1 must read pressed this many times, 2 ms apart
MAX_RESTARTS = 5


def hold_to_skip(config=boxconfig):
    """Buzzer 1 held at power-up: stay at the REPL (for updates). The pin
    leaves reset pulled down, so it is read only after its pull-up has had
    SETTLE_MS to raise the line, and must read low every time."""
    import machine
    gpio = config.INPUTS[0][2]
    pin = machine.Pin(gpio, machine.Pin.IN, machine.Pin.PULL_UP)
    time.sleep_ms(SETTLE_MS)
    for _ in range(HOLD_READS):
        if pin.value():
            return False
        time.sleep_ms(2)
    return True


def new_box(hw):
    return boxcore.Box(hw, boxconfig, int.from_bytes(os.urandom(4), "little"))


def run(hw=None, box=None, keep_going=lambda: True, watchdog=True, errors=None):
    micropython.kbd_intr(-1)          # 0x03 on the link is data, not Ctrl-C
    try:
        if hw is None:
            import boxhw
            hw = boxhw.Hardware(boxconfig)
        if box is None:
            box = new_box(hw)
        if watchdog:
            hw.watchdog_start()
        restarts = 0
        box.start()
        while keep_going() and not box.escape:
            try:
                box.poll()
                hw.watchdog_feed()
            except Exception as exc:  # noqa: BLE001 - a bug must not stop the box
                if errors is not None:
                    errors.append(repr(exc))
                restarts += 1
                if restarts > MAX_RESTARTS:
                    raise             # unfed, the watchdog resets the box
                box = new_box(hw)
                box.start()
        if box.escape:
            hw.watchdog_stop()
    finally:
        micropython.kbd_intr(3)       # the REPL gets Ctrl-C back
    return box


if __name__ == "__main__":
    if hold_to_skip():
        print("buzzer 1 held: the box stays at the REPL")
    else:
        run()
