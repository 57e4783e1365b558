"""The accessibility tests' harness (tests/test_a11y*_browser.py): a phone
or a laptop screen in a colour scheme and a language, axe-core's serious and
critical findings on a page, every page checked at both widths, in both
schemes and both languages, and the games and the league screen they check.
docs/web.md ("Accessibility") says what is checked and how."""

from __future__ import annotations

import threading
import time

from tests.kit.browser import PHONE, TIMEOUT_MS, log_in
from tests.kit.browser import watch_errors as watched

SCHEMES = ("dark", "light")
WIDTHS = (390, 1280)
#: the phone's language (its Accept-Language): every page is checked in
#: English in both schemes, and in French in one scheme a width (dark on the
#: phone, light on the big screen), so both languages meet both schemes
LOCALES = {"en": "en-GB", "fr": "fr-FR"}
#: axe's impact levels that fail a page
FAILING = ("serious", "critical")
#: axe's rules: WCAG 2.0-2.2 A and AA, and its best practices
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
#: what a 200 % text test doubles: the page's own root size
ZOOM_JS = """() => {
  const root = document.documentElement;
  const px = parseFloat(getComputedStyle(root).fontSize);
  root.style.fontSize = (2 * px) + 'px';
  return 2 * px;
}"""


def screen(browser, scheme: str, width: int, reduced_motion: str = "no-preference",
           lang: str = "en"):
    """A browser context: a phone (390 px, touch) or a laptop screen (1280 px),
    asking for the pages in ``lang``."""
    if width <= 480:
        opts = dict(PHONE)
    else:
        opts = {"viewport": {"width": width, "height": 900}}
    ctx = browser.new_context(**opts, color_scheme=scheme, reduced_motion=reduced_motion,
                              locale=LOCALES[lang])
    ctx.set_default_timeout(TIMEOUT_MS)
    return ctx


def axe_findings(page, where: str) -> list[str]:
    """axe-core's serious and critical findings on ``page``, one line each."""
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    result = page.evaluate("""(tags) => axe.run(document, {
        runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})""", AXE_TAGS)
    out = []
    for v in result["violations"]:
        if v["impact"] in FAILING:
            targets = ", ".join(str(n["target"][0]) for n in v["nodes"][:5])
            out.append(f"{where}: {v['id']} ({v['impact']}, {len(v['nodes'])}x) {v['help']}: {targets}")
    return out


def login(page, table):
    """The host console (logging in unless this context already did)."""
    log_in(page.context, table)
    page.goto(table.url + "/host")
    page.wait_for_selector("#conn.live")
    return page


def open_console(ctx, table, *ready: str):
    """The host console of ``table`` on a new watched page of ``ctx``,
    logged in, once each selector of ``ready`` shows."""
    page = login(watched(ctx.new_page()), table)
    for selector in ready:
        page.wait_for_selector(selector)
    return page


def open_live(ctx, url):
    page = watched(ctx.new_page())
    page.goto(url)
    page.wait_for_selector("#conn.live")
    return page


def player_link(host, player: str) -> str:
    """The player's own page, from the console's "Players' own pages" card."""
    data = host.evaluate("""async () => (await TC.post('/api/host/player-links', {})).data""")
    return next(p["url"] for p in data["players"] if p["player"] == player)


def check_everywhere(browser, pages, label: str) -> list[str]:
    """axe on each of ``pages`` ((name, open(ctx) -> page)) at both widths,
    in both colour schemes (the page switched from dark to light as a phone
    does, prefers-color-scheme emulated); the findings, all of them. An
    opener may also return an iterator of ``(name, page)``: each a state of
    its page (a form opened, say), checked before the iterator goes on
    (axe is injected once a document, the page loaded once)."""
    found = []
    for width in WIDTHS:
        for lang in LOCALES:
            schemes = SCHEMES if lang == "en" else (SCHEMES[width > 480],)
            found += _check_at(browser, pages, f"{label} [{lang} {width}px]", width, lang, schemes)
    return found


def _check_at(browser, pages, label: str, width: int, lang: str, schemes) -> list[str]:
    # one screen at a time, one page open in it: a page left open keeps
    # drawing (a race's window drains, a countdown ticks), costing chromium
    # up to a fifth of a core each (measured), so none waits open for another
    found = []
    ctx = screen(browser, schemes[0], width, lang=lang)
    tab = OneTab(ctx, schemes[0])
    try:
        for opened_as, opener in pages:
            for name, page in _states(opened_as, opener(tab)):
                assert page.evaluate("document.documentElement.lang") == lang
                for scheme in schemes:
                    page.emulate_media(color_scheme=scheme)
                    assert page.evaluate(f"matchMedia('(prefers-color-scheme: {scheme})').matches")
                    found += axe_findings(page, f"{label} {name} [{scheme}]")
                assert page.errors == [], page.errors
    finally:
        ctx.close()
    return found


def _states(name: str, opened):
    """An opener's page as ``(name, page)`` states (:func:`check_everywhere`)."""
    if hasattr(opened, "evaluate"):
        yield name, opened
    else:
        yield from opened


class OneTab:
    """``ctx`` for the page openers of :func:`check_everywhere`, whose
    ``new_page()`` is always the same tab: each page state is a fresh
    document loaded in it (a new tab costs chromium ~0.3 s of CPU, a load in
    an open tab ~0.1 s). Before it is handed on, the tab leaves the last
    page (about:blank: its errors stay with it, its live stream closes) and
    is back in ``scheme``, the screen's own, as a new tab would be."""

    def __init__(self, ctx, scheme: str):
        self.ctx, self.scheme, self.page = ctx, scheme, None

    def new_page(self):
        if self.page is None:
            self.page = self.ctx.new_page()
        else:
            self.page.goto("about:blank")
            self.page.emulate_media(color_scheme=self.scheme)
        return self.page

    def __getattr__(self, name):
        return getattr(self.ctx, name)


def chomp_race(t):
    """Chomp! with a race waiting to be started (as test_browser's)."""
    t.session.new_game("chomp", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    want = {"Ana": "shark", "Bo": "seal", "Cy": "little-fish"}
    legal = t.session.legal_events()
    t.session.log(next((e for e in legal if e.get("cards") == want), legal[0]))


class league_screen:
    """The league screen (its Flask app on a local server) over a store fed
    the table's public state and a finished game, as the broker would."""

    def __init__(self, table):
        self.table = table

    def __enter__(self) -> str:
        from werkzeug.serving import make_server

        from companion.league.app import create_app
        from companion.league.publisher import public_state
        from companion.league.store import LeagueStore
        from tests.kit.league import finished

        self.store = LeagueStore(":memory:")
        self.store.set_state("t1", {"v": 1, **public_state(self.table.session.snapshot()),
                                    "sent_ns": time.time_ns()})
        finished(self.store, "t2", 1, [["Ana"], ["Bo"], ["Cy"]], {"Ana": 7, "Bo": 4, "Cy": 2})
        self.server = make_server("127.0.0.1", 0, create_app(store=self.store), threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_port}"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.store.close()
