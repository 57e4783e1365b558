"""The statistics pages in a real browser (issue 35): the server-drawn plots
render at 390 px and 1280 px, in English and French, both colour schemes,
with no sideways scroll of the page, and pass axe (no serious or critical
finding)."""

from __future__ import annotations

from tests.kit.a11y import check_everywhere, watched
from tests.kit.browser import BROWSER
from tests.kit.nights import fill

pytestmark = BROWSER


def test_the_statistics_pages_render_and_pass_axe(browser, live_server):
    t = live_server
    fill(t.store, 300, per_game=50)
    drawn = []

    def opener(path, plots):
        def open_(ctx):
            page = watched(ctx.new_page())
            page.goto(t.url + path)
            page.wait_for_selector("svg.plot")
            box = page.evaluate("""() => [...document.querySelectorAll('svg.plot')].map((s) => {
                const r = s.getBoundingClientRect(); return [r.width, r.height]; })""")
            width = page.evaluate("window.innerWidth")
            assert len(box) == plots and all(0 < w <= width and h > 40 for w, h in box), box
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            drawn.append((path, width, page.evaluate("document.documentElement.lang")))
            return page
        return open_

    found = check_everywhere(browser, [("table", opener("/stats", 1)),
                                       ("player", opener("/stats/player/Cy", 2))], "statistics")
    assert found == [], "\n".join(found)
    assert {(w, lang) for _, w, lang in drawn} == {(390, "en"), (390, "fr"), (1280, "en"),
                                                   (1280, "fr")}
