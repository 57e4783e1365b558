"""Ratings, seasons, the BG Stats list and the suggested head starts in a
real browser (issue 35): at 390 px and 1280 px, in English and French, both
colour schemes, no sideways scroll, and axe finds nothing serious."""

from __future__ import annotations

from companion.record.reflexes import night_of
from tests.kit.a11y import check_everywhere, open_console, watched
from tests.kit.browser import BROWSER
from tests.kit.nights import fill

pytestmark = BROWSER


def no_sideways_scroll(page) -> None:
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_one_seasons_ratings_and_finished_games_render_and_pass_axe(browser, live_server):
    t = live_server
    fill(t.store, 300, per_game=50, finished=True)
    start = night_of(sorted(g["created_ns"] for g in t.store.list_games() if g["finished"])[2])
    sid = t.store.add_season("Late June", start, None)["id"]
    seen = []

    def opener(path, plots):
        def open_(ctx):
            page = watched(ctx.new_page())
            page.goto(f"{t.url}{path}?season={sid}")
            page.wait_for_selector("svg.plot")
            assert page.locator("svg.plot").count() == plots
            assert page.locator("#season").input_value() == str(sid)
            no_sideways_scroll(page)
            seen.append((path, page.evaluate("window.innerWidth"),
                         page.evaluate("document.documentElement.lang")))
            return page
        return open_

    def table(ctx):
        page = opener("/stats", 1)(ctx)
        assert page.locator("#ratings table").count() == 1
        assert page.locator("#bgstats a[href*='createPlay.html?data=']").count() == 4
        return page

    found = check_everywhere(browser, [("table", table),
                                       ("player", opener("/stats/player/Cy", 3))], "ratings")
    assert found == [], "\n".join(found)
    assert {(w, lang) for _, w, lang in seen} == {(390, "en"), (390, "fr"), (1280, "en"),
                                                  (1280, "fr")}


def suggest(page) -> None:
    """Tap "Suggest from their reaction times" once; its note shows. (A tap
    made before the console had wired the form was lost, once in a
    clean-clone CI run: the form's buttons now come disabled until they
    work, and a click waits for that.)"""
    page.click("#ng-suggest")
    page.wait_for_selector("#ng-suggest-note:not([hidden])")


def test_the_console_adds_a_season_and_suggests_head_starts(browser, live_server):
    t = live_server
    fill(t.store, 200, per_game=50)          # Ana, Bo, Cy (and Dee) with reaction times
    added = []

    def console(ctx):
        page = open_console(ctx, t)
        page.click("#ng-details > summary")
        suggest(page)
        rows = page.evaluate("""() => [...document.querySelectorAll('#ng-players .player-row')]
            .map((r) => [r.querySelector('.ng-name').value, Number(r.querySelector('.ng-handicap').value)])""")
        got = dict(rows)
        assert got["Ana"] == 0 and 0 < got["Bo"] < got["Cy"] and 150 <= got["Cy"] <= 240, got
        assert f"Cy {got['Cy']} ms" in page.inner_text("#ng-suggest-note")
        page.click("#seasons-details > summary")
        name = f"Season {len(added) + 1}"
        page.fill("#season-name", name)
        page.fill("#season-start", "2025-06-17")
        page.fill("#season-end", "2025-06-01")                 # before its start: refused
        page.click("#season-add")
        page.wait_for_selector("#season-error:not([hidden])")
        assert page.get_attribute("#season-end", "aria-invalid") == "true"
        page.fill("#season-end", "")
        page.click("#season-add")
        page.wait_for_function("(n) => [...document.querySelectorAll('#seasons li')]"
                               ".some((li) => li.textContent.includes(n))", arg=name)
        assert page.locator("#season-error").is_hidden()
        added.append(name)
        no_sideways_scroll(page)
        return page

    found = check_everywhere(browser, [("console", console)], "console seasons")
    assert found == [], "\n".join(found)
    assert len(added) == 4                      # each width in each language
    assert sorted(s["name"] for s in t.store.seasons()) == added
    t.session.handicaps_allowed = False         # a league or convention table
    ctx = browser.new_context()
    try:
        page = open_console(ctx, t)
        page.click("#ng-details > summary")
        page.wait_for_selector("#ng-players .ng-handicap", state="attached")
        assert page.locator("#ng-suggest").is_hidden()
        assert page.locator("#ng-players .ng-handicap").first.is_hidden()
    finally:
        ctx.close()
