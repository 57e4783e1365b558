"""Issue 9: no phone can take the table down, and every store failure says
what happened. Each test here failed on main before the fix it names.

A guest's phone is a loopback alias (127.0.0.77...): only 127.0.0.1 itself
is the Pi."""

from __future__ import annotations

import http.client
import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.kit.web import PIN, HostClient, http_host_login, make_app
from tests.kit.helpers import wait_for

ROOT = Path(__file__).resolve().parent.parent
GUEST = "127.0.0.77"


def chope(session, names=("ana", "bo", "cy")):
    session.new_game("chope", [{"name": n} for n in names])
    return session


def timed_get(port, path, source="127.0.0.1", headers=None, timeout=60.0):
    """(status, seconds, body) of one GET from ``source``."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, time.monotonic() - t0, body
    finally:
        conn.close()


def slow_sockets(port, n, source=GUEST, first=b"GET / HTTP/1.1\r\nHost: t\r\n"):
    """``n`` connections from ``source`` that each sent half a request
    head and then say nothing (a slowloris)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind((source, 0))
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(first)
        except OSError:
            pass
        socks.append(s)
    return socks


def _host_phone(port, source):
    """The host logging in on a phone at ``source``: its cookie."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        conn.request("GET", "/api/csrf")
        r = conn.getresponse()
        assert r.status == 200, r.read()
        cookie = r.getheader("Set-Cookie").split(";")[0]
        csrf = json.loads(r.read())["csrf"]
        conn.request("POST", "/api/host/login", body=json.dumps({"pin": "246810"}),
                     headers={"Cookie": cookie, "X-CSRF-Token": csrf,
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200, r.read()
        r.read()
        return r.getheader("Set-Cookie").split(";")[0]
    finally:
        conn.close()


@pytest.fixture
def table(tmp_path):
    from companion.app import TableServer

    made = []

    def build(**kw):
        kw.setdefault("threads", 16)
        t = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="246810",
                  source="mock", demo=True, **kw).open().start()
        made.append(t)
        return t

    yield build
    for t in made:
        t.close()


# ---------------------------------------------------------------------------
# 1. connections and requests


def test_300_slow_sockets_from_one_address_leave_the_host_console_answering(table):
    t = table()
    socks = slow_sockets(t.port, 300)
    try:
        assert wait_for(lambda: t.gate.refused["per_address"] >= 300 - 16, 5), t.gate.refused
        assert t.gate.open_count(GUEST) <= 16
        # served while the slow sockets still hold their slots (none was cut
        # for slowness yet): no waiting behind them (the latency figures:
        # python -m bench hostile, hostile_host_console_ms_*)
        # the Pi's own console
        status, _, body = timed_get(t.port, "/host")
        assert status == 200
        # another phone is served as usual
        status, _, _ = timed_get(t.port, "/api/state", source="127.0.0.88")
        assert status == 200
        # and the host logged in on a phone elsewhere
        cookie = _host_phone(t.port, "127.0.0.9")
        status, _, body = timed_get(t.port, "/api/host/state", source="127.0.0.9",
                                    headers={"Cookie": cookie})
        assert status == 200 and json.loads(body)["game"] == "chope"
        assert t.gate.refused.get("slow", 0) == 0
    finally:
        for s in socks:
            s.close()


def test_an_over_cap_connection_is_told_503_and_closed(table):
    t = table()
    socks = slow_sockets(t.port, 16)
    extra = socket.socket()
    try:
        extra.bind((GUEST, 0))
        extra.settimeout(3)
        extra.connect(("127.0.0.1", t.port))
        data = b""
        try:
            while chunk := extra.recv(4096):
                data += chunk
        except ConnectionResetError:
            pass
        assert data.startswith(b"HTTP/1.1 503") and b"Retry-After" in data
    finally:
        extra.close()
        for s in socks:
            s.close()
    # the address's slots come back when its connections close
    assert wait_for(lambda: t.gate.open_count(GUEST) == 0, 5)
    assert timed_get(t.port, "/api/state", source=GUEST)[0] == 200


def test_a_request_trickled_slower_than_the_header_timeout_is_cut_off(table):
    from companion.web.limits import Limits

    t = table(limits=Limits(header_timeout_s=1.0))
    s = socket.socket()
    s.bind((GUEST, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", t.port))
    t0 = time.monotonic()
    closed_at = None
    try:
        s.sendall(b"GET / HTTP/1.1\r\n")
        for i in range(40):                       # one header line every 0.2 s
            time.sleep(0.2)
            try:
                s.sendall(b"X-Slow-%d: y\r\n" % i)
            except OSError:
                closed_at = time.monotonic() - t0
                break
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed_at = time.monotonic() - t0
                    break
            except BlockingIOError:
                pass
            except OSError:
                closed_at = time.monotonic() - t0
                break
            finally:
                s.setblocking(True)
    finally:
        s.close()
    assert closed_at is not None        # cut off while it still trickled (8 s of it)
    assert t.gate.refused["slow"] >= 1


def test_requests_in_flight_are_capped_per_address_but_not_for_the_pi():
    from companion.web.limits import Gate, Limits

    gate = Gate(Limits(in_flight_per_address=2))
    release = threading.Event()
    results: list = []

    def slow_app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            release.wait(5)
            yield b"ok"
        return body()

    app = gate.wrap(slow_app)

    def call(addr):
        status = []
        out = app({"REMOTE_ADDR": addr, "REMOTE_PORT": "1"},
                  lambda s, h: status.append(s))
        results.append((addr, status[0]))
        return out

    held = [call(GUEST), call(GUEST)]               # two in flight
    third = call(GUEST)
    assert results[-1] == (GUEST, "503 Service Unavailable")
    assert b"too many requests" in b"".join(third)
    pi = [call("127.0.0.1") for _ in range(5)]      # the Pi is never capped
    assert all(s == "200 OK" for a, s in results if a == "127.0.0.1")
    assert call("127.0.0.88") and results[-1][1] == "200 OK"
    release.set()
    for body in held + pi:
        list(body)
        body.close()
    assert gate.in_flight(GUEST) == 0
    call(GUEST)
    assert results[-1] == (GUEST, "200 OK")


def test_past_the_guests_share_only_the_host_is_served(app, client):
    """The reserve: connections opened when every guest slot was taken
    serve the host (and the login) only: the routes' policy, in every app."""
    from companion.web.limits import BAND_KEY, Gate, Limits

    gate = Gate(Limits(per_address=4, guests=2, reserve=1))
    assert [gate.admit(a) for a in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")] == [
        "guest", "guest", "reserve", None]
    assert gate.admit("127.0.0.1") == "trusted"
    reserve = {BAND_KEY: "reserve"}
    r = client.get("/api/state", environ_base=reserve)
    assert r.status_code == 503 and r.headers["Retry-After"]
    assert client.get("/host", environ_base=reserve).status_code == 200     # the login page
    host = HostClient(client)
    assert host.get("/api/host/state", environ_base=reserve).status_code == 200
    assert host.get("/api/state", environ_base=reserve).status_code == 200


