# The real firmware's Box on the simulated board's fixed clock (tests only:
# soak.py and slam.py). The test moves board.fixed_now; the pull-ups settle
# 2 ms and sampling starts at 1 s.

import usbcdc
from simboard import board


def fixed_time_box(boot_id):
    """(cdc, hw, box): the USB serial's host side, the hardware, the box
    after its hello."""
    board.fixed_now = 998_000
    import boxconfig
    import boxcore
    import boxhw

    cdc = usbcdc.Cdc()

    def sleep_ms(ms):
        board.fixed_now += 1000 * ms

    hw = boxhw.Hardware(usb=boxhw.Usb(*usbcdc.ports(cdc)), sleep_ms=sleep_ms)
    hw.ticks_us = lambda: board.now_us() & 0x3FFFFFFF
    box = boxcore.Box(hw, boxconfig, boot_id)
    box.start()
    return cdc, hw, box
