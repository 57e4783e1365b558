"""The web edge: the phone scoreboard, the host console, JSON and live updates.

:func:`create_app` is a Flask app factory (as in Flask's tutorial). The
services the views share live in ``app.extensions["companion"]``
(:class:`Services`): the :class:`~companion.session.TableSession`, the SSE
:class:`~companion.web.sse.Broker`, the PIN and the rate limiters.

>>> app = create_app({"DB_PATH": ":memory:", "PIN": "1234"})   # doctest: +SKIP
>>> app.test_client().get("/api/state").json["game"]            # doctest: +SKIP

Configuration keys (all optional):

``DB_PATH``         SQLite file (default: :func:`companion.paths.default_db_path`)
``SESSION``         an existing TableSession to serve (``serve()`` passes its own)
``PIN``             the host PIN (default: ``COMPANION_PIN`` or a random 6-digit one)
``SECRET_KEY``      cookie signing key (default: random, persisted next to the DB)
``DEMO``            on-screen virtual buzzers on the scoreboard (public presses)
``PLAYERS``         default player names for the new-game form
``BUZZERS``         the buzzer ids of the running source (the new-game form offers them)
``JOIN_URLS``       the URLs phones open (shown on the console with a QR code)
``SSE_HEARTBEAT_S`` seconds between heartbeats (15); ``SSE_MAX_CLIENTS`` (200)
``SSE_MAX_PER_CLIENT`` live pages one address may hold (6; the Pi's own loopback is exempt)
``LOGIN_LIMIT`` / ``LOGIN_WINDOW_S``  failed PINs allowed per IP per window (5 per 60 s)
``PRESS_LIMIT`` / ``PRESS_WINDOW_S``  virtual presses per IP per window (20 per 1 s)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from . import auth
from .sse import Broker

DEFAULTS = {
    "DB_PATH": None,
    "SESSION": None,
    "PIN": None,
    "DEMO": False,
    "PLAYERS": None,
    "JOIN_URLS": None,
    "SSE_HEARTBEAT_S": 15.0,
    "SSE_QUEUE_SIZE": 256,
    "SSE_MAX_CLIENTS": 200,
    "SSE_MAX_PER_CLIENT": 6,
    "LOGIN_LIMIT": 5,
    "LOGIN_WINDOW_S": 60.0,
    "PRESS_LIMIT": 20,
    "PRESS_WINDOW_S": 1.0,
    "MAX_CONTENT_LENGTH": 1 << 20,
}


@dataclass
class Services:
    """What every view needs; one per app (``app.extensions["companion"]``)."""

    session: Any
    broker: Broker
    pin: str
    demo: bool
    login_limiter: auth.RateLimiter
    press_limiter: auth.RateLimiter
    join_urls: list[str]
    store: Any = None               # closed by close() when the app opened it
    owns_store: bool = False
    runner: Any = None              # the buzzer ticker, when serve() has one
    buzzers: list[str] = field(default_factory=list)   # buzzer ids of the source
    pin_epoch: str = ""             # changes with the PIN: a new PIN logs everybody out

    def close(self) -> None:
        """End every stream and close the store if the app opened it."""
        self.broker.close()
        if self.owns_store and self.store is not None:
            self.store.close()
            self.store = None


def secret_key_for(db_path) -> bytes:
    """A random signing key kept next to the database (``<db>-secret``, mode
    0600) so host logins survive a restart; random per process for ``:memory:``."""
    if db_path is None or str(db_path) == ":memory:":
        return secrets.token_bytes(32)
    path = Path(f"{db_path}-secret")
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    key = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
    except OSError:
        pass   # read-only directory: a per-process key still works
    return key


def _as_bytes(key) -> bytes:
    return key if isinstance(key, bytes) else str(key).encode()


def create_app(config: dict | None = None) -> Flask:
    """The Flask app: scoreboard ``/``, ``/events``, ``/api/state``, host
    console ``/host`` and ``/api/host/...`` (see docs/web.md)."""
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config.update(auth.COOKIE_CONFIG)
    app.config.update(config or {})

    session = app.config["SESSION"]
    store, owns_store = None, False
    if session is None:
        from ..session import TableSession
        from ..store import Store

        store, owns_store = Store(app.config["DB_PATH"]), True   # None: companion.paths
        app.config["DB_PATH"] = str(store.path)
        session = TableSession(store)
        session.resume()
    else:
        store = getattr(session, "store", None)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key_for(app.config["DB_PATH"])

    pin = app.config["PIN"] or os.environ.get("COMPANION_PIN") or auth.new_pin()
    app.config["PIN"] = str(pin)
    broker = Broker(session, queue_size=app.config["SSE_QUEUE_SIZE"],
                    max_clients=app.config["SSE_MAX_CLIENTS"],
                    max_per_remote=app.config["SSE_MAX_PER_CLIENT"],
                    heartbeat_s=app.config["SSE_HEARTBEAT_S"])
    app.extensions["companion"] = Services(
        session=session, broker=broker, pin=str(pin), demo=bool(app.config["DEMO"]),
        login_limiter=auth.RateLimiter(app.config["LOGIN_LIMIT"], app.config["LOGIN_WINDOW_S"]),
        press_limiter=auth.RateLimiter(app.config["PRESS_LIMIT"], app.config["PRESS_WINDOW_S"]),
        join_urls=list(app.config["JOIN_URLS"] or ["http://127.0.0.1:8080/"]),
        store=store, owns_store=owns_store, runner=app.config.get("RUNNER"),
        buzzers=list(app.config.get("BUZZERS") or []),
        pin_epoch=hmac.new(_as_bytes(app.config["SECRET_KEY"]), str(pin).encode(),
                           hashlib.sha256).hexdigest()[:16])

    app.before_request(auth.check_csrf)

    @app.after_request
    def security_headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            "script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
        return resp

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if request.path.startswith("/api/") or request.path == "/events":
            return jsonify(error=exc.description, rule=None), exc.code
        return exc

    from . import board, host

    app.register_blueprint(board.bp)
    app.register_blueprint(host.bp)
    app.jinja_env.globals["csrf_token"] = auth.csrf_token
    return app


__all__ = ["create_app", "Services"]
