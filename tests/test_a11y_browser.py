"""Every page can be used by every player (issue 25, the accessibility half),
in a real browser (Playwright, Debian's chromium) against the real server.

- axe-core (the ``axe-playwright-python`` package's copy) checks each page,
  with a game in play so its live parts are drawn: the scoreboard, the host
  console and its new-game form, the host's log-in page, the join page, a
  player's private page and the league screen; in dark and light mode, on a
  390 px phone and a 1280 px screen. No serious or critical finding.
- What axe cannot see: each player's colour comes with their letter (score
  list, race, photo finish, Chopote's bottles); verdicts, turns and
  countdowns are live regions and the countdown buzzes the phone; every
  button on the console and a player's page is at least 44 x 44 px; a phone
  that asks for less motion gets none; the pages reflow at 200 % text
  without scrolling sideways; the keyboard alone logs a card and undoes it.

docs/web.md ("Accessibility") says what is checked and how.
"""

from __future__ import annotations

import pytest

from tests.kit.a11y import (ZOOM_JS, league_screen, login, open_live, player_link, screen,
                            watched)
from tests.kit.browser import BROWSER, OVERFLOWING, expect_text, open_host, shot
from tests.kit.browser import hawker_game as hawker

pytestmark = BROWSER


@pytest.fixture
def screens(browser):
    """``screens(scheme, width)``: a new context, closed after the test."""
    made = []

    def make(scheme="dark", width=390, reduced_motion="no-preference"):
        made.append(screen(browser, scheme, width, reduced_motion))
        return made[-1]
    yield make
    for ctx in made:
        ctx.close()


# ---------------------------------------------------------------------------
# beyond axe


def test_every_colour_comes_with_the_players_letter(live_server_with, screens):
    """Score list, race presses, photo finish: a letter with every colour,
    one letter per player (Ana and Amy are An and Am); Chopote's bottles too."""
    t = live_server_with(runner_up_ms=60_000)  # Bo's press in the photo finish however busy the machine
    t.session.new_game("chope", [{"name": "Ana", "buzzer": "Ana"}, {"name": "Amy", "buzzer": "Bo"},
                                 {"name": "Bo", "buzzer": "Cy"}])
    page = open_live(screens(), t.url + "/")
    letters = page.evaluate("""() => [...document.querySelectorAll('#players li')].map(
        (li) => [li.dataset.player, li.querySelector('.swatch').textContent])""")
    assert letters == [["Ana", "An"], ["Amy", "Am"], ["Bo", "B"]]
    t.session.log({"type": "flip", "card": "table:red"})
    for buzzer in ("Bo", "Cy"):           # Amy's, then Bo's
        t.source.press(buzzer)
        t.source.release(buzzer)
    expect_text(page, "#verdict", "chopes it")
    page.wait_for_selector("#strip .mark .pmark")
    presses = page.evaluate("""() => [...document.querySelectorAll('#presses li')].map(
        (li) => [li.dataset.player, li.querySelector('.pmark').textContent])""")
    assert presses and all(letter == {"Amy": "Am", "Bo": "B"}[who] for who, letter in presses)
    strip = page.locator("#strip .mark .pmark").all_inner_texts()
    assert sorted(strip) == sorted(letter for _, letter in presses)
    shot(page, "a11y-letters-race.png")
    # the letter reads on its colour: at least 4.5:1
    for sel in ("#players li .swatch", "#presses .pmark"):
        for ratio in page.evaluate(CONTRASTS, sel):
            assert ratio >= 4.5, (sel, ratio)

    t.session.new_game("chopote", [{"name": "Ana"}, {"name": "Bo"}, {"name": "Cy"}])
    for value in (4, 2, 1, 6):
        t.session.log({"type": "roll", "player": t.session.game.current_player(t.session.state),
                       "value": value})
    t.session.log({"type": "move", "player": "Ana", "from": "casier"})
    page.wait_for_selector("#panel svg g[data-where=start][data-player=Ana] .bottle-mark")
    assert page.locator("#panel svg g[data-where=start][data-player=Ana] .bottle-mark"
                        ).text_content() == "A"
    casiers = page.evaluate("""() => [...document.querySelectorAll('#panel svg g[data-where=casier]')]
        .map((g) => [g.dataset.player, g.querySelector('.casier-mark').textContent])""")
    assert casiers == [["Ana", "A"], ["Bo", "B"], ["Cy", "C"]]
    assert page.errors == []


#: the contrast of each ``sel`` node's text on its own background
CONTRASTS = """(sel) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => {
    const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return [...document.querySelectorAll(sel)].map((n) => {
    const cs = getComputedStyle(n);
    const [a, b] = [lum(cs.color), lum(cs.backgroundColor)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}"""

