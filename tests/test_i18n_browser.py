"""Every page in French, in a real browser (Playwright, Debian's chromium, a
390x844 phone whose language is French): no English word of the catalog is
left on the page, and the French screenshot set is saved to
artifacts/screenshots/fr/ (not committed; tasks.py test writes it).

The check: every piece of text the page shows (each text node, and the
aria-label, title, alt and placeholder a screen reader or a finger meets) is
compared with the catalog's English msgids whose French differs: a text that
is one of them, matches one with {fields} (as TC.tx matches it), or holds a
long one is English left on a French page, and fails the test."""

from __future__ import annotations

import random
import threading

import pytest

from tests.kit.browser import BROWSER, BROKEN_WORDS, PHONE, TIMEOUT_MS, expect_text, shot, watch_errors
from tests.kit.french import VISIBLE_TEXT
from tests.kit.league import hall_server

from companion import translations

pytestmark = BROWSER


def english_left(texts: list[str]) -> list[tuple[str, str]]:
    """(text, the English msgid it is) for each text still in English."""
    import re

    fr = translations.catalog("fr")
    plain, patterns = {}, []
    for msgid, msgstr in fr.items():
        if msgstr.replace("|", "") == msgid or msgstr.split("|")[0] == msgid:
            continue                    # a name or a word French shares
        if re.search(r"\{\w+\}", msgid.replace("{{", "").replace("}}", "")):
            parts = re.split(r"(\{\{|\}\}|\{\w+\})", msgid)
            literal = sum(len(p) for p in parts if not re.fullmatch(r"\{\w+\}", p))
            if literal >= 8:
                rx = "".join("(.+?)" if re.fullmatch(r"\{\w+\}", p) else re.escape(
                    p.replace("{{", "{").replace("}}", "}")) for p in parts)
                patterns.append((re.compile(rx + "$"), msgid))
        elif "%(" not in msgid:
            plain[msgid.strip()] = msgid
    found = []
    for text in texts:
        if text in plain:
            found.append((text, plain[text]))
            continue
        hit = next((m for rx, m in patterns if rx.match(text)), None)
        if hit is None:
            hit = next((m for k, m in plain.items() if len(k) >= 16 and " " in k and k in text), None)
        if hit is not None:
            found.append((text, hit))
    return found


def french_phone(browser, scheme="dark"):
    ctx = browser.new_context(**PHONE, color_scheme=scheme, locale="fr-FR")
    ctx.set_default_timeout(TIMEOUT_MS)
    return ctx


def tab(ctx):
    """The phone's one tab, its script errors collected in ``page.errors``
    from here on: each page of a test is a fresh document loaded in the
    same tab (a new tab costs chromium far more than a load in an open
    one), after the one before it was checked."""
    if not ctx.pages:
        watch_errors(ctx.new_page())
    page = ctx.pages[0]
    page.errors = []
    return page


def open_page(ctx, url: str, ready: str | None = "#conn.live"):
    page = tab(ctx)
    page.goto(url)
    if ready:
        page.wait_for_selector(ready)
    return page


def check(page, name: str):
    """The page is in French, has no English msgid left, its title keeps
    its words whole (the French "Se déconnecter" once squeezed the console's
    "Tropichaos" to "Tropic|haos"), and its screenshot is saved as
    artifacts/screenshots/fr/<name>.png."""
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert page.evaluate(BROKEN_WORDS, ".top h1") == [], name
    left = english_left(page.evaluate(VISIBLE_TEXT))
    shot(page, f"fr/{name}.png")
    assert not left, f"{name}: English left on the French page: {left[:8]}"
    assert page.errors == []


def log_host(page, t):
    page.goto(t.url + "/host")
    page.fill("#pin", t.pin)
    page.click("button[type=submit]")
    page.wait_for_selector("#conn.live")


