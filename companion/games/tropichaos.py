"""Tropichaos (Oink Games): sell fruit in its season, before the season moves.

Three chips lie face up in the *Market*. On her turn a player *Takes* one
(into her chip stand, where only she sees it) and draws a replacement from the
bag, or *Sells*: an odd hand all of it, an even hand (2 or 4) half or all,
face down in front of the current season. A Season chip drawn into the Market
moves the season marker and is replaced; three of one fruit in the Market is
*Overstocked*: the taker gets a deduction chip and exchanges a chip of her
hand with one of the overstocked ones. When the marker reaches the final
space the game ends; the sold chips are turned over and scored by the season
they were sold in (Kiwi 2/1/1, Mango 1/2/1, Pomegranate 0/0/3), minus 1 per
deduction chip.

Hidden information. What a player takes from the Market is public; the chip
the last two players draw at setup and the fruits of every sale are not. The
tracker keeps, per player, the public history of her stand (gains, gives,
sales by count and season) and works out every *world* that fits it: which
fruit her starting chip is, which chips each sale took. A player may name
her own chips on her private page (``starting_hand``, the ``chips`` of a
``sell``, ``sold``); those names narrow the tracker's worlds (so a draw, an
exchange or a reveal that cannot be true is refused) but never the public
view, which depends on public events only. At the end the host turns the
piles over one by one (``reveal``; the console offers only what fits the
players' notes too); piles the table can already work out are turned over
automatically. A step the tracker took by itself (such a pile, an overstocked
exchange with one possible answer) logged anyway is accepted as the same step.
The season board is a named length (setting ``season_length``) or the
table's own (``season_board``).

Events (fruits: ``kiwi``, ``mango``, ``pomegranate``; Season chip: ``season``)::

    {"type": "draw", "chip": "kiwi"}                  # a chip out of the bag into the Market
    {"type": "deal", "player": "cy", "chip": "fruit"} # a starting chip ("season": put back)
    {"type": "take", "chip": "mango"}                 # Take from the Market
    {"type": "sell", "count": 2}                      # Sell (the host sees only how many)
    {"type": "exchange", "give": ["kiwi"]}            # Overstocked: chips given from the hand
    {"type": "reveal", "player": "ana", "season": "summer", "chips": ["mango", "kiwi"]}
    # private (a player's own page; the table sees them without the fruits):
    {"type": "deal", "player": "cy", "chip": "kiwi"}
    {"type": "starting_hand", "player": "cy", "chip": "kiwi"}
    {"type": "sell", "player": "ana", "count": 2, "chips": ["mango", "mango"]}
    {"type": "sold", "player": "ana", "sale": 0, "chips": ["kiwi"]}

Rule readings and settings: docs/rules-notes.md (Tropichaos).

>>> g = Tropichaos()
>>> s = g.setup(["ana", "bo", "cy"])
>>> for chip in ("kiwi", "mango", "kiwi"):
...     s = g.apply(s, {"type": "draw", "chip": chip})
>>> g.chance_outcomes(s)[0]
({'type': 'deal', 'player': 'bo', 'chip': 'season'}, Fraction(4, 19))
>>> s = g.apply(s, {"type": "deal", "player": "bo", "chip": "fruit"})
>>> s = g.apply(s, {"type": "deal", "player": "cy", "chip": "fruit"})
>>> s = g.apply(s, {"type": "take", "chip": "kiwi"})
>>> g.public_view(s)["odds"]["next_draw_season"]["fraction"]
'12/55'
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from math import comb
from pathlib import Path

from .base import Game, RulesError, Setting, rank_by

DATA = json.loads((Path(__file__).parent / "data" / "tropichaos.json").read_text())
FRUITS: tuple[str, ...] = tuple(f["id"] for f in DATA["fruits"])
SEASONS: tuple[str, ...] = tuple(x["id"] for x in DATA["seasons"])
FRUIT_NAMES = {f["id"]: f["name"] for f in DATA["fruits"]}
SEASON_NAMES = {x["id"]: x["name"] for x in DATA["seasons"]}
#: points[fruit][season], the rulebook's table
POINTS = {f["id"]: dict(f["points"]) for f in DATA["fruits"]}
FRUIT_CHIPS = {f["id"]: f["chips"] for f in DATA["fruits"]}
SEASON_CHIPS: int = DATA["season_chips"]
ALL_CHIPS = sum(FRUIT_CHIPS.values()) + SEASON_CHIPS
MARKET_SIZE: int = DATA["market_size"]
HAND_LIMIT: int = DATA["hand_limit"]
SEASON = "season"          # a Season chip, in events
FRUIT = "fruit"            # a fruit chip nobody but its owner saw
END = "end"                # the final space of the season board
FI = {f: i for i, f in enumerate(FRUITS)}
SI = {x: i for i, x in enumerate(SEASONS)}
ZERO = (0,) * len(FRUITS)
EVENTS = ("draw", "deal", "take", "sell", "exchange", "reveal", "starting_hand", "sold")
PRIVATE = ("starting_hand", "sold")
ALL = object()             # the viewer who knows every secret: the tracker itself
#: the season board's named lengths (an assumption: docs/rules-notes.md, Tropichaos)
BOARDS: dict[str, list[str]] = DATA["season_boards"]
BOARD_NAMES = {"full": "Full game", "short": "Short game", "quick": "Quick game"}


def _board_words(board) -> str:
    """A board as a reader says it: "spring ×2, summer ×2, autumn ×2, spring ×2"."""
    runs: list[list] = []
    for x in board[:-1]:
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return ", ".join(x + (f" ×{n}" if n > 1 else "") for x, n in runs)


SETTINGS = (
    Setting("season_length", "full", "choice", choices=tuple(BOARDS), label="Game length",
            rule='"place the season marker on the space in the upper left marked with an '
                 '\\"S\\"" ... "Once the season marker reaches the final space, the game ends."',
            help="; ".join(f"{BOARD_NAMES[k]}: {_board_words(b)}" for k, b in BOARDS.items())
                 + ". The board is not in the rulebook (the publisher's cycles the seasons and "
                 "ends before they go round twice).",
            assumed=True, choice_labels=tuple(
                f"{BOARD_NAMES[k]} ({len(b) - 1} moves)" for k, b in BOARDS.items())),
    Setting("season_board", None, "data", label="Season board of your own",
            help="null: the board of the game length above. Or the spaces from S to the "
                 "final space, each the season it stands in, the last \"end\" (it replaces "
                 "the game length)."),
    Setting("starting_player", None, "player", label="Starting player",
            rule='"Choose a starting player."', help="Default: the first player listed."),
    Setting("market_redraw", "chip", "choice", choices=("chip", "market"),
            label="Setting up the Market",
            rule='"If a season chip or 3 of the same type of fruit are drawn from the bag, '
                 'please redraw until there are 3 chips and at least 2 different kinds of '
                 'fruit."',
            choice_labels=("Return only the chip that breaks the rule and draw again",
                           "Return the whole Market and draw 3 again")),
    Setting("overstock_exchange", "one", "choice", choices=("one", "several"),
            label="Overstocked: chips exchanged",
            rule='"Then, you must exchange the fruit chips in the market with any fruit chip '
                 'from your hand, except for the fruit that is overstocked, ensuring that '
                 'there are at least 2 different types of fruit chips in the market."',
            choice_labels=("Exactly one chip", "One or more chips (the taker chooses)")),
    Setting("latest_tiebreak", "seat", "choice", choices=("seat", "recent"),
            label="Last tie-break",
            rule='"If it\'s still tied after that, the player that took their turn the '
                 'latest is the winner."',
            choice_labels=("Later in the turn order from the starting player",
                           "Took a turn most recently")),
)


# -- fruit compositions: tuples of counts in FRUITS order ------------------------
def _comp(chips) -> tuple[int, ...]:
    c = [0] * len(FRUITS)
    for f in chips:
        c[FI[f]] += 1
    return tuple(c)


def _chips(comp) -> list[str]:
    return [f for f, n in zip(FRUITS, comp) for _ in range(n)]


def _add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def _within(a, b) -> bool:
    return all(x <= y for x, y in zip(a, b))


def _bump(h, i, d):
    return h[:i] + (h[i] + d,) + h[i + 1:]


@lru_cache(maxsize=4096)
def _parts(h: tuple, n: int) -> tuple:
    """Every sub-multiset of size ``n`` of the hand ``h``."""
    out = []
    for c in itertools.product(*(range(k + 1) for k in h)):
        if sum(c) == n:
            out.append(c)
    return tuple(out)


@lru_cache(maxsize=8192)
def _worlds(steps: tuple, start, secrets: tuple, revealed: tuple, track: tuple) -> frozenset:
    """Every state of one player's stand that fits her history.

    ``steps``: ``("gain", i)`` a fruit into the hand in public; ``("start",)``
    her hidden starting chip; ``("give", i)`` a fruit out of it in public; ``("sell",
    season, n, no)`` sale ``no`` of ``n`` chips. ``start`` is the starting
    chip's fruit when known; ``secrets`` the chips of sales whose fruits are
    known, as ``(no, comp)``; ``revealed`` the turned-over piles as ``(season,
    comp)``; ``track`` the seasons whose sold chips a world records.

    A world is ``(x, hand, sold)``: the starting chip's fruit index (-1: she
    had none), the fruits in her hand, and the fruits sold in each tracked
    season. Small: at most 5 chips in a hand and at most one hidden chip.
    """
    secret, rev = dict(secrets), dict(revealed)
    where = {season: k for k, season in enumerate(track)}
    configs = {(-1, ZERO, (ZERO,) * len(track))}
    for step in steps:
        kind, nxt = step[0], set()
        if kind == "gain":
            i = step[1]
            nxt = {(x, _bump(h, i, 1), sold) for x, h, sold in configs}
        elif kind == "start":
            xs = (start,) if start is not None else range(len(FRUITS))
            nxt = {(xi, _bump(h, xi, 1), sold) for x, h, sold in configs for xi in xs}
        elif kind == "give":
            i = step[1]
            nxt = {(x, _bump(h, i, -1), sold) for x, h, sold in configs if h[i]}
        else:
            _, season, n, no = step
            k, cap = where.get(season), rev.get(season)
            fixed = secret.get(no)
            for x, h, sold in configs:
                for part in ((fixed,) if fixed is not None else _parts(h, n)):
                    if not _within(part, h):
                        continue
                    if k is None:
                        nxt.add((x, _sub(h, part), sold))
                        continue
                    pile = _add(sold[k], part)
                    if cap is not None and not _within(pile, cap):
                        continue
                    nxt.add((x, _sub(h, part), sold[:k] + (pile,) + sold[k + 1:]))
        configs = nxt
        if not configs:
            break
    return frozenset(c for c in configs
                     if all(c[2][where[season]] == comp for season, comp in rev.items()))


@lru_cache(maxsize=4096)
def _starts(worlds: frozenset) -> tuple:
    """The starting-chip fruits (indices) of a stand's worlds."""
    return tuple(sorted({w[0] for w in worlds}))


