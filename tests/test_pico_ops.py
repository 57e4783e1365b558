"""Updates and the self-test while the table runs (issue 32, item 4): the table
holds the buzzer box's port exclusively, so ``companion pico`` and
``hardware.selftest --real`` borrow it (companion/pico/lease.py): the table
lets go and says the box is away for an update, the job runs on the port it
names, the table takes the box back, and the box's presses reach the table
again, none lost.

The box is the real firmware under the MicroPython unix port on a pty
(firmware/sim/ptybox.py); mpremote is a fake on PATH that records its
arguments, opens the port exclusively as mpremote does, and reads the served
table's state while it holds the box."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from companion import cli
from companion.pico import lease as L
from companion.pico import transport
from companion.races.referee import MS
from tests.kit.helpers import wait_for
from tests.kit.pico import box_source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "firmware" / "sim"))
from ptybox import SimBox  # noqa: E402

needs_micropython = pytest.mark.skipif(
    not Path(sys.executable).with_name("micropython").exists(), reason="no MicroPython unix port")

FAKE_MPREMOTE = '''#!{python}
import json, os, sys, urllib.request
import serial
rec = {{"argv": sys.argv[1:]}}
port = sys.argv[sys.argv.index("connect") + 1]
try:
    ser = serial.Serial(port, 115200, timeout=0.1, exclusive=True)   # as mpremote opens it
    rec["locked"] = True
except Exception as exc:
    rec["locked"] = False
    rec["error"] = str(exc)
url = os.environ.get("FAKE_TABLE_URL")
if url:
    rec["buzzers"] = json.load(urllib.request.urlopen(url + "api/state", timeout=10))["buzzers"]
with open(os.environ["FAKE_MPREMOTE_LOG"], "w") as fh:
    json.dump(rec, fh)
sys.exit(0 if rec["locked"] else 1)
'''


@pytest.fixture
def fake_mpremote(tmp_path, monkeypatch):
    """A fake ``mpremote`` first on PATH; its record (a dict) once it ran."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "mpremote"
    exe.write_text(FAKE_MPREMOTE.format(python=sys.executable))
    exe.chmod(0o755)
    log = tmp_path / "mpremote.json"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_MPREMOTE_LOG", str(log))
    monkeypatch.delenv("COMPANION_PICO_PORT", raising=False)
    return lambda: json.loads(log.read_text())


class Fed:
    """The edges the table's race desk takes (the one way in), per player."""

    def __init__(self, session, monkeypatch):
        self.seen: list[tuple[str, bool]] = []
        feed = session.desk.feed

        def fed(edge, *args, **kwargs):
            self.seen.append((edge.player, edge.pressed))
            return feed(edge, *args, **kwargs)
        monkeypatch.setattr(session.desk, "feed", fed)


def served_table(tmp_path, box):
    from companion.app import TableServer
    table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="2468",
                        short_pin=True, players=["Ana", "Bo", "Cy"], source="pico",
                        source_options={"port": box.port}, threads=4, demo=True)
    table.open()
    table.start()
    return table


def synced(src) -> bool:
    b = src.error_bound_ns()
    return src.status().connected and b is not None and b < 5 * MS


@needs_micropython
@pytest.mark.slow
def test_companion_pico_flash_borrows_the_box_from_a_served_table_and_gives_it_back(
        tmp_path, monkeypatch, fake_mpremote):
    with SimBox(tmp_path / "box") as box:
        table = served_table(tmp_path, box)
        try:
            src = table.source
            assert wait_for(lambda: synced(src), 30), src.status()
            fed = Fed(table.session, monkeypatch)
            monkeypatch.setenv("FAKE_TABLE_URL", table.urls[0].replace(
                table.urls[0].split("//")[1].split(":")[0], "127.0.0.1"))
            out = []
            rc = cli.main(["pico", "flash", "--port", box.port], stdout=_Lines(out),
                          stderr=_Lines(out))
            assert rc == 0, out
            rec = fake_mpremote()
            # mpremote named the port (never "auto"), copied main.py and box*.py, reset
            argv = rec["argv"]
            assert argv[:2] == ["connect", box.port]
            assert argv[2] == "cp" and argv[-3:] == [":", "+", "reset"]
            names = sorted(Path(f).name for f in argv[3:-3])
            assert "main.py" in names and "boxcore.py" in names and "ptybox.py" not in names
            assert rec["locked"], rec                  # the table had let go of the port
            assert rec["buzzers"]["away"] is True and rec["buzzers"]["connected"] is False
            assert "away for an update" in rec["buzzers"]["detail"]
            assert "companion pico flash" in rec["buzzers"]["detail"]
            # the table takes the box back, and no press from it is lost
            assert wait_for(lambda: synced(src), 30), src.status()
            assert src.away is None and not src.status().away
            assert table.session.snapshot()["buzzers"]["away"] is False
            for n in (1, 2, 3):
                t = src.now_ns() + 30 * MS
                box.press(n, t)
                box.release(n, t + 80 * MS)
            want = [(p, lv) for p in ("Ana", "Bo", "Cy") for lv in (True, False)]
            assert wait_for(lambda: sorted(fed.seen) == sorted(want), 30), fed.seen
            assert "disconnected" not in [f.kind for f in src.faults]   # away is not lost
        finally:
            table.close()


class _Lines:
    def __init__(self, into):
        self.into = into

    def write(self, s):
        self.into.append(s)

    def flush(self):
        pass


