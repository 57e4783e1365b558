"""The host's own phone is never locked out by someone else's guessing
(issue 31, item 8). During a guessing attack the table's back-off held
every PIN from the network, the host's own included: a host who logged out,
or lost the session cookie, waited out up to 15 minutes per try, competing
with the guesser for each slot. Now every good login leaves a device cookie
(OWASP's "device cookies"), kept apart from the session: a login presenting
it is compared at once, and its wrong PINs count against that device alone,
a few, after which the device is revoked.

Addresses are simulated per request (``REMOTE_ADDR``); the table's limits
run on a clock the test moves."""

from __future__ import annotations

import secrets

import pytest

from tests.kit.web import PIN, make_app

HOST_PHONE = "10.0.5.1"
GUESSERS = [f"10.0.6.{i}" for i in range(1, 9)]


class _Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _clocked(app) -> _Clock:
    clock = _Clock()
    app.extensions["companion_auth"].guard.clock = clock
    app.extensions["companion"].login_limiter.clock = clock
    return clock


def _login(client, addr, pin):
    csrf = client.get("/api/csrf", environ_base={"REMOTE_ADDR": addr}).json["csrf"]
    return client.post("/api/host/login", json={"pin": pin}, headers={"X-CSRF-Token": csrf},
                       environ_base={"REMOTE_ADDR": addr})


def _device(client) -> str | None:
    cookie = client.get_cookie("companion_device")
    return None if cookie is None else cookie.value


def _siege(app, clock) -> object:
    """Wrong PINs from the guessers and from the host phone's own address
    (a shared or spoofed one) until the table's back-off is at its maximum
    and the table waits, every address's fresh-PIN exemption spent and the
    host's address over its own limit. The guesser's cookie jar."""
    guard = app.extensions["companion_auth"].guard
    guesser = app.test_client()
    for _ in range(100):
        for addr in [*GUESSERS, HOST_PHONE]:
            assert _login(guesser, addr, "000000").status_code in (401, 429)
        if guard.delay(guard.failures) >= guard.max_delay and guard.next_at > clock.t:
            break
        clock.t = max(clock.t + 61.0, guard.next_at)   # the addresses' windows pass too
    assert guard.delay(guard.failures) >= guard.max_delay and guard.next_at > clock.t
    for addr in [*GUESSERS, HOST_PHONE]:                # the exemptions left are spent
        _login(guesser, addr, "000000")
    for addr in [*GUESSERS, HOST_PHONE]:
        assert _login(guesser, addr, "000000").status_code == 429
    for _ in range(5):                                  # the address's own limit
        _login(guesser, HOST_PHONE, "000000")
    assert app.extensions["companion"].pin == PIN       # not yet replaced
    return guesser


@pytest.fixture
def attacked(session):
    """(app, clock, the host's phone): the phone logged in before the attack."""
    app = make_app(session, LOGIN_LIMIT=5)
    clock = _clocked(app)
    phone = app.test_client()
    assert _login(phone, HOST_PHONE, PIN).status_code == 200
    assert _device(phone)
    yield app, clock, phone
    app.extensions["companion"].close()


@pytest.mark.parametrize("how", ["logged out", "lost the session cookie"])
def test_the_hosts_phone_gets_in_at_once_during_a_sustained_attack(attacked, how):
    app, clock, phone = attacked
    if how == "logged out":
        csrf = phone.get("/api/csrf", environ_base={"REMOTE_ADDR": HOST_PHONE}).json["csrf"]
        assert phone.post("/api/host/logout", headers={"X-CSRF-Token": csrf},
                          environ_base={"REMOTE_ADDR": HOST_PHONE}).status_code == 200
    else:
        phone.delete_cookie("companion")
    assert phone.get("/api/host/state").status_code == 401
    guesser = _siege(app, clock)
    guard = app.extensions["companion_auth"].guard
    failures, next_at = guard.failures, guard.next_at
    # a phone without the device cookie on the host's address: held back
    assert _login(app.test_client(), HOST_PHONE, PIN).status_code == 429
    # the host's phone: at once, from its usual address or from another
    r = _login(phone, HOST_PHONE if how == "logged out" else "10.0.5.77", PIN)
    assert r.status_code == 200, r.json
    assert phone.get("/api/host/state").status_code == 200
    # ... and the guesser gained nothing: the table still waits, as long
    assert (guard.failures, guard.next_at) == (failures, next_at)
    assert _login(guesser, GUESSERS[0], "000000").status_code == 429
    # the Pi's own screen is never held back either (a host with a new phone)
    assert _login(app.test_client(), "127.0.0.1", PIN).status_code == 200


