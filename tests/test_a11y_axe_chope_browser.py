"""axe-core on every page of a Chope! game mid-race and at its verdict: the
scoreboard, the console and its new-game form, the log-in and join pages
(tests/kit/a11y.py: both widths, schemes and languages; no serious or
critical finding). A module of its own: the slowest checks, spread over the
workers."""

from __future__ import annotations

from tests.kit.a11y import check_everywhere, open_console, open_live, watched
from tests.kit.browser import BROWSER

pytestmark = BROWSER


def test_chope_mid_race_every_page_passes_axe(browser, live_server_with):
    """Chope!: a Table card flipped (a race running, its window draining),
    then Cy's press (the verdict, the presses, the photo finish). The
    new-game form is checked on the console just checked, its form opened."""
    # Bo's press a runner-up however busy the machine (a photo finish needs two)
    t = live_server_with(wait_ms=900_000, claim_window_ms=900_000, runner_up_ms=60_000)
    t.session.log({"type": "flip", "card": "food:laksa"})
    t.session.log({"type": "flip", "card": "table:red"})     # a race: first other to press

    def board(ctx):
        page = open_live(ctx, t.url + "/")
        page.wait_for_selector("#race:not([hidden]) .drain")
        return page

    def console(ctx):
        return open_console(ctx, t, "#legal button.event")

    def console_and_form(ctx):
        """The console, then its new-game form opened (the same page)."""
        page = console(ctx)
        yield "console", page
        page.locator("#ng-details > summary").click()
        page.wait_for_selector("#ng-options [data-option]")
        yield "new-game form", page

    def login_page(ctx):
        page = watched(ctx.new_page())
        page.goto(t.url + "/host")
        page.wait_for_selector("#pin")
        return page

    def join(ctx):
        page = watched(ctx.new_page())
        page.goto(t.url + "/join")
        return page

    # the log-in page first: once logged in, /host is the console
    found = check_everywhere(browser, [("log-in", login_page), ("scoreboard", board),
                                       ("console", console_and_form), ("join", join)],
                             "Chope! race")
    for buzzer in ("Cy", "Bo"):
        t.source.press(buzzer)
        t.source.release(buzzer)

    def verdict(ctx):
        page = open_live(ctx, t.url + "/")
        page.wait_for_selector("#verdict:not(:empty)")
        page.wait_for_selector("#strip .mark")
        return page

    def console_verdict(ctx):
        page = console(ctx)
        page.wait_for_selector("#verdict:not(:empty)")
        return page

    found += check_everywhere(browser, [("scoreboard", verdict), ("console", console_verdict)],
                              "Chope! verdict")
    assert found == []