def test_issue20_15_addresses_of_16_idle_sockets_leave_the_host_a_way_in(table):
    """Issue 20, 2: 15 guest addresses with 16 idle sockets each took all
    232 slots, the reserve included, and a logged-in host on a phone got
    503 for 20 s. Idle guest sockets are cut first now, and the reserve is
    never taken by an idle guest socket."""
    t = table()
    socks = []
    try:
        for i in range(15):
            socks += slow_sockets(t.port, 16, source=f"127.0.1.{i + 10}", first=b"")
        refused = t.gate.refused
        assert wait_for(lambda: t.gate.open_count() + refused.get("idle_cut", 0)
                        + refused["guests"] >= 240, 10), (t.gate.open_count(), refused)
        cookie = _host_phone(t.port, "127.0.0.9")     # was 503: "the table is full"
        assert t.gate._reserve == 0 and refused["guests"] == 0, refused
        times = []
        for _ in range(20):                       # the host's console, polled
            status, dt, body = timed_get(t.port, "/api/host/state", source="127.0.0.9",
                                         headers={"Cookie": cookie})
            assert status == 200 and json.loads(body)["game"] == "chope"
            times.append(dt)
        status, dt_pi, _ = timed_get(t.port, "/host")                       # the Pi itself
        assert status == 200
        times.sort()
        # the flood keeps reopening what was cut, for 2 s (at most 3,000 sockets)
        churn, stop = [], time.monotonic() + 2.0

        def flood():
            while time.monotonic() < stop and len(churn) < 3000:
                churn.extend(slow_sockets(t.port, 1, source=f"127.0.1.{len(churn) % 15 + 10}",
                                          first=b""))

        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        busy = []
        while flooder.is_alive() and len(busy) < 200:
            status, dt, _ = timed_get(t.port, "/api/host/state", source="127.0.0.9",
                                      headers={"Cookie": cookie})
            assert status == 200
            busy.append(dt)
        flooder.join(10)
        socks += churn
        busy.sort()
        print(f"host latency with 15 x 16 idle guest sockets: median "
              f"{times[10] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms (Pi {dt_pi * 1000:.1f} ms); "
              f"while {len(churn)} more were opened in 2 s: median "
              f"{busy[len(busy) // 2] * 1000:.1f} ms, max {busy[-1] * 1000:.1f} ms over "
              f"{len(busy)} requests; {t.gate.refused['idle_cut']} idle guest sockets cut")
        assert t.gate._reserve == 0       # every request above was a 200: was 503 for 20 s
    finally:
        for s in socks:
            s.close()


