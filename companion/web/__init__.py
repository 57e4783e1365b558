"""The web edge: the phone scoreboard, the host console, JSON and live updates.

:func:`create_app` is a Flask app factory (as in Flask's tutorial). It builds
nothing of the table: it *receives* the running
:class:`~companion.table.session.TableSession` (and, under ``companion serve``, the
buzzer pipeline and the ids of its buzzers) from whoever assembled the
application (``companion.app``; the tests' ``conftest.py``). The services the
views share live in ``app.extensions["companion"]`` (:class:`Services`): the
session, the SSE :class:`~companion.web.sse.Broker`, the PIN and the rate
limiters. Errors are turned into JSON in one place (:func:`register_errors`).

>>> from companion.record.store import Store                      # doctest: +SKIP
>>> from companion.table.session import TableSession             # doctest: +SKIP
>>> app = create_app({"PIN": "1234"}, session=TableSession(Store(":memory:")))  # doctest: +SKIP
>>> app.test_client().get("/api/state").json["game"]      # doctest: +SKIP

Configuration keys (all optional):

``PIN``             the host PIN (default: ``COMPANION_PIN`` or a random 6-digit one)
``SECRET_KEY``      cookie signing key (default: random, persisted next to the session's store)
``DEMO``            on-screen virtual buzzers on the scoreboard (public presses)
``PLAYERS``         default player names for the new-game form
``JOIN_URLS``       the URLs phones open (shown on the console with a QR code)
``TABLE_CA``        with HTTPS: the table CA's certificate (PEM), served at ``/ca.crt``
``SSE_HEARTBEAT_S`` seconds between heartbeats (15); ``SSE_MAX_CLIENTS`` (200)
``SSE_MAX_PER_CLIENT`` live pages one address may hold (6; the Pi's own loopback is exempt)
``LOGIN_LIMIT`` / ``LOGIN_WINDOW_S``  failed PINs allowed per IP per window (5 per 60 s)
``PRESS_LIMIT`` / ``PRESS_WINDOW_S``  virtual presses per IP per window (20 per 1 s)

Who may call each route, what its body may hold and its limits are declared
at the route (:func:`companion.web.policy.allow`) and enforced by one hook;
an app with a route that declares none does not start.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit

from flask import Flask, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from . import auth, i18n
from .routing import Rule
from .sse import Broker

DEFAULTS = {
    "PIN": None,
    "DEMO": False,
    "PLAYERS": None,
    "JOIN_URLS": None,
    "TABLE_CA": None,
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
    pipeline: Any = None            # the buzzer pipeline, when the table has one
    buzzers: list[str] = field(default_factory=list)   # buzzer ids of the source
    pin_epoch: str = ""             # changes with the PIN: a new PIN logs everybody out
    camera: Any = None              # the camera beside the table (companion.camera.desk), or None
    #: with HTTPS on the LAN: the table CA's certificate (PEM; public), the
    #: plain-HTTP URLs (where every phone joins and a new one trusts the CA,
    #: ``/ca``) and the https ones (where a phone that trusts it goes on to)
    ca_pem: bytes | None = None
    plain_urls: list[str] = field(default_factory=list)
    secure_urls: list[str] = field(default_factory=list)

    def secure_origin(self, host: str) -> str | None:
        """The https origin a phone that reached this table as ``host`` (a
        request's Host, on plain HTTP) goes on to once it trusts the table's
        CA; None without HTTPS."""
        if not self.ca_pem or not self.secure_urls:
            return None
        port = urlsplit(self.secure_urls[0]).port or 443
        name = urlsplit(f"//{host}").hostname or "127.0.0.1"
        name = f"[{name}]" if ":" in name else name
        return f"https://{name}" + ("" if port == 443 else f":{port}")

    @property
    def trust_url(self) -> str | None:
        """With HTTPS: where a new phone trusts the table once (``/ca`` on plain HTTP)."""
        if not self.ca_pem or not self.plain_urls:
            return None
        return self.plain_urls[0] + "ca"

    @property
    def store(self):
        return getattr(self.session, "store", None)

    def close(self) -> None:
        """End every stream (the session and its store belong to whoever made them)."""
        self.broker.close()


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


def create_app(config: dict | None = None, *, session=None, pipeline=None,
               buzzers: Iterable[str] = (), camera=None) -> Flask:
    """The Flask app serving ``session``: scoreboard ``/``, ``/events``,
    ``/api/state``, ``/api/games``, host console ``/host`` and
    ``/api/host/...`` (see docs/web.md). ``pipeline`` is the table's buzzer
    pipeline, its one way in (``companion serve`` starts its thread); without
    one the app makes a pipeline with no source and no thread, so every
    change a request makes still goes through one queue, applied in order
    on the request's thread (the Flask test client takes the table's path).
    ``buzzers`` are the ids of its buzzers (the new-game form offers them);
    ``camera`` the :class:`~companion.camera.desk.CameraDesk` beside the
    table (the console's Camera panel), None: no camera."""
    app = Flask(__name__)
    app.url_rule_class = Rule           # URL builders compiled once a process
    app.config.update(DEFAULTS)
    app.config.update(auth.COOKIE_CONFIG)
    app.config.update(config or {})
    # JSON keeps the order it was built in: a game's declared components (Chope!'s
    # Tables by colour, Mains before Sides) reach the new-game form as declared,
    # so a game started from it deals its cards (and buttons) in the demo's order
    app.json.sort_keys = False

    if session is None:
        raise TypeError("create_app() needs the table session: create_app(config, "
                        "session=TableSession(store)); companion.app assembles one")
    _settle_secrets(app, session)
    if pipeline is None and getattr(session, "way_in", None) is None:
        from ..buzzers.pipeline import Pipeline

        pipeline = Pipeline(None, session, name="companion-requests").start(thread=False)
    app.extensions["companion"] = _services(app, session, pipeline, list(buzzers))
    app.extensions["companion"].camera = camera

    auth.install(app)                  # server-side logins, the table-wide PIN limit
    i18n.install(app)                  # English and French (companion/translations)
    app.after_request(_security_headers)
    register_errors(app)
    _register_routes(app)
    app.jinja_env.globals["csrf_token"] = auth.csrf_token
    app.jinja_env.globals["tc_secure_origin"] = _secure_origin
    return app


def _settle_secrets(app: Flask, session) -> None:
    """The cookie signing key (kept next to the session's store) and the host
    PIN, from the config, else ``COMPANION_PIN``, else a new random one."""
    store = getattr(session, "store", None)
    db_path = getattr(store, "path", None)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key_for(db_path)
    pin = app.config["PIN"] or os.environ.get("COMPANION_PIN") or auth.new_pin()
    app.config["PIN"] = str(pin)


def _services(app: Flask, session, pipeline, buzzers: list[str]) -> Services:
    """The views' shared services, from the app's (settled) config."""
    cfg = app.config
    pin = cfg["PIN"]
    broker = Broker(session, queue_size=cfg["SSE_QUEUE_SIZE"],
                    max_clients=cfg["SSE_MAX_CLIENTS"],
                    max_per_remote=cfg["SSE_MAX_PER_CLIENT"],
                    heartbeat_s=cfg["SSE_HEARTBEAT_S"])
    return Services(
        session=session, broker=broker, pin=pin, demo=bool(cfg["DEMO"]),
        login_limiter=auth.RateLimiter(cfg["LOGIN_LIMIT"], cfg["LOGIN_WINDOW_S"]),
        press_limiter=auth.RateLimiter(cfg["PRESS_LIMIT"], cfg["PRESS_WINDOW_S"]),
        join_urls=list(cfg["JOIN_URLS"] or ["http://127.0.0.1:8080/"]),
        pipeline=pipeline, buzzers=buzzers, ca_pem=cfg["TABLE_CA"],
        pin_epoch=hmac.new(_as_bytes(cfg["SECRET_KEY"]), pin.encode(),
                           hashlib.sha256).hexdigest()[:16])


def _secure_origin() -> str | None:
    """On a plain-HTTP page of a table with HTTPS: the https origin the page
    tries (secure.js), and goes on to when this phone trusts the table."""
    if request.scheme != "http":
        return None
    svc = current_app.extensions.get("companion")
    return None if svc is None else svc.secure_origin(request.host)


def _security_headers(resp):
    """Every answer: no sniffing, no referrer, no framing, scripts and styles
    from this origin only (and, on plain HTTP with HTTPS on, the one probe
    of the table's https origin: secure.js)."""
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "no-referrer")
    resp.headers.setdefault("X-Frame-Options", "DENY")
    secure = _secure_origin()
    resp.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self'; "
        f"script-src 'self'; connect-src 'self'{' ' + secure if secure else ''}; "
        "frame-ancestors 'none'")
    return resp


