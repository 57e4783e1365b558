"""Host authentication: the PIN, the session cookie, CSRF tokens and rate limits.

* The PIN comes from the configuration (``PIN``) or is made up at start-up
  and printed; it is compared in constant time (:func:`hmac.compare_digest`).
* Failed logins are rate-limited per client IP (:class:`RateLimiter`) and
  for the whole table (:class:`PinGuard`): a budget of wrong PINs with an
  exponential back-off for every address together, which replacing the PIN
  does not reset; every so many wrong PINs the PIN is replaced by a fresh
  one shown only on the Pi's own terminal and log, and the host's first
  login with it is let through even while the table waits. Logins from
  the Pi itself (127.0.0.1) never count towards it.
* A logged-in host's cookie (Flask's signed session, HttpOnly,
  SameSite=Strict) holds the id of a server-side login
  (:class:`HostSessions`): logging out revokes it, and a start with another
  PIN revokes them all (and every device cookie), so a copied cookie stops
  working.
* Every request that changes state (any method but GET/HEAD/OPTIONS) must
  carry the CSRF token of its session: the ``X-CSRF-Token`` header for JSON,
  the ``csrf_token`` form field for forms. The scoreboard gets a token too,
  so the demo's virtual buzzers are protected the same way.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
import threading
import time
from collections import deque
from datetime import timedelta
from pathlib import Path
from typing import Callable

from flask import current_app, g, jsonify, request, session
from flask.sessions import SecureCookieSessionInterface

from .limits import trusted

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"

log = logging.getLogger(__name__)

#: A PIN shorter than this is refused at start-up unless the host asks for
#: a short one (``companion serve --short-pin``).
MIN_PIN_LENGTH = 6
#: The whole table's budget of wrong PINs (from every address but the Pi's
#: own together; docs/web.md, "Limits", has the bound it gives):
#: GLOBAL_LOGIN_FREE are compared at once; after that the whole table waits
#: GLOBAL_LOGIN_BASE_S * 2**(n - GLOBAL_LOGIN_FREE) seconds before it
#: compares the next one (n: wrong PINs so far, up to GLOBAL_LOGIN_MAX_DELAY_S),
#: and every GLOBAL_LOGIN_LIMIT paced wrong PINs the PIN is replaced. Neither
#: count starts over when the PIN is replaced; only a good login ends them.
GLOBAL_LOGIN_LIMIT = 30
GLOBAL_LOGIN_FREE = 10
GLOBAL_LOGIN_BASE_S = 1.0
GLOBAL_LOGIN_MAX_DELAY_S = 900.0
#: How long a host login lasts (the cookie and the server-side record).
LOGIN_LIFETIME_S = 12 * 3600
#: Most host logins kept at once (the oldest is forgotten first).
MAX_LOGINS = 64
#: The device cookie a good login leaves in the host's browser (separate from
#: the session cookie: logging out keeps it), how long it lasts (each good
#: login gives a new one), how many wrong PINs one device may have compared
#: before it is revoked (a good login starts its count over) and how many
#: devices are kept at once (the oldest is forgotten first).
DEVICE_COOKIE = "companion_device"
DEVICE_LIFETIME_S = 30 * 24 * 3600
DEVICE_WRONG_LIMIT = 5
MAX_DEVICES = 32


def new_pin(digits: int = 6) -> str:
    """A random numeric PIN (printed at start-up when none is configured)."""
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def check_pin_policy(pin: str, allow_short: bool = False) -> str:
    """``pin`` as the host PIN, or ValueError saying why not: at least
    :data:`MIN_PIN_LENGTH` characters (digits are easiest on a phone)
    unless ``allow_short``, no spaces at either end, not empty."""
    if not isinstance(pin, str) or not pin.strip():
        raise ValueError("the host PIN is empty")
    if pin != pin.strip():
        raise ValueError("the host PIN starts or ends with a space")
    if len(pin) > 64:
        raise ValueError("the host PIN is longer than 64 characters")
    if len(pin) < MIN_PIN_LENGTH and not allow_short:
        raise ValueError(f"the host PIN has {len(pin)} characters; use at least "
                         f"{MIN_PIN_LENGTH} (a guest on the Wi-Fi can try a short one in hours), "
                         f"or pass --short-pin to accept it")
    return pin


def pin_matches(given: str | None, pin: str) -> bool:
    """Constant-time comparison of a typed PIN with the real one."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(given.strip().encode(), pin.encode())