def _prior(assignment: tuple, unseen: tuple) -> int:
    """How many ordered ways the hidden chips can be ``assignment`` (fruit
    indices, in order) when drawn from the ``unseen`` fruit chips: their
    chance up to a factor that is the same for every assignment."""
    left, w = list(unseen), 1
    for x in assignment:
        w *= max(left[x], 0)
        left[x] -= 1
    return w


class _State(dict):
    """A state: a plain JSON-able dict that also remembers what was worked
    out from it (``memo``: the worlds, the odds), because the scoreboard, the
    console's buttons and the checks all ask the same questions of one state.
    ``memo`` is None while :meth:`Tropichaos._apply` changes the state."""

    __slots__ = ("memo",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.memo = {}


def _copy_state(s: dict) -> dict:
    """A private copy of a state: every mutable part copied, the immutable
    steps (a tuple) and finished sale records shared."""
    out = _State(s)
    for key in ("players", "order", "board", "market", "deals", "news"):
        out[key] = list(s[key])
    for key in ("rules", "bag", "returned"):
        out[key] = dict(s[key])
    out["stands"] = {p: {**st, "taken": list(st["taken"]), "given": list(st["given"]),
                         "sales": list(st["sales"])}
                     for p, st in s["stands"].items()}
    out["secrets"] = {p: {"start": sec["start"], "sales": dict(sec["sales"])}
                      for p, sec in s["secrets"].items()}
    out["revealed"] = {p: dict(r) for p, r in s["revealed"].items()}
    out["auto_revealed"] = {p: list(r) for p, r in s["auto_revealed"].items()}
    return out


@lru_cache(maxsize=4096)
def _move_chance(chips: int, seasons: int, draws: int) -> Fraction:
    """The chance that ``draws`` chips from a bag of ``chips`` holding
    ``seasons`` Season chips include one: 1 - C(fruits, d) / C(chips, d)."""
    if draws > chips - seasons:
        return Fraction(1 if seasons else 0)
    return 1 - Fraction(comb(chips - seasons, draws), comb(chips, draws))


@lru_cache(maxsize=4096)
def _frac_text(p: Fraction) -> tuple[str, float]:
    return f"{p.numerator}/{p.denominator}", round(float(p), 4)


def _frac(p: Fraction | None) -> dict | None:
    """An exact probability as JSON: ``{"fraction": "3/19", "value": 0.1579}``."""
    if p is None:
        return None
    text, value = _frac_text(p)
    return {"fraction": text, "value": value}


def fruit_id(value, what: str = "chip") -> str:
    """A fruit as the host may type it (``"Kiwi"`` -> ``"kiwi"``)."""
    key = value.strip().lower() if isinstance(value, str) else None
    if key not in FRUITS:
        raise RulesError(f"{what} must be one of {', '.join(FRUITS)}, not {value!r}", "components")
    return key


def _counted(chips) -> str:
    """Fruits as a reader counts them: "2 Kiwi, Mango"."""
    counts = Counter(chips)
    return ", ".join(f"{n} {FRUIT_NAMES.get(f, f)}" if n > 1 else FRUIT_NAMES.get(f, str(f))
                     for f, n in counts.items()) or "nothing"


def _chip_words(n) -> str:
    return f"{n} chip" if n == 1 else f"{n} chips"


def sale_points(season: str, chips) -> int:
    """What the rulebook's table gives for ``chips`` sold in ``season``."""
    return sum(POINTS[f][season] for f in chips)


class Tropichaos(Game):
    """The Tropichaos rules tracker (see the module docstring for the events)."""

    name = "tropichaos"
    title = "Tropichaos"
    min_players = 2
    max_players = 5
    hides_scores = True
    hidden_information = True
    #: what JSON type each key of each event takes (checked before the rules)
    event_shapes = {
        "draw": {"chip": "str"}, "deal": {"player": "str", "chip": "str"},
        "take": {"player": "str", "chip": "str"},
        "sell": {"player": "str", "count": "int", "chips": "[str]?"},
        "exchange": {"player": "str", "give": "[str]"},
        "reveal": {"player": "str", "season": "str", "chips": "[str]"},
        "starting_hand": {"player": "str", "chip": "str"},
        "sold": {"player": "str", "sale": "int", "chips": "[str]?"}}
    settings = SETTINGS

    # -- setup ----------------------------------------------------------
    def _setup(self, players: list[str], options: dict) -> dict:
        board = options["season_board"]
        if board is None:
            board = BOARDS[options["season_length"]]
        if not isinstance(board, list) or len(board) < 2 or board[-1] != END or not all(
                x in SEASONS for x in board[:-1]):
            raise RulesError("'season_board' must list the spaces from S to the final space: "
                             f"seasons ({', '.join(SEASONS)}) and then {END!r}", "components")
        if len(board) - 1 > SEASON_CHIPS:
            raise RulesError(f"a board of {len(board) - 1} moves can never end: there are only "
                             f"{SEASON_CHIPS} Season chips", "components")
        start = options["starting_player"] or players[0]
        at = players.index(start)
        order = players[at:] + players[:at]
        deals = order[1:] if len(players) == 2 else order[-2:]
        return _State({
            "players": list(players), "order": order, "start": start,
            "rules": {k: options[k] for k in ("market_redraw", "overstock_exchange",
                                              "latest_tiebreak")}
            | {"season_length": options["season_length"] if options["season_board"] is None
               else "custom"},
            "board": list(board), "marker": 0,
            "bag": {"chips": ALL_CHIPS, "seasons": SEASON_CHIPS},
            "market": [], "gap": None, "phase": "market", "turn": 0, "taker": None,
            "overstocked": None, "deals": list(deals), "seasons_out": 0,
            "returned": {"season": 0, "fruit": 0}, "turns": 0, "news": [],
            "stands": {p: {"hand": 0, "hidden": False, "taken": list(ZERO),
                           "given": list(ZERO), "steps": (), "sales": [], "deductions": 0,
                           "last_turn": None} for p in players},
            "secrets": {p: {"start": None, "sales": {}} for p in players},
            "revealed": {p: {} for p in players}, "auto_revealed": {p: [] for p in players},
            "auto_step": None,
        })

    # -- transitions ----------------------------------------------------
    def copy_state(self, state: dict) -> dict:
        """:meth:`Game.apply`'s copy, knowing the state's shape: the
        stands' histories are tuples of immutable steps, so they are
        shared (a deep copy of every history on every event was a
        third of the time of a game)."""
        return _copy_state(state)

    def _apply(self, s: dict, ev: dict) -> dict:
        kind = ev["type"]
        if kind not in EVENTS:
            raise RulesError(f"unknown Tropichaos event {kind!r}; known: {', '.join(EVENTS)}",
                             "format")
        auto = s.get("auto_step")
        if kind not in PRIVATE:          # the table sees nothing of a private note
            s["news"] = []
            s["auto_step"] = None
        s.memo = None                    # nothing remembered while the state changes
        if auto and kind == auto["type"] and s["phase"] != "exchange":
            self._same_step(s, ev, auto)     # the tracker made it already: accepted as it
        else:
            getattr(self, "_on_" + kind)(s, ev)
            self._settle(s)
        s.memo = {}
        if not self._joint(s, ALL):
            raise RulesError(self._misfit(s, ev), "hidden chips")
        return s

    def apply(self, state: dict, event: dict) -> dict:
        """:meth:`Game.apply`; once the game is over, a ``reveal`` of a pile
        the tracker turned over itself is still accepted as the same step."""
        if self.finished(state) and isinstance(event, dict) and event.get("type") == "reveal":
            self.check_shape(event)
            return self._apply(self.copy_state(state), event)
        return super().apply(state, event)

    def _same_step(self, s, ev, auto) -> None:
        """``ev`` logs the step the tracker took by itself just before
        (``auto``, the overstocked exchange that had one answer): accepted
        as that step when it says the same, refused when it says otherwise."""
        give = ev.get("give")
        give = [give] if isinstance(give, str) else self._named(give, "'give'") or []
        if ev.get("player", auto["player"]) != auto["player"] or sorted(give) != sorted(
                auto["give"]):
            shown = ", ".join(FRUIT_NAMES[g] for g in auto["give"])
            raise RulesError(f"the tracker already made {auto['player']}'s exchange, the only "
                             f"one possible: {shown} for {FRUIT_NAMES[auto['over']]}; undo "
                             "the draw to change it", "overstocked")
        s["news"].append(f"{auto['player']}'s exchange was already made: logged as the same "
                         "step")

    def _misfit(self, s, ev) -> str:
        who = ev.get("player") or s["taker"] or self._turn_player(s)
        return (f"that does not fit what the tracker knows: no way of filling {who}'s chip "
                "stand and the bag agrees with every chip taken, exchanged, sold and drawn "
                "(and with what the players logged on their own pages)")

    def _expect(self, s, phase: str, what: str):
        if s["phase"] != phase:
            raise RulesError(f"cannot {what} now: {self._status(s)}", self._phase_rule(s))

    def _player(self, s, ev, who: str, what: str) -> str:
        p = ev.get("player", who)
        if p != who:
            raise RulesError(f"it is {who} who must {what}, not {p!r}", "taking turns")
        return p

    def _on_draw(self, s, ev):
        if s["phase"] not in ("market", "draw"):
            raise RulesError(f"no chip is drawn for the Market now: {self._status(s)}",
                             self._phase_rule(s))
        chip = ev.get("chip")
        if chip != SEASON:
            chip = fruit_id(chip, "a chip from the bag")
        self._take_from_bag(s, chip)
        if s["phase"] == "market":
            self._market_setup_draw(s, chip)
        else:
            self._replenish(s, chip)

    def _take_from_bag(self, s, chip):
        """One chip out of the bag; refused if the bag cannot hold it."""
        bag = s["bag"]
        if chip == SEASON:
            if not bag["seasons"]:
                raise RulesError(f"all {SEASON_CHIPS} Season chips are out of the bag", "bag")
            bag["seasons"] -= 1
        else:
            if bag["chips"] - bag["seasons"] <= 0:
                raise RulesError("the bag holds no fruit chip, only Season chips", "bag")
            if self._unseen(s)[FI[chip]] <= 0:
                raise RulesError(f"all {FRUIT_CHIPS[chip]} {FRUIT_NAMES[chip]} chips are "
                                 "accounted for (Market, chip stands, sold piles)", "bag")
        bag["chips"] -= 1

    def _market_setup_draw(self, s, chip):
        """Set-up: a Season chip or a third chip of one fruit is put back."""
        market = s["market"]
        if chip == SEASON or market.count(chip) == MARKET_SIZE - 1:
            why = "a Season chip" if chip == SEASON else f"a third {FRUIT_NAMES[chip]}"
            back = [chip] if s["rules"]["market_redraw"] == "chip" else market + [chip]
            for c in back:
                s["bag"]["chips"] += 1
                s["bag"]["seasons"] += c == SEASON
                s["returned"][SEASON if c == SEASON else FRUIT] += 1
            if s["rules"]["market_redraw"] == "market":
                s["market"] = []
            s["news"].append(f"set-up: {why} came out; "
                             + ("it goes back into the bag" if len(back) == 1 else
                                "the Market goes back into the bag") + "; draw again")
            return
        market.append(chip)

    def _replenish(self, s, chip):
        """A chip drawn to refill the Market after a Take."""
        if chip == SEASON:
            s["seasons_out"] += 1
            s["marker"] += 1
            space = s["board"][s["marker"]]
            if space == END:
                s["news"].append("Season chip: the marker reaches the final space; the game "
                                 "ends")
                s["phase"], s["taker"] = "reveal", None
            else:
                s["news"].append(f"Season chip: the marker moves to {SEASON_NAMES[space]} "
                                 f"(space {s['marker']}); draw again")
            return
        s["market"].insert(s["gap"], chip)
        s["gap"] = None
        if len(set(s["market"])) == 1:
            taker = s["taker"]
            s["stands"][taker]["deductions"] += 1
            s["overstocked"] = chip
            s["phase"] = "exchange"
            s["news"].append(f"Overstocked: 3 {FRUIT_NAMES[chip]} in the Market; {taker} takes "
                             "a deduction chip and exchanges")
        else:
            self._end_turn(s)

    def _on_deal(self, s, ev):
        self._expect(s, "deal", "deal a starting chip")
        p = self._player(s, ev, s["deals"][0], "take a starting chip")
        chip = ev.get("chip")
        if chip not in (SEASON, FRUIT):
            chip = fruit_id(chip, "a starting chip")
        if chip == SEASON:
            if not s["bag"]["seasons"]:
                raise RulesError("no Season chip is left in the bag", "bag")
            s["returned"][SEASON] += 1
            s["news"].append(f"{p} drew a Season chip: shown and returned; {p} draws again")
            return
        if s["bag"]["chips"] - s["bag"]["seasons"] <= 0:
            raise RulesError("the bag holds no fruit chip", "bag")
        s["bag"]["chips"] -= 1
        st = s["stands"][p]
        st["hidden"], st["hand"] = True, 1
        st["steps"] += (("start",),)
        if chip != FRUIT:
            s["secrets"][p]["start"] = chip
        s["deals"].pop(0)
        s["news"].append(f"{p} takes a starting chip")

    def _on_take(self, s, ev):
        self._expect(s, "turn", "Take")
        p = self._player(s, ev, self._turn_player(s), "play")
        st = s["stands"][p]
        if st["hand"] >= HAND_LIMIT:
            raise RulesError(f"{p} holds {HAND_LIMIT} chips: \"If you have 5 chips in your hand "
                             "when your turn comes, you can only Sell\"", "taking turns")
        chip = fruit_id(ev.get("chip"), "the chip taken")
        slot = ev.get("slot")
        if slot is None:
            if chip not in s["market"]:
                raise RulesError(f"there is no {FRUIT_NAMES[chip]} in the Market "
                                 f"({', '.join(s['market'])})", "take")
            slot = s["market"].index(chip)
        elif isinstance(slot, bool) or not isinstance(slot, int) or not (
                0 <= slot < len(s["market"])) or s["market"][slot] != chip:
            raise RulesError(f"slot {slot!r} of the Market does not hold a "
                             f"{FRUIT_NAMES[chip]}", "take")
        s["market"].pop(slot)
        s["gap"] = slot
        self._acted(s, p)
        st["hand"] += 1
        st["taken"][FI[chip]] += 1
        st["steps"] += (("gain", FI[chip]),)
        s["taker"] = p
        s["phase"] = "draw"
        s["news"].append(f"{p} takes a {FRUIT_NAMES[chip]}; draw a chip for the Market")

    def _sell_count(self, s, p, ev, chips) -> int:
        hand = s["stands"][p]["hand"]
        n = ev.get("count", len(chips) if chips is not None else None)
        if isinstance(n, bool) or not isinstance(n, int):
            raise RulesError("a sale needs 'count', how many chips are sold", "format")
        if chips is not None and len(chips) != n:
            raise RulesError(f"'count' says {n} chips but {len(chips)} are named", "format")
        if not hand:
            raise RulesError(f"{p} has no chip to sell: Take instead", "sell")
        if hand % 2:
            if n != hand:
                raise RulesError(f"{p} holds {hand} chips, an odd number: \"If you have an odd "
                                 "number of chips in your hand (1, 3, or 5), you must sell all "
                                 "of them\"", "sell")
        elif n not in (hand // 2, hand):
            raise RulesError(f"{p} holds {hand} chips: \"If you have an even number of chips "
                             f"in your hand (2 or 4), you can choose to sell half of them or "
                             f"all of them\" ({hand // 2} or {hand})", "sell")
        return n

    def _named(self, value, what) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            raise RulesError(f"{what} must be a list of fruits", "format")
        return [fruit_id(c, what) for c in value]

    def _on_sell(self, s, ev):
        self._expect(s, "turn", "Sell")
        p = self._player(s, ev, self._turn_player(s), "play")
        chips = self._named(ev.get("chips"), "the chips sold")
        n = self._sell_count(s, p, ev, chips)
        st = s["stands"][p]
        self._acted(s, p)
        season = self._season(s)
        no = len(st["sales"])
        st["sales"].append({"season": season, "count": n, "space": s["marker"]})
        st["steps"] += (("sell", SI[season], n, no),)
        st["hand"] -= n
        if chips is not None:
            s["secrets"][p]["sales"][str(no)] = chips
        s["news"].append(f"{p} sells {n} chip{'s' * (n != 1)} in {SEASON_NAMES[season]}")
        self._end_turn(s)

    def _on_exchange(self, s, ev):
        self._expect(s, "exchange", "exchange")
        taker = self._player(s, ev, s["taker"], "exchange")
        give = ev.get("give")
        if isinstance(give, str):
            give = [give]
        give = self._named(give, "'give'")
        if not give:
            raise RulesError("an exchange names the chips given from the hand: 'give' (the "
                             "taker always holds one: the fruit just taken is not the "
                             "overstocked one)", "format")
        over = s["overstocked"]
        limit = 1 if s["rules"]["overstock_exchange"] == "one" else MARKET_SIZE
        if over in give:
            raise RulesError(f"\"except for the fruit that is overstocked\": {taker} cannot "
                             f"give a {FRUIT_NAMES[over]}", "overstocked")
        if len(give) > limit:
            raise RulesError(f"exchange {'exactly one chip' if limit == 1 else 'at most 3'} "
                             "(setting overstock_exchange)", "overstocked")
        after = give + [over] * (MARKET_SIZE - len(give))
        if len(set(after)) < 2:
            raise RulesError("\"ensuring that there are at least 2 different types of fruit "
                             "chips in the market\"", "overstocked")
        st = s["stands"][taker]
        for g in give:
            st["steps"] += (("give", FI[g]),)
            st["steps"] += (("gain", FI[over]),)
            st["given"][FI[g]] += 1
            st["taken"][FI[over]] += 1
        s["news"].append(f"{taker} exchanges {', '.join(FRUIT_NAMES[g] for g in give)} for "
                             f"{FRUIT_NAMES[over]}")
        s["market"] = after
        s["overstocked"] = None
        self._end_turn(s)

    def _on_reveal(self, s, ev):
        if s["phase"] != "over":
            self._expect(s, "reveal", "turn the sold chips over")
        p = ev.get("player")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "format")
        season = ev.get("season")
        if season not in SEASONS:
            raise RulesError(f"'season' must be one of {', '.join(SEASONS)}", "format")
        n = self._sold(s, p)[season]
        if not n:
            raise RulesError(f"{p} sold nothing in {SEASON_NAMES[season]}", "scoring")
        chips = self._named(ev.get("chips"), "the chips turned over")
        if chips is None or len(chips) != n:
            raise RulesError(f"{p}'s {SEASON_NAMES[season]} pile holds {n} chips: name them all",
                             "scoring")
        if season in s["revealed"][p]:
            known = s["revealed"][p][season]
            if list(_comp(chips)) != list(known):
                raise RulesError(f"{p}'s {SEASON_NAMES[season]} pile is already turned over: "
                                 f"{_counted(_chips(known))}", "scoring")
            s["news"].append(f"{p}'s {SEASON_NAMES[season]} pile was already turned over: "
                             "logged as the same step")
            return
        s["revealed"][p][season] = list(_comp(chips))

    def _on_starting_hand(self, s, ev):
        p = ev.get("player")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "format")
        if not s["stands"][p]["hidden"]:
            raise RulesError(f"{p} took no starting chip", "set-up")
        if s["secrets"][p]["start"] is not None:
            raise RulesError(f"{p}'s starting chip is already named (undo to change it)",
                             "set-up")
        s["secrets"][p]["start"] = fruit_id(ev.get("chip"), "the starting chip")

    def _on_sold(self, s, ev):
        p = ev.get("player")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "format")
        no = ev.get("sale")
        sales = s["stands"][p]["sales"]
        if isinstance(no, bool) or not isinstance(no, int) or not 0 <= no < len(sales):
            raise RulesError(f"{p} has made {len(sales)} sales; 'sale' is one of their "
                             "numbers from 0", "format")
        if str(no) in s["secrets"][p]["sales"]:
            raise RulesError(f"the chips of {p}'s sale {no} are already named (undo to change "
                             "them)", "sell")
        chips = self._named(ev.get("chips"), "the chips sold")
        if chips is None or len(chips) != sales[no]["count"]:
            raise RulesError(f"sale {no} was {sales[no]['count']} chips: name them all", "sell")
        s["secrets"][p]["sales"][str(no)] = chips

    # -- the mechanics ----------------------------------------------------
    def _turn_player(self, s) -> str:
        return s["order"][s["turn"]]

    def _season(self, s) -> str:
        return s["board"][s["marker"]]

    def _acted(self, s, p):
        """``p`` takes their turn now (the "latest turn" tie-break counts it)."""
        s["turns"] += 1
        s["stands"][p]["last_turn"] = s["turns"]

    def _end_turn(self, s):
        s["turn"] = (s["turn"] + 1) % len(s["order"])
        s["taker"] = None
        s["phase"] = "turn"

    def _settle(self, s):
        """Forced steps: the end of set-up, an exchange with at most one
        possible answer (as far as the table can tell), piles the table can
        already work out at the end."""
        if s["phase"] == "market" and len(s["market"]) == MARKET_SIZE:
            s["phase"] = "deal" if s["deals"] else "turn"
        if s["phase"] == "deal" and not s["deals"]:
            s["phase"] = "turn"
        if s["phase"] == "exchange":
            options = self._exchange_options(s, None)
            if len(options) == 1:
                s["auto_step"] = {"type": "exchange", "player": s["taker"],
                                  "give": options[0], "over": s["overstocked"]}
                self._on_exchange(s, {"type": "exchange", "give": options[0]})
        while s["phase"] == "reveal":    # the table's knowledge only: the public view
            pile = next(((p, x) for p, x in self._piles(s)     # never hangs on a note
                         if len(self._pile_options(s, p, x, None)) == 1), None)
            if pile is None:
                if not self._piles(s):
                    s["phase"] = "over"
                break
            p, x = pile
            s["revealed"][p][x] = list(self._pile_options(s, p, x, None)[0])
            s["auto_revealed"][p].append(x)

    def _sold(self, s, p) -> dict[str, int]:
        out = dict.fromkeys(SEASONS, 0)
        for sale in s["stands"][p]["sales"]:
            out[sale["season"]] += sale["count"]
        return out

    def _piles(self, s) -> list[tuple[str, str]]:
        """Piles still face down, in the order the host turns them over."""
        return [(p, x) for p in s["order"] for x, n in self._sold(s, p).items()
                if n and x not in s["revealed"][p]]

    # -- what the tracker knows ---------------------------------------------
    def _unseen(self, s) -> tuple[int, ...]:
        return self._remember(s, "unseen", lambda: self._work_unseen(s))

    def _work_unseen(self, s) -> tuple[int, ...]:
        """Fruit chips nobody has seen face up for good: the bag's fruits and
        the hidden starting chips, kind by kind (the bag and the hands'
        hidden chips, as the table sees them)."""
        out = [FRUIT_CHIPS[f] for f in FRUITS]
        for f in s["market"]:
            out[FI[f]] -= 1
        for p in s["players"]:
            st = s["stands"][p]
            for i in range(len(FRUITS)):
                out[i] -= st["taken"][i] - st["given"][i]
        return tuple(out)

    def _stand_worlds(self, s, p, knows: bool, query: str | None = None) -> frozenset:
        """The worlds of ``p``'s stand; with her own notes if ``knows``."""
        st, sec, rev = s["stands"][p], s["secrets"][p], s["revealed"][p]
        start, secrets, revealed, track = None, (), (), ()
        if knows:
            if sec["start"] is not None:
                start = FI[sec["start"]]
            if sec["sales"]:
                secrets = tuple(sorted((int(no), _comp(chips))
                                       for no, chips in sec["sales"].items()))
        if rev or query:
            revealed = tuple(sorted((SI[x], tuple(c)) for x, c in rev.items()))
            track = tuple(sorted({SI[x] for x in rev} | ({SI[query]} if query else set())))
        return _worlds(st["steps"], start, secrets, revealed, track)

    def _remember(self, s, key, work):
        memo = getattr(s, "memo", None)
        if memo is None:
            return work()
        if key not in memo:
            memo[key] = work()
        return memo[key]

    def _knows(self, s, viewer) -> tuple[str, ...]:
        """The players whose own notes ``viewer`` may use (only those who made any)."""
        return tuple(p for p in s["order"] if (viewer is ALL or viewer == p) and (
            s["secrets"][p]["start"] is not None or s["secrets"][p]["sales"]))

    def _joint(self, s, viewer, query: tuple | None = None) -> list[tuple[dict, dict]]:
        knows = self._knows(s, viewer)
        return self._remember(s, ("joint", knows, query),
                              lambda: self._work_joint(s, knows, query))

    def _work_joint(self, s, knows, query) -> list[tuple[dict, dict]]:
        """The worlds of the whole table that ``viewer`` cannot rule out:
        ``(starting chips {player: fruit index}, {player: her stand's worlds
        that fit})``. Empty: the events contradict each other."""
        worlds = {p: self._stand_worlds(s, p, p in knows, query[1] if query and query[0] == p
                                        else None) for p in s["players"]}
        if not all(worlds.values()):
            return []
        unseen = self._unseen(s)
        hidden = [p for p in s["order"] if s["stands"][p]["hidden"]]
        roomy = min(unseen) >= len(hidden)
        out = []
        for combo in itertools.product(*(_starts(worlds[p]) for p in hidden)):
            if roomy or all(unseen[i] >= combo.count(i) for i in set(combo)):
                out.append((dict(zip(hidden, combo)), worlds))
        return out

    def _hands(self, s, p, viewer) -> list[tuple]:
        """The hands ``p`` may hold, as ``viewer`` sees it."""
        joint = self._joint(s, viewer)
        xs = {a.get(p, -1) for a, _ in joint}
        worlds = joint[0][1][p] if joint else ()
        return sorted({h for x, h, _ in worlds if x in xs}, reverse=True)

    def _pile_options(self, s, p, season, viewer) -> list[tuple]:
        """The fruits ``p``'s face-down ``season`` pile may hold, as ``viewer`` sees it."""
        joint = self._joint(s, viewer, (p, season))
        if not joint:
            return []
        xs = {a.get(p, -1) for a, _ in joint}
        k = sorted({SI[x] for x in s["revealed"][p]} | {SI[season]}).index(SI[season])
        return sorted({sold[k] for x, _, sold in joint[0][1][p] if x in xs})

    def _exchange_options(self, s, viewer) -> list[list[str]]:
        """The ``give`` lists the overstocked taker may log, as ``viewer`` sees it."""
        over, taker = s["overstocked"], s["taker"]
        others = [f for f in FRUITS if f != over]
        limit = 1 if s["rules"]["overstock_exchange"] == "one" else MARKET_SIZE
        hands = self._hands(s, taker, viewer)
        out = []
        for n in range(1, limit + 1):
            for give in itertools.combinations_with_replacement(others, n):
                after = list(give) + [over] * (MARKET_SIZE - n)
                if len(set(after)) >= 2 and any(_within(_comp(give), h) for h in hands):
                    out.append(list(give))
        return out

    def draw_odds(self, s, viewer=None) -> dict[str, Fraction]:
        """The chance of each chip being the next one out of the bag, as
        ``viewer`` sees it (None: the table). Season chips are never hidden,
        so their chance is exact; a fruit's chance treats every arrangement of
        the unseen fruit chips (bag and hidden starting chips) that fits what
        the viewer saw as equally likely."""
        return dict(self._remember(s, ("odds", self._knows(s, viewer)),
                                   lambda: self._work_odds(s, viewer)))

    def _work_odds(self, s, viewer) -> dict[str, Fraction]:
        bag = s["bag"]
        if not bag["chips"]:
            return {}
        out = {}
        if bag["seasons"]:
            out[SEASON] = Fraction(bag["seasons"], bag["chips"])
        if bag["chips"] > bag["seasons"]:
            unseen = self._unseen(s)
            hidden = [p for p in s["order"] if s["stands"][p]["hidden"]]
            joint = self._joint(s, viewer)
            weights = [(Counter(a.values()), _prior(tuple(a[p] for p in hidden), unseen))
                       for a, _ in joint]
            total = sum(w for _, w in weights)
            for i, f in enumerate(FRUITS):
                p = sum(w * (unseen[i] - used[i]) for used, w in weights)
                if p and total:
                    out[f] = Fraction(p, total * bag["chips"])
        return out

    def draws_before_turn(self, s, player) -> int | None:
        """How many chips come out of the bag before ``player``'s next turn if
        every player before her Takes (a player holding 5 chips must Sell)."""
        phase = s["phase"]
        if phase not in ("turn", "draw", "exchange"):
            return None
        n = len(s["order"])
        cur = s["turn"]
        draws = 0
        if phase == "turn":
            seats = [(cur + i) % n for i in range(n)]
        else:
            draws = 1 if phase == "draw" else 0
            seats = [(cur + i) % n for i in range(1, n)]
        for seat in seats:
            q = s["order"][seat]
            if q == player and not (seat == cur and phase == "turn"):
                break
            draws += s["stands"][q]["hand"] < HAND_LIMIT
        return draws

    def season_move_chance(self, s, player) -> Fraction | None:
        """The chance that a Season chip comes out before ``player``'s next turn
        (every player before her Takes): 1 - C(fruits, d) / C(chips, d)."""
        d = self.draws_before_turn(s, player)
        if d is None:
            return None
        return _move_chance(s["bag"]["chips"], s["bag"]["seasons"], d)

    # -- what may happen next ---------------------------------------------
    def decisions(self, s) -> list[dict]:
        if self.finished(s):
            return []
        phase = s["phase"]
        if phase == "turn":
            p = self._turn_player(s)
            hand = s["stands"][p]["hand"]
            out = []
            if hand < HAND_LIMIT:
                out += [{"type": "take", "player": p, "chip": f}
                        for f in dict.fromkeys(s["market"])]
            if hand:
                counts = [hand] if hand % 2 else [hand // 2, hand]
                out += [{"type": "sell", "player": p, "count": n} for n in counts]
            return out
        if phase == "exchange":
            return [{"type": "exchange", "player": s["taker"], "give": g}
                    for g in self._exchange_options(s, None)]
        if phase == "reveal":
            piles = self._piles(s)
            if not piles:
                return []
            p, x = piles[0]          # the game is over: what the players noted counts
            return [{"type": "reveal", "player": p, "season": x, "chips": _chips(c)}
                    for c in self._pile_options(s, p, x, ALL)]
        return []

    def chance_outcomes(self, s) -> list[tuple[dict, Fraction]]:
        if s["phase"] in ("market", "draw"):
            return [({"type": "draw", "chip": chip}, p)
                    for chip, p in self.draw_odds(s, None).items()]
        if s["phase"] == "deal":
            bag = s["bag"]
            p = s["deals"][0]
            out = []
            if bag["seasons"]:
                out.append(({"type": "deal", "player": p, "chip": SEASON},
                            Fraction(bag["seasons"], bag["chips"])))
            if bag["chips"] > bag["seasons"]:
                out.append(({"type": "deal", "player": p, "chip": FRUIT},
                            Fraction(bag["chips"] - bag["seasons"], bag["chips"])))
            return out
        return []

    def private_events(self, s, player) -> list[dict]:
        """What ``player`` may log from her own page: the fruit of the
        starting chip she is dealt or holds, her sale with its chips on her
        turn, the chips of an earlier sale logged without them."""
        if player not in s.get("players", ()) or self.finished(s):
            return []
        out = []
        if s["phase"] == "deal" and s["deals"] and s["deals"][0] == player:
            odds = self.draw_odds(s, player)
            out += [{"type": "deal", "player": player, "chip": f} for f in FRUITS if f in odds]
        st, sec = s["stands"][player], s["secrets"][player]
        if st["hidden"] and sec["start"] is None:
            xs = sorted({a[player] for a, _ in self._joint(s, player)})
            out += [{"type": "starting_hand", "player": player, "chip": FRUITS[x]} for x in xs]
        if s["phase"] == "turn" and self._turn_player(s) == player and st["hand"]:
            hand = st["hand"]
            hands = self._hands(s, player, player)
            for n in ([hand] if hand % 2 else [hand // 2, hand]):
                parts = sorted({c for h in hands for c in _parts(h, n)})
                out += [{"type": "sell", "player": player, "count": n, "chips": _chips(c)}
                        for c in parts]
        return out + self._sold_options(s, player)

    def _sold_options(self, s, player) -> list[dict]:
        """``sold`` events naming the fruits of ``player``'s unnamed sales, each
        fitting her history and her own notes."""
        st, sec = s["stands"][player], s["secrets"][player]
        out = []
        for no, sale in enumerate(st["sales"]):
            if str(no) in sec["sales"]:
                continue
            base = self._stand_worlds(s, player, True)
            if not base:
                continue
            for comp in _parts((sale["count"],) * len(FRUITS), sale["count"]):
                trial = dict(sec["sales"], **{str(no): _chips(comp)})
                secrets = tuple(sorted((int(k), _comp(v)) for k, v in trial.items()))
                start = FI[sec["start"]] if sec["start"] else None
                revealed = tuple(sorted((SI[x], tuple(c)) for x, c in s["revealed"][player]
                                        .items()))
                track = tuple(sorted(SI[x] for x in s["revealed"][player]))
                if _worlds(st["steps"], start, secrets, revealed, track):
                    out.append({"type": "sold", "player": player, "sale": no,
                                "chips": _chips(comp)})
        return out

    # -- reading the state ----------------------------------------------
    def _points(self, s, p) -> dict:
        """Points from the turned-over piles (all of them once the game is over)."""
        st = s["stands"][p]
        piles = {}
        for x, comp in s["revealed"][p].items():
            chips = _chips(comp)
            piles[x] = {"chips": dict(Counter(chips)), "count": len(chips),
                        "points": sale_points(x, chips)}
        sales = sum(v["points"] for v in piles.values())
        return {"piles": piles, "sales": sales, "deductions": st["deductions"],
                "total": sales - st["deductions"], "sold": sum(self._sold(s, p).values())}

    def scores(self, s) -> dict[str, int]:
        """Sales minus deductions; before the piles are turned over only what
        the table can see counts (the deductions, the piles turned over)."""
        return {p: self._points(s, p)["total"] for p in s["players"]}

    def current_player(self, s) -> str | None:
        if s["phase"] in ("turn",):
            return self._turn_player(s)
        if s["phase"] in ("draw", "exchange"):
            return s["taker"]
        if s["phase"] == "deal":
            return s["deals"][0]
        return None

    def finished(self, s) -> bool:
        return s["phase"] == "over"

    def ranking(self, s) -> list[list[str]]:
        """Most points; then most chips sold; then fewer deduction chips; then
        the player who took their turn the latest (setting latest_tiebreak)."""
        def key(p):
            pts = self._points(s, p)
            if s["rules"]["latest_tiebreak"] == "seat":
                late = s["order"].index(p)
            else:
                late = s["stands"][p]["last_turn"] or 0
            return (pts["total"], pts["sold"], -pts["deductions"], late)
        return rank_by(s["order"], key)

    def _status(self, s) -> str:
        phase = s["phase"]
        if phase == "market":
            return f"Set-up: draw chips for the Market ({len(s['market'])} of {MARKET_SIZE})"
        if phase == "deal":
            return f"Set-up: {s['deals'][0]} takes a starting chip from the bag"
        if phase == "turn":
            p = self._turn_player(s)
            if s["stands"][p]["hand"] >= HAND_LIMIT:
                return f"{p} holds 5 chips and must Sell"
            return f"{p}: Take or Sell" if s["stands"][p]["hand"] else f"{p}: Take"
        if phase == "draw":
            return f"{s['taker']} took: draw a chip from the bag for the Market"
        if phase == "exchange":
            return (f"Overstocked! {s['taker']} exchanges a chip of their hand for a "
                    f"{FRUIT_NAMES[s['overstocked']]}")
        if phase == "reveal":
            p, x = self._piles(s)[0]
            return f"Game over: turn over {p}'s {SEASON_NAMES[x]} pile"
        top = self.ranking(s)[0]
        points = self._points(s, top[0])["total"]
        if len(top) == 1:
            return f"{top[0]} wins with {points} point{'s' * (points != 1)}"
        return f"Tie: {', '.join(top)} with {points} point{'s' * (points != 1)}"

    def _phase_rule(self, s) -> str:
        return {"market": "set-up", "deal": "set-up", "turn": "taking turns", "draw": "take",
                "exchange": "overstocked", "reveal": "scoring"}.get(s["phase"], "end of game")

    def public_view(self, s) -> dict:
        """The scoreboard: the board, the Market, the bag, hand sizes, chips
        sold per season, deductions and the odds; fruits only once turned over."""
        done = self.finished(s)
        players = []
        for seat, p in enumerate(s["order"]):
            st = s["stands"][p]
            pts = self._points(s, p)
            players.append({
                "name": p, "seat": seat, "hand": st["hand"],
                "must_sell": st["hand"] >= HAND_LIMIT, "deductions": st["deductions"],
                "sold": self._sold(s, p), "sold_total": pts["sold"],
                "sales": [dict(x) for x in st["sales"]],
                "starting_chip": st["hidden"],
                "taken": {f: st["taken"][i] for i, f in enumerate(FRUITS) if st["taken"][i]},
                "given": {f: st["given"][i] for i, f in enumerate(FRUITS) if st["given"][i]},
                "revealed": pts["piles"],
                "score": pts["total"] if done else None,
                "breakdown": pts if done else None,
                "season_moves_before_turn": _frac(self.season_move_chance(s, p)),
                "draws_before_turn": self.draws_before_turn(s, p),
            })
        bag = s["bag"]
        unseen = self._unseen(s)
        odds = self.draw_odds(s, None) if s["phase"] != "reveal" and not done else {}
        space = s["board"][s["marker"]]
        return {
            "game": self.name, "phase": s["phase"], "status": self._status(s),
            "board": {"spaces": list(s["board"]), "marker": s["marker"], "season": space,
                      "moves_left": len(s["board"]) - 1 - s["marker"]},
            "season": space, "market": list(s["market"]), "overstocked": s["overstocked"],
            "market_slots": self._slots(s),
            "bag": {"chips": bag["chips"], "seasons": bag["seasons"],
                    "fruits": bag["chips"] - bag["seasons"],
                    "unseen_fruits": dict(zip(FRUITS, unseen)),
                    "hidden_in_hands": sum(s["stands"][p]["hidden"] for p in s["players"])},
            "seasons_out": s["seasons_out"], "returned": dict(s["returned"]),
            "odds": {"next_draw_season": _frac(odds.get(SEASON, Fraction(0)) if odds else None),
                     "next_draw": {k: _frac(v) for k, v in odds.items()}},
            "players": players, "order": list(s["order"]), "starting_player": s["start"],
            "current_player": self.current_player(s), "taker": s["taker"],
            "deals": list(s["deals"]), "news": list(s["news"]),
            "face_down_piles": [{"player": p, "season": x} for p, x in self._piles(s)]
            if s["phase"] == "reveal" else [],
            "scores": self.scores(s) if done else None, "finished": done,
            "ranking": self.ranking(s) if done else None, "rules": dict(s["rules"]),
            "points": POINTS, "seasons": list(SEASONS),
            "cards": {**{f: {"name": n, "kind": "fruit"} for f, n in FRUIT_NAMES.items()},
                      **{x: {"name": n, "kind": "season"} for x, n in SEASON_NAMES.items()},
                      SEASON: {"name": "Season chip", "kind": "chip"},
                      FRUIT: {"name": "fruit chip", "kind": "chip"},
                      END: {"name": "Final space", "kind": "space"}},
        }

    def _slots(self, s) -> list:
        """The Market's three places, None where a chip waits to be drawn."""
        slots = list(s["market"])
        if s["gap"] is not None:
            slots.insert(s["gap"], None)
        return slots + [None] * (MARKET_SIZE - len(slots))

    def host_view(self, s) -> dict:
        """The host is a player too: the console sees what the table sees."""
        return self.public_view(s)

    def private_view(self, s, player) -> dict:
        """``player``'s chip stand as far as the tracker knows it from the
        public events and what she logged herself: the fruits, their worth
        now and in each coming season, her sales and their points."""
        if player not in s.get("players", ()):
            return {}
        st, sec = s["stands"][player], s["secrets"][player]
        hands = self._hands(s, player, player)
        sure = tuple(min(h[i] for h in hands) for i in range(len(FRUITS))) if hands else ZERO
        exact = len(hands) == 1
        chips = _chips(sure)
        current = s["board"][s["marker"]]
        coming, seen = [], set()
        for x in s["board"][s["marker"] + 1:-1]:
            if x not in seen and x != current:
                coming.append(x)
                seen.add(x)

        def worth(season):
            values = sorted({sale_points(season, _chips(h)) for h in hands}) or [0]
            return {"season": season, "points": values[0] if exact else None,
                    "min": values[0], "max": values[-1]}

        sales = []
        worked_out = {}
        for ev in self._sold_options(s, player):
            worked_out.setdefault(ev["sale"], []).append(ev["chips"])
        for no, sale in enumerate(st["sales"]):
            named = sec["sales"].get(str(no))
            options = worked_out.get(no, [])
            sold = named or (options[0] if len(options) == 1 else None)
            sales.append({**sale, "chips": sold, "named": bool(named),
                          "points": sale_points(sale["season"], sold) if sold else None})
        return {
            "player": player, "hand_size": st["hand"], "exact": exact,
            "chips": chips if exact else None, "known_chips": chips,
            "unknown_chips": st["hand"] - len(chips),
            "possible_hands": [_chips(h) for h in hands] if not exact else None,
            "starting_chip": sec["start"] if st["hidden"] else None,
            "worth": {x: worth(x) for x in SEASONS},
            "now": worth(current) if current != END else None,
            "coming": [worth(x) for x in coming],
            "sales": sales,
            "sold_points": sum(x["points"] or 0 for x in sales),
            "deductions": st["deductions"],
            "to_log": self.private_events(s, player),
        }

    def public_event(self, ev: dict) -> dict:
        """The event as every phone sees it: a starting chip's fruit and the
        fruits of a sale are for the player alone."""
        kind = ev.get("type")
        if kind == "deal":
            out = {k: ev[k] for k in ("type", "player", "chip") if k in ev}
            if out.get("chip") != SEASON:
                out["chip"] = FRUIT
            return out
        if kind in ("starting_hand", "sold"):
            return {k: ev[k] for k in ("type", "player", "sale") if k in ev}
        if kind == "sell":
            out = {k: ev[k] for k in ("type", "player", "count") if k in ev}
            if "count" not in out and isinstance(ev.get("chips"), list):
                out["count"] = len(ev["chips"])
            return out
        keep = {"draw": ("type", "chip"), "take": ("type", "player", "chip", "slot"),
                "exchange": ("type", "player", "give"),
                "reveal": ("type", "player", "season", "chips")}.get(kind)
        return {k: ev[k] for k in keep if k in ev} if keep else {"type": kind}

    def describe(self, ev: dict) -> str:
        e = self.public_event(ev)
        kind = e.get("type")

        def name(c):
            return {SEASON: "a Season chip", FRUIT: "a fruit chip"}.get(
                c, FRUIT_NAMES.get(c, str(c)))

        if kind == "draw":
            return f"draw {name(e.get('chip'))}"
        if kind == "deal":
            return f"{e.get('player')} draws {name(e.get('chip'))} for their starting hand"
        if kind == "take":
            return f"{e.get('player') or 'the player'} takes {name(e.get('chip'))}"
        if kind == "sell":
            return f"{e.get('player') or 'the player'} sells {_chip_words(e.get('count'))}"
        if kind == "exchange":
            give = e.get("give")
            give = [give] if isinstance(give, str) else give or []
            who = e.get("player") or "the taker"
            return (f"Overstocked: {who} puts {_counted(give)} into the Market" if give else
                    "Overstocked: no other fruit to put into the Market")
        if kind == "reveal":
            chips = e.get("chips") if isinstance(e.get("chips"), list) else []
            season = SEASON_NAMES.get(e.get("season"), e.get("season"))
            return f"{e.get('player')}'s {season} pile: {_counted(chips)}"
        if kind == "starting_hand":
            return f"{e.get('player')} names their starting chip"
        if kind == "sold":
            no = e.get("sale")
            return f"{e.get('player')} names the chips of their sale " + (
                f"no. {no + 1}" if isinstance(no, int) else "")
        return super().describe(e)

    def check_invariants(self, s) -> None:
        """48 fruit chips and 12 Season chips, each in one place: the bag, the
        Market, a hand, a sold pile, or out (a Season chip that moved the
        marker); the table's counts and the tracker's worlds agree."""
        bag = s["bag"]
        assert 0 <= bag["seasons"] <= bag["chips"], bag
        assert bag["seasons"] + s["seasons_out"] == SEASON_CHIPS, (bag, s["seasons_out"])
        assert s["seasons_out"] == s["marker"], (s["seasons_out"], s["marker"])
        hands = sum(s["stands"][p]["hand"] for p in s["players"])
        sold = sum(sum(self._sold(s, p).values()) for p in s["players"])
        total = bag["chips"] + len(s["market"]) + hands + sold + s["seasons_out"]
        assert total == ALL_CHIPS, f"{total} chips, the game has {ALL_CHIPS}"
        unseen = self._unseen(s)
        hidden = sum(s["stands"][p]["hidden"] for p in s["players"])
        assert min(unseen) >= 0, unseen
        assert sum(unseen) == bag["chips"] - bag["seasons"] + hidden, (unseen, bag, hidden)
        assert SEASON not in s["market"] and len(s["market"]) <= MARKET_SIZE
        for p in s["players"]:
            st = s["stands"][p]
            assert 0 <= st["hand"] <= HAND_LIMIT, (p, st["hand"])
            assert st["hand"] + sum(self._sold(s, p).values()) == (
                sum(st["taken"]) - sum(st["given"]) + st["hidden"]), p
            for x, comp in s["revealed"][p].items():
                assert sum(comp) == self._sold(s, p)[x], (p, x)
        if s["phase"] in ("turn", "exchange"):
            assert len(s["market"]) == MARKET_SIZE
        if s["phase"] in ("reveal", "over"):
            assert s["board"][s["marker"]] == END
        else:
            assert s["board"][s["marker"]] != END
        assert self._joint(s, ALL), "no world fits the events"
        assert self._joint(s, None), "no world fits the public events"
