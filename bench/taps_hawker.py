"""Hawker Wars taps: ``TURNS`` turns of a 3-player game from a seeded deal,
the host on one phone and each player on their own private page (390 x 844).

The cards come off seeded piles (``Deck``): the players log what they drew
by tapping those cards on their page; on their turn a player cooks a dish
when their page offers one (its one-tap button: the likely cards), else
trades once for a card a recipe still misses, then ends the turn. The host
taps only what the table shows and nobody's page can log: an Event turned
up on the Action pile (and its race's start), a Dish turned up after a
cook, the Black Market at setup, "nobody stops it" after a winning cook.
Food Poisoning's hold is played on the mock buzzers (everyone holds, one
lets go); the loser then picks the 2 cards on their page.

Figures: host taps per turn (setup counted apart, in ``kinds``) and player
taps per *action* (each event a player logs: a draw, a stall, a cook, a
trade, a loss, an end of turn)."""

from __future__ import annotations

import random
import time

from bench.tapkit import DEADLINE_S, PHONE, Host, event_json, host_page

GAME = "hawker"
PLAYERS = ["Ana", "Bo", "Cy"]
TABLE = {"players": PLAYERS, "demo": True, "demo_game": "hawker", "threads": 16}
TURNS = 20
SEED = 23


class Deck:
    """The physical piles, shuffled from the game's own card counts."""

    def __init__(self, rng: random.Random):
        from companion.games.hawker import DATA
        self.rng = rng
        self.ingredients = [k for k, v in DATA["ingredients"].items() for _ in range(v["copies"])]
        self.actions = [k for k, n in DATA["actions"].items() for _ in range(n)]
        self.events = [k for k, n in DATA["events"].items() for _ in range(n)]
        self.dishes = [k for k, v in DATA["dishes"].items() for _ in range(v["copies"])]
        for pile in (self.ingredients, self.actions, self.dishes):
            rng.shuffle(pile)

    def shuffle_events(self) -> None:
        """After the deal: the Events shuffled into the Action pile."""
        self.actions += self.events
        self.rng.shuffle(self.actions)

    def take(self, pile: str, n: int) -> list[str]:
        src = {"ingredient": self.ingredients, "action": self.actions, "dish": self.dishes}[pile]
        out, src[:n] = src[:n], []
        return out


class Phone:
    """A player's page: every tap counted."""

    def __init__(self, page, table, name):
        self.page, self.table, self.name = page, table, name
        self.taps = self.actions = 0

    def tap(self, selector: str) -> None:
        self.taps += 1
        self.page.locator(selector).first.click()

    def settle(self) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            want = str(self.table.session.snapshot()["version"])
            if self.page.evaluate("() => document.body.dataset.version") == want:
                return
            time.sleep(0.03)
        raise TimeoutError(f"{self.name}'s page did not settle")

    def log(self, selector: str) -> None:
        """The tap that logs an event (waits for the table to take it)."""
        before = self.table.session.snapshot()["version"]
        try:
            self.tap(selector)
        except Exception:       # a live update redrew the button under the tap
            if self.table.session.snapshot()["version"] == before:
                self.taps -= 1
                self.tap(selector)
        self.actions += 1
        deadline = time.monotonic() + DEADLINE_S
        while self.table.session.snapshot()["version"] == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: nothing logged by {selector}")
            time.sleep(0.02)
        self.settle()

    def pick(self, cards: list[str] | None, n: int) -> None:
        """Tap the given cards in the open picker (or the first ones it
        allows), then Log."""
        for i in range(n):
            sel = (f".picker button.card-pick[data-card='{cards[i]}']" if cards
                   else ".picker button.card-pick:not([disabled])")
            self.tap(sel)
        self.log(".picker button.log-pick")


def player_phones(browser, host_pg, table) -> dict:
    phones = {}
    for p in PLAYERS:
        url = host_pg.locator(f"#player-links details[data-player={p}] .pl-url").text_content()
        ctx = browser.new_context(**PHONE)
        ctx.set_default_timeout(5_000)
        page = ctx.new_page()
        page.goto(url)
        phones[p] = Phone(page, table, p)
    return phones


def host_log(host: Host, event: dict, kind: str, settle: bool = True) -> None:
    host.settle()
    tap_logs(host, f"#legal button.event[data-event='{event_json(event)}']", kind, event)
    if settle:
        host.settle()