class RateLimiter:
    """At most ``limit`` hits per ``window_s`` seconds per key (a sliding window).

    >>> rl = RateLimiter(2, 60, clock=lambda: 0.0)
    >>> [rl.hit("10.0.0.5") for _ in range(3)]
    [True, True, False]
    """

    def __init__(self, limit: int, window_s: float, clock=time.monotonic, max_keys: int = 4096):
        self.limit = limit
        self.window = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._hits: dict[str, deque] = {}
        self._lock = threading.Lock()

    def _prune(self, key: str, now: float) -> deque:
        q = self._hits.get(key)
        if q is None:
            if len(self._hits) >= self.max_keys:   # bound memory: forget idle keys
                for k in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.window]:
                    del self._hits[k]
            q = self._hits[key] = deque()
        while q and q[0] <= now - self.window:
            q.popleft()
        return q

    def blocked(self, key: str) -> float:
        """Seconds until ``key`` may try again (0 if it may now)."""
        with self._lock:
            now = self.clock()
            q = self._prune(key, now)
            if len(q) < self.limit:
                return 0.0
            return max(0.0, q[0] + self.window - now)

    def hit(self, key: str) -> bool:
        """Count one hit; False if ``key`` is over its limit (the hit is not counted)."""
        with self._lock:
            now = self.clock()
            q = self._prune(key, now)
            if len(q) >= self.limit:
                return False
            q.append(now)
            return True

    def reset(self, key: str) -> None:
        with self._lock:
            self._hits.pop(key, None)