PLAYER_COLOURS = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "teal",
                  "cyan", "brown", "grey", "black", "white"]


def test_text_on_every_player_colour_reads(live_server, screens):
    """A banner, a buzzer, a letter on any of the colours: black or white,
    whichever reads better, at least 4.5:1."""
    page = open_live(screens(), live_server.url + "/")
    ratios = page.evaluate("""(colours) => colours.map((c) => {
        const n = TC.paint(TC.el('span', {class: 'pmark', text: 'A'}), c);
        document.body.append(n);
        const cs = getComputedStyle(n);
        const out = [c, cs.color, cs.backgroundColor];
        n.remove();
        return out;
    })""", PLAYER_COLOURS)
    lum = page.evaluate("""(pairs) => pairs.map(([c, fg, bg]) => {
        const rgb = (x) => x.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => {
          v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        const L = (x) => { const [r, g, b] = rgb(x); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const [a, b] = [L(fg), L(bg)].sort((x, y) => y - x);
        return [c, (a + 0.05) / (b + 0.05)];
    })""", ratios)
    low = [(c, round(r, 2)) for c, r in lum if r < 4.5]
    assert low == []


def test_turns_verdicts_and_countdowns_are_announced_and_felt(live_server, screens):
    t = live_server
    t.session.new_game("chomp", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    ctx = screens()
    # a phone that can vibrate: every call is kept; and every rewrite of the
    # countdown (each one is read out) counted
    ctx.add_init_script("""window.__felt = []; window.__written = 0;
        navigator.vibrate = (p) => { window.__felt.push(p); return true; };
        document.addEventListener('DOMContentLoaded', () => new MutationObserver((r) => {
          window.__written += r.length; }).observe(document.getElementById('countdown'),
          {childList: true, characterData: true, subtree: true}));""")
    page = open_live(ctx, t.url + "/")
    live = page.evaluate("""() => Object.fromEntries(['banner', 'countdown', 'verdict', 'news'].map(
        (id) => [id, document.getElementById(id).getAttribute('aria-live')]))""")
    assert live == {"banner": "polite", "countdown": "assertive", "verdict": "assertive",
                    "news": "polite"}
    # the race card itself is not a live region (its window's seconds tick)
    assert page.locator("#race").get_attribute("aria-live") is None
    want = {"Ana": "shark", "Bo": "seal", "Cy": "little-fish"}
    legal = t.session.legal_events()
    t.session.log(next((e for e in legal if e.get("cards") == want), legal[0]))
    race = t.session.host_snapshot()["race"]
    if not race or race.get("phase") != "countdown":       # a table that starts it by hand
        t.session.start_race(countdown_ms=3000)
    eligible = t.session.host_snapshot()["race"]["eligible"]
    expect_text(page, "#countdown", "GO!")
    felt = page.evaluate("window.__felt")
    # 3 (or 2, as the page caught it), 2, 1: a short buzz each; GO: a long one
    assert felt[-1] == [400] and 2 <= len(felt) - 1 <= 3 and all(p == [80] for p in felt[:-1]), felt
    # read out second by second: written once a second, not at every 50 ms redraw
    assert 3 <= page.evaluate("window.__written") <= 8
    for p in eligible:
        t.source.press(p)
    expect_text(page, "#verdict", "chomps")
    # the host console: its banner and race card announce too; never vibrates
    host = open_host(ctx, t)
    assert host.locator("#banner").get_attribute("aria-live") == "polite"
    assert host.locator("#verdict").get_attribute("aria-live") == "assertive"
    assert host.evaluate("TC.feel([80])") is False
    assert page.errors == []


def test_a_live_region_is_only_rewritten_when_it_says_something_new(live_server, screens):
    """A redraw that changes nothing (a heartbeat, a press elsewhere) does
    not make a screen reader read the turn again; a new turn does."""
    page = open_live(screens(), live_server.url + "/")
    expect_text(page, "#banner", "’s turn")
    page.evaluate("""() => { window.__said = 0;
        new MutationObserver((r) => { window.__said += r.length; })
          .observe(document.getElementById('banner'), {childList: true, subtree: true, characterData: true}); }""")
    redraw = """async (who) => {
        const s = JSON.parse(document.getElementById('initial-state').textContent);
        if (who) s.current_player = who;
        TC.renderBanner(s, document.getElementById('banner'));
        await new Promise((r) => setTimeout(r, 50));      // the observer's turn
        return window.__said;
    }"""
    assert page.evaluate(redraw, None) == 0
    assert page.evaluate(redraw, "Cy") > 0
    expect_text(page, "#banner", "Cy")
    assert page.errors == []


def test_the_private_hand_is_read_again_only_when_it_changes(live_server, screens):
    """A player's own page redraws on every change at the table; its "Only
    you see this" section (a live region) is rewritten only when what it
    says changes, so a screen reader does not read Ana's hand again when Bo
    draws; it does when Ana draws."""
    t = live_server
    hawker(t)
    host = login(watched(screens().new_page()), t)
    page = open_live(screens(), player_link(host, "Ana"))
    page.wait_for_selector("#private-view > *")
    page.evaluate("""() => { window.__said = 0;
        new MutationObserver((r) => { window.__said += r.length; })
          .observe(document.getElementById('private-view'),
                   {childList: true, subtree: true, characterData: true}); }""")
    shown = "(v) => Number(document.body.dataset.version) >= v"
    t.session.log({"type": "draw", "player": "Ana", "pile": "ingredient", "count": 4})
    page.wait_for_function(shown, arg=t.session.version)
    assert page.evaluate("window.__said") > 0          # her hand changed: read again
    page.evaluate("window.__said = 0")
    t.session.log({"type": "draw", "player": "Bo", "pile": "ingredient", "count": 4})
    page.wait_for_function(shown, arg=t.session.version)
    assert page.evaluate("window.__said") == 0         # Bo's draw: Ana's section untouched
    assert page.errors == []


def buttons_smaller_than(page, px: int) -> list[str]:
    """Every visible button (and summary, and anything acting as one) whose
    box is under px x px."""
    return page.evaluate("""(px) => [...document.querySelectorAll(
          'button, [role=button], summary, input[type=submit], a.btn')]
        .filter((n) => n.offsetParent !== null || getComputedStyle(n).position === 'fixed')
        .map((n) => [n, n.getBoundingClientRect()])
        .filter(([n, r]) => r.width > 0 && (r.width < px - 0.5 || r.height < px - 0.5))
        .map(([n, r]) => `${n.tagName.toLowerCase()}#${n.id}.${n.className} ${Math.round(r.width)}x${Math.round(r.height)}: ${n.textContent.trim().slice(0, 30)}`)""", px)


def test_tap_targets_are_44_px_on_the_console_and_the_private_page(live_server, screens):
    t = live_server
    hawker(t)
    ctx = screens()
    host = login(watched(ctx.new_page()), t)
    host.wait_for_selector("#legal button")
    host.wait_for_selector("#player-links:not([hidden]) .pl-row")
    host.locator("#ng-details > summary").click()
    host.wait_for_selector("#ng-options [data-option]")
    for summary in host.locator("#player-links details > summary").all():
        summary.click()
    host.evaluate("document.querySelectorAll('main details').forEach((d) => { d.open = true; })")
    counted = host.evaluate("document.querySelectorAll('button, summary').length")
    assert counted > 20
    assert buttons_smaller_than(host, 44) == []
    url = player_link(host, "Ana")
    mine = open_live(ctx, url)
    mine.wait_for_selector("#my-events .picker button[data-card]")
    assert mine.locator("#my-events button").count() > 5
    assert buttons_smaller_than(mine, 44) == []
    assert host.errors == [] and mine.errors == []


def test_a_phone_that_asks_for_less_motion_gets_none(live_server_with, screens):
    t = live_server_with(wait_ms=600_000, claim_window_ms=600_000)
    t.session.log({"type": "flip", "card": "table:red"})      # a draining race window
    still = open_live(screens(reduced_motion="reduce"), t.url + "/")
    moving = open_live(screens(), t.url + "/")
    probe = """() => {
        const b = document.createElement('span'); b.className = 'badge warn'; document.body.append(b);
        const d = document.querySelector('#race .drain > span');
        const out = [getComputedStyle(b).animationName, getComputedStyle(b).animationDuration,
                     d ? getComputedStyle(d).transitionDuration : null];
        b.remove();
        return out;
    }"""
    for page in (still, moving):
        page.wait_for_selector("#race .drain")
    # the drain bar steps and never transitions, whatever the phone asks
    assert moving.evaluate(probe) == ["pulse", "1.2s", "0s"]
    name, duration, transition = still.evaluate(probe)
    assert name == "none" or duration == "0s"
    assert transition == "0s"


#: two animation frames: the page has laid out and drawn what it was just given
NEXT_FRAMES = """() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"""


def scrolls_sideways(page) -> bool:
    return page.evaluate("""() => document.documentElement.scrollWidth > document.documentElement.clientWidth""")


def test_the_pages_reflow_at_200_percent_text(live_server, screens):
    """Root font size doubled on a 390 px phone: no page scrolls sideways."""
    t = live_server
    hawker(t)
    ctx = screens()
    host = login(watched(ctx.new_page()), t)
    host.wait_for_selector("#player-links:not([hidden]) .pl-row")
    url = player_link(host, "Ana")
    wide = []
    page = watched(ctx.new_page())        # one tab, each page a fresh document in it

    def doubled(where: str) -> None:
        """The page open in the tab at twice the root size: if it scrolls
        sideways, ``where`` and what sticks out go into ``wide``."""
        assert page.evaluate(ZOOM_JS) == 36
        page.evaluate(NEXT_FRAMES)
        if scrolls_sideways(page):
            wide.append((where, page.evaluate("""() => [...document.querySelectorAll('body *')]
                .filter((n) => n.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
                .slice(0, 5).map((n) => n.tagName + '#' + n.id + '.' + n.className)"""),
                         page.evaluate(OVERFLOWING, "#panel *")[:3]))

    pages = [("/", "#conn.live"), ("/host", "#conn.live"), ("/join", "main"), (url, "#conn.live")]
    for path, ready in pages:
        page.goto(path if path.startswith("http") else t.url + path)
        page.wait_for_selector(ready)
        if path == "/host":
            page.locator("#ng-details > summary").click()
            page.wait_for_selector("#ng-options [data-option]")
        doubled(path)
        # what the phone shows (a full page at 200 % text is too tall to take)
        shot(page, f"a11y-200pc-{'player' if path == url else path.strip('/') or 'board'}.png",
             full_page=False)
    # the boards of the cards turned face up: Chomp!'s six, Tropichaos' seasons
    for game, players in (("chomp", ["Ana", "Bo", "Cy", "Dee", "Eve", "Fay"]),
                          ("tropichaos", ["Ana", "Bo", "Cy"])):
        t.session.new_game(game, players)
        page.goto(t.url + "/")
        page.wait_for_selector("#panel .reveal .slot")
        doubled(game)
    login_page = watched(screens().new_page())        # a phone not logged in
    login_page.goto(t.url + "/host")
    login_page.evaluate(ZOOM_JS)
    if scrolls_sideways(login_page):
        wide.append(("/host log-in", None))
    with league_screen(t) as league_url:
        league = login_page                     # the same phone, on to the league screen
        league.goto(league_url + "/")
        league.wait_for_selector("#standings tbody tr")
        league.evaluate(ZOOM_JS)
        if scrolls_sideways(league):
            wide.append(("league", None))
        shot(league, "a11y-200pc-league.png", full_page=False)
    assert wide == []


def test_the_keyboard_alone_logs_a_card_and_undoes_it(live_server, screens):
    """Tab to a card's button, Enter: logged; the focus stays in the buttons;
    Tab on to Undo, Enter: undone. No pointer anywhere."""
    t = live_server
    ctx = screens("dark", 1280)
    page = login(watched(ctx.new_page()), t)
    page.wait_for_selector("#legal button.event")
    focused = "() => { const a = document.activeElement; return a ? a.textContent.trim() : ''; }"

    def tab_to(test, limit=150):
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate(f"() => {{ const a = document.activeElement; return !!a && ({test}); }}"):
                return page.evaluate(focused)
        raise AssertionError(f"the keyboard never reached {test}")

    tab_to("a.matches('#legal button.event') && /Laksa/.test(a.textContent)")
    # what has the focus is drawn around (3 px)
    assert page.evaluate("getComputedStyle(document.activeElement).outlineWidth") == "3px"
    page.keyboard.press("Enter")
    expect_text(page, "#logged", "Laksa")
    assert t.session.snapshot()["view"]["face_up"] == ["food:laksa"]
    # the logged card's button was redrawn: the focus is back among the buttons
    assert page.evaluate("document.getElementById('legal').contains(document.activeElement)")
    tab_to("a.id === 'undo'")
    page.keyboard.press("Enter")
    expect_text(page, "#logged", "Undone")
    assert t.session.snapshot()["view"]["face_up"] == []
    # the new-game form opens and starts a game from the keyboard too
    tab_to("a.matches('#ng-details > summary')")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ng-options [data-option]")
    tab_to("a.id === 'ng-game'")
    page.keyboard.press("End")       # the last game in the list
    game = page.evaluate("document.getElementById('ng-game').value")
    tab_to("a.id === 'ng-start'")
    page.keyboard.press("Enter")
    # a game is running: the question takes the focus, on its safe answer
    page.wait_for_function("document.activeElement.id === 'ng-confirm-no'")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "ng-confirm-yes"
    page.keyboard.press("Enter")
    expect_text(page, "#toast", "New game started")
    assert t.session.snapshot()["game"] == game
    assert page.errors == []
