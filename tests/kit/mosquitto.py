"""A real Mosquitto broker for the league tests and benchmarks: a free
loopback port, the process started from the configuration ``companion league
config`` writes (:func:`companion.league.config.generate`), and waiting until
it listens. One copy, for tests/ and bench/."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"

#: ``pytestmark`` of a module that needs Debian's mosquitto
NEEDS_MOSQUITTO = pytest.mark.skipif(
    not Path(MOSQUITTO).exists(),
    reason="Debian's mosquitto is not installed (tasks.py test installs it)")


def free_port() -> int:
    """A free loopback port below the ephemeral range (a broker restarted on
    it must not find it taken by a client socket meanwhile)."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20_000, 32_000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free loopback port between 20000 and 32000")


def listening(port: int, proc: subprocess.Popen | None = None, timeout: float = 60,
              settle_s: float = 0.0) -> None:
    """Wait until something listens on loopback ``port`` (``proc``: and that
    it is ours: ``proc`` still runs ``settle_s`` later); ``timeout`` is only
    "give up eventually"."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.02)
            continue
        if settle_s:
            time.sleep(settle_s)    # not someone else's server on that port, with ours gone
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}: port {port} taken?")
        return
    raise RuntimeError(f"nothing listens on {port} after {timeout:.0f} s")


def stop_process(proc: subprocess.Popen, wait_s: float = 10) -> None:
    """A clean stop (SIGTERM; SIGKILL if it does not end within ``wait_s``)."""
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class Mosquitto:
    """One broker process from a generated configuration (``files``, as
    :func:`~companion.league.config.generate` returns them) on ``port``."""

    scheme = "mqtt"

    def __init__(self, files: dict, port: int, settle_s: float = 0.0):
        self.files, self.port, self.settle_s = files, port, settle_s
        self.db = Path(files["conf"]).parent / "data" / "mosquitto.db"
        self.log = Path(files["conf"]).parent / "mosquitto.stderr"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self) -> "Mosquitto":
        if not Path(MOSQUITTO).exists():
            raise RuntimeError("Debian's mosquitto is not installed (tasks.py installs it)")
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.files["conf"])],
                                         stdout=subprocess.DEVNULL, stderr=err)
        try:
            listening(self.port, self.proc, settle_s=self.settle_s)
        except RuntimeError as exc:
            self.proc.kill()
            self.proc.wait(5)
            self.proc = None
            raise RuntimeError(f"mosquitto did not start ({exc}): "
                               f"{self.log.read_text()[-2000:]!r}") from None
        return self

    def save_copy(self) -> Path:
        """Have the broker write its persistence file now (SIGUSR1) and keep a copy."""
        before = self.db.stat().st_mtime_ns if self.db.exists() else 0
        self.proc.send_signal(signal.SIGUSR1)
        end = time.monotonic() + 30
        while time.monotonic() < end and (not self.db.exists()
                                          or self.db.stat().st_mtime_ns == before):
            time.sleep(0.05)
        time.sleep(0.2)
        copy = self.db.with_suffix(".stale")
        shutil.copy2(self.db, copy)
        return copy

    def kill9(self, stale: Path | None = None) -> None:
        """SIGKILL; ``stale``: put that persistence file back (a power cut)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None
        if stale is not None:
            shutil.copy2(stale, self.db)

    def stop(self) -> None:
        """A clean stop (SIGTERM): the broker saves its queue to disk."""
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


class Broker(Mosquitto):
    """A real Mosquitto on a free loopback port with the generated config
    for ``tables`` (and the league's user): ``.url``, ``.creds(user)``;
    ``tls={"cert": ..., "key": ...}``: an ``mqtts://`` listener."""

    def __init__(self, root: Path, tables=("t1", "t2", "t3"), tls: dict | None = None):
        from companion.league.config import generate

        port = free_port()
        self.root = root
        run_as = "root" if os.geteuid() == 0 else None
        files = generate(root, list(tables), port=port, bind="127.0.0.1", run_as=run_as,
                         log_file=str(root / "broker.log"), **({"tls": tls} if tls else {}))
        super().__init__(files, port)
        if tls:
            self.scheme = "mqtts"

    def creds(self, user: str):
        from companion.league.topics import Credentials

        return Credentials.from_file(user, self.files["secrets"][user])
