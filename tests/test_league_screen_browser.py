"""The league screen tells the truth about its broker (issue 33, item 5): it
said "live" in green while the broker was down and blamed every table as
offline ("catching up when back"), though ``/api/league`` had
``broker.connected: false``. A real Mosquitto, a table publishing to it, the
league server, the page in chromium; the broker stopped, then started
again."""

from __future__ import annotations

from tests.kit.browser import BROWSER, expect_text
from tests.kit.helpers import wait_for
from tests.kit.league import SMALL_CHOPE, Table, get_json, league_server
from tests.kit.mosquitto import NEEDS_MOSQUITTO

pytestmark = [*BROWSER, NEEDS_MOSQUITTO]

#: what the page says of the broker and the tables, read at once
READ = """() => ({
  live: document.getElementById('live').textContent,
  green: !document.getElementById('live').classList.contains('off'),
  down: !!document.getElementById('broker') && !document.getElementById('broker').hidden,
  banner: (document.getElementById('broker') || {}).textContent || '',
  blamed: document.querySelectorAll('#tables .offline').length,
  cards: document.querySelectorAll('#tables .card').length,
})"""


def test_the_league_screen_shows_the_broker_down_and_blames_no_table(tmp_path, broker, phone):
    league = league_server(tmp_path, broker)
    table = Table(tmp_path, broker, "t1").publish()
    page = phone().new_page()
    try:
        table.session.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)
        assert wait_for(lambda: [t["online"] for t in league.store.tables()] == [True], timeout=15)
        page.goto(league.url + "/")
        page.wait_for_selector("#tables .card")
        expect_text(page, "#live", "^live$")
        said = page.evaluate(READ)
        assert said["green"] and not said["down"] and said["blamed"] == 0

        broker.stop()
        assert wait_for(lambda: get_json(league.url + "/api/league")["broker"]["connected"]
                        is False, timeout=15)
        assert wait_for(lambda: page.evaluate(READ)["down"], timeout=15), page.evaluate(READ)
        said = page.evaluate(READ)
        assert said["down"] and broker.url in said["banner"]
        assert said["live"] == "broker down" and not said["green"]
        assert said["cards"] == 1 and said["blamed"] == 0      # nobody blamed
        expect_text(page, "#tables .card", "since the broker went down")

        broker.start()
        expect_text(page, "#live", "^live$")

        def back():     # the table's own reconnection may come a moment after the screen's
            got = page.evaluate(READ)
            return got["green"] and not got["down"] and got["blamed"] == 0
        assert wait_for(back, timeout=15), page.evaluate(READ)
    finally:
        page.close()
        table.close()
        league.close()