def _net(addr: str) -> str:
    """The key of one device for the fresh-PIN exemption: an IPv4 address,
    or an IPv6 address's /64 (a phone may make up any number inside it)."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return addr
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{addr}/64", strict=False))


class PinGuard:
    """The table-wide budget of wrong PINs, from every guest address
    together (the Pi's own logins are never counted nor held back).

    * The first ``free`` wrong PINs are compared at once; past them the
      whole table waits ``base_s * 2**(n - free)`` seconds (at most
      ``max_delay_s``) before it compares the next PIN from anyone.
    * Every ``limit`` paced wrong PINs the PIN is replaced by a fresh random
      one, shown by ``announce`` on the Pi's own terminal and log. The count
      and the back-off survive the replacement: only a good login ends them.
    * While the table waits, each address (an IPv6 /64) may still have one
      PIN compared per PIN printed: the host's first login with a newly
      printed PIN is always let through. Such a wrong PIN raises the
      back-off but never replaces the PIN (which would give every address
      another one)."""

    def __init__(self, limit: int = GLOBAL_LOGIN_LIMIT, free: int = GLOBAL_LOGIN_FREE,
                 base_s: float = GLOBAL_LOGIN_BASE_S, max_delay_s: float = GLOBAL_LOGIN_MAX_DELAY_S,
                 announce: Callable[[str], None] | None = None, clock=time.monotonic,
                 max_keys: int = 4096):
        self.limit, self.free, self.base, self.max_delay = limit, free, base_s, max_delay_s
        self.announce, self.clock, self.max_keys = announce, clock, max_keys
        self._lock = threading.Lock()
        self.failures = 0          # wrong PINs since the last good login
        self.paced = 0             # paced wrong PINs under the current PIN
        self.next_at = 0.0         # the table compares no paced PIN before this
        self._fresh: set[str] = set()   # addresses that used this PIN's exemption
        self._replaced: str | None = None   # the PIN last replaced (the host's old one)
        self.rotations = 0

    def delay(self, failures: int) -> float:
        """The table's wait after ``failures`` wrong PINs."""
        if failures < self.free:
            return 0.0
        return min(self.max_delay, self.base * 2.0 ** min(failures - self.free, 64))

    def admit(self, addr: str) -> tuple[float, bool]:
        """Before comparing a PIN from ``addr``: (seconds to wait, 0 if it is
        compared now; whether it is this address's fresh-PIN exemption). A
        paced comparison books the table's next slot at once, as if wrong,
        so simultaneous guesses cannot all slip in."""
        with self._lock:
            now = self.clock()
            wait = self.next_at - now
            if wait <= 0:
                self.next_at = now + self.delay(self.failures + 1)
                return 0.0, False
            net = _net(addr)
            if net not in self._fresh and len(self._fresh) < self.max_keys:
                self._fresh.add(net)
                return 0.0, True
            return wait, False

    def right(self) -> None:
        """A good login: the back-off ends."""
        with self._lock:
            self.failures = self.paced = 0
            self.next_at = 0.0

    def wrong(self, svc, exempt: bool = False, addr: str | None = None,
              given: str | None = None) -> bool:
        """Count one wrong PIN from ``addr`` (``exempt``: compared by the
        fresh-PIN exemption); True if it replaced the PIN. The PIN this
        guard last replaced is not counted and gives the exemption back:
        it is the host who has not yet seen the new one (a dead PIN tells a
        guesser nothing)."""
        with self._lock:
            if self._is_replaced(given):
                if exempt and addr is not None:
                    self._fresh.discard(_net(addr))
                return False
            self.failures += 1
            self.next_at = max(self.next_at, self.clock() + self.delay(self.failures))
            if exempt:
                return False
            self.paced += 1
            if self.paced < self.limit:
                return False
            self.paced = 0
            self._fresh.clear()
            self._replaced = svc.pin
            svc.pin = new_pin(max(MIN_PIN_LENGTH, len(svc.pin)))
            self.rotations += 1
        self._announce(svc.pin)
        return True

    def _is_replaced(self, given: str | None) -> bool:
        return self._replaced is not None and pin_matches(given, self._replaced)

    def replaced(self, given: str | None) -> bool:
        """Whether ``given`` is the PIN this guard last replaced (the host's
        old one: a dead PIN, never counted as a guess)."""
        with self._lock:
            return self._is_replaced(given)

    def _announce(self, pin: str) -> None:
        message = (f"Too many wrong host PINs from the network: the host PIN is now "
                   f"{pin} (the old one no longer works; logged-in hosts stay in).")
        log.warning("too many wrong host PINs from the network: the PIN was replaced "
                    "(the new one is shown on the companion's terminal)")
        if self.announce is not None:
            try:
                self.announce(message)
            except Exception:  # noqa: BLE001 - the terminal may be gone
                log.exception("could not show the new PIN")
        else:
            log.warning("%s", message)


class LoginFile:
    """What the server keeps of the host's logins and devices, one section
    each, in ``path`` (mode 0600, written whole and renamed) so they survive
    a restart; a start with another PIN (another ``epoch``) forgets them
    all. :class:`HostSessions` and :class:`HostDevices` share one, and its
    lock."""

    def __init__(self, path=None, epoch: str = ""):
        self.path = None if path is None else Path(path)
        self.epoch = epoch
        self.lock = threading.RLock()
        self.sections: dict[str, dict] = {}
        self._load()

    def _load(self) -> None:
        if self.path is None:
            return
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("epoch") != self.epoch:
            self.save()             # another PIN: every old login and device is revoked
            return
        self.sections = {k: v for k, v in data.items() if k != "epoch" and isinstance(v, dict)}

    def section(self, name: str, keep: Callable[[object], bool]) -> dict:
        """The section ``name`` (made empty if missing), with only the
        entries whose value ``keep`` accepts (a digest's record)."""
        with self.lock:
            raw = self.sections.get(name)
            kept = {k: v for k, v in (raw if isinstance(raw, dict) else {}).items()
                    if isinstance(k, str) and keep(v)}
            self.sections[name] = kept
            return kept

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        with self.lock:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as fh:
                    json.dump({"epoch": self.epoch, **self.sections}, fh)
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.path)
            except OSError as exc:   # a read-only directory: kept until a restart
                log.warning("could not keep the host logins in %s: %s", self.path, exc)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class HostSessions:
    """Host logins kept by the server: the cookie holds a random id, the
    server only its SHA-256 digest and its expiry (the ``logins`` section
    of a :class:`LoginFile`, made from ``path`` and ``epoch`` unless
    ``kept`` is given)."""

    def __init__(self, path=None, epoch: str = "", lifetime_s: float = LOGIN_LIFETIME_S,
                 wall_clock=time.time, max_logins: int = MAX_LOGINS,
                 kept: LoginFile | None = None):
        self.kept = kept if kept is not None else LoginFile(path, epoch)
        self.lifetime = lifetime_s
        self.clock = wall_clock
        self.max_logins = max_logins
        self._lock = self.kept.lock
        now = self.clock()
        self._logins: dict[str, float] = self.kept.section(
            "logins", lambda v: isinstance(v, (int, float)) and v > now)

    def issue(self) -> str:
        """A new login; its id goes in the cookie."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            for k in [k for k, v in self._logins.items() if v <= now]:
                del self._logins[k]
            while len(self._logins) >= self.max_logins:
                self._logins.pop(min(self._logins, key=self._logins.get))
            self._logins[_digest(sid)] = now + self.lifetime
            self.kept.save()
        return sid

    def valid(self, sid) -> bool:
        if not isinstance(sid, str) or not sid:
            return False
        with self._lock:
            expires = self._logins.get(_digest(sid))
            return expires is not None and expires > self.clock()

    def revoke(self, sid) -> bool:
        if not isinstance(sid, str) or not sid:
            return False
        with self._lock:
            gone = self._logins.pop(_digest(sid), None) is not None
            if gone:
                self.kept.save()
            return gone

    def revoke_all(self) -> None:
        with self._lock:
            self._logins.clear()
            self.kept.save()

    def __len__(self) -> int:
        with self._lock:
            now = self.clock()
            return sum(1 for v in self._logins.values() if v > now)


def _device_record(v) -> bool:
    return (isinstance(v, list) and len(v) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))


class HostDevices:
    """The host's own browsers (OWASP's "device cookies"): a good login
    leaves a random id in a long-lived cookie; the server keeps its SHA-256
    digest, its expiry and its count of wrong PINs (the ``devices`` section
    of the :class:`LoginFile`), so a made-up or copied-then-replaced id is
    worth nothing and a start with another PIN revokes every device.

    A login presenting a device :meth:`admit` accepts is compared at once:
    each comparison is booked against the device before the PIN is
    compared (simultaneous tries cannot slip past), a good one ends the
    device (the login gives a new one) and a wrong one stays counted; the
    ``budget``-th wrong PIN revokes the device. One device never has more
    than ``budget`` PINs compared, at any pace.

    >>> d = HostDevices(LoginFile(), budget=2)
    >>> tok = d.issue()
    >>> [d.admit(tok), d.wrong(tok), d.admit(tok), d.wrong(tok), d.admit(tok)]
    [True, False, True, True, False]
    """

    def __init__(self, kept: LoginFile, lifetime_s: float = DEVICE_LIFETIME_S,
                 budget: int = DEVICE_WRONG_LIMIT, wall_clock=time.time,
                 max_devices: int = MAX_DEVICES):
        self.kept, self.lifetime, self.budget = kept, lifetime_s, budget
        self.clock, self.max_devices = wall_clock, max_devices
        self._lock = kept.lock
        now = self.clock()
        # digest -> [expiry (wall clock), PINs compared and not yet found right]
        self._devices: dict[str, list] = self.kept.section(
            "devices", lambda v: _device_record(v) and v[0] > now)

    def issue(self) -> str:
        """A new device; its id goes in the device cookie."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            for k in [k for k, v in self._devices.items() if v[0] <= now]:
                del self._devices[k]
            while len(self._devices) >= self.max_devices:
                self._devices.pop(min(self._devices, key=lambda k: self._devices[k][0]))
            self._devices[_digest(token)] = [now + self.lifetime, 0]
            self.kept.save()
        return token

    def _record(self, token) -> list | None:
        if not isinstance(token, str) or not token:
            return None
        rec = self._devices.get(_digest(token))
        return rec if rec is not None and rec[0] > self.clock() else None

    def valid(self, token) -> bool:
        with self._lock:
            return self._record(token) is not None

    def admit(self, token) -> bool:
        """Whether a PIN from ``token``'s browser is compared as this
        device's: a known, unexpired device with budget left, which is then
        booked for one comparison."""
        with self._lock:
            rec = self._record(token)
            if rec is None or rec[1] >= self.budget:
                return False
            rec[1] += 1
            return True

    def give_back(self, token) -> None:
        """The comparison booked by :meth:`admit` does not count (the PIN
        typed was the host's old, replaced one)."""
        with self._lock:
            rec = self._record(token)
            if rec is not None and rec[1] > 0:
                rec[1] -= 1

    def wrong(self, token) -> bool:
        """The booked comparison was a wrong PIN: it stays counted; True if
        that used up the device's budget (the device is then revoked)."""
        with self._lock:
            rec = self._record(token)
            if rec is None:
                return False
            spent = rec[1] >= self.budget
            if spent:
                self._devices.pop(_digest(token), None)
            self.kept.save()
            return spent

    def revoke(self, token) -> bool:
        if not isinstance(token, str) or not token:
            return False
        with self._lock:
            gone = self._devices.pop(_digest(token), None) is not None
            if gone:
                self.kept.save()
            return gone

    def __len__(self) -> int:
        with self._lock:
            now = self.clock()
            return sum(1 for v in self._devices.values() if v[0] > now)


