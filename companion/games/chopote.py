"""Chopote: a French race game of bottles round a board, a relative of "petits chevaux".

Two to four players each bring 4 bottles out of their *casier* (rack) on a 1
or a 6, round the circular track anticlockwise, up their home *couloir*
(corridor) and onto the central finish with the exact count. A bottle may not
pass an opponent's bottle; landing on an opponent's square takes every bottle
there back to its casier. A 1 or a 6 gives another roll. The first player with
all 4 bottles home wins.

The table rolls the real die; the host logs it. Events::

    {"type": "roll", "player": "ana", "value": 6}        # chance: the opening rolls too
    {"type": "move", "player": "ana", "from": "casier", "to": "start", "captures": {}}
    {"type": "move", "player": "ana", "from": "track:3", "to": "track:9",
     "captures": {"bo": 2}}                              # "to" and "captures" optional
    {"type": "pass", "player": "ana"}                    # only when nothing else is legal

A blocked roll (no legal move) passes by itself; a ``pass`` logged anyway
right after is that step.

Positions are words: ``casier`` (in the rack, upright), ``start`` (the
player's coloured start zone), ``track:N`` (square N of the circular track,
numbered in the direction of play), ``corridor:K`` (K-th square of the
player's own home corridor, from the track) and ``home`` (finished: back in
the casier upside down). The board's size is not in the rulebook: it is the
``board`` option (data/chopote.json holds the assumed default). Readings of
the text are in docs/rules-notes.md (Chopote).

>>> g = Chopote()
>>> s = g.setup(["ana", "bo"])
>>> s = g.apply(s, {"type": "roll", "player": "ana", "value": 5})
>>> s = g.apply(s, {"type": "roll", "player": "bo", "value": 2})
>>> g.current_player(s)
'ana'
>>> s = g.apply(s, {"type": "roll", "player": "ana", "value": 6})
>>> [(m["from"], m["to"]) for m in g.decisions(s)]
[('casier', 'start')]
>>> s = g.apply(s, {"type": "move", "player": "ana", "from": "casier"})
>>> s = g.apply(s, {"type": "roll", "player": "ana", "value": 3})
>>> s = g.apply(s, {"type": "move", "player": "ana", "from": "start"})
>>> s = g.apply(s, {"type": "roll", "player": "bo", "value": 4})   # blocked: passes by itself
>>> s["last_move"]["passed"], g.current_player(s)
(True, 'ana')
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from .base import Game, RulesError, Setting, copy_json, rank_by

DATA = json.loads((Path(__file__).parent / "data" / "chopote.json").read_text())

BOTTLES = 4
FACES = (1, 2, 3, 4, 5, 6)
EVENTS = ("roll", "move", "pass")

#: where a bottle is when it is not on the track or in its corridor (progress codes)
CASIER, START = -2, -1

# The rulebook's own words (French; each read in docs/rules-notes.md, Chopote), quoted by refusals.
R_OPENING = "Celui qui tire le numéro le plus élevé débute."
R_LEAVE = "Le joueur doit tirer le numéro 1 ou 6 pour faire sortir une bouteille du casier."
R_ENTER = ("Il place alors sa bouteille sur la zone colorée de départ et relance immédiatement "
           "le dé pour faire avancer sa bouteille sur la case départ de sa couleur.")
R_MOVE = ("Le joueur fait avancer la bouteille de son choix d'un nombre de cases correspondant "
          "au numéro tiré avec le dé.")
R_NO_PASSING = "Il n'est pas autorisé à dépasser son adversaire."
R_EXTRA = "Un joueur rejoue à chaque fois qu'il fait 1 ou 6."
R_MUST_PLAY = "Un joueur est toujours obligé de jouer, même dans une situation défavorable."
R_BLOCKED = "Le joueur ne passe son tour que dans une situation de blocage."
R_CORRIDOR_PASSING = ("Les bouteilles peuvent être placées sur la même case, mais ne peuvent "
                      "pas se dépasser.")
R_LAP = "Chaque bouteille doit faire un tour de piste avant d'atteindre l'arrivée."
R_EXACT = ("Le joueur emprunte le couloir d'arrivée perpendiculaire à la piste, et doit réussir à "
           "tomber exactement sur la zone d'arrivée centrale de sa couleur.")
R_WIN = "Le gagnant est celui qui aura rentré le premier ses 4 bouteilles."
R_TURN = "Les joueurs lancent à tour de rôle leur dé."


def spoken(where) -> str:
    """A position word as the table says it: ``track:12`` "square 12",
    ``corridor:3`` "corridor 3", ``start`` "start zone"."""
    zone, _, num = str(where).partition(":")
    if zone == "track":
        return f"square {num}"
    return {"start": "start zone"}.get(zone, f"{zone} {num}".strip())


class Chopote(Game):
    """The Chopote rules tracker (see the module docstring for the events)."""

    name = "chopote"
    title = "Chopote"
    #: what JSON type each key of each event takes (checked before the rules)
    event_shapes = {"roll": {"player": "str", "value": "int"},
                    "move": {"player": "str", "from": "str", "to": "str",
                             "captures": "{str:int}"},
                    "pass": {"player": "str"}}
    min_players = 2
    max_players = 4
    score_unit = "bottles home"
    settings = (
        Setting("board", DATA["board"], "data", label="Board: track, start squares, corridor",
                rule="(not in the text) « Matériel: Un plateau, 4 bouteilles par joueur, 1 dé. »",
                help="track_length squares round the board, numbered in the direction of play; "
                     "each colour's start square; corridor_length squares up each home "
                     "corridor, which leaves the track from the square before the start "
                     "square. Default: the common petits-chevaux board (56 squares, starts "
                     "0/14/28/42, corridors of 6).",
                assumed=True),
        Setting("colours", {}, "data", label="Colours (player: colour)",
                rule="Les joueurs choisissent une couleur et rangent leur 4 bouteilles dans "
                     "leur casier.",
                help="Players not named take colours spread evenly round the board."),
        Setting("opening_tie", "roll_off", choices=("roll_off", "seat_order"),
                label="A tie for the highest opening roll",
                choice_labels=("the tied players roll again", "the first of them in seat order"),
                rule=R_OPENING),
        Setting("entry_count", "start_is_one", choices=("start_is_one", "after_start"),
                label="Leaving the start zone: the roll counts from",
                choice_labels=("the start square as square 1",
                               "the start square as square 0 (a 1 goes one past it)"),
                rule=R_ENTER),
        Setting("entry_roll", "new_bottle", choices=("new_bottle", "any_bottle"),
                label="The roll just after leaving the casier moves",
                choice_labels=("the bottle just put on the start zone, when it can",
                               "any bottle"),
                rule=R_ENTER),
        Setting("extra_roll_when_blocked", True, "bool",
                label="A 1 or a 6 rolls again even when blocked", rule=R_EXTRA),
    )

    def info(self) -> dict:
        """The base description plus ``player_colours``: the new-game form offers
        the default board's colours, the only ones its bottles come in."""
        return dict(super().info(), player_colours=[c["name"] for c in DATA["board"]["colours"]])

    # -- setup ----------------------------------------------------------
    def _setup(self, players: list[str], options: dict) -> dict:
        board = self._check_board(options["board"], len(players))
        names = [c["name"] for c in board["colours"]]
        chosen = options["colours"]
        if not isinstance(chosen, dict) or set(chosen) - set(players) or not all(
                c in names for c in chosen.values()):
            raise RulesError(f"'colours' must map players to colours of the board {names}",
                             "setup")
        if len(set(chosen.values())) < len(chosen):
            raise RulesError("two players chose the same colour: each player has their own "
                             "bottles", "setup")
        n, k = len(players), len(names)
        spread = [names[i * k // n] for i in range(n)] + names
        free = [c for c in dict.fromkeys(spread) if c not in chosen.values()]
        colours = {p: chosen.get(p) or free.pop(0) for p in players}
        starts = {c["name"]: c["start"] for c in board["colours"]}
        return {
            "players": players, "board": board, "colours": colours,
            "start": {p: starts[colours[p]] for p in players},
            "rules": {k: options[k] for k in ("opening_tie", "entry_count", "entry_roll",
                                              "extra_roll_when_blocked")},
            "phase": "opening",
            "opening": {"round": 1, "rolling": list(players), "rolls": {}, "history": []},
            "bottles": {p: [CASIER] * BOTTLES for p in players},
            "turn": None, "roll": None, "must_enter": False,
            "last_roll": None, "last_move": None, "winner": None, "turns": 0,
            "forced": None,
        }

    @staticmethod
    def _check_board(board, players: int) -> dict:
        """The board option, checked: sizes in range, distinct start squares."""
        if not isinstance(board, dict):
            raise RulesError("'board' must be an object with track_length, corridor_length "
                             "and colours", "board")

        def whole(key, lo, hi):
            v = board.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise RulesError(f"board {key} must be a whole number from {lo} to {hi}, "
                                 f"not {v!r}", "board")
            return v

        length = whole("track_length", 8, 400)
        corridor = whole("corridor_length", 1, 30)
        colours = board.get("colours")
        if not isinstance(colours, list) or not all(
                isinstance(c, dict) and isinstance(c.get("name"), str) and c["name"].strip()
                and isinstance(c.get("start"), int) and not isinstance(c.get("start"), bool)
                and 0 <= c["start"] < length for c in colours):
            raise RulesError("board colours must be a list of {name, start} with start a "
                             f"square of the track (0 to {length - 1})", "board")
        if len({c["name"] for c in colours}) < len(colours) or \
                len({c["start"] for c in colours}) < len(colours):
            raise RulesError("each colour of the board needs its own name and start square",
                             "board")
        if len(colours) < players:
            raise RulesError(f"the board has {len(colours)} colours for {players} players",
                             "board")
        return {"track_length": length, "corridor_length": corridor,
                "colours": [{"name": c["name"], "start": c["start"]} for c in colours]}

    # -- the board --------------------------------------------------------
    @staticmethod
    def _finish(s) -> int:
        """Progress of the central finish: a full lap, then the corridor, then one step."""
        return s["board"]["track_length"] + s["board"]["corridor_length"]

    def label(self, s, p: str, pos: int) -> str:
        """A bottle's progress code as a position word (see the module docstring)."""
        length = s["board"]["track_length"]
        if pos == CASIER:
            return "casier"
        if pos == START:
            return "start"
        if pos >= self._finish(s):
            return "home"
        if pos < length:
            return f"track:{(s['start'][p] + pos) % length}"
        return f"corridor:{pos - length + 1}"

    def _progress(self, s, p: str, where) -> int:
        """The progress code of a position word for player ``p``'s bottles."""
        length, corridor = s["board"]["track_length"], s["board"]["corridor_length"]
        fixed = {"casier": CASIER, "start": START, "home": self._finish(s)}
        if isinstance(where, str) and where in fixed:
            return fixed[where]
        zone, _, num = where.partition(":") if isinstance(where, str) else ("", "", "")
        if zone in ("track", "corridor") and num.isdigit():
            n = int(num)
            if zone == "track" and n < length:
                return (n - s["start"][p]) % length
            if zone == "corridor" and 1 <= n <= corridor:
                return length + n - 1
        raise RulesError(f"{where!r} is not a position on this board: casier, start, "
                         f"track:0..{length - 1}, corridor:1..{corridor} or home", "format")

    def _square(self, s, p: str, pos: int) -> int | None:
        """The track square of a progress code, or None off the track."""
        length = s["board"]["track_length"]
        return (s["start"][p] + pos) % length if 0 <= pos < length else None

    def _on_square(self, s, square: int) -> dict[str, int]:
        """Whose bottles stand on a track square: player -> count."""
        out = {}
        for q in s["players"]:
            n = sum(1 for pos in s["bottles"][q] if self._square(s, q, pos) == square)
            if n:
                out[q] = n
        return out

    def _path(self, s, p: str, frm: int, roll: int) -> list[int]:
        """Every progress code a bottle steps on, in order, the last being where it lands:
        forward by ``roll``, up to the finish and back down the corridor (and out onto
        the track) if the roll is larger than the count left."""
        if frm == START:
            first = 0 if s["rules"]["entry_count"] == "start_is_one" else 1
            return ([0] if first else []) + list(range(first, first + roll))
        finish, path, pos, step = self._finish(s), [], frm, 1
        for _ in range(roll):
            pos += step
            if pos == finish:
                step = -1
            path.append(pos)
        return path

    def _move(self, s, p: str, frm: int, roll: int) -> dict:
        """The move of one of ``p``'s bottles from ``frm`` with ``roll``, fully formed,
        or RulesError quoting the rule that forbids it."""
        if frm == self._finish(s):
            raise RulesError("that bottle is home: it stays in the casier upside down",
                             "Quand le joueur atteint l'arrivée, il replace la bouteille vide "
                             "dans son casier, la tête en bas.")
        if frm == CASIER:
            if roll not in (1, 6):
                raise RulesError(f"a bottle leaves the casier only on a 1 or a 6, not a {roll}",
                                 R_LEAVE)
            return {"type": "move", "player": p, "from": "casier", "to": "start",
                    "captures": {}}
        path = self._path(s, p, frm, roll)
        length, finish, mine = s["board"]["track_length"], self._finish(s), s["bottles"][p]
        for pos in path[:-1]:
            square = self._square(s, p, pos)
            if square is not None:
                them = [q for q in self._on_square(s, square) if q != p]
                if them:
                    raise RulesError(f"a bottle may not pass an opponent: {them[0]}'s bottle "
                                     f"on track:{square} is in the way", R_NO_PASSING)
            elif length <= pos < finish and mine.count(pos) - (pos == frm) > 0:
                raise RulesError(f"bottles in the corridor may share a square but not pass "
                                 f"one another: one is on corridor:{pos - length + 1}",
                                 R_CORRIDOR_PASSING)
        to = path[-1]
        square = self._square(s, p, to)
        captures = {}
        if square is not None:
            captures = {q: n for q, n in self._on_square(s, square).items() if q != p}
        out = {"type": "move", "player": p, "from": self.label(s, p, frm),
               "to": self.label(s, p, to), "captures": captures}
        return out

    def _moves(self, s) -> list[dict]:
        """Every legal move for the roll, one per distinct starting position."""
        return self._options(s)[0]

    def _options(self, s) -> tuple[list[dict], list[dict]]:
        """The legal moves for the roll, and for each other square the current
        player's bottles stand on, why it cannot move (the rule's words), so
        the board can answer a tap on a bottle that cannot be played."""
        p, roll = self._turn(s), s["roll"]
        moves, refusals = [], []
        for frm in sorted(set(s["bottles"][p])):
            try:
                moves.append(self._move(s, p, frm, roll))
            except RulesError as exc:
                refusals.append({"from": self.label(s, p, frm), "why": str(exc),
                                 "rule": exc.rule})
        if s["must_enter"] and s["rules"]["entry_roll"] == "new_bottle" and any(
                m["from"] == "start" for m in moves):
            refusals += [{"from": m["from"], "why": "this roll moves the bottle just put on "
                          "the start zone onto the track", "rule": R_ENTER}
                         for m in moves if m["from"] != "start"]
            moves = [m for m in moves if m["from"] == "start"]
        order = {self.label(s, p, x): i for i, x in enumerate(sorted(set(s["bottles"][p])))}
        refusals.sort(key=lambda r: order[r["from"]])
        return moves, refusals

    # -- transitions ------------------------------------------------------
    def copy_state(self, s: dict) -> dict:
        """The private copy ``apply`` works on: the state is plain JSON
        (dicts, lists, numbers, strings), so :func:`copy_json` does, several
        times faster than ``copy.deepcopy`` (a game is ~800 events)."""
        return copy_json(s)

    def _apply(self, s: dict, ev: dict) -> dict:
        if ev["type"] not in EVENTS:
            raise RulesError(f"unknown Chopote event {ev['type']!r}; known: {list(EVENTS)}",
                             "format")
        if ev["type"] != "roll" and self._same_as_forced(s, ev):
            s["forced"] = None          # the step the tracker took by itself, logged anyway
            return s
        s["forced"] = None
        getattr(self, "_on_" + ev["type"])(s, ev)
        return s

    def _expect_player(self, s, ev, who: str):
        p = ev.get("player", who)
        if p != who:
            if p not in s["players"]:
                raise RulesError(f"{p!r} is not playing", "format")
            raise RulesError(f"it is {who}'s turn, not {p}'s", R_TURN)

    def _on_roll(self, s, ev):
        value = ev.get("value")
        if type(value) is not int or value not in FACES:
            raise RulesError(f"a die shows 1 to 6, not {value!r}", "Matériel: 1 dé.")
        if s["phase"] == "opening":
            op = s["opening"]
            self._expect_player(s, ev, op["rolling"][0])
            p = op["rolling"].pop(0)
            op["rolls"][p] = value
            op["history"].append({"round": op["round"], "player": p, "value": value})
            s["last_roll"] = {"player": p, "value": value, "opening": True}
            if not op["rolling"]:
                best = max(op["rolls"].values())
                tied = [q for q in s["players"] if op["rolls"].get(q) == best]
                if len(tied) == 1 or s["rules"]["opening_tie"] == "seat_order":
                    s["phase"], s["turn"] = "play", tied[0]
                else:
                    op["round"] += 1
                    op["rolling"], op["rolls"] = tied, {}
            return
        p = self._turn(s)
        self._expect_player(s, ev, p)
        if s["roll"] is not None:
            raise RulesError(f"{p} rolled a {s['roll']}: play it (or pass if blocked) before "
                             "the next roll", R_MOVE)
        s["roll"] = value
        s["last_roll"] = {"player": p, "value": value, "opening": False}
        self._forced(s)

    def _forced(self, s):
        """A blocked roll (« Le joueur ne passe son tour que dans une situation
        de blocage »): nothing to do, so the tracker passes at once and the
        host taps nothing more. Kept in ``forced`` so the same pass logged
        anyway is taken as that step, not refused."""
        only = self.decisions(s)
        if only != [{"type": "pass", "player": self._turn(s)}]:
            return
        self._on_pass(s, only[0])
        s["last_move"]["forced"] = True
        s["forced"] = only[0]

    def _same_as_forced(self, s, ev) -> bool:
        """Whether ``ev`` is the pass the tracker just made by itself."""
        done = s.get("forced")
        if not done or s["roll"] is not None or ev.get("type") != done["type"]:
            return False
        return all(ev.get(k, v) == v for k, v in done.items())

    def _expect_roll(self, s, ev, what: str) -> str:
        if s["phase"] != "play":
            raise RulesError(f"roll for who starts before any {what}", R_OPENING)
        p = self._turn(s)
        self._expect_player(s, ev, p)
        if s["roll"] is None:
            raise RulesError(f"{p} must roll the die before a {what}", R_MOVE)
        return p

    def _on_move(self, s, ev):
        p = self._expect_roll(s, ev, "move")
        roll, finish = s["roll"], self._finish(s)
        frm = self._progress(s, p, ev.get("from"))
        if frm not in s["bottles"][p]:
            raise RulesError(f"{p} has no bottle on {ev.get('from')}", R_MOVE)
        move = self._move(s, p, frm, roll)
        for refusal in self._options(s)[1]:
            if refusal["from"] == move["from"]:       # the immediate roll after leaving
                raise RulesError(refusal["why"], refusal["rule"])
        if "to" in ev and ev["to"] != move["to"]:
            raise RulesError(f"a {roll} takes the bottle on {move['from']} to {move['to']}, "
                             f"not {ev['to']!r}", R_MOVE)
        if "captures" in ev and ev["captures"] != move["captures"]:
            raise RulesError(f"that move takes {move['captures'] or 'nothing'}, not "
                             f"{ev['captures']!r}",
                             "Un joueur mange la bouteille de l'adversaire quand il arrive sur "
                             "la même case.")
        to = self._progress(s, p, move["to"])
        path = [] if frm == CASIER else self._path(s, p, frm, roll)
        for q in move["captures"]:            # every bottle of theirs there, back to the casier
            square = self._square(s, p, to)
            s["bottles"][q] = [CASIER if self._square(s, q, pos) == square else pos
                               for pos in s["bottles"][q]]
        s["bottles"][p][s["bottles"][p].index(frm)] = to
        s["bottles"][p].sort()
        s["last_move"] = {"player": p, "roll": roll, "from": move["from"], "to": move["to"],
                          "path": [self.label(s, p, x) for x in path],
                          "captures": dict(move["captures"]),
                          "bounce": finish in path[:-1]}
        s["must_enter"] = frm == CASIER
        if all(pos == finish for pos in s["bottles"][p]):
            s["winner"], s["roll"] = p, None
            return
        self._end_roll(s, p, roll, moved=True)

    def _on_pass(self, s, ev):
        p = self._expect_roll(s, ev, "pass")
        moves = self._moves(s)
        if moves:
            can = ", ".join(f"{spoken(m['from'])} → {spoken(m['to'])}" for m in moves)
            raise RulesError(f"{p} can play ({can}): a player passes only when blocked",
                             R_MUST_PLAY + " " + R_BLOCKED)
        s["last_move"] = {"player": p, "roll": s["roll"], "from": None, "to": None, "path": [],
                          "captures": {}, "bounce": False, "passed": True}
        s["must_enter"] = False
        self._end_roll(s, p, s["roll"], moved=False)

    def _end_roll(self, s, p, roll, moved: bool):
        """After a move or a pass: the same player again on a 1 or a 6, else the next."""
        s["roll"] = None
        s["turns"] += 1
        if roll in (1, 6) and (moved or s["rules"]["extra_roll_when_blocked"]):
            return
        s["must_enter"] = False
        s["turn"] = s["players"][(s["players"].index(p) + 1) % len(s["players"])]

    # -- what may happen next -------------------------------------------
    def decisions(self, s) -> list[dict]:
        """After a roll: every legal move fully formed, or ``pass`` only when none is."""
        if self.finished(s) or s["phase"] != "play" or s["roll"] is None:
            return []
        return self._moves(s) or [{"type": "pass", "player": self._turn(s)}]

    def chance_outcomes(self, s) -> list[tuple[dict, Fraction]]:
        """The die, whenever a roll is due: the opening rolls, each turn's roll and
        the extra roll after a 1 or a 6."""
        if self.finished(s) or (s["phase"] == "play" and s["roll"] is not None):
            return []
        p = self.current_player(s)
        return [({"type": "roll", "player": p, "value": v}, Fraction(1, 6)) for v in FACES]

    # -- reading the state ----------------------------------------------
    def _turn(self, s) -> str:
        return s["turn"]

    def scores(self, s) -> dict[str, int]:
        """Bottles home, per player."""
        finish = self._finish(s)
        return {p: s["bottles"][p].count(finish) for p in s["players"]}

    def current_player(self, s) -> str | None:
        if self.finished(s):
            return None
        if s["phase"] == "opening":
            return s["opening"]["rolling"][0]
        return s["turn"]

    def finished(self, s) -> bool:
        return s["winner"] is not None

    def distance_left(self, s, p: str) -> int:
        """Squares still to go for all of ``p``'s bottles: from the start zone a full
        lap, the corridor and the finish; one more for a bottle still in the casier."""
        finish = self._finish(s)
        from_start = finish + (1 if s["rules"]["entry_count"] == "start_is_one" else 0)
        return sum(from_start + 1 if pos == CASIER else from_start if pos == START
                   else finish - pos for pos in s["bottles"][p])

    def ranking(self, s) -> list[list[str]]:
        """The winner first; then most bottles home, then least distance left."""
        sc = self.scores(s)
        return rank_by(s["players"], lambda p: (p == s["winner"], sc[p],
                                                -self.distance_left(s, p)))

    def _where(self, s, p, pos) -> dict:
        length = s["board"]["track_length"]
        word = self.label(s, p, pos)
        zone = word.partition(":")[0]
        out = {"where": zone, "label": word, "square": None}
        if zone == "track":
            out["square"] = (s["start"][p] + pos) % length
        elif zone == "corridor":
            out["square"] = pos - length + 1
        return out

    def public_view(self, s) -> dict:
        """The whole board (Chopote has no secrets): every bottle's position by player,
        the board's geometry for drawing, the roll, the last move and the legal moves."""
        board, length = s["board"], s["board"]["track_length"]
        sc = self.scores(s)
        players = []
        for p in s["players"]:
            bottles = [self._where(s, p, pos) for pos in s["bottles"][p]]
            counts = {z: sum(b["where"] == z for b in bottles)
                      for z in ("casier", "start", "track", "corridor", "home")}
            players.append({
                "name": p, "colour": s["colours"][p], "start_square": s["start"][p],
                "mouth_square": (s["start"][p] - 1) % length, "bottles": bottles,
                "counts": counts, "home": sc[p], "distance_left": self.distance_left(s, p),
                "score": sc[p],
            })
        op = s["opening"]
        return {
            "game": self.name, "phase": "over" if self.finished(s) else s["phase"],
            "board": {"track_length": length, "corridor_length": board["corridor_length"],
                      "colours": [dict(c, mouth=(c["start"] - 1) % length)
                                  for c in board["colours"]]},
            "players": players, "turn": s["turn"], "current_player": self.current_player(s),
            "roll": s["roll"], "last_roll": s["last_roll"], "last_move": s["last_move"],
            "must_enter": s["must_enter"],
            "opening": {"round": op["round"], "rolling": list(op["rolling"]),
                        "rolls": dict(op["rolls"]), "history": list(op["history"])},
            "moves": self.decisions(s), "unplayable": self._unplayable(s),
            "scores": sc, "finished": self.finished(s),
            "winner": s["winner"], "ranking": self.ranking(s), "rules": dict(s["rules"]),
        }

    def _unplayable(self, s) -> list[dict]:
        """After a roll: each of the player's squares that cannot move, and why."""
        if self.finished(s) or s["phase"] != "play" or s["roll"] is None:
            return []
        return self._options(s)[1]

    def describe(self, ev: dict) -> str:
        t, p = ev.get("type"), ev.get("player") or "the player"
        if t == "roll":
            return f"{p} rolls a {ev.get('value')}"
        if t == "pass":
            return f"{p} is blocked and passes"
        if t == "move":
            src, dst = spoken(ev.get("from")), spoken(ev.get("to", "?"))
            caught = ev.get("captures") or {}
            if not (isinstance(caught, dict) and caught):
                return f"{p}: {src} → {dst}"      # one message, its fields translated too
            # one message with the capture in it (a square holds one player's
            # bottles, so one "taken" as a rule): a page translates it whole
            taken = " and ".join(f"{n} of {q}'s bottles" if n > 1 else f"{q}'s bottle"
                                 for q, n in caught.items())
            return f"{p}: {src} → {dst}, takes {taken}"
        return super().describe(ev)

    def check_invariants(self, s) -> None:
        """Exactly 4 bottles per player, each in a real place; a track square holds one
        player's bottles at most; the turn, the roll and the winner agree."""
        finish, players = self._finish(s), s["players"]
        owners = {}
        for p in players:
            bottles = s["bottles"][p]
            assert len(bottles) == BOTTLES, (p, bottles)
            assert all(isinstance(x, int) and CASIER <= x <= finish for x in bottles), bottles
            for pos in bottles:
                square = self._square(s, p, pos)
                if square is not None:
                    assert owners.setdefault(square, p) == p, (square, owners[square], p)
        homes = [p for p in players if s["bottles"][p].count(finish) == BOTTLES]
        assert homes == ([s["winner"]] if s["winner"] else []), (homes, s["winner"])
        assert s["phase"] in ("opening", "play")
        if s["phase"] == "opening":
            assert s["turn"] is None and s["roll"] is None and s["opening"]["rolling"]
            assert all(b == [CASIER] * BOTTLES for b in s["bottles"].values())
        else:
            assert s["turn"] in players and not s["opening"]["rolling"]
            assert s["roll"] is None or s["roll"] in FACES
        if s["winner"]:
            assert s["roll"] is None
        assert not s["must_enter"] or s["phase"] == "play"
