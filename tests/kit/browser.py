"""What every browser test shares: Debian's chromium, a phone's screen
(390 x 844), where screenshots go, and the page openers (the scoreboard and
the logged-in host console). The ``browser``, ``phone`` and ``shared_table``
fixtures are in conftest.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.kit.moments import hawker_setup

#: Debian's chromium, the whole browser (package ``chromium``): for what only
#: a whole browser has, the Wake Lock API (the ``full_browser`` fixture)
CHROMIUM = os.environ.get("COMPANION_CHROMIUM", "/usr/bin/chromium")
#: Debian's chromium headless shell (package ``chromium-headless-shell``, built
#: from the same chromium source and version: the same Blink, V8 and layout,
#: without the whole browser's windowing, as Playwright's own headless
#: chromium is): what the ``browser`` fixture launches. The browser tests,
#: three workers on two cores, took 248 s and 485 s of CPU with the whole
#: browser, 169 s and 313 s with the shell; all pass on both but the two
#: that need the Wake Lock API, which run on the whole browser.
HEADLESS_SHELL = os.environ.get("COMPANION_HEADLESS_SHELL", "/usr/bin/chromium-headless-shell")
#: what the ``browser`` fixture launches: the shell, or the whole browser
#: where the shell is not installed
TEST_CHROMIUM = HEADLESS_SHELL if os.path.exists(HEADLESS_SHELL) else CHROMIUM
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
         "is_mobile": True, "has_touch": True}
#: how long a page may take to show what a test expects ("give up eventually":
#: a loaded CI machine is slow, a page that is right shows it at once)
TIMEOUT_MS = 20_000
#: chromium flags for a machine with no network beyond the package mirrors
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

#: ``pytestmark`` of a module of browser tests
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(TEST_CHROMIUM),
                       reason=f"no chromium at {TEST_CHROMIUM} (the test command installs "
                              "Debian's chromium: apt-get install chromium "
                              "chromium-headless-shell)"),
]


#: a word split over two lines inside an element: one Range per word, more
#: than one line box (the words' rects on different tops)
BROKEN_WORDS = """(selector) => {
  const out = [];
  for (const root of document.querySelectorAll(selector)) {
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const re = /\\S+/g;
      let m;
      while ((m = re.exec(n.data))) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
  }
  return out;
}"""

#: elements whose content is wider than their box
OVERFLOWING = """(selector) => [...document.querySelectorAll(selector)]
  .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)"""


def shot(target, name: str, full_page: bool = True) -> Path:
    """A screenshot in artifacts/screenshots/ (``name`` may hold a folder)
    for a person to look at: a page in full, or (``full_page=False``) what
    the phone shows, no scrolling; or one element (``target`` a locator).
    One pixel a CSS pixel (``scale="css"``), not the phone's two: encoding
    four times the pixels took a fifth of chromium's CPU in the browser
    tests (measured on the heaviest five modules, 123 s against 99 s), for
    no check; the page is still drawn, laid out and measured at two."""
    path = SHOTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if hasattr(target, "goto"):             # a page, not a locator
        target.screenshot(path=str(path), full_page=full_page, scale="css")
    else:
        target.screenshot(path=str(path), scale="css")
    return path


def expect_text(page, selector: str, pattern: str):
    """Wait until ``selector`` contains ``pattern``; if it never does, the
    failure also says what the page asked the companion (see :func:`calls`)."""
    from playwright.sync_api import expect

    try:
        expect(page.locator(selector)).to_contain_text(re.compile(pattern), timeout=TIMEOUT_MS)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{said(page)}") from None


def landed(page, cond, what: str) -> None:
    """Wait until ``cond()`` holds after a tap on ``page`` (``what``: the
    tap); if it never does, say so with the page's last API calls."""
    from tests.kit.helpers import wait_for

    if not wait_for(cond):
        raise AssertionError(f"{what} never reached the table\n{said(page)}")


class Held:
    """Requests of ``page`` to ``pattern`` (a Playwright URL glob) kept from
    their answer, as on a slow link, until :meth:`release`. ``reach``: the
    table gets each at once (and acts on it: a logged event, whose news the
    live stream may bring first), and only its answer waits; else the
    request itself waits. ``first``: only the first is held, later ones go
    through. Playwright calls the route while the test is inside one of its
    calls: :meth:`wait` pumps them until one is held."""

    def __init__(self, page, pattern: str, reach: bool = True, first: bool = False):
        self.page, self.pattern, self.reach, self.first = page, pattern, reach, first
        self.held: list = []
        page.route(pattern, self._route)

    def _route(self, route):
        if self.first and self.held:
            route.continue_()
        else:
            self.held.append((route, route.fetch() if self.reach else None))

    def wait(self) -> None:
        """Until a request is held (a page's script sends it after a tap)."""
        import time

        end = time.monotonic() + TIMEOUT_MS / 1000
        while not self.held and time.monotonic() < end:
            self.page.wait_for_timeout(20)
        assert self.held, f"no request to {self.pattern} came"

    def release(self) -> None:
        """Let every held request and answer through, in the order held;
        later requests are no longer held."""
        held, self.held = self.held, []
        # a later route is asked first: from here on every request goes through
        self.page.route(self.pattern, lambda route: route.continue_())
        for route, answer in held:
            if answer is None:
                route.continue_()
            else:
                route.fulfill(response=answer)