class AuthState:
    """What auth keeps per app (``app.extensions["companion_auth"]``)."""

    def __init__(self, sessions: HostSessions, guard: PinGuard, devices: HostDevices):
        self.sessions, self.guard, self.devices = sessions, guard, devices


def install(app, announce: Callable[[str], None] | None = None) -> AuthState:
    """Set up the server-side logins and devices and the table-wide PIN
    limit for ``app`` (after its ``Services``)."""
    svc = app.extensions["companion"]
    store = getattr(svc.session, "store", None)
    db_path = getattr(store, "path", None)
    path = None if db_path is None or str(db_path) == ":memory:" else f"{db_path}-logins"
    kept = LoginFile(path, epoch=svc.pin_epoch)
    cfg = app.config
    state = AuthState(
        HostSessions(kept=kept),
        PinGuard(cfg.get("GLOBAL_LOGIN_LIMIT", GLOBAL_LOGIN_LIMIT),
                 cfg.get("GLOBAL_LOGIN_FREE", GLOBAL_LOGIN_FREE),
                 cfg.get("GLOBAL_LOGIN_BASE_S", GLOBAL_LOGIN_BASE_S),
                 cfg.get("GLOBAL_LOGIN_MAX_DELAY_S", GLOBAL_LOGIN_MAX_DELAY_S),
                 announce=announce or cfg.get("ANNOUNCE")),
        HostDevices(kept, budget=cfg.get("DEVICE_WRONG_LIMIT", DEVICE_WRONG_LIMIT)))
    app.extensions["companion_auth"] = state
    app.session_interface = SessionThenDevice()
    return state


