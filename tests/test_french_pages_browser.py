"""Every French page at every moment of every game (issue 33, item 4): the
scoreboard, the host console and a player's own page of each game during a
race, a countdown, the host's question, a verdict, a choice, and at the end,
read on a French phone (390 x 844) for English words (tests/kit/french.py:
a stoplist of common English words, the card and player names taken out),
decimal points and internal names. The figure ``fr_english_words`` is
printed (``-s``) and must be 0."""

from __future__ import annotations

import random

import pytest

from companion.games import RulesError
from tests.kit.browser import BROWSER, PHONE, TIMEOUT_MS, log_in
from tests.kit.french import VISIBLE_TEXT, english_words, names_of, report
from tests.kit.helpers import wait_for
from tests.kit.moments import chope, doubtful, hawker_dealt, seats, tap
from tests.kit.screens import FETCHING, scripted, settle

pytestmark = BROWSER
NAMES = ["Ana", "Bo", "Cy"]


class FrenchPhone:
    """A French phone with two tabs, the scoreboard and the logged-in
    console (and a player's page when a game has one), read at each moment."""

    def __init__(self, browser, table):
        self.t = table
        self.ctx = browser.new_context(**PHONE, locale="fr-FR")
        self.ctx.set_default_timeout(TIMEOUT_MS)
        self.ctx.add_init_script(FETCHING)
        self.board, self.host = self.ctx.new_page(), self.ctx.new_page()
        for page in (self.board, self.host):
            page.errors = []
            page.on("pageerror", lambda exc, p=page: p.errors.append(str(exc)))
        log_in(self.ctx, table)
        self.host.goto(table.url + "/host")
        self.host.wait_for_selector("#conn.live")
        self.found: list[tuple[str, str, str]] = []

    def read(self, moment: str, player_url: str | None = None, ready: str | None = None):
        """Load each page now and keep what is English on it."""
        s = self.t.session
        names = names_of(s.host_snapshot()) | set(NAMES)
        pages = [("scoreboard", self.board, "/"), ("console", self.host, "/host")]
        if player_url:
            pages.append(("own page", self.board, player_url))
        for where, page, url in pages:
            page.goto(url if url.startswith("http") else self.t.url + url)
            page.wait_for_selector("#conn.live")
            assert wait_for(lambda: page.locator("body").get_attribute("data-version")
                            == str(s.version) or url.startswith("http"), timeout=20)
            want = ready.get(where) if isinstance(ready, dict) else ready
            if want:
                page.wait_for_selector(want, state="attached")
            settle(page, frames=False)           # the game's panel script draws
            assert page.evaluate("document.documentElement.lang") == "fr"
            for word, text in english_words(page.evaluate(VISIBLE_TEXT), names):
                self.found.append((f"{moment} / {where}", word, text))
        for page in (self.board, self.host):
            assert page.errors == [], page.errors
            # away until the next moment loads it again: a page left open
            # drew every event of the game played on to its next moment
            # (chromium: 11.9 s of CPU for this module, 8.9 s away)
            page.goto("about:blank")

    def close(self):
        self.ctx.close()


def to_the_end(t, seed: int, steps: int = 600, script: bool = True) -> None:
    """Random legal events (races logged by hand) until the game ends;
    ``script``: logged as a script (tests/kit/screens.py: not through the
    buzzer pipeline's way in, which waits out a 2 ms delivery margin per
    event: Chopote's 750 events, 1.7 s), the same game event for event in a
    game whose moves do not hang on the table's clock. Chope!'s races do
    (its cards' claim windows): played faster it is another game, so it
    keeps the pipeline's pace."""
    if not script:
        return _to_the_end(t, seed, steps)
    with scripted(t):
        _to_the_end(t, seed, steps)


