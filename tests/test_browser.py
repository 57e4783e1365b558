"""End to end in a real browser: Playwright driving Debian's chromium on a
phone-sized screen, against the real server (waitress, ticker, mock buzzers).

Screenshots of the scoreboard for each game go to artifacts/screenshots/
(not committed) so a person can look at them.
"""

from __future__ import annotations

import re

import pytest

from tests.kit.browser import BROWSER, Held, expect_text, log_in, open_board, open_host, shot, watch
from tests.kit.helpers import wait_for

pytestmark = BROWSER


# ---------------------------------------------------------------------------


def test_scoreboard_for_chope_on_a_phone(live_server, phone):
    t = live_server
    t.session.log({"type": "flip", "card": "food:laksa"})
    t.session.log({"type": "flip", "card": "food:satay"})
    page = open_board(phone(), t)
    expect_text(page, "#banner", "Ana’s turn")
    assert page.locator("#players li").count() == 3
    expect_text(page, "#panel", r"cards left")
    expect_text(page, "#panel", r"\d+(\.\d)?%")          # the odds of busting
    expect_text(page, "#panel", "Laksa")
    expect_text(page, "#panel", "Satay")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(15, 17, 21)"                       # dark by default
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390                                  # nothing wider than the phone
    assert shot(page, "scoreboard-chope.png").stat().st_size > 10_000
    assert page.errors == []


def test_scoreboard_follows_a_light_phone(live_server, phone):
    page = open_board(phone("light"), live_server)
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(244, 245, 247)"
    shot(page, "scoreboard-chope-light.png")


def test_a_mock_buzzer_press_shows_the_verdict(live_server, phone):
    t = live_server
    page = open_board(phone(), t)
    t.session.log({"type": "flip", "card": "table:red"})      # a Chope! race: first other to press
    t.source.press("Cy")            # at once: a lone slam long after the log is asked about
    t.source.release("Cy")
    expect_text(page, "#race-reason", "Chope!")
    expect_text(page, "#verdict", "Cy chopes it!")
    assert page.locator("#strip-wrap").is_hidden()             # one press: no photo finish
    expect_text(page, "#presses", "Cy")
    assert page.locator("#race-accuracy").is_hidden()          # real (mock) buzzers: µs
    expect_text(page, "#last-event", "Chope! Cy chopes it!")     # the race, in the game's words
    shot(page, "scoreboard-chope-race.png")
    assert page.errors == []


