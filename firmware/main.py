# The buzzer box's firmware entry point (MicroPython on a Raspberry Pi Pico).
#
# Copied to the Pico with mpremote (docs/pico.md); runs at power-up. Once it
# runs, Ctrl-C is data (a 0x03 byte on the link must not stop the box), so:
#
# * hold buzzer 1 while plugging the box in to get the REPL instead; or
# * run mpremote anyway: its interrupt (CR, Ctrl-C) is never the start of a
#   companion frame, so the box leaves its loop for the REPL, and mpremote's
#   next attempt gets in (docs/pico.md: run the update command again if the
#   first one times out).

import micropython
import os

import boxconfig
import boxcore


def hold_to_skip(config=boxconfig):
    """Buzzer 1 held at power-up: stay at the REPL (for updates)."""
    import machine
    gpio = config.INPUTS[0][2]
    return machine.Pin(gpio, machine.Pin.IN, machine.Pin.PULL_UP).value() == 0


def run(hw=None, box=None, keep_going=lambda: True):
    micropython.kbd_intr(-1)          # 0x03 on the link is data, not Ctrl-C
    try:
        if hw is None:
            import boxhw
            hw = boxhw.Hardware(boxconfig)
        if box is None:
            boot_id = int.from_bytes(os.urandom(4), "little")
            box = boxcore.Box(hw, boxconfig, boot_id)
        box.start()
        while keep_going() and not box.escape:
            box.poll()
    finally:
        micropython.kbd_intr(3)       # the REPL gets Ctrl-C back
    return box


if __name__ == "__main__":
    if hold_to_skip():
        print("buzzer 1 held: the box stays at the REPL")
    else:
        run()