def _to_the_end(t, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    s = t.session
    for _ in range(steps):
        if s.snapshot()["finished"]:
            return
        if s.snapshot().get("race"):
            s.cancel_race()
        legal = s.host_snapshot()["legal_events"]
        if not legal:
            return
        try:
            s.log(rng.choice(legal))
        except RulesError:          # offered, but what a hand holds refuses it: another
            continue


def chope_moments(t, phone, tmp_path):
    from tests.kit.web import start_table

    (tmp_path / "second").mkdir()
    t2 = start_table(tmp_path / "second")
    try:
        chope_question(t2, phone)
    finally:
        t2.close()
    chope(t)
    t.session.log({"type": "flip", "card": "food:laksa"})
    t.session.log({"type": "flip", "card": "table:red"})        # a race open
    phone.read("Chope! race", ready="#race:not([hidden])")
    tap(t, "Cy")
    tap(t, "Bo")
    assert wait_for(lambda: (t.session.snapshot().get("race") or {}).get("phase") == "decided")
    phone.read("Chope! verdict", ready="#verdict:not(:empty)")
    to_the_end(t, 1, script=False)
    phone.read("Chope! end", ready="#result:not([hidden])")


def chope_question(t2, phone):
    """The host's question, on a table with the usual race settings."""
    chope(t2)
    doubtful(t2)
    assert wait_for(lambda: (t2.session.snapshot()["race"] or {}).get("confirm"))
    other = FrenchPhone(phone.browser, t2)
    try:
        other.read("Chope! question", ready={"console": "#race-confirm button"})
        phone.found += other.found
    finally:
        other.close()


def chomp_moments(t, phone, tmp_path):
    t.session.new_game("chomp", seats(NAMES))
    legal = t.session.legal_events()
    want = {"Ana": "shark", "Bo": "seal", "Cy": "little-fish"}
    t.session.log(next((e for e in legal if e.get("cards") == want), legal[0]))
    t.session.start_race(countdown_ms=600_000)
    phone.read("Chomp! countdown", ready="#countdown:not([hidden])")
    t.session.cancel_race()
    t.session.log({"type": "race", "reason": "chomp", "winner": "Ana", "loser": None,
                   "tied": [], "false_starts": ["Cy"], "ineligible": []})
    phone.read("Chomp! verdict")
    to_the_end(t, 2)
    phone.read("Chomp! end", ready="#result:not([hidden])")


def hawker_moments(t, phone, tmp_path):
    s = t.session
    hawker_dealt(s, ["ana", "bo", "cy"])
    s.log({"type": "event_check", "event": "food-poisoning"})
    link = phone.host.evaluate("async () => (await TC.post('/api/host/player-links', {})).data")
    url = next(p["url"] for p in link["players"] if p["player"] == "cy")
    s.start_race(countdown_ms=600_000)
    phone.read("Food Poisoning countdown", player_url=url,
               ready={"scoreboard": "#countdown:not([hidden])"})
    s.cancel_race()
    s.log({"type": "race", "loser": "cy"})
    phone.read("Food Poisoning verdict, Cy's choice", player_url=url)
    to_the_end(t, 3)
    phone.read("Hawker Wars end", player_url=url)


def chopote_moments(t, phone, tmp_path):
    s = t.session
    s.new_game("chopote", seats(NAMES))
    for value in (4, 2, 1, 6):
        s.log({"type": "roll", "player": s.game.current_player(s.state), "value": value})
    phone.read("Chopote start", ready="#panel svg")
    with scripted(t):
        line = take_a_bottle(s, seed=4)
    assert "takes" in line and "bottle" in line, line     # the move line the log shows
    phone.read("Chopote, a bottle taken", ready="#panel svg")
    to_the_end(t, 4, steps=1500)
    phone.read("Chopote end", ready="#result:not([hidden])")


def take_a_bottle(s, seed: int, steps: int = 600) -> str:
    """Random legal events until a move takes a bottle (the first move
    offered that takes one is played): the move line as the log says it."""
    rng = random.Random(seed)
    for _ in range(steps):
        legal = s.host_snapshot()["legal_events"]
        takes = [e for e in legal if e.get("type") == "move" and e.get("captures")]
        s.log(takes[0] if takes else rng.choice(legal))
        if takes:
            return s.game.describe(takes[0])
    raise AssertionError(f"no move took a bottle in {steps} events (seed {seed})")


def tropichaos_moments(t, phone, tmp_path):
    s = t.session
    s.new_game("tropichaos", seats(NAMES))
    to_the_end(t, 5, steps=12)
    phone.read("Tropichaos mid-game")
    to_the_end(t, 5, steps=2000)
    phone.read("Tropichaos end")


@pytest.mark.parametrize("moments", [chope_moments, chomp_moments, hawker_moments,
                                     chopote_moments, tropichaos_moments],
                         ids=["chope", "chomp", "hawker", "chopote", "tropichaos"])
def test_every_french_page_at_every_moment_has_no_english(browser, live_server_with, moments,
                                                          tmp_path):
    t = live_server_with(wait_ms=900_000, claim_window_ms=900_000)
    phone = FrenchPhone(browser, t)
    phone.browser = browser
    try:
        moments(t, phone, tmp_path)
    finally:
        phone.close()
    lines = sorted({f"{where}: {word!r} in {text!r}" for where, word, text in phone.found})
    report(phone.found)
    assert not lines, "\n".join(lines[:60])