def test_chomp_scoreboard_with_an_announced_race(live_server, phone):
    t = live_server
    t.session.new_game("chomp", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    want = {"Ana": "shark", "Bo": "seal", "Cy": "little-fish"}
    legal = t.session.legal_events()
    t.session.log(next((e for e in legal if e["cards"] == want), legal[0]))
    page = open_board(phone(), t)
    expect_text(page, "#panel", "Shark")
    expect_text(page, "#panel", r"pile \d+")
    eligible = t.session.host_snapshot()["race_request"]["eligible"]
    t.session.start_race(countdown_ms=1500)
    expect_text(page, "#countdown", r"^[12]$")                # the countdown, then GO
    expect_text(page, "#countdown", "GO!")
    first, *others = eligible
    t.source.press(first)
    for p in others:
        t.source.press(p)
    expect_text(page, "#verdict", f"{first} chomps!")
    expect_text(page, "#verdict-notes", "margin")
    assert page.locator("#strip .mark").count() == len(eligible)
    shot(page, "scoreboard-chomp.png")
    assert page.errors == []


def test_the_host_logs_a_card_and_every_open_page_updates(live_server, phone):
    t = live_server
    boards = [open_board(phone(), t) for _ in range(2)]
    host = phone().new_page()
    host.goto(t.url + "/host")
    host.fill("#pin", t.pin)
    host.click("button[type=submit]")
    host.wait_for_selector("#legal button.event")
    host.wait_for_selector("#conn.live")
    host.locator("#legal button.event", has_text="Laksa").click()
    for page in boards:
        expect_text(page, "#panel", "Laksa")
        expect_text(page, "#last-event", "[Ll]aksa")
    assert t.session.snapshot()["view"]["face_up"] == ["food:laksa"]
    # a button whose words go on from its heading's verb keeps them all:
    # "Stop and claim the face-up food", not "And claim the face-up food"
    expect_text(host, "#legal", "Stop and claim the face-up food")
    # undo from the console reaches the phones too
    host.click("#undo")
    from playwright.sync_api import expect

    for page in boards:
        expect(page.locator("#panel")).not_to_contain_text("Laksa")
    shot(host, "host-console.png")
    assert all(p.errors == [] for p in boards)


def test_a_dropped_connection_reconnects_and_catches_up(live_server, phone):
    t = live_server
    ctx = phone()
    page = open_board(ctx, t)
    urls = []
    page.on("request", lambda r: urls.append(r.url) if "/events" in r.url else None)
    version = t.session.log({"type": "flip", "card": "food:laksa"})["id"]
    expect_text(page, "#panel", "Laksa")
    ctx.set_offline(True)
    t.services.broker.drop_all()                      # the Wi-Fi drops the stream
    page.wait_for_selector("#conn.warn")              # "reconnecting…" is visible
    expect_text(page, "#conn", "reconnecting")
    # it pulses, and stops within 5 s (WCAG 2.2.2): pulsing for ever, a
    # phone out of reach of the table drew frames for as long as it lasted
    moving = page.evaluate("""() => document.getAnimations().map((a) =>
        [a.animationName || String(a), a.effect.getComputedTiming().endTime])""")
    assert moving and all(end <= 5_000 for _, end in moving), moving
    t.session.log({"type": "flip", "card": "food:satay"})   # happens while the phone is away
    ctx.set_offline(False)
    expect_text(page, "#panel", "Satay")
    page.wait_for_selector("#conn.live")
    assert page.evaluate("document.body.dataset.version") == str(t.session.version)
    assert any(f"last_id={version}" in u for u in urls) or any("/events" in u for u in urls)
    assert page.errors == []


def test_virtual_buzzers_play_a_race_from_the_browser(live_server, phone):
    t = live_server
    page = open_board(phone(), t)
    buzzer = page.locator("#buzzers button[data-player=Bo]")
    buzzer.tap()
    expect_text(page, "#burst", r"Pressed: Bo")              # waiting for its card, draining
    assert page.locator("#burst .drain").count() == 1
    t.session.log({"type": "flip", "card": "table:blue"})   # the burst becomes the race
    expect_text(page, "#verdict", "Bo chopes it!")
    assert page.locator("#race-accuracy").is_visible()      # marked: millisecond accuracy
    assert page.errors == []


def test_a_name_with_html_is_shown_as_text(live_server, phone):
    t = live_server
    evil = '<img src=x onerror="document.body.dataset.pwned=1">'
    t.session.new_game("chope", [{"name": evil}, {"name": "Bo"}])
    page = open_board(phone(), t)
    expect_text(page, "#players", re.escape(evil))
    assert page.locator("#players img, #banner img").count() == 0
    assert page.evaluate("document.body.dataset.pwned") is None


def test_a_page_opens_its_live_stream_once(live_server, phone):
    """The scoreboard and the console each open one stream as they load: the
    load's own pageshow, which comes while the stream is still connecting
    (held here, as on a slow link), leaves it to connect. It opened another:
    two streams and two snapshots for a console on a quick link too."""
    t = live_server
    for path in ("/", "/host"):
        ctx = phone()
        log_in(ctx, t)
        page = ctx.new_page()
        streams = []
        page.on("request", lambda r, s=streams: s.append(r.url) if "/events" in r.url else None)
        held = Held(page, "**/events*", reach=False, first=True)
        page.goto(t.url + path)                 # loaded: its pageshow has come
        held.wait()
        held.release()
        page.wait_for_selector("#conn.live")
        assert len(streams) == 1, (path, streams)


#: counts the ``state`` news each live stream of the page brings (before the
#: page's own handler sees it)
COUNT_NEWS = """window.__news = 0;
window.EventSource = class extends window.EventSource {
  constructor(...args) { super(...args); this.addEventListener('state', () => { window.__news += 1; }); }
};"""


def test_a_console_opened_as_a_card_is_logged_shows_the_card(live_server, phone):
    """The console's first fetch of its state is answered before the card is
    logged, and reaches the page after the stream's news of it (held here,
    as on a slow link): the news asks for the state again. It was dropped
    (nothing to apply it to yet), and the console showed the table from
    before the card until the next event."""
    t = live_server
    ctx = phone()
    log_in(ctx, t)
    ctx.add_init_script(COUNT_NEWS)
    page = watch(ctx.new_page())
    held = Held(page, "**/api/host/state", reach=True, first=True)
    page.goto(t.url + "/host")
    held.wait()                                 # answered: the table before the card
    page.wait_for_selector("#conn.live")        # the stream is open
    t.session.log({"type": "flip", "card": "food:laksa"})
    page.wait_for_function("() => window.__news >= 1")     # the news came, and went
    held.release()
    expect_text(page, "#log", "Laksa")
    assert page.locator("body").get_attribute("data-version") == str(t.session.version)
    assert page.errors == []


def test_the_page_reconnects_when_it_becomes_visible_again(tmp_path, phone):
    from tests.kit.web import start_table

    # heartbeats an hour apart: the watchdog (2.5 heartbeats) never notices in this test
    t = start_table(tmp_path, SSE_HEARTBEAT_S=3600.0)
    try:
        page = open_board(phone(), t)
        page.evaluate("TC.conn.source.close()")     # the phone dropped the background stream
        t.session.log({"type": "flip", "card": "food:otah"})
        page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # back in front
        expect_text(page, "#panel", "Otah")
        page.wait_for_selector("#conn.live")
    finally:
        t.close()


# ---------------------------------------------------------------------------
# the host's new-game form (built from the games' declared settings)


def open_new_game_form(page):
    page.locator("#ng-details > summary").tap()
    page.wait_for_selector("#ng-options [data-option]")


def overflowing(page, selector: str) -> list[str]:
    """Controls matching ``selector`` that stick out of the phone's screen."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)]
        .filter((n) => n.offsetParent && n.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map((n) => n.outerHTML.slice(0, 80))""", selector)


