"""axe-core on Hawker Wars' pages, a player's private page included
(tests/kit/a11y.py). A module of its own: spread over the workers."""

from __future__ import annotations

from tests.kit.a11y import check_everywhere, login, open_console, open_live, player_link, screen, watched
from tests.kit.browser import BROWSER
from tests.kit.browser import hawker_game as hawker

pytestmark = BROWSER


def test_hawker_wars_every_page_and_the_private_page_pass_axe(browser, live_server):
    """Hawker Wars with private draws: the scoreboard, the console (with the
    players' links card) and Ana's own page with her picker open."""
    t = live_server
    hawker(t)
    ctx = screen(browser, "dark", 390)
    try:
        url = player_link(login(watched(ctx.new_page()), t), "Ana")
    finally:
        ctx.close()

    def board(ctx):
        page = open_live(ctx, t.url + "/")
        page.wait_for_selector("#panel:not([hidden])")
        return page

    def console(ctx):
        page = open_console(ctx, t, "#player-links:not([hidden]) .pl-row")
        page.locator("#player-links details[data-player=Ana] > summary").click()
        return page

    def private(ctx):
        page = open_live(ctx, url)
        page.wait_for_selector("#my-events .picker button[data-card]")
        return page

    assert check_everywhere(browser, [("scoreboard", board), ("console", console),
                                      ("private page", private)], "Hawker Wars") == []
