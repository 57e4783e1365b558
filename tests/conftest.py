"""Shared fixtures (as in Flask's tutorial): a ``store`` and table
``session`` on a temporary SQLite file, the ``app`` serving that session,
its test ``client``, a logged-in ``host`` client, and a ``live_server``
running the real waitress server, buzzer pipeline and mock buzzers on
127.0.0.1 and a free port."""

from __future__ import annotations

import gc
import os

import pytest
from hypothesis import settings

from companion.heap import keep_freed_memory
from tests.kit.conformance import LONG_GAMES, QUICK_GAMES, random_play_of
from tests.kit.web import HostClient, make_app, share_templates, start_table

# In CI the property tests draw the same examples every run: a red build
# must mean a change broke something, not that the dice found a new case.
# Developers' runs stay random (and keep failures in .hypothesis/).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# each worker judges races as `companion serve` does: with the same heap
keep_freed_memory()
# the many apps a worker makes compile each page template once between them
share_templates()


def pytest_addoption(parser):
    group = parser.getgroup("random play", "the conformance test's random games")
    group.addoption("--random-games", type=int, default=None, metavar="N",
                    help=f"random games of each kind (default {QUICK_GAMES}, "
                         f"{LONG_GAMES} with --long)")
    group.addoption("--long", action="store_true",
                    help=f"the long run: {LONG_GAMES} random games of each kind")
    group.addoption("--random-seed", type=int, default=8, metavar="SEED",
                    help="seed of the first random game (a failure names its game's seed)")


#: where the tests' temporary files go when the caller chose no place: a RAM
#: disk. Every store is SQLite with ``synchronous=FULL``, so each logged event
#: waits for an fsync (3 ms on this disk, far more on an SD card): on tmpfs
#: the fsync returns at once and the tests wait for their conditions, not for
#: the disk. What the tests check (the order of writes, what survives a kill
#: -9, the page cache being the file) is the same on tmpfs; a power cut is
#: not simulated anywhere.
RAM_DISK = "/dev/shm"


def pytest_configure(config):
    """The temporary directories on :data:`RAM_DISK` unless ``--basetemp``
    or ``PYTEST_DEBUG_TEMPROOT`` says where (pytest's own numbered,
    locked directories under it: concurrent runs do not collide)."""
    if (config.option.basetemp is None and "PYTEST_DEBUG_TEMPROOT" not in os.environ
            and os.path.isdir(RAM_DISK) and os.access(RAM_DISK, os.W_OK | os.X_OK)):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = RAM_DISK


#: tests known to run for tens of seconds without a ``slow`` mark (the race
#: pace properties, the axe checks): started first, with the slow ones
LONG = ("tests/test_race_pace.py::", "tests/test_a11y_axe_")


def pytest_collection_modifyitems(config, items):
    """Spread over the cores (tasks.py test: ``--dist loadgroup``, a test at a
    time to whichever worker is free), the longest tests start first and the
    many short ones fill in behind them, so no long test starts last and
    decides when the run ends: the slow and :data:`LONG` ones, then the
    browser ones (a few seconds each), then the rest, each in file order
    (every worker sorts its collection alike). One process (``-n 0``) keeps
    the file order."""
    if hasattr(config, "workerinput"):        # an xdist worker
        items.sort(key=_start_first)


def pytest_collection_finish(session):
    """What the worker has made by now (the modules, the collected tests:
    about 135,000 objects) lives to its end: frozen out of the garbage
    collector's way (``gc.freeze``), so its full collections walk only what
    the tests make. Measured in a whole run, a worker spent 5-9 s in full
    collections (16-26 of them), 3-4 s frozen; nothing frozen is ever freed
    or was garbage."""
    gc.collect()
    gc.freeze()


def _start_first(item) -> int:
    if item.get_closest_marker("slow") is not None or item.nodeid.startswith(LONG):
        return 0
    return 1 if item.get_closest_marker("browser") is not None else 2


