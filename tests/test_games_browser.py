"""The games' own panels in a real browser (Playwright, Debian's chromium,
a 390x844 phone), against the real server.

Chopote (issue 12, "The board on the page"): "On the host console, after a
roll: the legal moves highlighted on the board, one tap on a bottle to play
it; an illegal tap explains why. The scoreboard on every phone shows the
board live, whose turn and the last roll, readable on a 390 px wide screen
and in dark mode. A browser test plays a few turns by tapping the board and
checks the board on a second phone." The table that lost its die taps "Roll
for us". Hawker Wars and Tropichaos: their panels draw on the scoreboard and
the console without a script error.

Screenshots go to artifacts/screenshots/ (not committed) for a person to
look at: chopote-host.png, chopote-board.png, chopote-board-dark.png,
hawker-board.png, hawker-host.png, tropichaos-board.png, tropichaos-host.png.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.kit.browser import (BROWSER, SHOTS, TIMEOUT_MS, Held, expect_text, open_board, open_host,
                               shot, watch)
from tests.kit.helpers import wait_for


# The rulebook's words (rules/001_675cbcd5cb420753.txt) a refusal must quote.
R_LEAVE = "Le joueur doit tirer le numéro 1 ou 6 pour faire sortir une bouteille du casier."
R_TURN = "Les joueurs lancent à tour de rôle leur dé."

pytestmark = BROWSER


def wait_version(page, version: int):
    """Wait until the page shows the table at ``version``."""
    page.wait_for_function("(v) => document.body.dataset.version === String(v)", arg=version)


def logged(t, tap) -> int:
    """``tap()`` (a tap that logs an event), then wait until the table has
    logged it: its new version. (Reading the version right after the tap
    raced the request: a loaded machine logged it a moment later.)"""
    before = t.session.version
    tap()
    assert wait_for(lambda: t.session.version > before, 10)
    return t.session.version


def board_bottles(page) -> dict[str, list[str]]:
    """Each player's bottles off the casier as the SVG board draws them:
    player -> sorted labels (a stack of n counts n times)."""
    return page.evaluate("""() => {
        const out = {};
        for (const g of document.querySelectorAll('#panel svg g[data-where][data-count]')) {
          const p = g.dataset.player;
          out[p] = out[p] || [];
          for (let i = 0; i < Number(g.dataset.count); i++) out[p].push(g.dataset.where);
        }
        for (const p in out) out[p].sort();
        return out;
    }""")


def server_bottles(table) -> dict[str, list[str]]:
    view = table.session.snapshot()["view"]
    return {p["name"]: sorted(b["label"] for b in p["bottles"]
                              if b["where"] not in ("casier", "home"))
            for p in view["players"] if any(b["where"] not in ("casier", "home")
                                             for b in p["bottles"])}


def roll_button(page, player: str, value: int):
    event = json.dumps({"type": "roll", "player": player, "value": value},
                       separators=(",", ":"))     # as the console writes it: the game's key order
    return page.locator(f"#legal button.event[data-event='{event}']")


def contrast(page, selector: str) -> float:
    """WCAG contrast of the text of ``selector`` on the page's panel colour."""
    return page.evaluate("""(sel) => {
        const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
        const lum = ([r, g, b]) => {
          const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
          return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        const node = document.querySelector(sel);
        const fg = lum(rgb(getComputedStyle(node).color));
        const bg = lum(rgb(getComputedStyle(node.closest('.card')).backgroundColor));
        return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    }""", selector)


# ---------------------------------------------------------------------------
# Chopote: played by tapping the board on the console, watched on a phone


def start_chopote_from_the_form(host):
    """The console's new-game form: Chopote, two players (Ana and Bo)."""
    host.locator("#ng-details > summary").tap()
    host.wait_for_selector("#ng-options [data-option]")
    host.select_option("#ng-game", "chopote")
    host.wait_for_selector("#opt-opening_tie")
    while host.locator("#ng-players .player-row").count() > 2:
        host.locator("#ng-players .player-row").last.locator(".ng-remove").tap()
    host.locator("#ng-start").tap()
    host.locator("#ng-confirm-yes").tap()
    expect_text(host, "#toast", "New game started")