def test_a_forged_or_replaced_device_cookie_gets_no_exemption(attacked):
    app, clock, phone = attacked
    old = _device(phone)
    assert _login(phone, HOST_PHONE, PIN).status_code == 200     # a new device cookie
    assert _device(phone) != old
    guesser = _siege(app, clock)
    for value in (old,                                 # the one its good login replaced
                  secrets.token_urlsafe(32),           # made up
                  _device(phone) + "x"):               # tampered
        guesser.set_cookie("companion_device", value)
        assert _login(guesser, GUESSERS[1], PIN).status_code == 429
    assert _login(phone, HOST_PHONE, PIN).status_code == 200     # the real one


def test_a_device_has_few_wrong_pins_then_takes_the_common_path(attacked):
    app, clock, phone = attacked
    budget = app.extensions["companion_auth"].devices.budget
    _siege(app, clock)
    guard = app.extensions["companion_auth"].guard
    failures = guard.failures
    stolen = _device(phone)
    for _ in range(budget):                            # compared at once, each counted
        assert _login(phone, HOST_PHONE, "111111").status_code == 401
    assert guard.failures == failures                  # against that device alone
    assert _device(phone) is None                      # revoked: the cookie is cleared
    assert _login(phone, HOST_PHONE, PIN).status_code == 429      # held back like anyone
    phone.set_cookie("companion_device", stolen)       # a copy is revoked too
    assert _login(phone, GUESSERS[2], "222222").status_code == 429
    assert guard.failures == failures


def test_simultaneous_tries_of_one_device_stay_in_its_budget():
    """Each comparison is booked before the PIN is compared: tries still in
    flight use the budget up as wrong ones do."""
    from companion.web.auth import HostDevices, LoginFile

    devices = HostDevices(LoginFile(), budget=3)
    token = devices.issue()
    assert [devices.admit(token) for _ in range(5)] == [True, True, True, False, False]
    devices.give_back(token)                           # one was the old, replaced PIN
    assert devices.admit(token) and not devices.admit(token)


def test_the_old_pin_replaced_by_the_guard_does_not_use_the_devices_budget(session):
    shown = []
    app = make_app(session, GLOBAL_LOGIN_LIMIT=3, GLOBAL_LOGIN_FREE=2, LOGIN_LIMIT=100,
                   ANNOUNCE=shown.append)
    clock = _clocked(app)
    phone = app.test_client()
    assert _login(phone, HOST_PHONE, PIN).status_code == 200
    phone.delete_cookie("companion")
    guesser = app.test_client()
    while not shown:                                   # the PIN is replaced
        for addr in GUESSERS:
            _login(guesser, addr, "000000")
        clock.t += 3600.0
        assert clock.t < 1000.0 + 100 * 3600
    for _ in range(20):          # the host, not yet knowing: never revoked for it
        assert _login(phone, HOST_PHONE, PIN).status_code == 401
    assert _login(phone, HOST_PHONE, app.extensions["companion"].pin).status_code == 200


def test_the_device_cookie_outlives_the_login_and_is_strict(app):
    phone = app.test_client()
    r = _login(phone, HOST_PHONE, PIN)
    cookies = r.headers.getlist("Set-Cookie")
    assert cookies[0].startswith("companion=")         # the session's first, as before
    device = next(c for c in cookies if c.startswith("companion_device="))
    assert "HttpOnly" in device and "SameSite=Strict" in device and "Max-Age=" in device
    token = _device(phone)
    csrf = phone.get("/api/csrf").json["csrf"]
    r = phone.post("/api/host/logout", headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200 and _device(phone) == token
    assert app.extensions["companion_auth"].devices.valid(token)


def test_a_device_survives_a_restart_but_not_a_start_with_another_pin(session):
    app = make_app(session)
    phone = app.test_client()
    assert _login(phone, HOST_PHONE, PIN).status_code == 200
    token, key = _device(phone), app.config["SECRET_KEY"]
    app.extensions["companion"].close()

    def devices(**config):
        again = make_app(session, SECRET_KEY=key, **config)
        again.extensions["companion"].close()
        return again.extensions["companion_auth"].devices

    assert devices().valid(token)
    assert not devices(PIN="86420975").valid(token)
    assert not devices().valid(token)                  # the old PIN again: still gone
