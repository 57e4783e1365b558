"""Tropichaos taps: ``TURNS`` turns (a Take or a Sell) of a full game, the
chips drawn from a seeded shuffle of a real bag (48 fruit chips, 12 Season
chips), as a host and the players would log them.

The host logs what the table sees: each chip drawn for the Market (at set-up
and after every Take), a Season chip a player draws for a starting hand, the
Take itself, and an overstocked exchange when more than one is possible (the
tracker makes a forced one by itself). Each player logs on her own page what
only she knows, in the same tap: the fruit of her starting chip, and her
Sell with the chips she sells (the table sees how many). A player Sells when
she holds 5 chips, else with ``SELL_ODDS`` once she holds any; she Takes a
fruit of the Market at random. Set-up taps count towards the turns' figure.
"""

from __future__ import annotations

import json
import random
import time

from bench.tapkit import DEADLINE_S, PHONE, Host, host_page

GAME = "tropichaos"
PLAYERS = ["Ana", "Bo", "Cy"]
TABLE = {"players": PLAYERS, "demo": True, "demo_game": GAME}
TURNS = 20
SELL_ODDS = 0.35
SEED = 23
FRUITS = ("kiwi", "mango", "pomegranate")
POINTS = {"kiwi": {"spring": 2, "summer": 1, "autumn": 1},
          "mango": {"spring": 1, "summer": 2, "autumn": 1},
          "pomegranate": {"spring": 0, "summer": 0, "autumn": 3}}


