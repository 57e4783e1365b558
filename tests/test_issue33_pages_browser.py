"""What a new host met on the phones (issue 33, item 6), each in chromium on
a 390 x 844 phone: the scoreboard of a game that never races offers no
virtual buzzers; the console's own items (the race question, the card
buttons, the thumb bar, the new-game form, Stop)."""

from __future__ import annotations

from tests.kit.browser import BROWSER, expect_text, open_board, open_host

pytestmark = BROWSER

SHOWN = "(id) => { const e = document.getElementById(id); return !!e && !e.hidden && e.offsetHeight > 0; }"


def test_a_game_without_races_shows_no_virtual_buzzers(live_server, phone):
    """Chopote has no race: its scoreboard showed virtual buzzers (demo
    mode) all the same; Chope! keeps them; the console follows."""
    t = live_server
    t.session.new_game("chopote", ["Ana", "Bo", "Cy"])
    ctx = phone()
    board = open_board(ctx, t)
    board.wait_for_selector("#panel h2")
    assert not board.evaluate(SHOWN, "buzzers-card")
    host = open_host(ctx, t)
    host.wait_for_selector("#legal button")
    assert not host.evaluate(SHOWN, "buzzers-card")
    t.session.new_game("chope", ["Ana", "Bo", "Cy"])
    board.wait_for_selector("#buzzers-card:not([hidden]) #buzzers button")
    host.wait_for_selector("#buzzers-card:not([hidden]) #buzzers button")
    expect_text(board, "#buzzers-card h2", "Virtual buzzers")
    assert board.errors == [] and host.errors == []