def test_new_game_form_is_built_from_the_settings_and_fits_a_phone(live_server, phone):
    from playwright.sync_api import expect

    page = open_host(phone(), live_server)
    open_new_game_form(page)
    expect(page.locator("#ng-game")).to_have_value("chope")
    # a dropdown with the rulebook's choices, a checkbox, a number field, a player picker
    assert page.locator("select#opt-own_colour_bonus option").count() == 2
    assert page.locator("#opt-favourite_food").get_attribute("type") == "checkbox"
    assert page.locator("#opt-mynahs").get_attribute("type") == "number"
    assert page.locator("#opt-mynahs").get_attribute("min") == "0"
    expect(page.locator("select#opt-starting_player option")).to_have_count(4)   # nobody + 3
    # each option carries its rulebook line
    expect(page.locator(".opt:has(#opt-bust_ends_turn) .help .rule-quote")).to_contain_text(
        "two Food cards")
    # component counts: collapsed, prefilled with the default
    assert page.locator("details.components").get_attribute("open") is None
    assert '"red": 4' in page.locator("#opt-tables").input_value()
    # the players' colours are the pickers, not a JSON box
    assert page.locator("#opt-colours").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert overflowing(page, "#new-game input, #new-game select, #new-game button") == []
    assert shot(page.locator("#new-game-card"), "host-new-game-form.png").stat().st_size > 10_000
    assert page.errors == []