def _state() -> AuthState | None:
    return current_app.extensions.get("companion_auth")


def logout() -> None:
    """Revoke this browser's host login (the logout views call it; they
    clear the cookie)."""
    state = _state()
    if state is not None:
        state.sessions.revoke(session.get("sid"))
    session.pop("host", None)
    session.pop("sid", None)


#: The session cookie: HttpOnly, SameSite=Strict, not Secure (plain HTTP on
#: the table's Wi-Fi); a host login lasts a games night.
COOKIE_CONFIG = {
    "SESSION_COOKIE_NAME": "companion",
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
}


def client_key() -> str:
    """The key rate limits count by: the client's IP address."""
    return request.remote_addr or "?"


def csrf_token() -> str:
    """This session's CSRF token (made on first use)."""
    tok = session.get("csrf")
    if not tok:
        tok = session["csrf"] = secrets.token_urlsafe(24)
    return tok


def check_csrf() -> None:
    """``before_request`` hook: refuse a state-changing request without the
    session's token (403, JSON)."""
    if request.method in SAFE_METHODS:
        return None
    expected = session.get("csrf")
    given = request.headers.get(CSRF_HEADER)
    if given is None and request.mimetype in ("application/x-www-form-urlencoded",
                                              "multipart/form-data"):
        given = request.form.get(CSRF_FIELD)
    if not expected or not given or not hmac.compare_digest(given.encode(), expected.encode()):
        return jsonify(error="missing or wrong CSRF token: reload the page", rule="csrf"), 403
    return None


def is_host() -> bool:
    svc = current_app.extensions["companion"]
    if not session.get("host") or session.get("pin_epoch") != svc.pin_epoch:
        return False
    state = _state()
    return state is None or state.sessions.valid(session.get("sid"))


def login(pin_given: str | None) -> tuple[bool, float]:
    """Check a PIN for the current client: (ok, retry_after_seconds).

    A browser presenting a device cookie :class:`HostDevices` admits has
    its PIN compared at once, against that device's own budget (neither
    the address's limit nor the table's back-off holds it, and its wrong
    PINs count towards neither). Any other takes the common path: the
    address's limit, then the table's :class:`PinGuard`."""
    svc = current_app.extensions["companion"]
    state = _state()
    device = _admitted_device(state)
    guard, exempt = None, False
    if device is None:
        wait, guard, exempt = _admit_common(svc, state)
        if wait > 0:     # not compared
            return False, wait
    if pin_matches(pin_given, svc.pin):
        _log_in(svc, state, device)
        return True, 0.0
    if device is not None:
        _device_wrong(state, device, pin_given)
    elif guard is not None:
        guard.wrong(svc, exempt, client_key(), pin_given)
    return False, 0.0