def calls(page):
    """Keep in ``page.calls`` the page's last requests to the companion's API
    (method, path, status or failure), for a failure to show: a tap that
    never reached the table and one the table refused look alike on screen."""
    page.calls = []

    def seen(request, status):
        if "/api/" in request.url:
            page.calls.append(f"{request.method} {request.url.split('/api/', 1)[1]} -> {status}")
            del page.calls[:-25]

    page.on("response", lambda r: seen(r.request, r.status))
    page.on("requestfailed", lambda r: seen(r, f"failed: {r.failure}"))
    return page


def said(page) -> str:
    """What a failing browser test adds to its message: the page's last API
    calls and the errors it collected."""
    lines = getattr(page, "calls", [])
    errors = getattr(page, "errors", [])
    return ("the page's last API calls:\n  " + "\n  ".join(lines or ["none"])
            + ("\nits errors:\n  " + "\n  ".join(errors) if errors else ""))


def watch_errors(page):
    """Collect the page's uncaught script errors in ``page.errors``."""
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return calls(page)


def secure_probe(message) -> bool:
    """Whether a console message is chromium's line for the plain page's
    probe of the table's https origin failing (static/js/secure.js: this
    phone does not trust the table yet; expected, and said nowhere else)."""
    url = (message.location or {}).get("url", "")
    return url.startswith("https://") and url.endswith("/static/js/secure.js")


def watch(page):
    """Collect what would be a bug on game night in ``page.errors``: uncaught
    errors, console errors (a Content-Security-Policy refusal is one) and
    failed requests."""
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(f"pageerror: {exc}"))
    page.on("console", lambda m: page.errors.append(f"console: {m.text}")
            if m.type == "error" and not secure_probe(m) else None)
    page.on("response", lambda r: page.errors.append(f"{r.status} {r.url}")
            if r.status >= 400 else None)
    return calls(page)


def open_board(ctx, table, strict: bool = False):
    """The scoreboard (``/``) of ``table`` on a new page of ``ctx``, live;
    ``page.errors`` collects its script errors (``strict``: also console
    errors and failed requests, :func:`watch`)."""
    page = (watch if strict else watch_errors)(ctx.new_page())
    page.goto(table.url + "/")
    page.wait_for_selector("#conn.live")
    return page


def log_in(ctx, table) -> None:
    """Log the phone ``ctx`` in as ``table``'s host with its PIN, unless it
    is already, through the JSON API (``POST /api/host/login``): the same
    session as the log-in form's, without loading the form first (a page
    load less, ~0.17 s of chromium's CPU a console opened). The form's own
    tests fill it (test_browser, test_i18n_browser, the log-in page's axe)."""
    said = ctx.request.get(table.url + "/api/csrf").json()
    if said["host"]:
        return
    r = ctx.request.post(table.url + "/api/host/login", data={"pin": table.pin},
                         headers={"X-CSRF-Token": said["csrf"]})
    assert r.ok, f"the host's log-in was refused: {r.status} {r.text()}"


def open_host(ctx, table, strict: bool = False):
    """The host console (``/host``) of ``table``, logged in with its PIN, live."""
    log_in(ctx, table)
    page = (watch if strict else watch_errors)(ctx.new_page())
    page.goto(table.url + "/host")
    page.wait_for_selector("#conn.live")
    return page


def synced(page, s):
    """Wait until ``page`` shows the session's version (a tap on an older
    one is refused as stale: the console then refreshes). The session's
    version is read again at each look: a verdict may move it on meanwhile.
    (A race's question can reach the page before the new state it came
    with: a tap then is made against the older version, and refused.)"""
    from tests.kit.helpers import wait_for

    assert wait_for(lambda: page.locator("body").get_attribute("data-version")
                    == str(s.version), step=0.05), (page.locator("body").get_attribute("data-version"),
                                         s.version)


# -- games the browser tests set up ----------------------------------------------

HAWKER_SETUP = hawker_setup(["Ana", "Bo"])


def hawker_game(t):
    """Hawker Wars for Ana (buzzer 1) and Bo (2), private draws, set up to the market."""
    t.session.new_game("hawker", [{"name": "Ana", "buzzer": "1"}, {"name": "Bo", "buzzer": "2"}],
                       {"draws": "private"})
    for ev in HAWKER_SETUP:
        t.session.log(ev)
