"""axe-core on Chomp!'s countdown, Chopote's board and the league screen
(tests/kit/a11y.py). A module of its own: spread over the workers."""

from __future__ import annotations

from tests.kit.a11y import (check_everywhere, chomp_race, league_screen, login, open_live,
                            player_link, screen, watched)
from tests.kit.browser import BROWSER

pytestmark = BROWSER


def test_a_countdown_a_chopote_board_and_the_league_pass_axe(browser, live_server, tmp_path):
    """Chomp!'s announced race mid-countdown (scoreboard and a player's page),
    Chopote's board with bottles on it (console and scoreboard), and the
    league screen with a table and a finished game."""
    t = live_server
    chomp_race(t)
    t.session.start_race(countdown_ms=600_000)          # counting down all through the test
    ctx = screen(browser, "dark", 390)
    try:
        url = player_link(login(watched(ctx.new_page()), t), "Bo")
    finally:
        ctx.close()

    def counting(ctx):
        page = open_live(ctx, t.url + "/")
        page.wait_for_selector("#countdown:not([hidden])")
        return page

    def private(ctx):
        page = open_live(ctx, url)
        page.wait_for_selector("#countdown:not([hidden])")
        return page

    found = check_everywhere(browser, [("scoreboard", counting), ("private page", private)],
                             "Chomp! countdown")

    t.session.new_game("chopote", [{"name": "Ana"}, {"name": "Bo"}, {"name": "Cy"}])
    for value in (4, 2, 1, 6):
        t.session.log({"type": "roll", "player": t.session.game.current_player(t.session.state),
                       "value": value})
    t.session.log({"type": "move", "player": "Ana", "from": "casier"})
    t.session.log({"type": "roll", "player": "Ana", "value": 3})

    def chopote(path):
        def opener(ctx):
            page = watched(ctx.new_page())
            if path == "/host":
                login(page, t)
            else:
                page.goto(t.url + path)
                page.wait_for_selector("#conn.live")
            page.wait_for_selector("#panel svg g[data-where]")
            return page
        return opener

    found += check_everywhere(browser, [("scoreboard", chopote("/")), ("console", chopote("/host"))],
                              "Chopote")
    with league_screen(t) as league_url:
        def league(ctx):
            page = watched(ctx.new_page())
            page.goto(league_url + "/")
            page.wait_for_selector("#tables .card")
            page.wait_for_selector("#standings tbody tr")
            return page
        found += check_everywhere(browser, [("screen", league)], "League")
    assert found == []