def tap_logs(host: Host, sel: str, kind: str, event=None) -> None:
    """A host tap that logs something, waited for."""
    before = host.table.session.host_snapshot()["version"]
    for attempt in range(3):        # a live update may redraw the buttons under the tap
        try:
            host.tap(sel, kind)
            break
        except Exception:
            if host.table.session.host_snapshot()["version"] != before:
                break               # it was logged all the same
            host.taps -= 1
            host.kinds[kind] -= 1
            if attempt == 2:
                hs = host.table.session.host_snapshot()
                print("# not offered:", event, hs.get("legal_events"), hs["view"]["piles"],
                      hs["view"]["pending"])
                raise
    deadline = time.monotonic() + DEADLINE_S
    while host.table.session.host_snapshot()["version"] == before:
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing logged: {event}")
        time.sleep(0.02)


def setup(host: Host, phones: dict, deck: Deck) -> None:
    from companion.games.hawker import STALLS
    for p, stall in zip(PLAYERS, STALLS):
        phones[p].settle()
        phones[p].log(f"#my-events button.event[data-event*='\"stall\":\"{stall}\"']")
    for card in deck.take("dish", 4):
        host_log(host, {"type": "dish", "card": card}, "setup")
    for card in deck.take("ingredient", 3):
        host_log(host, {"type": "market", "card": card}, "setup")
    draws(host, phones, deck, deal=True)
    deck.shuffle_events()


def draws(host: Host, phones: dict, deck: Deck, deal: bool = False) -> None:
    """Every draw due now, each logged on its player's page."""
    while True:
        hs = host.settle()
        due = [e for e in hs.get("legal_events") or [] if e["type"] == "draw"]
        if not due and not deal and hs["view"]["pending"]["kind"] == "reshuffle":
            reshuffle(host, deck)
            continue
        if not due or deal and hs["view"]["pending"]["kind"] != "draw":
            return
        p, pile, n = due[0]["player"], due[0]["pile"], due[0]["count"]
        ph = phones[p]
        ph.settle()
        cards = deck.take(pile, n)
        if len(cards) < n:
            raise RuntimeError(f"the {pile} pile ran out: {n} due, {len(cards)} left; "
                               f"{hs['view']['piles']}")
        if n == 1:         # one card: a button per card
            ph.log(f"#my-events button.event[data-event*='\"cards\":[\"{cards[0]}\"]']")
        elif ph.page.locator(".picker").count():
            ph.pick(cards, n)
        else:              # one possible draw: its own button
            ph.log("#my-events button.event")


def event_check(host: Host, phones: dict, deck: Deck, rng) -> None:
    """Events on top of the Action pile are played first: the host logs
    them and starts the hold; the players hold their buzzers."""
    while deck.actions and deck.actions[0] == "food-poisoning":
        deck.take("action", 1)
        host_log(host, {"type": "event_check", "event": "food-poisoning"}, "event", settle=False)
        for p in PLAYERS:
            host.table.source.press(p)
        host.page.wait_for_selector("#start-race:visible")
        host.tap("#start-race", "race start")
        deadline = time.monotonic() + DEADLINE_S
        while (host.table.session.host_snapshot().get("race") or {}).get("phase") != "live":
            if time.monotonic() > deadline:
                raise TimeoutError("the hold never went live")
            time.sleep(0.05)
        time.sleep(0.3)
        loser = rng.choice(PLAYERS)
        host.table.source.release(loser)
        time.sleep(0.3)
        for p in PLAYERS:
            host.table.source.release(p)
        lose(host, phones)


def reshuffle(host: Host, deck: Deck) -> None:
    """The Ingredient pile ran out: the host keeps 3 Black Market cards (the
    console's form: the choice, then Log) and the rest become the pile."""
    hs = host.settle()
    if not any(e["type"] == "reshuffle" for e in hs.get("legal_events") or []):
        return
    before = dict(hs["view"]["black_market"]["cards"])
    if host.page.locator("#legal button.event[data-event*='reshuffle']").count():
        host.tap("#legal button.event[data-event*='reshuffle']", "reshuffle")
    else:
        host.kinds["reshuffle"] = host.kinds.get("reshuffle", 0) + 1
        host.taps += 1               # the select: one tap to open, one to choose (counted once)
        host.page.select_option("#legal form.builder select", index=1)
        tap_logs(host, "#legal form.builder button[type=submit]", "reshuffle")
    after = host.settle()["view"]["black_market"]["cards"]
    deck.ingredients = [k for k, n in before.items() for _ in range(n - after.get(k, 0))]
    deck.rng.shuffle(deck.ingredients)


