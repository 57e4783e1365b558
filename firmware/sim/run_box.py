# Run the real firmware main loop on the simulated board (tests only).
#
#     micropython firmware/sim/run_box.py CONTROL_FIFO [PPM]
#
# Under the MicroPython unix port, with this folder first on the path so
# `machine` and `rp2` are the stand-ins. The link is this process's stdin
# and stdout (as USB serial is on a Pico); the test joins them to a pty.
# CONTROL_FIFO takes lines that move the simulated buttons:
#
#     at T GPIO LEVEL        a pin goes to LEVEL at ticks_us() == T (mod 2**30)
#     press N T / release N T   buzzer N (1..6) at T
#     stall MS               the main loop stops for MS milliseconds
#     jumper SRC DST         a wire from output SRC to input DST
#     watch GPIO             print "edge GPIO LEVEL TICKS_US" on stderr when it changes
#     quit
#
# and prints "ready" on stderr once the box runs.

import select
import sys
import time

sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
sys.path.insert(1, sys.argv[0].rsplit("/", 2)[0])

from simboard import board  # noqa: E402

board.ppm = int(sys.argv[2]) if len(sys.argv) > 2 else 0

import boxconfig  # noqa: E402
import boxhw  # noqa: E402
import main  # noqa: E402
import usbcdc  # noqa: E402

BUZZER_GPIO = {n: g for role, n, g in boxconfig.INPUTS if role == 1}
control = open(sys.argv[1], "rb")
cpoll = select.poll()
cpoll.register(control, select.POLLIN)
state = {"go": True, "said": False}


def command(line):
    w = line.split()
    if not w:
        return
    if w[0] == "quit":
        state["go"] = False
    elif w[0] == "stall":
        time.sleep_ms(int(w[1]))
    elif w[0] == "jumper":
        board.jumpers[int(w[1])] = int(w[2])
    elif w[0] == "watch":
        board.watched.add(int(w[1]))
    elif w[0] == "at":
        board.schedule(board.unwrap(int(w[1])), int(w[2]), int(w[3]))
    elif w[0] in ("press", "release"):
        board.schedule(board.unwrap(int(w[2])), BUZZER_GPIO[int(w[1])],
                       0 if w[0] == "press" else 1)


def keep_going():
    if not state["said"]:
        state["said"] = True
        sys.stderr.write("ready\n")
    while state["go"]:
        ready = cpoll.poll(0)
        if not ready:
            break
        ev = ready[0][1]
        if ev & select.POLLIN:
            line = control.readline()
            if line:
                command(line.decode())
            else:
                state["go"] = False
        elif ev & (select.POLLHUP | select.POLLERR):
            state["go"] = False
    time.sleep_us(200)
    return state["go"]


try:
    # MicroPython's USB serial between the box and the pipes; the DMA
    # writing the ring from its own thread
    cdc = usbcdc.PipeCdc()
    hw = boxhw.Hardware(boxconfig, usb=boxhw.Usb(*usbcdc.ports(cdc)))
    board.start_dma(200)

    class Errors:                 # a restart of the loop is said on stderr
        def append(self, what):
            sys.stderr.write("box loop restarted after %s\n" % what)

    main.run(hw=hw, keep_going=keep_going, errors=Errors())
    board.stop_dma()
except Exception as exc:          # the test reads it in SimBox.log
    sys.print_exception(exc, sys.stderr)
    raise
