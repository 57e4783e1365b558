"""Chope! on the host console at a phone's 390 x 844 (issue 23): a logged
card confirmed under the host's thumb, "Stop and claim" in a place of its
own (the card grid never moves), Undo on screen without scrolling, why a
player's food scores 0, and the end screen's unscored food and tie-break."""

from __future__ import annotations

import random

from tests.kit.browser import BROWSER, expect_text, open_host, shot, synced
from tests.kit.helpers import wait_for
from tests.kit.moments import chope, demo_chope, doubtful, flips
from tests.kit.scene import on_time

pytestmark = BROWSER


def on_screen(page, selector) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 844


def test_a_logged_card_is_confirmed_by_the_buttons_and_the_grid_stays_put(live_server, phone):
    t = live_server
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector("#legal button.event")
    assert on_screen(host, "#undo")                        # no scrolling past the grid
    grid = "#legal .grid-buttons button.event"
    before = host.locator(grid).first.bounding_box()["y"]
    host.locator(grid, has_text="Laksa").click()
    expect_text(host, "#logged", "^Logged: Laksa$")
    assert on_screen(host, "#logged") and on_screen(host, "#undo")
    expect_text(host, "#side-slot", "Stop and claim the face-up food")
    assert host.locator(grid).first.bounding_box()["y"] == before   # Stop did not push it down
    shot(host, "host-chope-logged.png")
    host.click("#undo")
    expect_text(host, "#logged", "^Undone: ")
    assert t.session.snapshot()["view"]["face_up"] == []
    assert host.errors == []


def test_food_with_no_table_says_why_it_scores_0(live_server, phone):
    t = live_server
    t.session.log({"type": "flip", "card": "food:laksa"})
    t.session.log({"type": "stop"})
    host = open_host(phone(), t, strict=True)
    expect_text(host, "#players", r"1 food scores 0 \(not seated: no Table\)")
    shot(host, "host-chope-unseated.png")
    assert host.errors == []


def play_to_the_end(session, seed=1):
    rng = random.Random(seed)
    for _ in range(600):
        if session.snapshot().get("finished"):
            return
        legal = session.legal_events()
        stop = [e for e in legal if e["type"] == "stop"]
        session.log(stop[0] if stop and rng.random() < 0.4 else rng.choice(legal))
    raise AssertionError("the game did not end")


