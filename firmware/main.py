# The buzzer box's firmware entry point (MicroPython on a Raspberry Pi Pico).
#
# Copied to the Pico with mpremote (see docs/pico.md); runs at power-up.
# Ctrl-C can no longer stop it once it runs (a 0x03 byte is data on this
# link): to get the REPL back, `mpremote` still interrupts it through a
# soft reset, or hold BOOTSEL and re-flash.

import micropython
import os

import boxconfig
import boxcore
import boxhw


def run(hw=None, box=None, keep_going=lambda: True):
    micropython.kbd_intr(-1)          # 0x03 on the link is data, not Ctrl-C
    if hw is None:
        hw = boxhw.Hardware(boxconfig)
    if box is None:
        boot_id = int.from_bytes(os.urandom(4), "little")
        box = boxcore.Box(hw, boxconfig, boot_id)
    box.start()
    while keep_going():
        box.poll()
    return box


if __name__ == "__main__":
    run()