def test_a_double_tap_before_the_first_answer_logs_once_and_refuses_nothing(live_server, phone):
    """The host double-taps Ana's roll on a slow link: the second tap comes
    before the table's answer to the first (the console's own refresh waits
    too, so both are made on the same screen). The roll is logged once,
    nothing is refused, and the console says so where the tap was. Before, the second tap went out against the
    screen's old version and the table refused it as stale: a red toast
    for a roll that was logged."""
    t = live_server
    host = open_host(phone("light"), t, strict=True)
    start_chopote_from_the_form(host)
    before = t.session.version
    answer = Held(host, "**/api/host/event", first=True)
    refresh = Held(host, "**/api/host/state", reach=False)
    ana = roll_button(host, "Ana", 5)
    ana.tap()
    answer.wait()
    assert t.session.version == before + 1                  # the table has it; the page not yet
    ana.tap()
    assert host.locator("body").get_attribute("data-version") == str(before)
    answer.release()
    refresh.release()
    from playwright.sync_api import expect

    # said where the tap was: the host who meant two taps it again
    expect_text(host, "#logged", "Tapped twice before the answer: .+ logged once")
    expect(roll_button(host, "Bo", 2)).to_be_visible()        # the console moved on to Bo's roll
    assert t.session.replay.events[-1] == {"type": "roll", "player": "Ana", "value": 5}
    assert t.session.version == before + 1 and host.errors == []    # no 409: nothing refused


#: TC.tapLine (static/js/render.js) driven in the page with a table of its
#: own: ``send(at)`` logs when ``at`` is the table's version, else refuses;
#: each answer comes when the test says. Returns what each tap was sent at.
TAP_LINE = """(giveUpMs) => Promise.race([(async () => {
  let version = 7;                       // the table, and the screen with it
  const sent = [];
  const gates = [];
  const line = TC.tapLine(() => version);
  const send = (key) => (at) => new Promise((resolve) => gates.push(() => {
    sent.push([key, at]);
    if (at !== version) { resolve(null); return; }
    version += 1;
    resolve(version);
  }));
  const tick = () => new Promise((r) => setTimeout(r, 0));
  const flush = async () => {            // every answer, as the taps waiting behind come
    for (let i = 0; i < 5; i++) { await tick(); while (gates.length) { gates.shift()(); await tick(); } }
  };
  const a = line('ana', send('ana'));    // on screen 7
  const b = line('bo', send('bo'));      // on screen 7, before a's answer
  const doubles = [];
  const b2 = line('bo', send('bo'), () => doubles.push('bo'));     // a double tap of bo
  await flush();
  const out = { first: sent.slice(), results: [await a, await b, await b2], doubles };
  // someone else logs between: a tap made on the old screen is sent as made
  sent.length = 0;
  const c = line('cy', send('cy'));      // on screen 9
  const d = line('dee', send('dee'));    // on screen 9
  await tick();
  gates.shift()();                        // cy logged: 10,
  version += 1;                           // and another phone logs (11) before its answer lands
  await flush();
  out.second = sent.slice();
  out.results2 = [await c, await d];
  return out;
})(), new Promise((_, no) => setTimeout(() => no(new Error('a tap never settled')), giveUpMs))])"""


def test_a_pages_taps_go_in_order_against_the_table_their_own_first_tap_left(live_server, phone):
    """The rule of TC.tapLine, the console's and the players' pages' one
    way to log a tap: a tap made while the page's last is on its way waits
    for it; on the same screen, another event is sent against the table the
    first left (when nothing else changed it), the same event is a double
    tap and is not sent; when someone else logged meanwhile, the tap goes
    against the screen it was made on, and the table refuses it."""
    page = open_board(phone(), live_server)
    got = page.evaluate(TAP_LINE, TIMEOUT_MS)
    assert got["first"] == [["ana", 7], ["bo", 8]]            # bo after ana, at ana's 8
    assert got["results"] == [8, 9, None]                      # the double tap: not sent,
    assert got["doubles"] == ["bo"]                            # and the page told
    assert got["second"] == [["cy", 9], ["dee", 9]]            # dee as made: 9, and the table is at 11
    assert got["results2"] == [10, None]


