"""The Pico link's transport: pyserial only, no protocol.

It finds the Pico by its USB ids (Raspberry Pi, 0x2E8A; MicroPython, 0x0005) with
``serial.tools.list_ports``, reads it in pyserial's
:class:`serial.threaded.ReaderThread`, hands every chunk of bytes on with the
Pi's monotonic time it arrived (the clock sync needs it), and when the port
goes away (an unplug, a reset) reopens it with a growing back-off, finding
the Pico again wherever it re-enumerated. The frames are
:mod:`companion.pico.protocol`'s business.

Tests use a pty pair (a real tty) and close and reopen it for an unplug;
``port`` may be a callable that says where the box is now.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Callable

import serial
import serial.threaded
import serial.tools.list_ports

log = logging.getLogger(__name__)

#: Raspberry Pi's USB vendor id: the Pico's MicroPython USB serial uses it.
PICO_VID = 0x2E8A
#: MicroPython's product id on a Pico or Pico 2 (its USB serial). Others of
#: the same vendor are not the box: a Debug Probe (0x000C), a Pico in
#: BOOTSEL mode (0x0003, 0x000F), a Pico running other firmware.
MICROPYTHON_PID = 0x0005
#: Where the udev rule (hardware/udev/99-buzzerbox.rules) links the box.
STABLE_NAME = "/dev/buzzerbox"
#: Environment variable naming the port to use instead of searching.
ENV_PORT = "COMPANION_PICO_PORT"


def find_pico_ports() -> list[str]:
    """Serial ports of plugged-in Picos running MicroPython: the udev link
    first, then every port with the Raspberry Pi vendor id and MicroPython's
    product id, by name."""
    found = []
    if os.path.exists(STABLE_NAME):
        found.append(STABLE_NAME)
    try:
        ports = serial.tools.list_ports.comports()
    except Exception:       # no sysfs, odd platforms: nothing found, not a crash
        ports = []
    found += sorted(p.device for p in ports
                    if p.vid == PICO_VID and p.pid == MICROPYTHON_PID)
    return found


def named_port(port: str | None = None) -> str:
    """The box's port, named (for mpremote and the self-test: never "the
    first MicroPython board found"): ``port``, else ``$COMPANION_PICO_PORT``,
    else the udev name ``/dev/buzzerbox``, else the one Pico running
    MicroPython plugged in. ValueError when none or several could be it."""
    named = port or os.environ.get(ENV_PORT)
    if named:
        return named
    if os.path.exists(STABLE_NAME):
        return STABLE_NAME
    found = find_pico_ports()
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"no buzzer box found: no {STABLE_NAME} (the udev rule, "
                         f"hardware/udev/99-buzzerbox.rules) and no Pico running MicroPython "
                         f"on USB; plug it in or name its port (--port)")
    raise ValueError(f"{len(found)} Picos running MicroPython ({', '.join(found)}) and no "
                     f"{STABLE_NAME}: name the buzzer box's port (--port), or install the udev "
                     f"rule with its serial number (hardware/udev/99-buzzerbox.rules)")


def default_port(skip=()) -> str | None:
    """``$COMPANION_PICO_PORT``, else the first Pico found that is not in
    ``skip`` (ports that did not say HELLO; all skipped: the first again),
    else None."""
    env = os.environ.get(ENV_PORT)
    if env:
        return env
    ports = find_pico_ports()
    fresh = [p for p in ports if p not in skip]
    return (fresh or ports or [None])[0]


class _Protocol(serial.threaded.Protocol):
    """One connection's reader: nothing it reads reaches the link's owner
    before the owner heard of the connection (``announced``): a box's hello
    already waiting in the port was read first and then forgotten when the
    connection was announced (the owner starts each connection afresh)."""

    def __init__(self, link: "SerialLink", announced: threading.Event):
        self.link = link
        self.announced = announced

    def data_received(self, data: bytes) -> None:
        t_ns = self.link.clock()            # when it came, not when it is handed on
        self.announced.wait()
        self.link.on_bytes(data, t_ns)

    def connection_lost(self, exc) -> None:
        self.announced.wait()
        self.link.lost(exc)


class _Port(serial.Serial):
    """The box's port, whose reads fail only with SerialException: the one
    failure pyserial's reader loop (``ReaderThread.run``) ends on as a lost
    connection. ``ReaderThread.close`` gives the reader 2 s to stop and
    then closes the port; a reader the machine did not run in that time (a
    Pi busy with an update) reads a closed port, which fails with a
    TypeError or OSError. The loop let that escape: the thread died, the
    link never heard the port was lost and never opened it again
    (tests/test_pico_transport.py)."""

    def read(self, size: int = 1) -> bytes:
        with _lost_as_serial_errors():
            return super().read(size)

    @property
    def in_waiting(self) -> int:
        with _lost_as_serial_errors():
            return super().in_waiting


@contextlib.contextmanager
def _lost_as_serial_errors():
    try:
        yield
    except serial.SerialException:
        raise
    except (TypeError, ValueError, OSError) as exc:     # SerialException is an OSError
        raise serial.SerialException(f"the port closed under a read ({exc})") from exc


class _Reader(serial.threaded.ReaderThread):
    """pyserial's reader thread, whose writes can be timed: :meth:`write_at`."""

    def write_at(self, data: bytes, clock: Callable[[], int]) -> int:
        """Write ``data`` under the reader's write lock (the one its
        ``write`` and ``close`` take); ``clock()`` read just before it went."""
        with self._lock:
            t = clock()
            self.serial.write(data)
        return t