def test_issue20_the_gate_cuts_an_idle_flood_socket_not_a_phone_or_a_busy_one():
    """Issue 20, 2: with the guests' share full, the socket cut is idle
    (nothing being answered), from the address holding the most, the
    longest idle; a busy share goes to the reserve, never past it."""
    from companion.web.limits import Gate, Limits

    gate = Gate(Limits(per_address=8, guests=4, reserve=1))

    class Chan:
        def __init__(self, peer, band, idle_since, busy=False):
            self.peer, self.band, self.last_activity, self.busy = peer, band, idle_since, busy
            self.was_cut = False
            gate.opened(peer, band, self)

        def cuttable(self):
            return not self.busy

        def cut(self):
            self.was_cut = True
            gate.release(self.peer, self.band)

    chans = [Chan(("10.0.0.1", 1), gate.admit("10.0.0.1"), 5.0),          # a phone
             Chan(("10.0.0.2", 1), gate.admit("10.0.0.2"), 3.0),          # the flood ...
             Chan(("10.0.0.2", 2), gate.admit("10.0.0.2"), 1.0),          # ... its idlest
             Chan(("10.0.0.2", 3), gate.admit("10.0.0.2"), 0.5, busy=True)]
    assert gate.admit("10.0.0.9") == "guest"
    assert [c.was_cut for c in chans] == [False, False, True, False]
    for c in chans:
        c.busy = True
    chans.append(Chan(("10.0.0.9", 1), "guest", 9.0, busy=True))
    assert gate.admit("10.0.0.7") == "reserve"        # every guest socket busy
    assert gate.admit("10.0.0.8") is None and gate.refused["guests"] == 1
    assert gate._reserve == 1 and gate.open_count() == 5


# ---------------------------------------------------------------------------
# 2. PIN guessing


def _guess(client, addr, pin):
    csrf = client.get("/api/csrf", environ_base={"REMOTE_ADDR": addr}).json["csrf"]
    return client.post("/api/host/login", json={"pin": pin}, headers={"X-CSRF-Token": csrf},
                       environ_base={"REMOTE_ADDR": addr})


def test_wrong_pins_from_many_addresses_replace_the_pin_shown_only_on_the_pi(session):
    shown = []
    app = make_app(session, GLOBAL_LOGIN_LIMIT=10, GLOBAL_LOGIN_FREE=100, ANNOUNCE=shown.append)
    client = app.test_client()
    # 3 wrong guesses from each of 4 addresses: under each address's limit
    for i in range(4):
        for _ in range(3):
            _guess(client, f"10.0.0.{i + 1}", "000000")
    assert len(shown) == 1, "the table-wide limit replaced the PIN"
    new = app.extensions["companion"].pin
    assert new != PIN and len(new) >= 6 and new in shown[0]
    assert _guess(client, "10.0.0.9", PIN).status_code == 401     # the old PIN is dead
    assert _guess(client, "10.0.0.9", new).status_code == 200     # the Pi's one works


def test_the_pi_itself_never_counts_towards_the_table_limit(session):
    shown = []
    app = make_app(session, GLOBAL_LOGIN_LIMIT=3, LOGIN_LIMIT=100, ANNOUNCE=shown.append)
    client = app.test_client()
    for _ in range(20):
        _guess(client, "127.0.0.1", "000000")
    assert not shown and app.extensions["companion"].pin == PIN
    assert _guess(client, "127.0.0.1", PIN).status_code == 200


class _Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _clocked(app):
    clock = _Clock()
    app.extensions["companion_auth"].guard.clock = clock
    app.extensions["companion"].login_limiter.clock = clock
    return clock


def _guesser(client, addr):
    csrf = client.get("/api/csrf", environ_base={"REMOTE_ADDR": addr}).json["csrf"]
    return lambda pin: client.post("/api/host/login", json={"pin": pin},
                                   headers={"X-CSRF-Token": csrf},
                                   environ_base={"REMOTE_ADDR": addr}).status_code


def test_issue20_the_guessing_budget_survives_the_pin_being_replaced(session):
    """Issue 20, 1: 20 addresses guessing every 10 s for 30 minutes had
    about 3,000 PINs compared (the PIN replaced every 30, each time
    starting over); the table's back-off holds them to its budget."""
    shown = []
    app = make_app(session, ANNOUNCE=shown.append)
    clock = _clocked(app)
    client = app.test_client()
    guess = {f"10.0.1.{i}": _guesser(client, f"10.0.1.{i}") for i in range(1, 21)}
    compared = 0
    for _ in range(180):
        for g in guess.values():
            status = g("000000")
            assert status in (401, 429)
            compared += status == 401
        clock.t += 10.0
    guard = app.extensions["companion_auth"].guard
    # 10 free, the back-off 1, 2, 4 ... 512 s then 600 s (12 paced in 30
    # min), and one fresh-PIN comparison per address: at most 10 + 12 + 20
    assert compared <= 42, compared
    assert guard.failures == compared and not shown


def test_issue20_the_hosts_first_login_with_a_new_pin_is_let_through(session):
    """Issue 20, 1: while guessers keep the table waiting, the host's first
    login with the newly printed PIN (from a fresh address, or one that
    tried the old PIN before it was replaced) gets in."""
    shown = []
    app = make_app(session, GLOBAL_LOGIN_LIMIT=3, GLOBAL_LOGIN_FREE=2, LOGIN_LIMIT=100,
                   ANNOUNCE=shown.append)
    clock = _clocked(app)
    client = app.test_client()
    phone = _guesser(app.test_client(), "10.0.2.1")
    assert phone("111111") == 401                 # the host mistypes, before the attack
    attackers = [_guesser(client, f"10.0.3.{i}") for i in range(1, 9)]   # one cookie jar
    while not shown:                              # bounded: 3 paced wrong PINs rotate it
        for a in attackers:
            a("000000")
        clock.t += 3600.0
        assert clock.t < 1000.0 + 100 * 3600
    for a in attackers:                           # the table is waiting again
        a("000000")
    new = app.extensions["companion"].pin
    assert app.extensions["companion_auth"].guard.next_at > clock.t
    assert phone(PIN) == 401              # the old one, not yet knowing: not held against it
    assert phone(new) == 200
    for a in attackers:                           # waiting again after that login
        a("000000")
    assert app.extensions["companion_auth"].guard.next_at > clock.t
    assert _guesser(app.test_client(), "10.0.2.2")(new) == 200


