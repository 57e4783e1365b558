# Stand-in for the Pico's USB serial as MicroPython drives it (tests only),
# after shared/tinyusb/mp_usbd_cdc.c: a 256-byte transmit FIFO; poll says
# POLLOUT while one byte of it is free; a write waits for room for each
# 64-byte packet up to 500 ms and then returns a short count. While no host
# has the port open the FIFO keeps the newest 256 bytes, and a host that
# opens the port gets them first (stale bytes, usually half a frame).
#
# The host side is either in memory (Cdc: the firmware tests take the bytes
# with host_take()) or this process's stdin and stdout (PipeCdc, run_box.py,
# joined to a pty by ptybox.py).

import io
import select
import sys

from simboard import board

TX_SIZE = 256
PACKET = 64
TIMEOUT_US = 500_000


class Cdc:
    def __init__(self):
        self.tx = bytearray()          # the FIFO towards the host
        self.rx = bytearray()          # what the host sent, not yet read
        self.host = bytearray()        # what the host has received
        self.reading = True            # the host reads as fast as bytes come
        self.connected = True          # a host has the port open
        self.blocked_us = 0            # time the box spent inside write()
        self.short_writes = 0

    # -- the host's side ----------------------------------------------------------

    def pump(self):
        if self.connected and self.reading and self.tx:
            self.host += self.tx
            self.tx = bytearray()

    def host_take(self):
        self.pump()
        out = bytes(self.host)
        self.host = bytearray()
        return out

    def host_send(self, data):
        self.rx += data

    def host_open(self):
        """A host opens the port: it gets what the FIFO kept first."""
        self.connected = True
        self.pump()

    def host_close(self):
        self.connected = False

    # -- the box's side: sys.stdin and sys.stdout as boxhw.Usb sees them --------

    def _wait(self, t_us):
        if board.fixed_now is not None:
            board.fixed_now += t_us
        else:
            import time
            time.sleep_us(t_us)

    def readable(self):
        self.pump()
        return len(self.rx) > 0

    def writable(self):
        self.pump()
        return not self.connected or len(self.tx) < TX_SIZE

    def take(self, n):
        self.pump()
        got = bytes(self.rx[:n])
        self.rx = self.rx[n:]
        return got

    def put(self, data):
        """mp_usbd_cdc_tx_strn: what MicroPython's stdout write does."""
        i = 0
        while i < len(data):
            n = min(len(data) - i, PACKET)
            self.pump()
            if self.connected:
                waited = 0
                while n > TX_SIZE - len(self.tx) and waited < TIMEOUT_US:
                    self._wait(1000)
                    waited += 1000
                    self.pump()
                self.blocked_us += waited
                n = min(n, TX_SIZE - len(self.tx))
                if n == 0:
                    break
            self.tx += data[i:i + n]
            if len(self.tx) > TX_SIZE:    # not connected: the newest 256 bytes stay
                self.tx = self.tx[len(self.tx) - TX_SIZE:]
            i += n
        if i < len(data):
            self.short_writes += 1
        return i


class _Port(io.IOBase):
    """sys.stdin or sys.stdout over a Cdc: pollable, with .buffer."""

    def __init__(self, cdc, out):
        self.cdc = cdc
        self.out = out
        self.buffer = self

    def ready(self, event):
        return bool(self.ioctl(3, event))

    def ioctl(self, req, arg):
        if req == 3:                                  # MP_STREAM_POLL
            if self.out:
                return arg & select.POLLOUT if self.cdc.writable() else 0
            return arg & select.POLLIN if self.cdc.readable() else 0
        return -1

    def read(self, n=1):
        return self.cdc.take(n)

    def write(self, data):
        return self.cdc.put(data)


def ports(cdc):
    """(stdin, stdout) for boxhw.Usb."""
    return _Port(cdc, False), _Port(cdc, True)


class PipeCdc(Cdc):
    """The host is this process's stdin and stdout (a pty beyond them)."""

    def __init__(self):
        super().__init__()
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._rpoll = select.poll()
        self._rpoll.register(sys.stdin, select.POLLIN)
        self._wpoll = select.poll()
        self._wpoll.register(sys.stdout, select.POLLOUT)

    def readable(self):
        self.pump(True)
        return len(self.rx) > 0

    def pump(self, flush=False):
        # bytes go to the pipe a frame at a time (at its delimiter), when the
        # FIFO is full, or once a loop of the box: not a write per byte
        flush = flush or (self.tx and self.tx[-1] == 0) or len(self.tx) >= TX_SIZE
        while self.tx and flush and self._wpoll.poll(0):
            n = self._out.write(self.tx[:512])
            if not n:
                break
            self.tx = self.tx[n:]
        while self._rpoll.poll(0):
            b = self._in.read(1)
            if not b:
                break
            self.rx += b

