"""The Pico link's transport on a starved machine (companion/pico/transport.py).

pyserial's reader thread gives its read loop two seconds to stop when the
port is closed (``ReaderThread.close``: stop, join(2), close). On a Pi busy
with an update, or this machine beside four busy processes, the reader may
not run for that long: the port is then closed under a read that already
saw data waiting, and the read fails on a closed file with a TypeError,
which pyserial's loop does not catch. Found in a whole run beside four busy
loops: the reader thread died with the exception, and the link never heard
that the connection was lost, so it could not open the port again.

The stand-in here starves the reader on purpose: its wait for data returns
only once the port has been closed, and pyserial's join gives up at once.
"""

from __future__ import annotations

import os
import threading
import tty

import pytest
import serial.serialposix

from companion.pico import transport
from tests.kit.helpers import wait_for


class _Starved:
    """``select`` for serialposix whose first wake-up by the abort pipe (a
    reader told to stop) is held until ``closed`` is set: a reader thread
    the machine did not run until the port was closed under it."""

    def __init__(self, real):
        self.real, self.error = real, real.error
        self.closed = threading.Event()
        self.held = threading.Event()

    def select(self, rlist, wlist, xlist, timeout=None):
        ready = self.real.select(rlist, wlist, xlist, timeout)
        stopping = len(rlist) > 1 and rlist[1] in ready[0]
        if stopping and not self.held.is_set():
            self.held.set()
            self.closed.wait()
        return ready


@pytest.fixture
def pty_port():
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_port_closed_under_a_starved_read_is_a_lost_connection_and_comes_back(
        pty_port, monkeypatch):
    master, port = pty_port
    got, states = bytearray(), []
    link = transport.SerialLink(port, lambda data, t: got.extend(data),
                                lambda up, detail: states.append(up), backoff_s=(0.01, 0.05))
    starved = _Starved(serial.serialposix.select)
    monkeypatch.setattr(serial.serialposix, "select", starved)
    # pyserial's stop() waits 2 s for the reader: it gives up at once here
    monkeypatch.setattr(transport._Reader, "join",
                        lambda self, timeout=None: threading.Thread.join(self, 0.01))
    link.start()
    try:
        assert wait_for(lambda: link.connected, 10)
        os.write(master, b"before")
        assert wait_for(lambda: bytes(got) == b"before", 10)

        link.drop()                          # an unplug, a pause: the port closed now
        assert starved.held.is_set()         # the reader was stopped mid-read ...
        starved.closed.set()                 # ... and runs on only after the close

        assert wait_for(lambda: states[-1:] == [True] and link.connects == 2, 10), states
        assert states == [True, False, True]         # the loss was heard, then the box again
        os.write(master, b" after")
        assert wait_for(lambda: bytes(got) == b"before after", 10), bytes(got)
    finally:
        starved.closed.set()
        link.close()