def _admitted_device(state: AuthState | None) -> str | None:
    """The request's device cookie, if it is a host device with budget left
    (one comparison is then booked against it)."""
    token = request.cookies.get(DEVICE_COOKIE)
    if state is None or not token or not state.devices.admit(token):
        return None
    return token


def _admit_common(svc, state: AuthState | None) -> tuple[float, PinGuard | None, bool]:
    """The common path: (seconds to wait, 0 if the PIN is compared now; the
    table's guard, None for the Pi's own address; whether it is the
    address's fresh-PIN exemption)."""
    key = client_key()
    # count the attempt before comparing, in one step under the limiter's
    # lock: simultaneous guesses cannot all slip past a separate check
    if not svc.login_limiter.hit(key):
        return max(svc.login_limiter.blocked(key), 1.0), None, False
    guard = None if state is None or trusted(key) else state.guard
    if guard is None:
        return 0.0, None, False
    wait, exempt = guard.admit(key)
    if wait > 0:        # the whole table is waiting
        return max(wait, 1.0), guard, exempt
    return 0.0, guard, exempt


def _log_in(svc, state: AuthState | None, device: str | None) -> None:
    """The right PIN: a new host login in this browser's session and a new
    device cookie. Only a login without a device cookie ends the address's
    count and the table's back-off: the host's device logging in says
    nothing of the guesses from elsewhere, and ending the back-off then
    would give a guesser its free PINs again every time."""
    if device is None:
        svc.login_limiter.reset(client_key())
    old = session.get("sid")
    session.clear()
    session.permanent = True
    session["host"] = True
    session["pin_epoch"] = svc.pin_epoch
    if state is not None:
        if device is None:
            state.guard.right()
        else:
            state.devices.revoke(device)     # a copy of the old cookie is worth nothing
        state.sessions.revoke(old)
        session["sid"] = state.sessions.issue()
        _send_device(state.devices.issue())
    csrf_token()   # a fresh token after login (no fixation)


def _device_wrong(state: AuthState, device: str, given: str | None) -> None:
    """A wrong PIN from a host device: counted against that device alone
    (the host's old PIN, replaced by the table's guard, is not counted)."""
    if state.guard.replaced(given):
        state.devices.give_back(device)
    elif state.devices.wrong(device):
        log.warning("a host device had %d wrong PINs: its device cookie is revoked",
                    state.devices.budget)
        _send_device(None)


def _send_device(token: str | None) -> None:
    """Have this response set its device cookie to ``token`` (None: clear
    it); :class:`SessionThenDevice` writes it."""
    g.companion_device = token


class SessionThenDevice(SecureCookieSessionInterface):
    """Flask's signed-cookie session, then the response's device cookie
    (HttpOnly, SameSite=Strict, long-lived; not Secure on plain HTTP, as
    the session cookie). After the session's, so a script that keeps the
    first ``Set-Cookie`` of a login still gets its session.

    A file from ``/static/`` leaves an unchanged session as it is: the
    sliding expiry moves on with every page and API call, and signing the
    cookie again for each of a console's dozen scripts and styles was a
    fifth of the server's CPU in a console's load."""

    def should_set_cookie(self, app, session) -> bool:
        if not session.modified and request.endpoint == "static":
            return False
        return super().should_set_cookie(app, session)

    def save_session(self, app, session, response) -> None:
        super().save_session(app, session, response)
        if "companion_device" not in g:
            return
        token = g.companion_device
        secure = bool(app.config.get("SESSION_COOKIE_SECURE"))
        if token is None:
            response.delete_cookie(DEVICE_COOKIE, path="/", secure=secure, httponly=True,
                                   samesite="Strict")
        else:
            response.set_cookie(DEVICE_COOKIE, token, max_age=int(DEVICE_LIFETIME_S),
                                path="/", secure=secure, httponly=True, samesite="Strict")


__all__ = ["RateLimiter", "PinGuard", "LoginFile", "HostSessions", "HostDevices", "install",
           "logout", "check_pin_policy", "MIN_PIN_LENGTH", "new_pin", "pin_matches", "csrf_token",
           "check_csrf", "login", "is_host", "client_key", "COOKIE_CONFIG", "DEVICE_COOKIE",
           "SessionThenDevice"]