def test_the_end_screen_lists_unscored_food_and_names_the_tie_break(live_server, phone):
    t = live_server
    t.session.new_game("chope", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    play_to_the_end(t.session)
    host = open_host(phone(), t, strict=True)
    expect_text(host, "#result", r": \+0 \(not seated")
    expect_text(host, "#result", "Ties go to the player with the most Table cards")
    shot(host, "host-chope-end.png")
    assert host.errors == []


def test_pin_keyboard_rule_quotes_and_the_new_game_colours(live_server, phone):
    """Everywhere (issue 23): the PIN may be any characters (no number
    keypad); a rule quote reads without its escaping; the new-game form
    offers the running game's colours."""
    t = live_server
    page = phone().new_page()
    page.goto(t.url + "/host")
    assert page.get_attribute("#pin", "inputmode") is None
    assert page.get_attribute("#pin", "type") == "password"
    shot(page, "host-login.png")
    host = open_host(phone(), t, strict=True)
    running = {p["name"]: p["colour"] for p in t.session.snapshot()["view"]["players"]}
    host.click("#ng-details summary")
    rows = host.locator("#ng-players .player-row")
    form = {rows.nth(i).locator(".ng-name").input_value(): rows.nth(i).locator(".ng-colour").input_value()
            for i in range(rows.count())}
    assert form == running
    host.select_option("#ng-game", "tropichaos")
    expect_text(host, "#ng-options", "marked with an ‘S’")
    assert '\\"' not in host.locator("#ng-options").inner_text()
    shot(host.locator("#ng-options"), "host-new-game-options.png")
    assert host.errors == []


CARDS = "#legal .grid-buttons.cards button.event"


def test_a_game_from_the_new_game_form_orders_its_cards_as_the_demo_does(live_server, phone):
    """Issue 33: the form's Components came from /api/games with their keys
    sorted (Flask's default), so a game started from it offered Blue Table
    before Red and Biryani before Chicken rice; the demo game (the same
    defaults, unsorted) orders by colour, then main before side."""
    t = live_server
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector(CARDS)
    demo = host.locator(CARDS).all_inner_texts()
    assert demo[:2] == ["Red Table", "Orange Table"]
    first_game = t.session.game_id
    host.click("#ng-details summary")
    host.select_option("#ng-game", "chope")
    expect_text(host, "#ng-options", "Components")
    host.locator("#ng-start").click()
    host.locator("#ng-confirm-yes").click()
    expect_text(host, "#toast", "New game started")
    assert t.session.game_id != first_game
    host.wait_for_selector(CARDS)
    assert host.locator(CARDS).all_inner_texts() == demo
    assert host.errors == []


def overlap(a, b) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def covered_answers(host) -> list[str]:
    """The question's buttons a toast lies over (what the phone shows)."""
    toast = host.locator("#toast")
    if not toast.is_visible():
        return []
    box = toast.bounding_box()
    buttons = host.locator("#race-confirm button")
    return [buttons.nth(i).inner_text() for i in range(buttons.count())
            if overlap(buttons.nth(i).bounding_box(), box)]


def asked(t, host):
    """Chope!'s Blue Table asks the host who slammed it (tests.kit.moments.doubtful)."""
    chope(t)
    host.wait_for_selector('#legal button.event[data-event*="table:green"]')
    doubtful(t)
    expect_text(host, "#race-confirm", "No: race again")
    synced(host, t.session)


def test_stop_is_offered_while_a_question_waits_and_what_a_tap_says_covers_no_answer(
        live_server, phone):
    """Issue 33: while the host was asked who slammed a card, Stop was not
    offered (only the next cards were); and the toast a tap gave ("Waiting
    for the race: ...") lay over the question's answers at the foot of a
    phone's screen. Stop is offered, waits for the race, and what the tap
    says is written in the question."""
    t = live_server
    s = t.session
    host = open_host(phone(), t, strict=True)
    asked(t, host)
    stop = host.locator('#side-slot button.event[data-event*=\'"stop"\']')
    stop.click()
    expect_text(host, "#queued", "Waiting for the race: stop")
    expect_text(host, "#race-confirm-note", "Waiting for the race")
    assert covered_answers(host) == []
    shot(host, "host-chope-stop-while-asked.png", full_page=False)
    host.locator('#race-confirm button.choice[data-player="Bo"]').click()
    assert wait_for(lambda: s.snapshot()["queued"] == [] and s.snapshot()["current_player"] == "Bo")
    expect_text(host, "#log", "stop")
    assert host.errors == []


def test_a_refused_answer_is_said_in_the_question_not_over_it(live_server, phone):
    """A refusal of the host's answer (409: the table moved on) was a toast
    over the question's buttons for 6 s: it is written in the question,
    above them, and the buttons take a tap again."""
    t = live_server
    s = t.session
    host = open_host(phone(), t)
    asked(t, host)
    stale = {"error": "the game moved on: the log is at version 9; reload and try again",
             "rule": "version"}
    host.route("**/api/host/race/confirm", lambda route: route.fulfill(status=409, json=stale))
    host.locator('#race-confirm button.choice[data-player="Cy"]').click()
    expect_text(host, "#race-confirm .field-error", "the game moved on")
    assert covered_answers(host) == []
    note = host.locator("#race-confirm-note").bounding_box()
    assert note["y"] + note["height"] <= host.locator("#race-confirm button.choice").first.bounding_box()["y"]
    shot(host, "host-chope-refused-answer.png", full_page=False)
    host.unroute("**/api/host/race/confirm")
    host.locator('#race-confirm button.choice[data-player="Cy"]').click()
    assert wait_for(lambda: not (s.snapshot()["race"] or {}).get("confirm"))
    host.wait_for_selector("#race-confirm", state="hidden")
    assert host.errors == []


def test_with_a_news_line_no_card_button_hides_under_the_thumb_bar(live_server, phone):
    """Issue 33: after "Red Table discarded: nobody choped it" the news line
    pushed the 20th button (Kaya toast) under the thumb bar at 390 x 844.
    Every button's foot is above the bar's top, with no scrolling."""
    t = live_server
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector(CARDS)
    kaya = host.locator(CARDS, has_text="Kaya toast").bounding_box()["y"]
    host.locator(CARDS, has_text="Red Table").click()
    expect_text(host, "#news", "Red Table discarded: nobody choped it")
    buttons = host.locator("#legal button.event")
    assert wait_for(lambda: buttons.count() == 20)          # Stop, and 19 cards
    # the race card and the news line came above them: the page scrolled
    # by what they took, and the 20th button is where it was
    # (to a pixel: the page scrolls by whole device pixels, the layout does not)
    assert abs(host.locator(CARDS, has_text="Kaya toast").bounding_box()["y"] - kaya) <= 1
    bar = host.locator("#thumb-bar").bounding_box()
    assert bar["y"] + bar["height"] <= 844                   # the bar is on screen
    feet = [b["y"] + b["height"] for b in (buttons.nth(i).bounding_box() for i in range(20))]
    assert max(feet) <= bar["y"], (max(feet), bar["y"])
    shot(host, "host-chope-news-thumb-bar.png", full_page=False)
    assert host.errors == []


#: every change the console draws in its buttons: whether Blue Table is
#: offered then, and by the same button as when the watch began
WATCH_BLUE = """(sel) => {
  const first = document.querySelector(sel);
  const seen = window.__blue = {renders: 0, missing: [], replaced: 0};
  new MutationObserver(() => {
    const now = document.querySelector(sel);
    seen.renders += 1;
    if (!now) seen.missing.push([...document.querySelectorAll('#legal h3')].map((h) => h.textContent).join(' / '));
    else if (now !== first) seen.replaced += 1;
  }).observe(document.getElementById('legal'), {childList: true, subtree: true});
  return !!first;
}"""


def test_the_next_cards_stay_put_from_a_race_to_its_logged_verdict(live_server, phone):
    """While a race runs the next cards stay offered, and from its verdict to
    the verdict logged they neither vanish nor are drawn anew: for that
    moment they once did, and the race's outcome buttons moved up to where
    the cards had been, under a host's thumb already on its way to Blue
    Table (the console draws the decided race, then the logged state)."""
    t = live_server
    host = open_host(phone(), t, strict=True)
    blue = '#legal button.event[data-event*=\'"table:blue"\']'

    def play(scene):
        if flips(t.session):             # a playing the machine could not keep: again
            demo_chope(t, host)
        host.wait_for_selector(blue)
        scene.begin()
        t.session.log({"type": "flip", "card": "table:red"})   # a race: first other to press
        expect_text(host, "#legal", "waits for the race")
        assert host.evaluate(WATCH_BLUE, blue)
        t.source.press("Bo")
        t.source.release("Bo")
        # a slam this long after the card's log may be for a card not logged
        # yet: the judge asks the host, and the scene is not this one
        scene.by(0.45, "Bo's slam after the log")
    on_time(play)
    s = t.session
    assert wait_for(lambda: any(e.get("type") == "race" for _, e in s.store.events(s.game_id)), 30)
    synced(host, s)
    expect_text(host, "#verdict", "Bo chopes it")
    seen = host.evaluate("window.__blue")
    assert seen["renders"] > 0
    assert seen["missing"] == [] and seen["replaced"] == 0, seen
    assert host.errors == []


#: each card button on the screen: its event and its centre
CENTRES = """() => [...document.querySelectorAll('#legal .grid-buttons.cards button.event')]
  .map((b) => { const r = b.getBoundingClientRect();
                return [b.dataset.event, r.x + r.width / 2, r.y + r.height / 2]; })
  .filter(([, , y]) => y > 0 && y < innerHeight)"""
#: what a tap at each of those centres reaches now: a card's event, or
#: another control's id or words (None: no control)
REACHED = """(pts) => pts.map(([ev, x, y]) => {
  const at = document.elementFromPoint(x, y);
  const c = at && at.closest('button, a, summary, input, select');
  return [ev, c ? (c.dataset.event || c.id || c.textContent.trim()) : null]; })"""


def astray(host, centres) -> list:
    """The taps aimed at ``centres`` that would reach another control than
    their card (of the cards still offered)."""
    offered = {ev for ev, _, _ in host.evaluate(CENTRES)}
    return [(ev, got) for ev, got in host.evaluate(REACHED, centres)
            if ev in offered and got != ev]


def test_a_tap_on_its_way_to_a_card_reaches_it_when_a_race_begins_and_ends(live_server, phone):
    """The race card a host's tap starts comes first on the console, and its
    verdict puts the next cards first again. The page scrolls by what
    changed, so a tap aimed at a card as it happens still reaches it: the
    cards moved 305 px down and back, and a tap aimed at Green Table
    cancelled the race, one at Popiah logged Red Table, one at Biryani
    logged Stop."""
    t = live_server
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector(CARDS)
    before = host.evaluate(CENTRES)
    assert len(before) >= 12
    host.locator(CARDS, has_text="Yellow Table").click()     # a race: first other to press
    expect_text(host, "#legal", "waits for the race")
    expect_text(host, "#race-phase", "[Ll]ive")
    assert astray(host, before) == []
    during = host.evaluate(CENTRES)
    t.source.press("Bo")
    t.source.release("Bo")
    expect_text(host, "#verdict", "Bo chopes it!")
    synced(host, t.session)
    assert astray(host, during) == [] and astray(host, before) == []
    assert host.errors == []


def test_a_question_above_the_screen_is_named_at_its_top_and_one_tap_shows_it(
        live_server, phone):
    """The question comes in the race card, above the cards the host logs
    with, and the page scrolls by it (the cards stay put): a bar at the
    screen's top asks it; a tap on the bar brings the question into view
    and answers nothing."""
    t = live_server
    chope(t)
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector(CARDS)
    top = host.locator(CARDS).first.bounding_box()["y"]
    doubtful(t)
    peek = host.locator("#race-peek")
    expect_text(host, "#race-peek", "^Who slammed Blue Table first\\?$")
    assert peek.bounding_box()["y"] == 0
    assert abs(host.locator(CARDS).first.bounding_box()["y"] - top) <= 1
    shot(host, "host-chope-question-peek.png", full_page=False)
    peek.click()
    peek.wait_for(state="hidden")
    assert host.locator("#race-confirm .confirm-q").bounding_box()["y"] >= 0
    assert (t.session.snapshot()["race"] or {}).get("confirm")     # still asked
    assert host.errors == []


def test_a_game_that_ends_with_the_console_open_shows_its_end_screen(live_server, phone):
    """The console holds its buttons in place as the page changes above
    them, but not as the game ends: nothing is left to log, and the end
    screen (come above them) is on the screen, not scrolled away."""
    t = live_server
    t.session.new_game("chope", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    host = open_host(phone(), t, strict=True)
    host.wait_for_selector(CARDS)
    play_to_the_end(t.session)
    expect_text(host, "#result", "Ties go to the player with the most Table cards")
    box = host.locator("#result").bounding_box()
    assert 0 <= box["y"] < 844
    assert host.evaluate("window.scrollY") == 0
    assert host.errors == []