class Player:
    """A player's own phone: every tap counted (her page has no thumb bar)."""

    def __init__(self, page):
        self.page, self.taps, self.kinds = page, 0, {}

    def tap(self, selector: str, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.taps += 1
        self.page.locator(selector).first.click()


class Bag:
    """The physical bag: a seeded shuffle; a chip put back goes anywhere in it."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.chips = [f for f in FRUITS for _ in range(16)] + ["season"] * 12
        rng.shuffle(self.chips)

    def draw(self) -> str:
        return self.chips.pop()

    def put_back(self, chip: str) -> None:
        self.chips.insert(self.rng.randrange(len(self.chips) + 1), chip)


def find(page, scope: str, event: dict) -> str:
    """The selector of the button in ``scope`` that logs ``event``."""
    buttons = page.locator(f"{scope} button.event")
    for i in range(buttons.count()):
        if json.loads(buttons.nth(i).get_attribute("data-event") or "null") == event:
            return f"{scope} button.event >> nth={i}"
    raise LookupError(f"no button logs {event} in {scope}")


class Play:
    """The table: the host's phone, each player's own page, the bag, the hands."""

    def __init__(self, browser, table, rng):
        self.table, self.rng = table, rng
        self.ctx, page = host_page(browser, table)
        page.wait_for_selector("#legal button.event")
        self.host = Host(page, table)
        self.bag = Bag(rng)
        self.hands: dict[str, list[str]] = {p: [] for p in PLAYERS}
        self.piles: dict[str, dict[str, list[str]]] = {p: {} for p in PLAYERS}
        self.mine, self.player_taps, self.turns = {}, 0, 0
        for p in PLAYERS:
            page.locator(f"#player-links details[data-player={p}] > summary").click()
            url = page.locator(f"#player-links details[data-player={p}] .pl-url").inner_text()
            ctx = browser.new_context(**PHONE)
            ctx.set_default_timeout(10_000)
            self.mine[p] = Player(ctx.new_page())
            self.mine[p].page.goto(url)

    def logged(self, before: int) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while self.table.session.version == before and time.monotonic() < deadline:
            time.sleep(0.02)

    def host_logs(self, event: dict, kind: str) -> None:
        before = self.table.session.version
        self.host.tap(find(self.host.page, "#legal", event), kind)
        self.logged(before)

    def player_logs(self, player: str, event: dict, kind: str) -> None:
        page = self.mine[player].page
        deadline = time.monotonic() + DEADLINE_S
        while True:                          # her page offers it once it is live
            try:
                selector = find(page, "#my-events", event)
                break
            except LookupError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        before = self.table.session.version
        self.mine[player].tap(selector, kind)
        self.player_taps += 1
        self.logged(before)

    def draw(self, view: dict) -> None:
        """A chip out of the bag for the Market (set-up or after a Take)."""
        chip = self.bag.draw()
        taker = view.get("taker")
        given = dict(self.vp(view, taker).get("given") or {}) if taker else {}
        self.host_logs({"type": "draw", "chip": chip}, "draw")
        after = self.table.session.host_snapshot()["view"]
        if view["phase"] == "market" and (chip == "season" or len(after["market"]) == len(
                view["market"])):
            self.bag.put_back(chip)          # set-up: put back, draw again
        elif taker and after["phase"] == "turn" and after["overstocked"] is None:
            now = self.vp(after, taker).get("given") or {}
            for f in FRUITS:                 # a forced exchange the tracker made itself
                if now.get(f, 0) > given.get(f, 0):
                    self.hands[taker].remove(f)
                    self.hands[taker].append(chip)

    @staticmethod
    def vp(view: dict, name: str) -> dict:
        return next(p for p in view["players"] if p["name"] == name)

    def deal(self, view: dict) -> None:
        p = view["deals"][0]
        chip = self.bag.draw()
        if chip == "season":                 # shown, returned: the host logs it
            self.host_logs({"type": "deal", "player": p, "chip": "season"}, "deal")
            self.bag.put_back(chip)
            return
        self.hands[p].append(chip)
        self.player_logs(p, {"type": "deal", "player": p, "chip": chip}, "starting chip")

    def turn(self, view: dict) -> None:
        p = view["current_player"]
        hand = self.hands[p]
        self.turns += 1
        if len(hand) >= 5 or (hand and self.rng.random() < SELL_ODDS):
            season = view["season"]
            n = len(hand) if len(hand) % 2 else self.rng.choice([len(hand) // 2, len(hand)])
            sold = sorted(sorted(hand, key=lambda f: -POINTS[f][season])[:n])
            for f in sold:
                hand.remove(f)
            self.piles[p].setdefault(season, []).extend(sold)
            self.player_logs(p, {"type": "sell", "player": p, "count": n, "chips": sold},
                             "sell")
            return
        chip = self.rng.choice(view["market"])
        hand.append(chip)
        self.host_logs({"type": "take", "player": p, "chip": chip}, "take")

    def exchange(self, view: dict) -> None:
        taker, over = view["taker"], view["overstocked"]
        give = next(f for f in self.hands[taker] if f != over)
        self.hands[taker].remove(give)
        self.hands[taker].append(over)
        self.host_logs({"type": "exchange", "player": taker, "give": [give]}, "exchange")

    def reveal(self, hs: dict) -> None:
        for e in hs["legal_events"]:
            if sorted(e["chips"]) == sorted(self.piles[e["player"]][e["season"]]):
                self.host_logs(e, "reveal")
                return
        raise LookupError("the console offers no reveal of the pile on the table")

    def step(self) -> None:
        hs = self.host.settle()
        view = hs["view"]
        phase = view["phase"]
        if phase in ("market", "draw"):
            self.draw(view)
        elif phase == "deal":
            self.deal(view)
        elif phase == "turn":
            self.turn(view)
        elif phase == "exchange":
            self.exchange(view)
        elif phase == "reveal":
            self.reveal(hs)

    def close(self) -> None:
        for who in self.mine.values():
            who.page.context.close()
        self.ctx.close()


def play(browser, table) -> dict:
    game = Play(browser, table, random.Random(SEED))
    try:
        while game.turns < TURNS and not table.session.snapshot().get("finished"):
            game.step()
        # the last turn's Take is over once its draw is logged
        while table.session.host_snapshot()["view"]["phase"] in ("draw", "exchange"):
            game.step()
        game.host.settle()
    finally:
        game.close()
    kinds = dict(game.host.kinds)
    for who in game.mine.values():
        for k, v in who.kinds.items():
            kinds[f"player {k}"] = kinds.get(f"player {k}", 0) + v
    return {"turns": game.turns, "host_taps": game.host.taps,
            "player_taps": game.player_taps, "scrolls": game.host.scrolls,
            "kinds": kinds, "unit": "taps/turn"}