def _register_routes(app: Flask) -> None:
    """The pages' blueprints, then the route policy over them."""
    from . import board, camera, host, player, policy, stats

    app.register_blueprint(board.bp)
    app.register_blueprint(host.bp)
    app.register_blueprint(camera.bp)
    app.register_blueprint(player.bp)
    app.register_blueprint(stats.bp)
    # CSRF, the reserve, who, sizes, rates and bodies, as each route declares
    # them; refuses to build an app with a route that declares nothing
    policy.install(app)


def register_errors(app: Flask) -> None:
    """Every error a view lets through, as JSON ``{"error", "rule"}`` (plus
    ``"field"`` when one control of a form caused it), registered once:

    * :class:`~companion.games.RulesError` -> 400 with the rule's message;
    * the store's ``StaleVersion`` -> 409 (someone logged first: reload);
    * an unknown game name -> 404 in a URL, 400 in a body (the known games named);
    * a game id the store does not have -> 404;
    * a body the API cannot use (:class:`~companion.web.api.BadRequest`) -> 400;
    * a game file that does not replay -> 400 naming its line;
    * the store unable to write -> 503 with the cause ("the disk is full: the
      last event was not saved"), and every page is told the table is not
      saving (the SSE ``saving`` event).
    """
    from ..record.gamefile import GameFileError
    from ..games import RulesError
    from ..record.store import StaleVersion, StoreError
    from ..record.store import UnknownGameId
    from .api import BadRequest, UnknownGame

    app.register_error_handler(RulesError, _rules_error)
    app.register_error_handler(StaleVersion, _stale)
    app.register_error_handler(UnknownGame, _unknown_game)
    app.register_error_handler(UnknownGameId, _unknown_game_id)
    app.register_error_handler(BadRequest, _bad_request)
    app.register_error_handler(GameFileError, _bad_game_file)
    app.register_error_handler(StoreError, _store_error)
    app.register_error_handler(HTTPException, _http_error)