def test_issue20_guesses_per_hour_from_250_addresses_stay_in_the_budget():
    """Issue 20, 1, the figure: the best a guesser with 250 addresses can do
    against the implemented budget, simulated for 24 hours (every paced
    slot used, every address's fresh-PIN comparison used under each PIN)."""
    from companion.web.auth import PinGuard

    class Svc:
        pin = "123456"

    clock = _Clock()
    guard = PinGuard(clock=clock)
    svc, start, compared, first_hour = Svc(), clock.t, 0, None
    while clock.t < start + 24 * 3600:
        for i in range(250):
            wait, exempt = guard.admit(f"10.1.{i // 200}.{i % 200}")
            if wait == 0:
                compared += 1
                guard.wrong(svc, exempt)
        clock.t = max(clock.t + 1.0, guard.next_at)
        if first_hour is None and clock.t >= start + 3600:
            first_hour = compared
    later = (compared - first_hour) / 23
    print(f"guesses compared from 250 addresses: {first_hour} in the first hour, "
          f"{compared} in 24 h ({later:.1f} per hour after the first), "
          f"{guard.rotations} PINs replaced")
    # docs/web.md, "Limits": 10 free + 14 paced + 250 fresh in the first
    # hour; then 4 paced an hour, the PIN replaced every 30 of them (7.5 h),
    # each time 250 fresh ones: 4 + 250 / 7.5 = 37.3 an hour
    assert first_hour <= 10 + 14 + 250 and later <= 4 + 250 / 7.5 + 1


def _csrf_for(port, source):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        conn.request("GET", "/api/csrf")
        r = conn.getresponse()
        return r.getheader("Set-Cookie").split(";")[0], json.loads(r.read())["csrf"]
    finally:
        conn.close()


