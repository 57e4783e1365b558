"""Private player pages in a real browser (Playwright, Debian's chromium, a
390x844 phone), against the real server: the host console shows each
player's link and QR code; one phone opens Ana's own page and logs the
cards she drew; another phone on the scoreboard sees only her hand grow.
Screenshots go to artifacts/screenshots/ (player-*.png)."""

from __future__ import annotations

import json
import re

from tests.kit.a11y import player_link
from tests.kit.browser import BROWSER, expect_text, open_board, open_host, shot, watch
from tests.kit.browser import hawker_game as hawker
from tests.kit.moments import demo_chope, flips
from tests.kit.scene import on_time

pytestmark = BROWSER


def ana_row_text(page) -> str:
    return page.locator("#players li[data-player=Ana]").inner_text()


def test_the_host_shows_links_a_phone_logs_its_draw_the_scoreboard_sees_only_the_count(
        live_server, phone):
    from playwright.sync_api import expect

    t = live_server
    hawker(t)
    host = open_host(phone(), t)
    links = host.locator("#player-links")
    expect(links).to_be_visible()
    expect(host.locator("#player-links .pl-row")).to_have_count(2)
    host.locator("#player-links details[data-player=Ana] > summary").tap()
    qr = host.locator("#player-links details[data-player=Ana] img.qr")
    expect(qr).to_be_visible()
    assert qr.evaluate("(n) => n.naturalWidth > 0 && n.getBoundingClientRect().width >= 180")
    url = host.locator("#player-links details[data-player=Ana] .pl-url").inner_text()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/p/[A-Za-z0-9_-]{43}", url)
    assert host.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    links.scroll_into_view_if_needed()
    shot(links, "player-links-console.png")
    assert host.errors == []

    board = open_board(phone(), t)
    expect_text(board, "#players li[data-player=Ana]", r"0")
    mine = phone().new_page()
    mine.errors = []
    mine.on("pageerror", lambda exc: mine.errors.append(str(exc)))
    mine.goto(url)
    mine.wait_for_selector("#conn.live")
    expect_text(mine, "#me", "Ana")
    expect_text(mine, "#private-view", r"Your hand · 0 cards")
    picker = mine.locator("#my-events .picker").first
    expect(picker).to_contain_text("Your draw: the 4 Ingredient cards you got")
    for card in ("egg", "egg", "flour", "chili"):
        picker.locator(f"button[data-card={card}]").tap()
    log = picker.locator("button.log-pick")
    expect(log).to_have_text("Log: Egg, Egg, Flour, Chili")
    shot(mine, "player-page-picking.png")
    log.tap()
    expect_text(mine, "#private-view", r"Your hand · 4 cards")
    expect(mine.locator("#private-view .chip")).to_have_text(["Egg", "Egg", "Flour", "Chili"])
    # the Action card: few choices, so one button each
    mine.locator("#my-events button.event", has_text="Family Recipe").tap()
    expect_text(mine, "#private-view", r"Your hand · 5 cards")
    shot(mine, "player-page-hand.png")
    mine.evaluate("window.scrollTo(0, 0)")
    shot(mine, "player-page-phone-screen.png", full_page=False)   # what the phone shows

    # the scoreboard: Ana's hand size, never her cards
    expect_text(board, "#players li[data-player=Ana]", r"5")
    state = board.evaluate("fetch('/api/state').then((r) => r.json())")
    assert state["view"]["players"][0]["hand"] == 5
    assert '"flour"' not in json.dumps(state["event"] if "event" in state else state["last_event"])
    text = board.locator("body").inner_text()
    assert "Egg, Egg, Flour" not in text and "Family Recipe" not in ana_row_text(board)
    assert mine.errors == [] and board.errors == []

    # the player's own buzzer: press and hold, then let go (two posts)
    buzzer = mine.locator("#my-buzzer")
    expect(buzzer).to_be_visible()
    box = buzzer.bounding_box()
    assert box["width"] >= 140 and box["height"] >= 140          # a thumb cannot miss it
    assert box["y"] + box["height"] <= 844                      # on the screen, unscrolled
    # each change is numbered (seq: the time in µs) so the two posts cannot swap
    with mine.expect_request(lambda r: r.url.endswith("/press")
                             and r.post_data_json["pressed"] is True) as down:
        mine.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        mine.mouse.down()
    assert "down" in buzzer.get_attribute("class")
    with mine.expect_request(lambda r: r.url.endswith("/press")
                             and r.post_data_json["pressed"] is False) as up:
        mine.mouse.up()
    assert up.value.post_data_json["seq"] > down.value.post_data_json["seq"] > 0
    # ... and carries the page's own id (its numbers are kept apart from other pages')
    page_id = down.value.post_data_json["page"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{16}", page_id) and up.value.post_data_json["page"] == page_id


def test_a_revoked_link_stops_the_open_page(live_server, phone):
    t = live_server
    hawker(t)
    host = open_host(phone(), t)
    host.locator("#player-links details[data-player=Bo] > summary").tap()
    url = host.locator("#player-links details[data-player=Bo] .pl-url").inner_text()
    mine = phone().new_page()
    mine.goto(url)
    mine.wait_for_selector("#conn.live")
    revoke = host.locator("#player-links .pl-row[data-player=Bo] button.pl-revoke")
    revoke.tap()
    revoke.tap()                                              # "Sure? Revoke it"
    expect_text(host, "#player-links .pl-row[data-player=Bo]", "Revoked")
    t.session.log({"type": "draw", "player": "Ana", "pile": "ingredient", "count": 4})
    expect_text(mine, "#gone", "not valid")
    assert mine.locator("#private-view").inner_text() == ""
    assert mine.goto(url).status == 404


def test_the_players_own_buzzer_stays_put_as_a_race_begins_and_ends(live_server, phone):
    """A player's own buzzer is a bar at the bottom of the screen, the same
    size in the same place before a race, while it runs and at its verdict.
    It used to sit at the page's end (below the screen) and come up under
    the race card, smaller, as the race began: a thumb pressing it there as
    the host logged the card pressed the players' list instead."""
    t = live_server
    host = open_host(phone(), t)
    mine = watch(phone().new_page())
    mine.goto(player_link(host, "Bo"))
    mine.wait_for_selector("#conn.live")
    buzzer = mine.locator("#my-buzzer")
    idle = buzzer.bounding_box()
    assert idle["y"] + idle["height"] <= 844 and idle["height"] >= 140
    # its words beside it, not above: the bar took 250 px of the 844 with
    # them on top (a third of what the page shows), 166 beside it
    bar, words = mine.locator("#buzzer-card").bounding_box(), mine.locator("#buzzer-prompt")
    assert bar["height"] <= 200, bar
    assert words.bounding_box()["x"] + words.bounding_box()["width"] <= idle["x"]

    def play(scene):
        if flips(t.session):             # a playing the machine could not keep: again
            demo_chope(t, mine)
        scene.begin()
        t.session.log({"type": "flip", "card": "table:red"})   # Bo may win it
        expect_text(mine, "#buzzer-prompt", "^Press!$")
        assert buzzer.bounding_box() == idle
        shot(mine, "player-page-buzzer-race.png", full_page=False)
        t.source.press("Bo")
        t.source.release("Bo")
        # a slam this long after the card's log may be for a card not logged
        # yet: the judge asks the host (0.8 s did), and the scene is not this one
        scene.by(0.45, "Bo's slam after the log")
    on_time(play)
    expect_text(mine, "#buzzer-prompt", "Bo chopes it!")
    assert buzzer.bounding_box() == idle
    assert mine.errors == []