@pytest.fixture
def random_play(request) -> tuple[int, int]:
    """(games, seed) of the random play tests (:func:`random_play_of`)."""
    return random_play_of(request.config)


@pytest.fixture
def store(tmp_path):
    from companion.record.store import Store

    store = Store(tmp_path / "table.db")
    yield store
    store.close()


@pytest.fixture
def session(store):
    from companion.table.session import TableSession

    session = TableSession(store)
    session.resume()
    return session


@pytest.fixture
def app(session):
    app = make_app(session, DEMO=True, PLAYERS=["ana", "bo", "cy"])
    yield app
    app.extensions["companion"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def host(client):
    return HostClient(client)


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


@pytest.fixture
def app_tables(tmp_path):
    """``app_tables(name="t", demo=True)``: a new table on its own file, with
    its app, a logged-in host and a bare phone (:class:`tests.kit.web.AppTable`)."""
    from tests.kit.web import AppTable

    made = []

    def make(name="t", demo=True):
        made.append(AppTable(tmp_path / f"{name}.db", demo=demo))
        return made[-1]
    yield make
    for t in made:
        t.close()


@pytest.fixture
def broker(tmp_path):
    """A real Mosquitto on a free loopback port, with the generated config
    for tables t1, t2, t3 and the league (:class:`tests.kit.mosquitto.Broker`)."""
    from tests.kit.mosquitto import Broker

    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


@pytest.fixture
def coinrace():
    """The toy Coin race registered as ``coinrace`` for the test."""
    from companion.games import register_game, unregister_game
    from tests.kit.toygame import CoinRace

    register_game(CoinRace, replace=True)
    yield
    unregister_game("coinrace")


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, one per test process (each xdist worker): a
    process may hold one sync driver only, so every chromium a test
    launches comes from this one (``browser``; a chromium with other flags:
    ``playwright.chromium.launch``)."""
    from tests.kit.browser import TEST_CHROMIUM

    if not os.path.exists(TEST_CHROMIUM):
        pytest.skip(f"no chromium at {TEST_CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    """Debian's chromium driven by Playwright, one per test process (each
    xdist worker): launching it (with Playwright's driver) costs about a
    second, a test's own context costs a few milliseconds, and contexts
    share nothing (cookies, storage, emulation), so every test still gets a
    fresh phone."""
    from tests.kit.browser import TEST_CHROMIUM

    b = _launch(playwright, TEST_CHROMIUM)
    yield b
    b.close()


@pytest.fixture(scope="session")
def full_browser(playwright):
    """The whole chromium (not its headless shell: ``browser``), one per
    test process, started only for a test that asks: what only a whole
    browser has (the Wake Lock API)."""
    from tests.kit.browser import CHROMIUM

    b = _launch(playwright, CHROMIUM)
    yield b
    b.close()


def _launch(playwright, path: str):
    """The chromium at ``path`` with the kit's flags (the test skips where
    there is none)."""
    from tests.kit.browser import CHROMIUM_ARGS

    if not os.path.exists(path):
        pytest.skip(f"no chromium at {path}")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)


@pytest.fixture
def phone(browser):
    """``phone(scheme="dark")``: a new phone (its own cookies) in that colour scheme."""
    from tests.kit.browser import PHONE, TIMEOUT_MS

    contexts = []

    def make(scheme: str = "dark"):
        ctx = browser.new_context(**PHONE, color_scheme=scheme)
        ctx.set_default_timeout(TIMEOUT_MS)
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()


@pytest.fixture(autouse=True, scope="module")
def no_game_left_registered():
    """A module that registers a toy game forgets it again: the same worker
    goes on to pages that list every game (a leaked toy once broke them all)."""
    from companion import games

    before = set(games.game_names())
    yield
    left = set(games.game_names()) - before
    assert not left, f"games left registered by this module: {sorted(left)}"
