"""Tropichaos in a real browser (Playwright, Debian's chromium), against the
real server, and the scoreboard on a table TV (issue 23, "Fewer taps and
plain words"):

- the game length is a select on the new-game form (no JSON typed);
- at 390 px the chip stand's figures stay in their boxes and no word breaks
  inside a button ("Pomegranat/e", "Overstocke/d");
- at the end the console offers only reveals the tracker accepts, and the
  banner says "Game over" once;
- at 1280 x 800 every game's scoreboard puts the board beside the players
  with nothing below the fold.

Screenshots go to artifacts/screenshots/ (not committed): tropichaos-*.png,
tv-<game>-<players>.png (1280 x 800) and tv-<game>-<players>-phone.png (390 x
844).
"""

from __future__ import annotations

import random

import pytest

from tests.kit.browser import (BROWSER, BROKEN_WORDS, OVERFLOWING, PHONE, SHOTS, TIMEOUT_MS,
                              expect_text, open_host, shot)
from tests.kit.helpers import wait_for

pytestmark = BROWSER

TV = {"viewport": {"width": 1280, "height": 800}}
K, M, P = "kiwi", "mango", "pomegranate"
#: a two-player game on a three-space board, to the end (tests/test_tropichaos.py's
#: short_game): ana's piles are worked out in public, bo's spring pile is his
#: hidden starting chip
SHORT = ["spring", "summer", "autumn", "end"]
SHORT_GAME = [
    {"type": "draw", "chip": K}, {"type": "draw", "chip": M}, {"type": "draw", "chip": P},
    {"type": "deal", "player": "Bo", "chip": "fruit"},
    {"type": "take", "chip": K}, {"type": "draw", "chip": K},
    {"type": "sell", "count": 1}, {"type": "sell", "count": 1},
    {"type": "take", "chip": M}, {"type": "draw", "chip": "season"}, {"type": "draw", "chip": P},
    {"type": "take", "chip": P}, {"type": "draw", "chip": M},
    {"type": "sell", "count": 1},
    {"type": "take", "chip": K}, {"type": "draw", "chip": "season"}, {"type": "draw", "chip": K},
    {"type": "take", "chip": M}, {"type": "draw", "chip": K},
    {"type": "sell", "count": 2},
    {"type": "take", "chip": K}, {"type": "draw", "chip": "season"},
]



def wait_version(page, version: int):
    page.wait_for_function("(v) => document.body.dataset.version === String(v)", arg=version)