def test_chopote_played_by_tapping_the_board(live_server, phone):
    from playwright.sync_api import expect

    t = live_server
    host = open_host(phone("light"), t, strict=True)
    board = open_board(phone("light"), t, strict=True)
    start_chopote_from_the_form(host)
    assert t.session.game.name == "chopote" and t.session.names == ["Ana", "Bo"]
    # the board may still show the game before for a moment (its two
    # headings made this locator ambiguous: a strict-mode failure at once)
    expect(board.locator("#panel h2", has_text="The board")).to_be_visible()

    # who starts: each rolls (the console's roll buttons), the highest starts
    roll_button(host, "Ana", 5).tap()
    roll_button(host, "Bo", 2).tap()
    expect_text(board, "#panel .roll-line", "Ana to roll")

    # the die is lost: "Roll for us" shows only while a roll is due
    expect(host.locator("#draw-for-us")).to_be_visible()
    expect(host.locator("#draw-for-us")).to_have_text("Roll for us")
    roll_button(host, "Ana", 6).tap()
    expect(host.locator("#draw-for-us")).to_have_count(0)        # now a move, not a roll

    # a tap on the other player's casier: not their turn, in the rule's words
    note = host.locator("#panel .tap-note")
    host.locator("#panel svg g[data-where=casier][data-player=Bo]").tap()
    expect(note).to_contain_text("Ana’s turn")
    expect(note).to_contain_text(R_TURN)
    assert t.session.replay.events[-1] == {"type": "roll", "player": "Ana", "value": 6}

    # Ana's casier is outlined (the 6 lets a bottle out): one tap plays it
    casier = host.locator("#panel svg g[data-where=casier][data-player=Ana]")
    expect(casier).to_have_attribute("data-movable", "yes")
    casier.tap()
    expect_text(board, "#panel", "Last: Ana rolled 6, casier → start zone")
    assert t.session.replay.events[-1]["from"] == "casier"
    assert board_bottles(board) == {"Ana": ["start"]}

    # she rolls again at once: the companion rolls for the table
    wait_version(host, logged(t, host.locator("#draw-for-us").tap))
    drawn = t.session.replay.events[-1]
    assert drawn["type"] == "roll" and drawn["player"] == "Ana" and 1 <= drawn["value"] <= 6
    expect_text(host, "#log li:first-child", "drawn by the companion")
    expect_text(board, "#panel .roll-line", f"Ana rolled {drawn['value']}")
    onto_the_track = host.locator("#panel svg g[data-where=start][data-player=Ana]").tap
    wait_version(board, logged(t, onto_the_track))
    moved = t.session.replay.events[-1]
    assert moved["type"] == "move" and moved["from"] == "start"
    assert moved["to"].startswith("track:")
    # the second phone's board has the bottle where the tracker has it
    assert board_bottles(board) == server_bottles(t) == {"Ana": [moved["to"]]}
    expect_text(board, "#panel", f"Last: Ana rolled {drawn['value']}, start zone → "
                              f"square {moved['to'].split(':')[1]}")

    # whose turn: a 1 or a 6 rolls again, else Bo
    turn = "Ana" if drawn["value"] in (1, 6) else "Bo"
    assert t.session.snapshot()["current_player"] == turn
    expect_text(board, "#banner", f"{turn}’s turn")
    expect_text(board, "#panel .roll-line", f"{turn} to roll")

    # a 3: no bottle leaves the casier. Bo, all in the casier, is blocked: the
    # roll passes by itself (no tap); then Ana's 3, where the tap says why
    wait_version(host, logged(t, roll_button(host, turn, 3).tap))
    if turn == "Bo":
        expect_text(board, "#panel", "Last: Bo rolled 3, blocked, passed by itself")
        assert t.session.snapshot()["current_player"] == "Ana"
        turn = "Ana"
        wait_version(host, logged(t, roll_button(host, turn, 3).tap))
    version = t.session.version
    host.locator(f"#panel svg g[data-where=casier][data-player={turn}]").tap()
    expect(note).to_contain_text(R_LEAVE)
    expect(note).to_have_attribute("role", "alert")
    assert t.session.version == version                       # nothing was logged

    # the panels' hook gives the server's refusal back, words and rule
    refused = host.evaluate(f"""() => TC.logEvent({{type: 'move', player: '{turn}',
        from: 'corridor:3'}}).then(() => null, (err) => err)""")
    assert refused["status"] == 400 and "no bottle on corridor:3" in refused["error"]
    assert refused["rule"].startswith("Le joueur fait avancer")
    assert t.session.version == version
    expect(host.locator("#toast")).to_be_hidden()             # the panel, not a toast, says it
    # the browser reports that refused request itself; nothing else went wrong so far
    assert [e for e in host.errors if "/api/host/event" not in e and "status of 400" not in e] == []
    host.errors.clear()

    # finish that roll: Ana moves her bottle 3 on
    before = server_bottles(t)["Ana"][0]
    finish = host.locator(f"#panel svg g[data-where='{before}'][data-player=Ana]").tap
    wait_version(board, logged(t, finish))
    assert board_bottles(board) == server_bottles(t)
    now = t.session.snapshot()["current_player"]
    expect_text(board, "#banner", f"{now}’s turn")

    # readable on a 390 px phone: nothing wider than the screen
    for page in (host, board):
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert contrast(board, "#panel .roll-line") >= 4.5
    host.locator("#panel").scroll_into_view_if_needed()
    assert shot(host, "chopote-host.png").stat().st_size > 20_000
    board.locator("#panel").screenshot(path=str(SHOTS / "chopote-board-panel.png"))
    assert shot(board, "chopote-board.png").stat().st_size > 20_000
    assert host.errors == [] and board.errors == []