def lose(host: Host, phones: dict) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        loss = (host.table.session.snapshot().get("view") or {}).get("loss")
        if loss or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not loss:
        return
    ph = phones[loss["chooser"]]
    ph.settle()
    ph.pick(None, loss["count"])


def my_turn(host: Host, ph: Phone, deck: Deck, rng) -> None:
    """Cook what the page offers in one tap, else trade once; end the turn."""
    traded = False
    for _ in range(2):
        ph.settle()
        cook = ph.page.locator("#my-events button.event[data-event*='\"type\":\"cook\"']")
        if cook.count():
            ph.log("#my-events button.event[data-event*='\"type\":\"cook\"']")
            if host.table.session.snapshot().get("finished"):
                return
            continue
        trade = ph.page.locator("#my-events button.open-pick[data-key^='trade:']")
        if trade.count() and not traded and rng.random() < 0.5:
            traded = True
            ph.tap("#my-events button.open-pick[data-key^='trade:']")
            ph.pick(None, 2)
            continue
        break
    ph.settle()
    ph.log("#my-events button.event[data-event='{\"type\":\"end_turn\"}']")
    discard = ph.page.locator(".picker[data-group=discard]")
    if discard.count():             # over 10 cards: down to 10
        ph.pick(None, int(discard.get_attribute("data-want")))
    elif ph.page.locator("#my-events button.event[data-event*='discard']").count():
        ph.log("#my-events button.event[data-event*='discard']")      # one card: its button


def after_turn(host: Host, deck: Deck) -> None:
    """The host turns up each Dish the refill asks for, and answers a winning cook."""
    while True:
        hs = host.settle()
        legal = hs.get("legal_events") or []
        while len(deck.dishes) > hs["view"]["piles"]["dish"]:
            deck.take("dish", 1)      # the only Dish left, turned up by the tracker itself
        if any(e["type"] == "resolve" for e in legal) and (hs.get("view") or {}).get("chain"):
            host_log(host, {"type": "resolve"}, "nobody stops it")
            continue
        if any(e["type"] == "dish" for e in legal):
            card = deck.take("dish", 1)[0]
            host_log(host, {"type": "dish", "card": card}, "dish")
            continue
        return


def shots(page, phones, tag) -> None:
    """Screenshots of every phone (artifacts/screenshots/taps-hawker-*.png)."""
    import os
    os.makedirs("artifacts/screenshots", exist_ok=True)
    page.screenshot(path=f"artifacts/screenshots/taps-hawker-{tag}-host.png", full_page=True)
    for p, ph in phones.items():
        ph.page.screenshot(path=f"artifacts/screenshots/taps-hawker-{tag}-{p}.png", full_page=True)


def play(browser, table) -> dict:
    ctx, page = host_page(browser, table)
    page.wait_for_selector("#legal")
    page.set_default_timeout(4_000)
    host = Host(page, table)
    host.settle()
    phones = player_phones(browser, page, table)
    rng = random.Random(SEED)
    deck = Deck(rng)
    setup(host, phones, deck)
    setup_taps = host.taps
    setup_player = sum(ph.taps for ph in phones.values())
    setup_actions = sum(ph.actions for ph in phones.values())
    turns = 0
    try:
        while turns < TURNS and not table.session.snapshot().get("finished"):
            after_turn(host, deck)
            view = host.settle()["view"]
            if view.get("loss"):
                lose(host, phones)
                continue
            p = view.get("turn")
            if p is None:
                raise RuntimeError(f"whose turn? {view['pending']}")
            event_check(host, phones, deck, rng)
            reshuffle(host, deck)
            draws(host, phones, deck)
            my_turn(host, phones[p], deck, rng)
            after_turn(host, deck)
            turns += 1
    except Exception:
        shots(page, phones, f"failed-turn{turns}")
        raise
    for ph in phones.values():
        ph.page.context.close()
    ctx.close()
    kinds = dict(host.kinds)
    kinds["setup_host_taps"] = setup_taps
    kinds["setup_player_taps"] = setup_player
    return {"turns": turns, "host_taps": host.taps - setup_taps,
            "player_taps": sum(ph.taps for ph in phones.values()) - setup_player,
            "player_actions": sum(ph.actions for ph in phones.values()) - setup_actions,
            "scrolls": host.scrolls, "kinds": kinds, "unit": "taps/turn",
            "player_unit": "taps/action"}
