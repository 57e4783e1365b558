"""Lending the buzzer box's port: how ``companion pico`` and the self-test ask a
running table to let go of the box, and how the table takes it back.

The table holds the box's serial port exclusively from boot (so does
mpremote, and so does the self-test), so anything else that needs the box
asks the table first. The ask is a Unix socket in Linux's abstract namespace
named after the port's real device (``tabletop-companion/pico-port`` and the
path ``/dev/buzzerbox`` resolves to, e.g. ``/dev/ttyACM0``): whoever names the
same box reaches the table that holds it, with no file to find (a table under
systemd keeps its state in ``/var/lib/tabletop-companion``, one started by
hand in ``~/.local/share``; the builder's shell knows neither) and no PIN or
HTTP port to know. It is authenticated by the kernel: the table reads the
asker's user from the socket (``SO_PEERCRED``) and lends the box only to its
own user or root.

The conversation, one line each way::

    asker: lend <what>\\n          table: lent <path>\\n  (the port is closed)
    asker: return\\n  (or just closes the connection)     the table reopens it

The lease lasts as long as the connection: an asker that crashes or is
killed gives the box back by dying. One lease at a time; another asker gets
``busy <who has it>``. A table that lost its port (unplugged) stops
listening until it has the port again: the device's name goes to the next device.

>>> lease_name("/dev/null")
b'\\x00tabletop-companion/pico-port/dev/null'
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import struct
import threading
from typing import Callable, Iterator

log = logging.getLogger(__name__)

PREFIX = b"\0tabletop-companion/pico-port"
#: longest line either side sends
MAX_LINE = 512
#: longest socket name (sun_path: 108 bytes)
MAX_NAME = 107


class LeaseError(RuntimeError):
    """The table holding the box would not lend it (another user, busy)."""


def lease_name(port: str) -> bytes:
    """The abstract socket name of the table holding ``port`` (its real
    path; a digest of it when the path is too long for a socket name)."""
    name = PREFIX + os.path.realpath(port).encode()
    if len(name) > MAX_NAME:
        name = PREFIX + b"#" + hashlib.sha256(name).hexdigest().encode()
    return name


def _peer(conn: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end (SO_PEERCRED)."""
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                      struct.calcsize("3i")))
    return pid, uid


def _line(conn: socket.socket) -> str:
    """One line from ``conn`` ('' at its end)."""
    buf = bytearray()
    while len(buf) < MAX_LINE:
        b = conn.recv(1)
        if not b or b == b"\n":
            break
        buf += b
    return buf.decode("utf-8", "replace").strip()


class LeaseServer:
    """The table's side: answers asks for the port it holds.

    ``lend(who)`` closes the port and keeps it closed (it returns the path
    that was open, or None if it could not let go); ``give_back()`` reopens
    it. Both are called on the server's threads. :meth:`listen` names the
    port (called again when the table opens another path)."""

    def __init__(self, lend: Callable[[str], str | None], give_back: Callable[[], None]):
        self.lend = lend
        self.give_back = give_back
        self.name: bytes | None = None
        self.lent_to: str | None = None
        self.leases = 0
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._closed = False

    def listen(self, port: str) -> bool:
        """Answer asks for ``port`` (nothing changes if already); False when
        this platform has no abstract Unix sockets or the name is taken."""
        name = lease_name(port)
        with self._lock:
            if self._closed or name == self.name:
                return not self._closed
            old, self._sock, self.name = self._sock, None, None
        _shut(old)
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except (OSError, AttributeError) as exc:       # no Unix sockets here
            log.warning("the buzzer box's port cannot be lent (companion pico): %s", exc)
            return False
        try:
            sock.bind(name)
            sock.listen(4)
        except OSError as exc:              # not Linux (no abstract names), or taken
            sock.close()
            log.warning("the buzzer box's port cannot be lent (companion pico): %s", exc)
            return False
        with self._lock:
            if self._closed:
                sock.close()
                return False
            self._sock, self.name = sock, name
        threading.Thread(target=self._accept, args=(sock,), name="pico-lease",
                         daemon=True).start()
        return True

    def _accept(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return                                   # closed (another port, or the end)
            threading.Thread(target=self._serve, args=(conn,), name="pico-lease-conn",
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._lease(conn)
            except OSError as exc:
                log.debug("a lease of the buzzer box's port ended: %s", exc)

    def _lease(self, conn: socket.socket) -> None:
        pid, uid = _peer(conn)
        conn.settimeout(10)
        ask = _line(conn)            # read first: a reply to an unread ask can be lost
        if uid not in (os.geteuid(), 0):
            conn.sendall(f"refused: the table runs as user {os.geteuid()}; ask as that "
                         f"user or root\n".encode())
            return
        if not ask.startswith("lend"):
            conn.sendall(b"refused: say 'lend <what>'\n")
            return
        who = f"{ask[4:].strip()[:200] or 'another program'} (pid {pid})"
        with self._lock:
            if self.lent_to is not None:
                conn.sendall(f"busy: lent to {self.lent_to}\n".encode())
                return
            self.lent_to = who
        try:
            path = self.lend(who)
            if path is None:
                conn.sendall(b"refused: the table could not let go of the port\n")
                return
            self.leases += 1
            conn.sendall(f"lent {path}\n".encode())
            conn.settimeout(None)
            _line(conn)                                  # "return", or the asker's end
        finally:
            with self._lock:
                self.lent_to = None
            self.give_back()

    def quiet(self) -> None:
        """Stop answering until :meth:`listen` is called again: the table
        lost its port (unplugged), so it holds nothing to lend, and the
        port's name (a ``/dev/pts`` or ``ttyACM`` number the system gives
        the next device) must not keep pointing here."""
        with self._lock:
            sock, self._sock, self.name = self._sock, None, None
        _shut(sock)

    def close(self) -> None:
        self.quiet()
        with self._lock:
            self._closed = True


def _shut(sock: socket.socket | None) -> None:
    """Stop listening: shut down first, which wakes the thread blocked in
    accept() (a bare close would leave the name bound until it returns)."""
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class Lease:
    """What :func:`borrow` gives: ``port`` to use, and ``holder``: the path
    the table had open (None: no table held this port)."""

    def __init__(self, port: str, holder: str | None):
        self.port = port
        self.holder = holder


@contextlib.contextmanager
def borrow(port: str, what: str, timeout_s: float = 10.0) -> Iterator[Lease]:
    """Ask the table holding ``port`` to let go of it for the ``with`` block
    (``what``: a few words for the table's status, "companion pico flash").
    No table answering: the port is not held by one, go ahead. LeaseError
    when the table refuses."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(lease_name(port))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        yield Lease(port, None)
        return
    except BaseException:
        sock.close()
        raise
    with sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(f"lend {what}\n".encode())     # a refusal is still read below
        reply = _line(sock)
        if not reply.startswith("lent"):
            raise LeaseError(f"the table holding {port} did not lend it: "
                             f"{reply or 'no answer'}")
        try:
            yield Lease(port, reply[4:].strip() or port)
        finally:
            with contextlib.suppress(OSError):
                sock.sendall(b"return\n")


__all__ = ["Lease", "LeaseError", "LeaseServer", "borrow", "lease_name"]