#: the dropdowns of the new-game form whose options a closed dropdown cuts:
#: an option's text wider than the room left of the dropdown's arrow
CUT_DROPDOWNS = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const cut = [];
  for (const sel of document.querySelectorAll('#new-game select')) {
    const cs = getComputedStyle(sel);
    ctx.font = cs.font;
    const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20;
    for (const o of sel.options) if (ctx.measureText(o.text).width > room) cut.push(`${sel.id || sel.className}: ${o.text}`);
  }
  return cut;
}"""


@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_no_new_game_dropdown_is_cut_on_a_phone(live_server, browser, locale):
    """Issue 33: at 390 px the form's dropdowns showed "Players log their
    own draws (che", "Given Ingredients go to the Black M..." (Hawker Wars,
    Tropichaos, Chopote, Chomp!, a Chope! one): a choice whose labels a
    dropdown cannot show is a list of radio buttons, every game, both
    languages; what is chosen is what the game gets."""
    from tests.kit.browser import PHONE, TIMEOUT_MS

    t = live_server
    ctx = browser.new_context(**PHONE, locale=locale)
    ctx.set_default_timeout(TIMEOUT_MS)
    page = open_host(ctx, t)
    open_new_game_form(page)
    for game in ("chope", "chomp", "chopote", "hawker", "tropichaos"):
        page.select_option("#ng-game", game)
        page.wait_for_function(f"document.querySelector('#ng-options [data-option]') && "
                               f"document.getElementById('ng-game').value === '{game}'")
        assert page.evaluate(CUT_DROPDOWNS) == [], (game, page.evaluate(CUT_DROPDOWNS))
        assert overflowing(page, "#new-game input, #new-game select, #new-game label") == [], game
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.select_option("#ng-game", "hawker")
    assert page.locator("#opt-poisoning_loss input[type=radio]").count() == 2
    page.locator("#opt-poisoning_loss label.check").nth(1).click()
    shot(page.locator("#new-game-card"), f"host-new-game-choices-{locale}.png")
    page.locator("#ng-start").click()
    page.locator("#ng-confirm-yes").click()
    assert wait_for(lambda: t.session.game is not None and t.session.game.name == "hawker", 10)
    # the 2nd radio ("Out of the game") is what the game got
    assert t.session.store.game_info(t.session.game_id)["options"]["poisoning_loss"] == "box"
    assert page.errors == []
    ctx.close()


def test_switching_the_game_resets_its_options(live_server, phone):
    from playwright.sync_api import expect

    page = open_host(phone(), live_server)
    open_new_game_form(page)
    page.select_option("#opt-own_colour_bonus", index=1)
    page.select_option("#ng-game", "chomp")
    expect(page.locator("#opt-own_colour_bonus")).to_have_count(0)
    expect(page.locator("select#opt-two_player_end")).to_have_count(1)
    page.select_option("#ng-game", "chope")
    expect(page.locator("#opt-own_colour_bonus")).to_have_value("0")       # back to the default
    assert page.errors == []


def test_a_refused_new_game_shows_why_beside_the_option(live_server, phone):
    from playwright.sync_api import expect

    t = live_server
    game_id = t.session.game_id
    page = open_host(phone(), t)
    open_new_game_form(page)
    page.fill("#opt-mynahs", "-1")
    page.locator("#ng-start").tap()
    # a game is running: starting another asks first
    expect(page.locator("#ng-confirm")).to_be_visible()
    expect(page.locator("#ng-confirm-text")).to_contain_text("Chope! is still running")
    page.locator("#ng-confirm-yes").tap()
    note = page.locator(".opt:has(#opt-mynahs) + .field-error")
    expect(note).to_contain_text("mynahs")
    expect(note).to_be_in_viewport()
    assert page.locator("#opt-mynahs").get_attribute("aria-invalid") == "true"
    assert t.session.game_id == game_id                     # nothing was started
    shot(page, "host-new-game-refused.png", full_page=False)     # what the phone shows
    # "keep playing" leaves the running game alone
    page.fill("#opt-mynahs", "8")
    page.locator("#ng-start").tap()
    page.locator("#ng-confirm-no").tap()
    expect(page.locator("#ng-start")).to_be_visible()
    assert t.session.game_id == game_id
    assert page.errors == []


def test_a_head_start_is_named_on_screen_and_only_offered_for_a_game_with_races(live_server,
                                                                              phone):
    """The head start field said only "0"; it is labelled on the screen now,
    and a game with no race (Tropichaos, Chopote) neither shows nor sends one."""
    from playwright.sync_api import expect

    t = live_server
    page = open_host(phone(), t)
    open_new_game_form(page)
    field = page.locator("[data-field='players.1.handicap_ms']")
    label = page.locator(".player-row:nth-child(2) .pr-handicap")
    expect(label).to_be_visible()
    expect(label).to_contain_text("Head start")
    label.locator("span", has_text="Head start").tap()      # the words lead to the field
    expect(field).to_be_focused()
    field.fill("40")
    for game in ("tropichaos", "chopote"):
        page.select_option("#ng-game", game)
        expect(label).to_be_hidden()
        expect(page.locator("#ng-suggest")).to_be_hidden()
    page.select_option("#ng-game", "hawker")
    expect(label).to_be_visible()
    expect(page.locator("#ng-suggest")).to_be_visible()
    page.select_option("#ng-game", "tropichaos")
    page.locator("#ng-start").tap()
    page.locator("#ng-confirm-yes").tap()
    expect(page.locator("#toast")).to_contain_text("New game started")
    assert t.session.game.name == "tropichaos"
    assert all("handicap_ms" not in p for p in t.session.players)    # the 40 went with the field
    assert page.errors == []


def test_the_colours_chosen_are_the_colours_used(live_server, phone):
    from playwright.sync_api import expect

    t = live_server
    ctx = phone()
    page = open_host(ctx, t)
    open_new_game_form(page)
    page.select_option("[data-field='players.0.colour']", "blue")
    page.select_option("[data-field='players.1.colour']", "green")
    page.select_option("[data-field='players.2.colour']", "red")
    page.locator("#ng-start").tap()
    page.locator("#ng-confirm-yes").tap()
    expect(page.locator("#toast")).to_contain_text("New game started")
    view = {p["name"]: p["colour"] for p in t.session.snapshot()["view"]["players"]}
    assert view == {"Ana": "blue", "Bo": "green", "Cy": "red"}     # Chope! scores these colours
    board = open_board(ctx, t)
    swatch = board.locator("#players li[data-player=Ana] .swatch")
    expect(swatch).to_have_css("background-color", "rgb(30, 136, 229)")   # the page's blue
    assert page.errors == [] and board.errors == []