def _answer(message: str, status: int, rule: str | None = None, fieldname=None):
    body = {"error": message, "rule": rule}
    if fieldname:
        body["field"] = fieldname
    return jsonify(body), status


def _rules_error(exc):
    return _answer(str(exc), 400, exc.rule, getattr(exc, "field", None))


def _stale(exc):
    return _answer(f"the game moved on: {exc}; reload and try again", 409, "version")


def _unknown_game(exc):
    return _answer(str(exc), exc.status, "setup", "game")


def _unknown_game_id(exc):
    return _answer(str(exc), 404, "history")


def _bad_request(exc):
    return _answer(str(exc), exc.status, exc.rule, exc.field)


def _bad_game_file(exc):
    return _answer(str(exc), 400, "game file")


def _store_error(exc):
    from ..record.store import failure_cause

    cause = failure_cause(exc)
    current_app.logger.error("store failure: %s", exc)
    broker = getattr(current_app.extensions.get("companion"), "broker", None)
    if broker is not None and request.method not in ("GET", "HEAD", "OPTIONS"):
        # a write failed: every page learns the table is not saving
        broker.store_failed(f"{cause}: the last event was not saved")
    resp, status = _answer(f"{cause}: the last event was not saved ({exc})", 503, "store")
    resp.headers["Retry-After"] = "2"
    return resp, status


def _http_error(exc: HTTPException):
    if request.path.startswith("/api/") or request.path == "/events":
        return _answer(exc.description, exc.code)
    return error_page(exc)


def error_page(exc: HTTPException):
    """A page's error (404, 405, 400, 500, ...) as a page in the reader's
    language (``templates/error.html``), not werkzeug's English one; its
    headers (a 405's ``Allow``) kept."""
    try:
        html = render_template("error.html", code=exc.code)
    except Exception:                    # noqa: BLE001 - the page itself failed: werkzeug's
        current_app.logger.exception("the error page failed")
        return exc
    resp = exc.get_response()
    resp.set_data(html)
    resp.mimetype = "text/html"
    return resp


__all__ = ["create_app", "register_errors", "Services"]