def play_some(table, n: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(n):
        legal = table.session.host_snapshot()["legal_events"]
        if not legal or table.session.snapshot()["finished"]:
            break
        table.session.log(rng.choice(legal))


@pytest.fixture
def ctx(browser):
    made = []

    def make(scheme="dark"):
        made.append(french_phone(browser, scheme))
        return made[-1]
    yield make
    for c in made:
        c.close()


@pytest.fixture(scope="module")
def french_board(browser, tmp_path_factory):
    """A table's scoreboard on a French phone, shared by the tests that only
    ask its page to translate lines (TC.tx, TC.t, TC.plural, TC.refusal:
    they change nothing on the page or the table)."""
    from tests.kit.web import start_table

    table = start_table(tmp_path_factory.mktemp("french-board"))
    phone = french_phone(browser)
    try:
        yield open_page(phone, table.url + "/")
    finally:
        phone.close()
        table.close()


def test_the_english_scan_finds_english():
    """The check can fail: English lines are found, French ones are not."""
    assert english_left(["Players", "Ana’s turn", "it is Bo's turn, not Ana's",
                         "Waiting for the host to start a game"])
    assert english_left(["Joueurs", "Au tour d’Ana", "Laksa", "Chope!", "Ana"]) == []


def test_login_join_and_a_dead_link_in_french(live_server, ctx):
    t = live_server
    c = ctx()
    page = open_page(c, t.url + "/host", ready="#pin")
    expect_text(page, "h1", "Console de l’hôte")
    check(page, "login")
    page.fill("#pin", "wrong-pin")
    page.click("button[type=submit]")
    expect_text(page, ".error", "PIN erroné")
    check(page, "login-wrong-pin")
    page = open_page(c, t.url + "/join", ready="h1")
    check(page, "join")
    page = open_page(c, t.url + "/p/" + "A" * 43, ready="h2")
    expect_text(page, ".status", "ce lien de joueur n’est pas valable")
    check(page, "player-link-gone")


def test_the_switch_changes_the_language_and_the_phone_remembers_it(live_server, ctx):
    t = live_server
    page = open_page(ctx(), t.url + "/")
    expect_text(page, "#players", ".")
    assert page.evaluate("document.documentElement.lang") == "fr"       # Accept-Language
    page.locator(".lang-switch a[lang=en]").click()
    page.wait_for_selector("#conn.live")
    assert page.evaluate("document.documentElement.lang") == "en"
    expect_text(page, "#conn", "live")
    page.goto(t.url + "/host")                        # another page: still English
    assert page.evaluate("document.documentElement.lang") == "en"
    page.locator(".lang-switch a[lang=fr]").click()
    page.wait_for_selector("#pin")
    expect_text(page, "h1", "Console de l’hôte")


@pytest.mark.parametrize("game, players, steps", [
    ("chope", ["Ana", "Bo", "Cy"], 6),
    ("chomp", ["Ana", "Bo", "Cy"], 4),
    ("chopote", ["Ana", "Bo", "Cy"], 6),
    ("hawker", ["Ana", "Bo", "Cy"], 12),
    ("tropichaos", ["Ana", "Bo", "Cy"], 12),
])
def test_each_games_scoreboard_and_console_in_french(live_server, ctx, game, players, steps):
    t = live_server
    t.session.new_game(game, [{"name": n} for n in players])
    play_some(t, steps, seed=7)
    c = ctx()
    board = open_page(c, t.url + "/")
    board.wait_for_selector("#panel h2")
    check(board, f"{game}-scoreboard")
    host = tab(c)
    log_host(host, t)
    host.wait_for_selector("#legal button, #legal select, #legal p")
    check(host, f"{game}-console")


def test_the_new_game_form_and_a_refusal_in_french(live_server, ctx):
    t = live_server
    host = tab(ctx())
    log_host(host, t)
    host.locator("#ng-details > summary").tap()
    host.wait_for_selector("#ng-options [data-option]")
    host.select_option("#ng-game", "chope")
    host.wait_for_selector("#ng-options .rule-quote")
    # an English rulebook's quote keeps its words, with the French beside it
    assert host.locator("#ng-options .rule-tr").count() >= 1
    check(host, "new-game-form")
    # a refusal from the rules, in French, naming the rule
    r = host.evaluate("""async () => {
      const res = await TC.post('/api/host/event', {event: {type: 'stop'}, expected_version: 0});
      return TC.refusal(res.data, res.status);
    }""")
    assert "règle" in r or "partie" in r or "[" in r
    host.select_option("#ng-game", "chopote")
    host.wait_for_selector("#ng-options [data-option]")
    check(host, "new-game-form-chopote")


def test_a_rule_refusal_quotes_chopote_in_french_and_translates_the_message(live_server, ctx):
    t = live_server
    t.session.new_game("chopote", [{"name": "Ana"}, {"name": "Bo"}])
    host = tab(ctx())
    log_host(host, t)
    said = host.evaluate("""async () => {
      const res = await TC.post('/api/host/event', {event: {type: 'roll', player: 'Bo', value: 3},
                                                   expected_version: %d});
      return [res.data.rule, TC.refusal(res.data, res.status)];
    }""" % t.session.version)
    rule, text = said
    assert rule == "Celui qui tire le numéro le plus élevé débute." or "dé" in rule
    assert rule in text                        # the rulebook's own French words
    assert ("c’est le tour de" in text or "c’est le tour d’" in text) or "lancez" in text or "doit" in text


def test_a_players_own_page_in_french(live_server, ctx):
    t = live_server
    t.session.new_game("hawker", [{"name": "Ana", "buzzer": "1"}, {"name": "Bo", "buzzer": "2"}],
                       {"draws": "private"})
    play_some(t, 8, seed=3)
    c = ctx()
    host = tab(c)
    log_host(host, t)
    host.wait_for_selector("#player-links .pl-row")
    host.locator("#player-links details[data-player=Ana] > summary").tap()
    url = host.locator("#player-links details[data-player=Ana] .pl-url").inner_text()
    check(host, "console-player-links")
    page = open_page(c, url)
    page.wait_for_selector("#private-view *")
    check(page, "player-page")


def test_the_league_screen_in_french(tmp_path, ctx):
    # served and stopped as the product serves it (companion.serving): a
    # waitress server closed from this thread while its own was in select()
    # once failed the test ("Bad file descriptor") on a loaded machine
    before = set(threading.enumerate())
    server = hall_server(tmp_path)
    serving = [th for th in threading.enumerate() if th not in before and th.name == "league-web"]
    phone = ctx()
    try:
        page = open_page(phone, f"{server.url}/", ready="#standings")
        expect_text(page, "main", "Classement")
        check(page, "league")
    finally:
        phone.close()
        server.close()
    # it stopped, the page's live stream ended with it
    assert len(serving) == 1 and not serving[0].is_alive()


def test_the_page_translates_the_servers_english_lines(french_board):
    """TC.tx on lines the server writes: a message with fields, a line joined
    from two, a race's title before its verdict, a card's name kept; TC.plural
    and TC.refusal (an English rule translated beside, Chopote's French rule
    as written)."""
    said = french_board.evaluate("""() => [
      TC.tx("it is Bo's turn, not Ana's"),
      TC.tx('Bo rolls a 3 and Cy rolls a 4'),
      TC.tx('Chope! Nobody'),
      TC.tx('flip Red Table'),
      TC.tx('Stop and claim the face-up food'),
      TC.tx('Laksa'),
      TC.plural(3, 'card'), TC.plural(0, 'card'), TC.plural(1, 'unused Table'), TC.plural(2, 'unused Table'),
      TC.refusal({error: 'flip at least one card before stopping', rule: 'game turn'}),
      TC.refusal({error: 'a die shows 1 to 6, not 7', rule: 'Matériel: 1 dé.'}),
      TC.t('{n} of {want} chosen', {n: 1, want: 2}),
      TC.tx('Siam! tie: Ana and Bo and Cy'),
      TC.tx('Bo and Cy let go together: nobody loses cards'),
    ]""")
    assert said == [
        "c’est le tour de Bo, pas d’Ana",
        "Bo fait un 3 et Cy fait un 4",
        "Chope! Personne",
        "retourner Red Table",
        "S’arrêter et réclamer les cartes Food face visible",
        "Laksa",
        "3 cartes", "0 carte", "1 Table inutilisée", "2 Tables inutilisées",
        "retournez au moins une carte avant de vous arrêter [game turn — tour de jeu]",
        "un dé montre 1 à 6, pas 7 [Matériel: 1 dé.]",
        "1 sur 2 choisies",
        "Siam! égalité : Ana et Bo et Cy",       # the names joined in French too
        "Bo et Cy ont lâché ensemble : personne ne perd de cartes",
    ]


def test_a_field_that_is_a_message_is_translated_and_a_name_is_not(french_board):
    """A field of several words that is a message is translated ("Full game"
    in "Full game (8 moves)"); a one-word field is a name, kept as typed
    (a player called "Players" is not "Joueurs")."""
    page = french_board
    assert page.evaluate("""() => [TC.tx('Full game (8 moves)'), TC.tx('Ana wins'),
                                     TC.tx("it is Players's turn, not Bo's")]""") == [
        "Partie complète (8 déplacements)", "Ana gagne", "c’est le tour de Players, pas de Bo"]
    # "de" and "que" elide before a name that starts with a vowel
    assert page.evaluate("""() => [TC.t('{name}’s turn', {name: 'Ana'}),
                                     TC.t('{name}’s turn', {name: 'Bo'}),
                                     TC.tx("it is Eve's turn, not Ana's")]""") == [
        "Au tour d’Ana", "Au tour de Bo", "c’est le tour d’Eve, pas d’Ana"]


def test_hawker_wars_counted_and_joined_lines_in_french(french_board):
    """Hawker Wars' lines (issue 33, item 4): a count of cards is a number
    ("{n} {what} cards" does not take "Ana draws 2 Ingredient cards" with
    n = "Ana"); a message written with a joint ("; ") is matched whole before
    the line is split there; a line the console capitalised matches its
    message exactly before a looser pattern ("{name} on {target}")."""
    assert french_board.evaluate("""() => [
      TC.tx('Ana draws 2 Ingredient cards and 1 Action card (an Event on top of the Action pile first)'),
      TC.tx('Cy gives up 2 cards for Food Poisoning'),
      TC.tx('Bo draws 1 Action card'),
      TC.tx('Ingredient pile reshuffled; left in the Black Market: Egg, 2 Water'),
      TC.tx('No Event on the Action pile'),
      TC.tx('Price Inflation on Bo'),
    ]""") == [
        ("Ana pioche 2 cartes Ingredient et 1 carte Action "
         "(d’abord un Event sur le dessus de la pile Action)"),
        "Cy cède 2 cartes pour Food Poisoning",
        "Bo pioche 1 carte Action",
        "Pile Ingredient remélangée ; restent au Black Market : Egg, 2 Water",
        "Aucun Event sur la pile Action",
        "Price Inflation sur Bo",
    ]


def test_a_convention_in_french_on_the_tables_and_the_league(tmp_path, live_server, ctx):
    """The league's pairing notice on a table's scoreboard, and the league
    page with a convention (pods, their states, the standings), in French."""
    from tests.kit.league import SMALL_CHOPE, hall_server, plan
    from tests.kit.league import convention_result as result

    from companion.league.tableseat import seat_notice

    t = live_server
    pairing = {"table": "t1", "round": 1, "rounds": 2, "game": "chope", "title": "Chope!",
               "players": ["Ana", "Bo", "Cy"], "floor": 0, "counted": False, "done": False}
    t.session.new_game("chomp", ["Ana", "Bo"])
    t.services.broker.set_notice(seat_notice(pairing, t.session.snapshot()))
    c = ctx()
    board = open_page(c, t.url + "/")
    expect_text(board, "#table-notice .notice.warn", "ne comptera pas")
    check(board, "convention-scoreboard-wrong-game")
    t.session.new_game("chope", ["Ana", "Bo", "Cy"], SMALL_CHOPE)
    t.services.broker.set_notice(seat_notice(pairing, t.session.snapshot()))
    expect_text(board, "#table-notice .notice.info", "Ana, Bo, Cy : en jeu")
    league = hall_server(tmp_path, convention=plan())
    try:
        conv = league.convention
        pod1, pod2 = conv.current.pods
        result(league.store, pod1.table, 1, [[p] for p in pod1.players])
        league.store.set_state(pod2.table, {"game": "chomp", "title": "Chomp!", "game_id": 1,
                                            "players": [{"name": "zed"}], "sent_ns": 1})
        conv.sweep()
        page = open_page(c, league.url + "/", ready="#standings")
        expect_text(page, "#pods .pod.done .status", "résultat compté")
        expect_text(page, "#conv-round", "ronde 1 sur")
        check(page, "convention-league")
    finally:
        league.close()