class SerialLink:
    """Keep a serial port open: read it on a thread, reopen it after a loss.

    ``port``: a path, a callable giving the path now (or None while there is
    none), or None to find a Pico by its USB ids. ``on_bytes(data, t_ns)``
    gets every chunk read with the Pi's monotonic time it arrived;
    ``on_state(connected, detail)`` every connection and loss. Both are
    called on the link's threads. Reopening waits ``backoff_s[0]`` at first,
    doubling up to ``backoff_s[1]``.
    """

    def __init__(self, port, on_bytes: Callable[[bytes, int], None],
                 on_state: Callable[[bool, str], None], *,
                 clock: Callable[[], int] = time.monotonic_ns,
                 backoff_s: tuple[float, float] = (0.05, 2.0)):
        self._port = port
        self.on_bytes = on_bytes
        self.on_state = on_state
        self.clock = clock
        self.backoff_s = backoff_s
        self.path: str | None = None
        self.connects = 0
        self._reader: _Reader | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._lost_ev = threading.Event()
        self._wake = threading.Event()
        self._held = False
        self._thread: threading.Thread | None = None

    # -- the port ------------------------------------------------------------------

    def where(self) -> str | None:
        p = self._port
        if callable(p):
            return p()
        return p if p is not None else default_port()

    def open_once(self) -> bool:
        """Try to open the port now; True when connected."""
        path = self.where()
        if not path:
            return False
        try:
            ser = _Port(path, 115200, timeout=1, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            log.debug("cannot open %s: %s", path, exc)
            return False
        announced = threading.Event()
        reader = _Reader(ser, lambda: _Protocol(self, announced))
        with self._lock:
            if self._held:                   # lent out meanwhile (pause): not ours now
                ser.close()
                return False
            self._reader = reader
            self.path = path
            self._lost_ev.clear()
            reader.start()                   # under the lock: a pause drops a started reader
        self.connects += 1
        try:
            self.on_state(True, path)
        finally:
            announced.set()                  # now what it read may be handed on
        return True

    @property
    def connected(self) -> bool:
        r = self._reader
        return r is not None and r.alive

    def lost(self, exc) -> None:
        """The port is gone (the reader thread's ``connection_lost``)."""
        with self._lock:
            self._reader = None
        self._lost_ev.set()
        if not self._stop.is_set():
            self.on_state(False, f"{self.path}: {exc or 'closed'}")

    # -- the supervisor ---------------------------------------------------------------

    def start(self) -> None:
        """Keep the port open on a thread until :meth:`close`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pico-link", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        delay = self.backoff_s[0]
        while not self._stop.is_set():
            if self._held:                       # lent out (pause): wait for resume
                self._wake.wait()
                self._wake.clear()
                delay = self.backoff_s[0]
                continue
            if self.connected or self.open_once():
                delay = self.backoff_s[0]
                self._lost_ev.wait()
                continue
            self._wake.wait(delay)
            self._wake.clear()
            delay = min(delay * 2, self.backoff_s[1])

    @property
    def held(self) -> bool:
        """The port is let go of and not reopened (:meth:`pause`)."""
        return self._held

    def pause(self, timeout_s: float = 3.0) -> bool:
        """Close the port and leave it closed until :meth:`resume` (another
        program is using the box: an update, the self-test). True once it
        is closed."""
        with self._lock:
            self._held = True
        self._wake.set()
        self.drop()
        end = time.monotonic() + timeout_s
        while self.connected and time.monotonic() < end:
            time.sleep(0.005)
        return not self.connected

    def resume(self) -> None:
        """Reopen the port again (at once, then with the usual back-off)."""
        self._held = False
        self._wake.set()

    def write(self, data: bytes) -> int | None:
        """Send ``data``; the Pi's monotonic time just before it went, or None
        if the link is down (nothing sent)."""
        r = self._reader
        if r is None or not r.alive:
            return None
        try:
            return r.write_at(data, self.clock)
        except (serial.SerialException, OSError) as exc:
            log.debug("write failed: %s", exc)
            return None

    def drop(self) -> None:
        """Close the port now (the supervisor reopens it)."""
        r = self._reader
        if r is None:
            return
        try:
            if r is threading.current_thread():
                r.alive = False          # the reader itself: it ends after this chunk
                r.serial.close()
            else:
                r.close()
        except Exception:   # already gone
            pass

    def close(self) -> None:
        self._stop.set()
        self._lost_ev.set()
        self._wake.set()
        self.drop()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(3)
        self._thread = None