def _post_pin(port, source, cookie, csrf, pin) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        conn.request("POST", "/api/host/login", body=json.dumps({"pin": pin}),
                     headers={"Cookie": cookie, "X-CSRF-Token": csrf,
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


#: the loopback test's wrong PINs, and how far the limits' clock moves for
#: each: 4.4 hours of their time
LOOPBACK_PINS, LOOPBACK_STEP_S = 3_000, 5.28


@pytest.mark.slow
def test_issue20_250_addresses_guessing_over_loopback_for_4_hours(table):
    """Issue 20, 1, on a real server over loopback: 250 guest addresses take
    turns sending 3,000 wrong PINs while the table's limits run on a clock
    that moves 5.28 s before each (4.4 hours of their time). Compared PINs
    (401) are counted against the budget's arithmetic. The clock moves with
    the PINs, not with the machine's time (it ran 16 s at 1,000 times real
    time: a loaded machine sent fewer PINs and the test took its 16 s of a
    core whatever it found)."""
    t = table()
    now = [0.0]
    clock = lambda: now[0]                              # noqa: E731
    t.app.extensions["companion_auth"].guard.clock = clock
    t.services.login_limiter.clock = clock
    addrs = [f"127.0.3.{i}" for i in range(1, 251)]
    creds = {a: _csrf_for(t.port, a) for a in addrs}
    compared = []
    for i in range(LOOPBACK_PINS):
        now[0] += LOOPBACK_STEP_S
        a = addrs[i % 250]
        status = _post_pin(t.port, a, *creds[a], "000000")
        assert status in (401, 429), status
        if status == 401:
            compared.append(now[0] / 3600.0)
    hours = now[0] / 3600.0
    first = sum(1 for h in compared if h < 1.0)
    later = (len(compared) - first) / (hours - 1.0)
    guard = t.app.extensions["companion_auth"].guard
    print(f"over loopback, 250 addresses, {LOOPBACK_PINS} PINs sent in {hours:.1f} h of the "
          f"limits' time: {len(compared)} compared, {first} in the first hour, {later:.1f} an "
          f"hour after it ({guard.rotations} PINs replaced)")
    # docs/web.md, "Limits": at most 274 in the first hour, then 4 paced an
    # hour and 250 fresh ones per PIN replaced (every 30 paced)
    assert first <= 274
    assert len(compared) <= 274 + 4 * (hours - 1.0) + 2 + 250 * guard.rotations


def test_a_pin_shorter_than_6_is_refused_unless_the_host_asks(tmp_path, monkeypatch):
    from companion.app import resolve_pin, serve

    monkeypatch.delenv("COMPANION_PIN", raising=False)
    out = []
    rc = serve(host="127.0.0.1", port=0, db_path=str(tmp_path / "s.db"), pin="1234",
               source="none", print_fn=out.append)
    assert rc == 2 and "at least 6" in out[-1] and "--short-pin" in out[-1]
    assert not (tmp_path / "s.db").exists()           # refused before anything was made
    assert resolve_pin("1234", allow_short=True) == "1234"
    assert resolve_pin("24681357") == "24681357"
    f = tmp_path / "pin"
    f.write_text("97531864\n")
    assert resolve_pin(pin_file=str(f)) == "97531864"
    assert resolve_pin(environ={"COMPANION_PIN_FILE": str(f)}) == "97531864"
    assert resolve_pin(environ={"COMPANION_PIN": "11223344"}) == "11223344"
    with pytest.raises(ValueError, match="COMPANION_PIN"):
        resolve_pin(environ={"COMPANION_PIN": "12"})
    with pytest.raises(ValueError, match="--pin-file"):
        resolve_pin(pin_file=str(tmp_path / "missing"))
    assert resolve_pin(environ={}) is None


# ---------------------------------------------------------------------------
# 3. logins kept by the server


def test_logging_out_revokes_a_copied_cookie(app):
    host = HostClient(app.test_client())
    copy = app.test_client()
    cookie = host.client.get_cookie("companion")
    copy.set_cookie("companion", cookie.value)
    assert copy.get("/api/host/state").status_code == 200
    assert host.post("/api/host/logout").status_code == 200
    assert copy.get("/api/host/state").status_code == 401
    # logging in again gives a new login; the old cookie stays dead
    host2 = HostClient(host.client)
    assert host2.get("/api/host/state").status_code == 200
    assert copy.get("/api/host/state").status_code == 401


def test_the_form_logout_revokes_too(app):
    host = HostClient(app.test_client())
    copy = app.test_client()
    copy.set_cookie("companion", host.client.get_cookie("companion").value)
    r = host.client.post("/host/logout", data={"csrf_token": host.csrf})
    assert r.status_code == 302
    assert copy.get("/api/host/state").status_code == 401


def test_a_start_with_another_pin_revokes_every_login(session):
    app = make_app(session)
    host = HostClient(app.test_client())
    cookie = host.client.get_cookie("companion").value
    key = app.config["SECRET_KEY"]
    # a restart with the same PIN keeps the login (kept next to the store)
    again = make_app(session, SECRET_KEY=key).test_client()
    again.set_cookie("companion", cookie)
    assert again.get("/api/host/state").status_code == 200
    other = make_app(session, SECRET_KEY=key, PIN="86420975").test_client()
    other.set_cookie("companion", cookie)
    assert other.get("/api/host/state").status_code == 401
    back = make_app(session, SECRET_KEY=key).test_client()   # the old PIN again: still gone
    back.set_cookie("companion", cookie)
    assert back.get("/api/host/state").status_code == 401


# ---------------------------------------------------------------------------
# 4. strict events


def _nested(depth):
    return "[" * depth + "]" * depth


def _host_login(port, pin="246810"):
    """(cookie, csrf) of a host logged in from the Pi over real HTTP."""
    return http_host_login(port, pin)


def _post_raw(port, path, body, login):
    cookie, csrf = login
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("POST", path, body=body, headers={
            "Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def test_an_event_nested_976_deep_is_a_400_and_nothing_is_logged(table):
    """On the real server (a worker thread's stack is shallow, so the parser
    takes 976 levels; the store's encoder then failed: a 500)."""
    t = table()
    login = _host_login(t.port)
    version = t.session.version
    for depth in (974, 976):
        body = '{"event": {"type": "flip", "card": %s}}' % _nested(depth)
        status, data = _post_raw(t.port, "/api/host/event", body, login)
        assert status == 400 and b"nested" in data, (depth, status, data[:200])
    assert t.session.version == version


def test_a_new_game_nested_976_deep_is_a_400(table):
    """(A guard: the game's own option check already refused this one.)"""
    t = table()
    login = _host_login(t.port)
    game_id = t.session.game_id
    body = ('{"game": "chope", "players": ["ana", "bo"], "options": {"x": %s}}'
            % _nested(976))
    status, data = _post_raw(t.port, "/api/host/new-game", body, login)
    assert status == 400, data[:200]
    assert t.session.game_id == game_id


@pytest.mark.parametrize("extra", [{"x": 1}, {"blob": "x" * 800_000}])
def test_unknown_keys_on_a_legal_event_are_refused(host, session, extra):
    chope(session)
    host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"}})
    version = session.version
    r = host.post("/api/host/event", {"event": {"type": "stop", **extra}})
    assert r.status_code == 400 and r.json["rule"] == "format"
    assert session.version == version
    r = host.post("/api/host/event", {"event": {"type": "undo", **extra}})
    assert r.status_code == 400 and session.version == version
    assert host.post("/api/host/event", {"event": {"type": "stop"}}).status_code == 200


def test_a_huge_value_under_a_known_key_is_refused(host, session):
    chope(session)
    r = host.post("/api/host/event", {"event": {"type": "flip", "card": "x" * 5000}})
    assert r.status_code == 400 and "longer than" in r.json["error"]
    assert session.version == 0


def test_allowed_keys_come_from_the_game_itself():
    """No game needs code: a game declared in a test has its keys read from it."""
    from companion.games import Game, RaceReason, RaceRequest, RulesError, rank_by
    from companion.web.api import BadRequest
    from companion.web.schema import allowed_keys, check_event

    class Coin(Game):
        name, title = "coin_hardening", "Coin"
        race_reasons = (RaceReason("grab", "first-press", "Grab!"),)

        def _setup(self, players, options):
            return {"players": players, "coin": None, "scores": {p: 0 for p in players}}

        def _apply(self, s, event):
            if event["type"] == "flip" and s["coin"] is None:
                s["coin"] = event["side"]
            elif event["type"] == "race" and s["coin"] is not None:
                s["coin"] = None
            else:
                raise RulesError("no", "turn")
            return s

        def chance_outcomes(self, s):
            from fractions import Fraction
            return [] if s["coin"] else [({"type": "flip", "side": x}, Fraction(1, 2))
                                         for x in ("heads", "tails")]

        def race_request(self, s):
            return None if s["coin"] is None else RaceRequest(
                "first-press", tuple(s["players"]), "grab", players=tuple(s["players"]))

        def scores(self, s): return dict(s["scores"])
        def current_player(self, s): return None
        def finished(self, s): return False
        def ranking(self, s): return rank_by(s["players"], s["scores"].get)
        def public_view(self, s): return dict(s)

    g = Coin()
    names = ["Ana", "Bo"]
    state = g.setup(names)
    keys = allowed_keys(g, state, names)
    assert keys["flip"] == {"type", "side"} and keys["undo"] == {"type"}
    check_event(g, state, {"type": "flip", "side": "heads"}, names)
    with pytest.raises(BadRequest, match="'colour'"):
        check_event(g, state, {"type": "flip", "side": "heads", "colour": 1}, names)
    state = g.apply(state, {"type": "flip", "side": "heads"})
    keys = allowed_keys(g, state, names)
    assert {"winner", "tied", "false_starts", "reason"} <= keys["race"]
    with pytest.raises(BadRequest, match="'edges'"):
        check_event(g, state, {"type": "race", "winner": "Ana", "edges": []}, names)


# ---------------------------------------------------------------------------
# 5. store failures


def test_a_full_disk_tells_the_host_why_and_every_page_that_the_table_is_not_saving(
        host, session, app):
    chope(session)
    broker = app.extensions["companion"].broker
    client = broker.connect("10.0.0.5")
    store = session.store
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")      # SQLite's own "disk full"
    r = None
    for _ in range(300):                     # until the last page of the log is full
        r = host.post("/api/host/event", {"event": session.legal_events()[-1]})
        if r.status_code != 200:
            break
    assert r.status_code == 503, r.json
    assert r.json["error"].startswith("the disk is full: the last event was not saved")
    assert broker.saving is False and "disk is full" in broker.saving_error
    frames = []
    while not client.queue.empty():
        item = client.queue.get_nowait()
        frames.append(getattr(item, "frame", b""))
    assert any(b"event: saving" in f and b'"saving":false' in f for f in frames)
    # a page connecting now learns it at once
    gen = broker.stream(broker.connect("10.0.0.6"))
    assert b"event: saving" in next(gen)
    gen.close()
    # space again: the next logged event says the table saves again
    store.conn.execute("PRAGMA max_page_count = 1073741823")
    version = session.version
    r = host.post("/api/host/event", {"event": session.legal_events()[-1]})
    assert r.status_code == 200
    assert session.version > version and broker.saving is True


def test_a_read_only_database_is_named(host, session):
    chope(session)
    session.store.conn.execute("PRAGMA query_only = 1")
    r = host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"}})
    assert r.status_code == 503 and r.json["error"].startswith("the database is read-only")
    session.store.conn.execute("PRAGMA query_only = 0")


def test_start_up_refuses_a_disk_without_room(tmp_path):
    from companion.record.storefiles import check_writable
    from companion.record.store import Store, StoreError

    store = Store(tmp_path / "t.db")
    try:
        with pytest.raises(StoreError, match="the disk is full"):
            check_writable(store, free_bytes=lambda p: 4096)
        check_writable(store)                       # room and writable: fine
    finally:
        store.close()


def _nobody():
    import pwd

    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return None


def _skip_unless_nobody_can_run_the_project(drop) -> None:
    """Skip when 'nobody' cannot run this interpreter and import the project:
    a clone (and its .venv) under a private folder (``mktemp -d`` makes it
    0700) is out of that user's reach, which says nothing about the store."""
    try:
        probe = subprocess.run([sys.executable, "-c", "import companion.app"],
                               capture_output=True, text=True, timeout=60, cwd=ROOT,
                               preexec_fn=drop)
    except PermissionError as exc:
        pytest.skip(f"the user 'nobody' cannot run {sys.executable} ({exc.strerror}): "
                    f"the clone lives in a folder private to its owner")
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the user 'nobody' cannot run the project from {ROOT} with "
                    f"{sys.executable} ({last}): the clone lives in a folder private to its owner")


def test_start_up_refuses_a_store_it_cannot_write(tmp_path):
    """A database file the server's user may read but not write (before,
    the table served it without a word and answered every write with 500)."""
    import shutil
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(dir="/tmp"))    # reachable for the user 'nobody'
    try:
        _refused_read_only(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _refused_read_only(tmp_path):
    db = tmp_path / "ro.db"
    from companion.record.store import Store

    s = Store(db)
    s.create_game("chope", [{"name": "ana"}, {"name": "bo"}], {})
    s.close()
    for p in tmp_path.iterdir():
        os.chmod(p, 0o444)
    os.chmod(tmp_path, 0o777)
    code = ("import sys; from companion.app import serve; "
            f"sys.exit(serve(host='127.0.0.1', port=0, db_path={str(db)!r}, pin='246810', "
            "source='none', demo=False))")
    kw = {}
    if os.geteuid() == 0:
        uid = _nobody()
        if uid is None:
            pytest.skip("running as root with no 'nobody' user to drop to")
        kw["preexec_fn"] = lambda: (os.setgid(uid), os.setuid(uid))
        _skip_unless_nobody_can_run_the_project(kw["preexec_fn"])
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=30, cwd=ROOT, env=dict(os.environ, HOME=str(tmp_path)), **kw)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "the database is read-only" in p.stdout and "ro.db" in p.stdout, p.stdout


# ---------------------------------------------------------------------------
# 6. one server per store


def test_a_second_server_on_the_same_store_is_refused_naming_the_first(tmp_path):
    from companion.app import TableServer
    from companion.record.storefiles import StoreInUse

    db = str(tmp_path / "one.db")
    first = TableServer(host="127.0.0.1", port=0, db_path=db, pin="246810", source="none",
                  demo=False).open()
    try:
        second = TableServer(host="127.0.0.1", port=0, db_path=db, pin="246810", source="none",
                       demo=False)
        with pytest.raises(StoreInUse, match=f"pid {os.getpid()}"):
            second.open()
        second.close()
        code = ("import sys; from companion.app import serve; "
                f"sys.exit(serve(host='127.0.0.1', port=0, db_path={db!r}, pin='246810', "
                "source='none'))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        assert p.returncode == 2
        assert f"already served by another companion (pid {os.getpid()})" in p.stdout
    finally:
        first.close()
    again = TableServer(host="127.0.0.1", port=0, db_path=db, pin="246810", source="none",
                  demo=False).open()                 # free once the first has closed
    again.close()


def test_issue20_one_store_through_a_symlink_is_refused_at_start_up(tmp_path):
    """Issue 20, 5: a second server on the same store through a symlink (or
    a hard link) started on a stale table; the lock is the file's own now."""
    from companion.app import TableServer
    from companion.record.storefiles import StoreInUse

    db = tmp_path / "one.db"
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "via-link.db"
    hard = tmp_path / "elsewhere" / "hard.db"
    first = TableServer(host="127.0.0.1", port=0, db_path=str(db), pin="246810", source="none",
                  demo=False).open()
    try:
        link.symlink_to(db)
        os.link(db, hard)
        for other in (link, hard):
            second = TableServer(host="127.0.0.1", port=0, db_path=str(other), pin="246810",
                           source="none", demo=False)
            with pytest.raises(StoreInUse, match="same file as a store another companion") as e:
                second.open()
            second.close()
            if other == link:      # a hard link has no way back to the other's name
                assert f"pid {os.getpid()}" in str(e.value) and str(db) in str(e.value)
        code = ("import sys; from companion.app import serve; "
                f"sys.exit(serve(host='127.0.0.1', port=0, db_path={str(link)!r}, "
                "pin='246810', source='none'))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        assert p.returncode == 2 and "same file as a store" in p.stdout, p.stdout + p.stderr
    finally:
        first.close()
    again = TableServer(host="127.0.0.1", port=0, db_path=str(link), pin="246810", source="none",
                  demo=False).open()                 # free once the first has closed
    again.close()


# ---------------------------------------------------------------------------
# 7. a damaged event at start-up


def _store_with_damaged_event(path, body):
    from companion.record.store import Store

    s = Store(path)
    gid = s.create_game("chope", [{"name": "Ana", "colour": None, "buzzer": None},
                                  {"name": "Bo", "colour": None, "buzzer": None}], {})
    s.append(gid, {"type": "flip", "card": "food:laksa"})
    s.conn.execute("INSERT INTO events (game_id, kind, body, created) VALUES (?, ?, ?, 0)",
                   (gid, "flip", body))
    s.close()
    return gid


@pytest.mark.parametrize("body, words", [
    ('{"type": "flip" "card": 1}', "not JSON"),
    ('{"type": "teleport"}', "refused"),
])
def test_a_damaged_event_is_named_and_the_store_kept_as_it_is(tmp_path, body, words):
    from companion.app import TableServer

    db = tmp_path / "d.db"
    gid = _store_with_damaged_event(db, body)
    before = sqlite3.connect(db).execute("SELECT COUNT(*) FROM games").fetchone()[0]
    t = TableServer(host="127.0.0.1", port=0, db_path=str(db), pin="246810", source="mock",
              demo=True).open()
    try:
        assert t.session.game is None                # no demo game made over it
        why = t.resume_error
        assert f"game {gid}" in why and "event 2" in why and words in why, why
        banner = t.banner()
        assert "store was left as it is" in banner and "To carry on" in banner
        assert t.store.current_game() == gid
    finally:
        t.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == before
    assert conn.execute("SELECT body FROM events WHERE id = 2").fetchone()[0] == body


# ---------------------------------------------------------------------------
# 8. every route declares its policy


def test_every_route_declares_who_may_call_it(app):
    """Who a route serves is read from the route itself (``@allow``): the
    host's JSON is the host's, a player link's routes are the player's."""
    from companion.web.policy import HOST, PLAYER, PUBLIC, policy_of

    seen = set()
    for rule in app.url_map.iter_rules():
        policy = policy_of(app, rule.endpoint)
        assert policy is not None, rule
        seen.add(policy.who)
        if rule.rule.startswith(("/api/p/", "/p/")):
            assert policy.who == PLAYER, rule
        elif rule.rule.startswith("/api/host/") and not rule.rule.startswith(
                ("/api/host/login", "/api/host/logout")):
            assert policy.who == HOST, rule
    assert seen == {PUBLIC, HOST, PLAYER}


def test_an_app_with_a_route_that_declares_no_policy_does_not_start():
    from flask import Blueprint, Flask

    from companion.web.policy import PUBLIC, UndeclaredRoute, allow, install

    bp = Blueprint("new", __name__)

    @bp.get("/declared")
    @allow(PUBLIC)
    def declared():
        return "ok"

    @bp.post("/api/forgot")
    def forgot():
        return "oops"

    app = Flask(__name__)
    app.register_blueprint(bp)
    with pytest.raises(UndeclaredRoute, match="new.forgot"):
        install(app)


def test_a_route_added_later_without_a_policy_is_refused(session):
    app = make_app(session, DEMO=True)
    calls = []
    app.add_url_rule("/api/sneaky", "sneaky", lambda: calls.append(1) or "ran")
    try:
        r = app.test_client().get("/api/sneaky")
        assert r.status_code == 500 and r.json["rule"] == "policy" and not calls
    finally:
        app.extensions["companion"].close()


def test_a_host_route_refuses_a_stranger_before_reading_the_body(client):
    token = client.get("/api/csrf").json["csrf"]
    r = client.post("/api/host/event", data="[" * 100_000 + "]" * 100_000,
                    headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
    assert r.status_code == 401 and r.json["rule"] == "login"


def test_a_press_body_past_its_declared_size_is_a_413(app, client, session):
    from companion.web.policy import PRESS_MAX_BYTES

    chope(session)
    token = client.get("/api/csrf").json["csrf"]
    r = client.post("/api/press", json={"player": "bo", "pad": "x" * PRESS_MAX_BYTES},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 413 and r.json["rule"] == "format"
    r = client.post("/api/press", json={"player": "bo", "pressed": True},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 200


# ---------------------------------------------------------------------------
# 9. private files


def test_the_files_the_companion_creates_are_private(tmp_path):
    from companion.app import TableServer

    old = os.umask(0o022)
    try:
        t = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.db"), pin="246810",
                  source="mock", demo=True).open()
        try:
            c = t.app.test_client()                  # a login makes the logins file
            csrf = c.get("/api/csrf").json["csrf"]
            assert c.post("/api/host/login", json={"pin": "246810"},
                          headers={"X-CSRF-Token": csrf}).status_code == 200
            t.session.log({"type": "flip", "card": "food:laksa"})
            names = ["p.db", "p.db-wal", "p.db-shm", "p.db-secret", "p.db-logins", "p.db.lock"]
            for name in names:
                mode = stat.S_IMODE((tmp_path / name).stat().st_mode)
                assert mode == 0o600, (name, oct(mode))
        finally:
            t.close()
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------
# issue 14: the banner and `replay | head`


def test_the_banner_names_the_resumed_games_players(tmp_path):
    from companion.app import TableServer

    db = str(tmp_path / "b.db")
    t = TableServer(host="127.0.0.1", port=0, db_path=db, pin="246810", source="none",
              demo=False).open()
    t.session.new_game("chope", [{"name": "Mei"}, {"name": "Raj"}, {"name": "Siti"}])
    t.close()
    t = TableServer(host="127.0.0.1", port=0, db_path=db, pin="246810", source="none", demo=False,
              players=["Ana", "Bo"]).open()
    try:
        line = next(x for x in t.banner().splitlines() if x.startswith("Buzzers:"))
        assert line.endswith("players Mei, Raj, Siti"), line
    finally:
        t.close()


def test_replay_into_a_closed_pipe_ends_quietly(tmp_path, session):
    chope(session).log({"type": "flip", "card": "food:laksa"})
    game = tmp_path / "g.jsonl"
    game.write_text(session.export_game())
    r, w = os.pipe()
    os.close(r)                                      # `| head` that has already gone
    p = subprocess.run([sys.executable, "-m", "companion", "replay", str(game)], stdout=w,
                       stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT)
    os.close(w)
    assert p.returncode == 0 and "Traceback" not in p.stderr and p.stderr == "", p.stderr