def play_some(table, n: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(n):
        legal = table.session.host_snapshot()["legal_events"]
        if not legal or table.session.snapshot()["finished"]:
            break
        table.session.log(rng.choice(legal))


def test_the_game_length_is_chosen_with_a_select_no_json(live_server, phone):
    t = live_server
    host = open_host(phone(), t)
    host.locator("#ng-details > summary").click()
    host.select_option("#ng-game", "tropichaos")
    length = host.locator("#opt-season_length")
    assert length.evaluate("e => e.tagName") == "SELECT"
    options = length.locator("option").all_inner_texts()
    assert [o.split(" (")[0] for o in options] == ["Full game", "Short game", "Quick game"]
    assert "8 moves" in options[0] and "3 moves" in options[2]
    host.select_option("#opt-season_length", label=options[2])
    # the custom board stays tucked away under Components, empty (null)
    assert not host.locator("details.components").evaluate("e => e.open")
    host.locator("#ng-start").click()
    host.locator("#ng-confirm-yes").click()          # the demo game is still running
    assert wait_for(lambda: t.session.game is not None and t.session.game.name == "tropichaos", 10)
    view = t.session.snapshot()["view"]
    assert view["board"]["spaces"] == ["spring", "summer", "autumn", "end"]
    assert view["rules"]["season_length"] == "quick"
    wait_version(host, t.session.version)
    expect_text(host, "#panel", "3 moves of the marker")


def test_390_px_chip_stand_fits_and_no_word_breaks_inside_a_button(live_server, phone):
    t = live_server
    t.session.new_game("tropichaos", [{"name": n} for n in ("Ana", "Bo", "Cy")])
    for ev in ({"type": "draw", "chip": P}, {"type": "draw", "chip": P},
               {"type": "draw", "chip": M},
               {"type": "deal", "player": "Bo", "chip": P},
               {"type": "deal", "player": "Cy", "chip": "fruit"},
               {"type": "take", "chip": P}):
        t.session.log(ev)
    host = open_host(phone(), t)
    wait_version(host, t.session.version)
    # the draw after a Take: "Pomegranate" and "A Season chip" in the grid
    expect_text(host, "#legal", "Pomegranate")
    assert host.evaluate(BROKEN_WORDS, "#legal button") == []
    shot(host, "tropichaos-host-draw.png")
    t.session.log({"type": "draw", "chip": M})      # Mango, Pomegranate, Mango
    wait_version(host, t.session.version)
    assert host.evaluate(BROKEN_WORDS, "#legal button") == []    # Bo: Take or Sell
    t.session.log({"type": "take", "chip": P})
    t.session.log({"type": "draw", "chip": M})      # three Mangos: overstocked
    wait_version(host, t.session.version)
    # Bo's hidden chip may be a Kiwi or a Pomegranate as far as the table knows
    expect_text(host, "#legal", "Overstocked: Bo puts Pomegranate into the Market")
    assert host.evaluate(BROKEN_WORDS, "#legal button, #panel h2") == []
    shot(host, "tropichaos-host-overstocked.png")
    # Bo's own page: his stand and his notes
    host.locator("#player-links details[data-player=Bo] > summary").click()
    url = host.locator("#player-links details[data-player=Bo] .pl-url").inner_text()
    mine = phone().new_page()
    mine.goto(url)
    mine.wait_for_selector("#conn.live")
    expect_text(mine, "#private-view", "Your chip stand")
    assert mine.evaluate(OVERFLOWING, "#private-view .stat, #private-view .stat .v") == []
    assert mine.evaluate(BROKEN_WORDS, "#private-view .stat, #my-events button") == []
    assert mine.evaluate("document.documentElement.scrollWidth") <= 390
    shot(mine, "tropichaos-mine.png")


def test_the_end_offers_only_reveals_the_tracker_accepts_and_says_game_over_once(
        live_server, phone):
    t = live_server
    t.session.new_game("tropichaos", [{"name": "Ana"}, {"name": "Bo"}], {"season_board": SHORT})
    for ev in SHORT_GAME[:4]:
        t.session.log(ev)
    # Bo names his starting chip on his own page: the reveals must fit it
    t.session.log_private("Bo", {"type": "starting_hand", "player": "Bo", "chip": M})
    for ev in SHORT_GAME[4:]:
        t.session.log(ev)
    host = open_host(phone(), t)
    wait_version(host, t.session.version)
    buttons = host.locator("#legal button.event")
    assert buttons.count() == 1                      # Bo's spring pile: his Mango
    expect_text(host, "#legal", "Bo's Spring pile: Mango")
    before = t.session.version
    buttons.first.click()
    assert wait_for(lambda: t.session.version > before, 10)
    assert t.session.snapshot()["finished"]
    wait_version(host, t.session.version)
    banner = host.locator("#banner").inner_text()
    assert banner.count("Game over") == 1 and "Ana wins with 6 points" in banner
    assert host.locator("#toast .error, .error:visible").count() == 0
    shot(host, "tropichaos-host-over.png")
    # a reveal the tracker made itself, logged anyway: the same step, not refused
    t.session.log({"type": "reveal", "player": "Ana", "season": "autumn", "chips": [K, P]})
    assert t.session.snapshot()["finished"]


@pytest.mark.parametrize("game, players", [
    ("tropichaos", 3), ("chope", 3), ("chomp", 3), ("chopote", 3), ("hawker", 3),
    ("tropichaos", 5),
])
def test_tv_1280x800_board_beside_the_players_nothing_below_the_fold(live_server, browser,
                                                                     game, players):
    t = live_server
    t.session.new_game(game, [{"name": n} for n in ("Ana", "Bo", "Cy", "Dee", "Eve")[:players]])
    play_some(t, 14 if players == 3 else 60, seed=3)
    for name, ctx_args in (("", TV), ("-phone", PHONE)):
        ctx = browser.new_context(**ctx_args)
        ctx.set_default_timeout(TIMEOUT_MS)
        page = ctx.new_page()
        page.goto(t.url + "/")
        page.wait_for_selector("#conn.live")
        wait_version(page, t.session.version)
        page.locator("#panel h2").first.wait_for()
        boxes = page.evaluate("""() => {
          const box = (e) => e.getBoundingClientRect();
          const players = box(document.querySelector('#players').closest('section'));
          const panel = box(document.getElementById('panel'));
          return { players: [players.left, players.right, players.top],
                   panel: [panel.left, panel.right, panel.top, panel.bottom],
                   height: document.documentElement.scrollHeight,
                   width: document.documentElement.scrollWidth };
        }""")
        page.screenshot(path=str(SHOTS / f"tv-{game}-{players}{name}.png"))
        if name == "":
            assert boxes["panel"][0] >= boxes["players"][1], boxes     # beside, not below
            # the panel at the top of its column, or under the race card there
            assert boxes["panel"][2] < 400 and boxes["players"][2] < 200, boxes
            assert boxes["height"] <= 800, boxes                      # nothing below the fold
            assert boxes["width"] <= 1280, boxes
        else:
            assert boxes["panel"][2] > boxes["players"][2], boxes     # a phone: one column
            assert boxes["width"] <= 390, boxes
        ctx.close()