@needs_micropython
def test_without_the_lease_mpremote_cannot_open_the_port_the_table_holds(
        tmp_path, fake_mpremote):
    """Why the lease: the table's source holds the port exclusively, and
    mpremote (opening it exclusively too) is turned away."""
    import subprocess

    with SimBox(tmp_path / "box") as box:
        src = box_source(["1", "2"], box)
        try:
            assert wait_for(lambda: src.status().connected, 30)     # it holds the port
            r = subprocess.run(["mpremote", "connect", box.port, "cp", "main.py", ":"],
                               capture_output=True)
            assert r.returncode == 1 and fake_mpremote()["locked"] is False
        finally:
            src.close()


@needs_micropython
@pytest.mark.slow
def test_the_real_self_test_runs_while_a_table_holds_the_box(tmp_path, monkeypatch):
    from hardware import selftest
    monkeypatch.delenv("COMPANION_PICO_PORT", raising=False)
    with SimBox(tmp_path / "box") as box:
        box.jumper(9, 8)
        table = box_source(["1", "2"], box)
        try:
            assert wait_for(lambda: synced(table), 30)
            seen = []
            orig = selftest.measure_pico

            def measure(src, *a, **kw):
                seen.append((table.away, table.status().away))
                return orig(src, *a, **kw)
            monkeypatch.setattr(selftest, "measure_pico", measure)
            assert selftest.main(["--real", "--pico", "--port", box.port, "--pulses", "5"]) == 0
            (who, away), = seen
            assert away and "self-test" in who
            assert wait_for(lambda: synced(table), 30)         # taken back
            assert table.away is None
        finally:
            table.close()


@needs_micropython
def test_an_asker_that_dies_gives_the_box_back_and_a_second_one_is_told_busy(tmp_path):
    with SimBox(tmp_path / "box") as box:
        src = box_source(["1", "2"], box)
        first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # the table answers for the port once it holds it (docs/pico.md)
            assert wait_for(lambda: src.status().connected, 30)
            first.connect(L.lease_name(box.port))
            first.sendall(b"lend a flash that will crash\n")
            assert first.recv(200).startswith(b"lent ")
            assert src.away and not src.link.connected
            with pytest.raises(L.LeaseError, match="busy: lent to a flash that will crash"):
                with L.borrow(box.port, "a second one"):
                    pass
            first.close()                               # dies without saying "return"
            assert wait_for(lambda: src.away is None and src.status().connected, 30)
        finally:
            first.close()
            src.close()


@needs_micropython
def test_the_table_lends_only_to_its_own_user_or_root(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "_peer", lambda conn: (4242, 54321))
    with SimBox(tmp_path / "box") as box:
        src = box_source(["1", "2"], box)
        try:
            assert wait_for(lambda: src.status().connected, 30)     # it answers for the port
            with pytest.raises(L.LeaseError, match="refused: the table runs as user"):
                with L.borrow(box.port, "someone else"):
                    pass
            assert src.away is None and src.lease.leases == 0 and not src.link.held
        finally:
            src.close()


def test_a_long_port_path_gets_a_short_name():
    long = "/dev/" + "x" * 200
    assert len(L.lease_name(long)) <= L.MAX_NAME
    assert L.lease_name(long) != L.lease_name(long + "y")


def test_no_table_on_the_port_means_go_ahead(tmp_path):
    with L.borrow(str(tmp_path / "nobody"), "flash") as lease:
        assert lease.holder is None and lease.port == str(tmp_path / "nobody")


def test_the_port_is_always_named(monkeypatch, tmp_path):
    monkeypatch.delenv("COMPANION_PICO_PORT", raising=False)
    monkeypatch.setattr(transport, "STABLE_NAME", str(tmp_path / "buzzerbox"))
    monkeypatch.setattr(transport, "find_pico_ports", lambda: ["/dev/ttyACM0", "/dev/ttyACM1"])
    with pytest.raises(ValueError, match="2 Picos running MicroPython"):
        transport.named_port()
    assert transport.named_port("/dev/ttyACM1") == "/dev/ttyACM1"
    monkeypatch.setattr(transport, "find_pico_ports", lambda: ["/dev/ttyACM3"])
    assert transport.named_port() == "/dev/ttyACM3"
    monkeypatch.setattr(transport, "find_pico_ports", lambda: [])
    with pytest.raises(ValueError, match="no buzzer box found"):
        transport.named_port()
    (tmp_path / "buzzerbox").write_text("")
    assert transport.named_port() == str(tmp_path / "buzzerbox")   # the udev name first
    monkeypatch.setenv("COMPANION_PICO_PORT", "/dev/ttyACM9")
    assert transport.named_port() == "/dev/ttyACM9"


def test_companion_pico_without_a_box_says_so(monkeypatch, tmp_path):
    monkeypatch.delenv("COMPANION_PICO_PORT", raising=False)
    monkeypatch.setattr(transport, "STABLE_NAME", str(tmp_path / "buzzerbox"))
    monkeypatch.setattr(transport, "find_pico_ports", lambda: [])
    err = []
    assert cli.main(["pico", "flash"], stdout=_Lines([]), stderr=_Lines(err)) == 2
    assert "no buzzer box found" in "".join(err)


def test_the_lease_server_survives_a_garbled_ask(tmp_path):
    lent = []
    srv = L.LeaseServer(lambda who: lent.append(who) or "/dev/x", lambda: lent.append("back"))
    port = str(tmp_path / "port")
    assert srv.listen(port)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(L.lease_name(port))
        s.sendall(b"\xff\xfegarbage\n")
        assert s.recv(200).startswith(b"refused")
        s.close()
        with L.borrow(port, "flash") as lease:
            assert lease.holder == "/dev/x"
        assert wait_for(lambda: lent[-1:] == ["back"])
        assert lent[0].startswith("flash (pid ")
        done = threading.Event()
        threading.Thread(target=lambda: (srv.close(), done.set())).start()
        assert wait_for(done.is_set)
    finally:
        srv.close()