def test_chopote_board_in_dark_mode(live_server, phone):
    t = live_server
    t.session.new_game("chopote", [{"name": "Ana"}, {"name": "Bo"}, {"name": "Cy"}])
    for value in (4, 2, 1, 6):        # Ana starts; a 6: a bottle out
        t.session.log({"type": "roll", "player": t.session.game.current_player(t.session.state),
                       "value": value})
    t.session.log({"type": "move", "player": "Ana", "from": "casier"})
    t.session.log({"type": "roll", "player": "Ana", "value": 3})     # the new bottle moves
    page = open_board(phone("dark"), t, strict=True)
    page.wait_for_selector("#panel svg g[data-where=start]")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(15, 17, 21)"
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    # the panel's words light on dark, the squares visible against the board
    assert contrast(page, "#panel .roll-line") >= 7
    stroke = page.evaluate("""() => getComputedStyle(           // the first track square
        document.querySelector('#panel svg > circle:nth-of-type(2)')).stroke""")
    assert stroke not in ("none", "rgb(0, 0, 0)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # a tap on a phone says what the bottle may do, and logs nothing
    version = t.session.version
    page.locator("#panel svg g[data-where=start][data-player=Ana]").tap()
    expect_text(page, "#panel .tap-note", "the host plays it")
    assert t.session.version == version
    assert shot(page, "chopote-board-dark.png").stat().st_size > 20_000
    page.locator("#panel").screenshot(path=str(SHOTS / "chopote-board-dark-panel.png"))
    assert page.errors == []


# ---------------------------------------------------------------------------
# Hawker Wars and Tropichaos: their panels draw without errors


def play_some(table, n: int, seed: int) -> None:
    """A few legal events from the tracker's own list (what the console offers)."""
    rng = random.Random(seed)
    for _ in range(n):
        legal = table.session.host_snapshot()["legal_events"]
        if not legal or table.session.snapshot()["finished"]:
            break
        table.session.log(rng.choice(legal))


@pytest.mark.parametrize("game, players, steps", [
    ("hawker", ["Ana", "Bo", "Cy"], 12),
    ("tropichaos", ["Ana", "Bo", "Cy"], 12),
])
def test_panels_render_on_the_scoreboard_and_the_console(live_server, phone, game, players,
                                                         steps):
    from playwright.sync_api import expect

    t = live_server
    t.session.new_game(game, [{"name": n} for n in players])
    play_some(t, steps, seed=7)
    board = open_board(phone("dark"), t, strict=True)
    host = open_host(phone("dark"), t, strict=True)
    for page in (board, host):
        wait_version(page, t.session.version)
        expect(page.locator("#panel")).to_be_visible()
        expect(page.locator("#panel h2").first).to_be_visible()
        # the game's own panel drew it (a panel that throws is replaced by
        # the generic list of facts and logs the error)
        assert page.locator("#panel dl.kv.facts").count() == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # a few more events arrive live and redraw the panels
    play_some(t, 4, seed=8)
    for page in (board, host):
        wait_version(page, t.session.version)
        assert page.locator("#panel dl.kv.facts").count() == 0
    assert shot(board, f"{game}-board.png").stat().st_size > 20_000
    board.locator("#panel").screenshot(path=str(SHOTS / f"{game}-board-panel.png"))
    host.locator("#panel").scroll_into_view_if_needed()
    assert shot(host, f"{game}-host.png").stat().st_size > 20_000
    assert board.errors == [] and host.errors == []


def test_chope_favourite_is_drawn_by_the_chope_panel_on_the_players_own_page(live_server, phone):
    """Chope!'s My Favourite card on the player's own page comes from
    chope.js's private panel (the shared player.js only calls the game's
    hook): the food's name and what it is worth now, nowhere else."""
    from playwright.sync_api import expect

    t = live_server
    t.session.new_game("chope", [{"name": "Ana"}, {"name": "Bo"}], {"favourite_food": True})
    t.session.log({"type": "favourite", "player": "Ana", "food": "laksa"})
    host = open_host(phone(), t, strict=True)
    host.locator("#player-links details[data-player=Ana] > summary").tap()
    url = host.locator("#player-links details[data-player=Ana] .pl-url").inner_text()
    mine = watch(phone().new_page())
    mine.goto(url)
    mine.wait_for_selector("#conn.live")
    favourite = mine.locator("#private-view .favourite")
    expect(favourite).to_contain_text("Your My Favourite card")
    expect(favourite).to_contain_text("Laksa")
    expect(favourite).to_contain_text("worth 0 points now")
    assert mine.evaluate("typeof TC.panels.chope.private") == "function"
    assert mine.locator("#private-view dl.kv.facts").count() == 0     # not the generic panel
    board = open_board(phone(), t, strict=True)
    expect(board.locator("#players li[data-player=Ana]")).to_contain_text("favourite dealt")
    assert "Laksa" not in board.locator("#players").inner_text()
    assert mine.errors == [] and host.errors == [] and board.errors == []
