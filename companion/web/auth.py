"""Host authentication: the PIN, the session cookie, CSRF tokens and rate limits.

* The PIN comes from the configuration (``PIN``) or is made up at start-up
  and printed; it is compared in constant time (:func:`hmac.compare_digest`).
* Failed logins are rate-limited per client IP (:class:`RateLimiter`).
* A logged-in host has ``session["host"]`` set in Flask's signed session
  cookie (HttpOnly, SameSite=Strict; see :func:`configure_cookies`).
* Every request that changes state (any method but GET/HEAD/OPTIONS) must
  carry the CSRF token of its session: the ``X-CSRF-Token`` header for JSON,
  the ``csrf_token`` form field for forms. The scoreboard gets a token too,
  so the demo's virtual buzzers are protected the same way.
"""

from __future__ import annotations

import functools
import hmac
import secrets
import threading
import time
from collections import deque
from datetime import timedelta

from flask import current_app, jsonify, request, session

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"


def new_pin(digits: int = 6) -> str:
    """A random numeric PIN (printed at start-up when none is configured)."""
    return "".join(secrets.choice("0123456789") for _ in range(digits))


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
    return bool(session.get("host")) and session.get("pin_epoch") == svc.pin_epoch


def login(pin_given: str | None) -> tuple[bool, float]:
    """Check a PIN for the current client: (ok, retry_after_seconds)."""
    svc = current_app.extensions["companion"]
    key = client_key()
    # count the attempt before comparing, in one step under the limiter's
    # lock: simultaneous guesses cannot all slip past a separate check
    if not svc.login_limiter.hit(key):
        return False, max(svc.login_limiter.blocked(key), 1.0)
    if pin_matches(pin_given, svc.pin):
        svc.login_limiter.reset(key)
        session.clear()
        session.permanent = True
        session["host"] = True
        session["pin_epoch"] = svc.pin_epoch
        csrf_token()   # a fresh token after login (no fixation)
        return True, 0.0
    return False, 0.0


def host_required(view):
    """Decorator: the host console's JSON endpoints need a logged-in host (401)."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not is_host():
            return jsonify(error="log in to the host console first", rule="login"), 401
        return view(*args, **kwargs)

    return wrapped


def rate_limited(limiter_name: str):
    """Decorator: 429 when this client is over the named limiter's limit."""

    def deco(view):
        @functools.wraps(view)
        def wrapped(*args, **kwargs):
            limiter = getattr(current_app.extensions["companion"], limiter_name)
            if not limiter.hit(client_key()):
                resp = jsonify(error="too many requests: slow down", rule="rate-limit")
                resp.status_code = 429
                resp.headers["Retry-After"] = "1"
                return resp
            return view(*args, **kwargs)

        return wrapped

    return deco


__all__ = ["RateLimiter", "new_pin", "pin_matches", "csrf_token", "check_csrf", "login",
           "is_host", "host_required", "rate_limited", "COOKIE_CONFIG"]
