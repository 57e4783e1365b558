"""Shared fixtures (as in Flask's tutorial): a ``store`` and table
``session`` on a temporary SQLite file, the ``app`` serving that session,
its test ``client``, a logged-in ``host`` client, and a ``live_server``
running the real waitress server, buzzer pipeline and mock buzzers on
127.0.0.1 and a free port."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

PIN = "2468"

# In CI the property tests draw the same examples every run: a red build
# must mean a change broke something, not that the dice found a new case.
# Developers' runs stay random (and keep failures in .hypothesis/).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_addoption(parser):
    from conformance import LONG_GAMES, QUICK_GAMES

    group = parser.getgroup("random play", "the conformance test's random games")
    group.addoption("--random-games", type=int, default=None, metavar="N",
                    help=f"random games of each kind (default {QUICK_GAMES}, "
                         f"{LONG_GAMES} with --long)")
    group.addoption("--long", action="store_true",
                    help=f"the long run: {LONG_GAMES} random games of each kind")
    group.addoption("--random-seed", type=int, default=8, metavar="SEED",
                    help="seed of the first random game (a failure names its game's seed)")


def random_play_of(config) -> tuple[int, int]:
    """(games, seed) of random play, from --random-games (or --long) and --random-seed."""
    from conformance import LONG_GAMES, QUICK_GAMES

    games = config.getoption("random_games")
    if games is None:
        games = LONG_GAMES if config.getoption("long") else QUICK_GAMES
    return games, config.getoption("random_seed")


@pytest.fixture
def random_play(request) -> tuple[int, int]:
    """(games, seed) of the random play tests (:func:`random_play_of`)."""
    return random_play_of(request.config)


@pytest.fixture
def store(tmp_path):
    from companion.store import Store

    store = Store(tmp_path / "table.db")
    yield store
    store.close()


@pytest.fixture
def session(store):
    from companion.session import TableSession

    session = TableSession(store)
    session.resume()
    return session


def make_app(session, **config):
    """The web app serving ``session`` (as ``companion.app`` assembles it)."""
    from companion.web import create_app

    return create_app({"PIN": PIN, "TESTING": True, **config}, session=session)


@pytest.fixture
def app(session):
    app = make_app(session, DEMO=True, PLAYERS=["ana", "bo", "cy"])
    yield app
    app.extensions["companion"].close()


@pytest.fixture
def client(app):
    return app.test_client()


class HostClient:
    """A test client logged in to the host console, sending its CSRF token."""

    def __init__(self, client):
        self.client = client
        self.csrf = client.get("/api/csrf").json["csrf"]
        r = client.post("/api/host/login", json={"pin": PIN}, headers=self.headers())
        assert r.status_code == 200, r.json
        self.csrf = r.json["csrf"]

    def headers(self) -> dict:
        return {"X-CSRF-Token": self.csrf}

    def post(self, url, json=None, **kw):
        return self.client.post(url, json=json if json is not None else {},
                                headers=self.headers(), **kw)

    def get(self, url, **kw):
        return self.client.get(url, **kw)


@pytest.fixture
def host(client):
    return HostClient(client)


def start_table(tmp_path, settings=None):
    """The whole table (``companion serve``) running in a thread."""
    from companion.app import Table

    table = Table(host="127.0.0.1", port=0, db_path=str(tmp_path / "live.db"), pin=PIN,
                  short_pin=True, players=["Ana", "Bo", "Cy"], source="mock", demo=True, threads=16,
                  config={"SSE_HEARTBEAT_S": 1.0}, settings=settings)
    table.open()
    table.start()
    return table


@pytest.fixture
def live_server(tmp_path):
    """The whole table (``companion serve``) in a thread: ``.url``, ``.session``,
    ``.source`` (mock buzzers: ``.source.press(name)``), ``.pin``."""
    table = start_table(tmp_path)
    yield table
    table.close()


@pytest.fixture
def live_server_with(tmp_path):
    """``live_server_with(claim_window_ms=1500)``: a ``live_server`` whose
    session has those race settings."""
    tables = []

    def make(**settings):
        tables.append(start_table(tmp_path, settings))
        return tables[-1]
    yield make
    for table in tables:
        table.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright, one per test module."""
    from browserkit import CHROMIUM, CHROMIUM_ARGS

    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def phone(browser):
    """``phone(scheme="dark")``: a new phone (its own cookies) in that colour scheme."""
    from browserkit import PHONE, TIMEOUT_MS

    contexts = []

    def make(scheme: str = "dark"):
        ctx = browser.new_context(**PHONE, color_scheme=scheme)
        ctx.set_default_timeout(TIMEOUT_MS)
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()
