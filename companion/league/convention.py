"""A convention night on the league: rounds seated by the league, results
taken from the tables.

``companion league serve --players FILE --game chope --tables t1,t2,...``
makes the league run rounds (:mod:`.rounds` seats them). For each round it

* publishes each table's pairing, retained, on ``<prefix>/_league/<table>/pairing``
  (:meth:`~companion.league.topics.Topics.pairing`: only the league writes
  it, only that table reads it): the round, the game, the players in seat
  order (or none: no pod at this table this round), ``floor`` (the table's
  last game the league had seen finished when the round began: only a
  later game counts), ``counted`` (and ``counted_game``, its id) and
  ``done`` (the last round's results are all in);
* takes each pod's result from the tables: a *finished* game of the night's
  game, at the pod's table, later than its floor, whose players are the
  pod's (names compared ignoring case and outer spaces), not counted for
  another round. Nobody types a result. A game whose ending is undone
  while its round is still on is taken back;
* when every pod has its result, seats the next round, until the last.

Everything is kept in the league's SQLite file (tables ``convention*``,
next to the store's own, through the store's connection), so a restarted
league carries on where it was; starting it on a file that holds another
convention (other players, game, tables, seed) is refused. The pairings are
published again whenever the league (re)connects to the broker.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from . import rounds as R
from .topics import LeagueError, Topics, check_table_id, dumps

log = logging.getLogger(__name__)

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS convention (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        plan TEXT NOT NULL                  -- the Plan (JSON)
    )""",
    """CREATE TABLE IF NOT EXISTS convention_rounds (
        round INTEGER PRIMARY KEY,
        body TEXT NOT NULL,                 -- mode, pods (table, players), byes (JSON)
        floors TEXT NOT NULL,               -- table -> last finished game id at the start
        started_ns INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS convention_results (
        round INTEGER NOT NULL,
        table_id TEXT NOT NULL,
        game_id INTEGER NOT NULL,
        ranking TEXT NOT NULL,              -- the pod's ranking (JSON), the plan's names
        counted_ns INTEGER NOT NULL,
        PRIMARY KEY (round, table_id)
    )""",
)


#: Games of a table's current store (a table restarted on a fresh store
#: starts its game ids again; the league keys games by store too).
CURRENT_STORE = "store = (SELECT t.store FROM tables t WHERE t.table_id = games.table_id)"


@dataclass(frozen=True)
class Plan:
    """A convention's settings (what ``serve`` was given)."""

    players: tuple[str, ...]
    game: str
    tables: tuple[str, ...]
    rounds: int = 3
    seed: str = "1"
    target: int = 4
    mode: str = "auto"

    @classmethod
    def make(cls, players, game: str, tables, rounds: int = 3, seed="1",
             target: int | None = None, mode: str = "auto") -> "Plan":
        """A checked plan; LeagueError says what is wrong."""
        from ..games import get_game

        try:
            g = get_game(game)
        except KeyError as exc:
            raise LeagueError(str(exc).strip('"')) from None
        try:
            players = tuple(R.check_players(players))
        except R.RoundsError as exc:
            raise LeagueError(str(exc)) from None
        tables = tuple(check_table_id(t) for t in tables)
        if not tables or len(set(tables)) != len(tables):
            raise LeagueError("give the convention's tables once each (--tables t1,t2,...)")
        if not isinstance(rounds, int) or not 1 <= rounds <= 50:
            raise LeagueError("--rounds must be 1 to 50")
        target = min(4, g.max_players) if target is None else target
        if not isinstance(target, int) or not g.min_players <= target <= g.max_players:
            raise LeagueError(f"--pod-size must be {g.min_players} to {g.max_players} "
                              f"for {g.title}")
        if mode not in R.MODES:
            raise LeagueError(f"--pairing must be one of {', '.join(R.MODES)}")
        plan = cls(players, game, tables, rounds, str(seed), target, mode)
        try:
            R.pod_sizes(len(players), plan.size, target, len(tables))
        except R.RoundsError as exc:
            raise LeagueError(str(exc)) from None
        return plan

    @property
    def size(self) -> tuple[int, int]:
        from ..games import get_game
        g = get_game(self.game)
        return g.min_players, g.max_players

    @property
    def title(self) -> str:
        from ..games import get_game
        return get_game(self.game).title

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Plan":
        d = json.loads(text)
        return cls(**{**d, "players": tuple(d["players"]), "tables": tuple(d["tables"])})


def read_players(path) -> list[str]:
    """A player list file: one name a line; blank lines and ``#`` comments
    are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LeagueError(f"cannot read the player list {path}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    names = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    names = [n for n in names if n]
    if not names:
        raise LeagueError(f"the player list {path} names nobody")
    return names


def same_players(pod, names) -> dict[str, str] | None:
    """The pod's name for each of ``names`` if they are exactly the pod's
    players (ignoring case and outer spaces), else None."""
    want = {p.strip().casefold(): p for p in pod}
    got = {}
    for n in names:
        if not isinstance(n, str) or n.strip().casefold() not in want:
            return None
        got[n] = want[n.strip().casefold()]
    return got if len(got) == len(want) and set(got.values()) == set(pod) else None


def _round_body(rnd: R.Round) -> str:
    return json.dumps({"mode": rnd.mode, "byes": list(rnd.byes),
                       "pods": [{"table": p.table, "players": list(p.players)}
                                for p in rnd.pods]})


def _round_from(number: int, body: str) -> R.Round:
    d = json.loads(body)
    return R.Round(number, d["mode"], tuple(R.Pod(p["table"], tuple(p["players"]))
                                            for p in d["pods"]), tuple(d["byes"]))


class Convention:
    """The league's side of a convention (see the module doc).

    ``store``: the :class:`~companion.league.store.LeagueStore` (its file
    keeps the convention too); ``send(topic, payload)`` publishes a
    retained message to the broker (None: not connected to one, tests);
    ``notify(kind, data)`` tells the open league pages. Thread-safe: the
    subscriber's thread calls :meth:`on_stored`, the pages :meth:`view`."""

    def __init__(self, store, plan: Plan, topics: Topics | None = None,
                 send: Callable[[str, bytes], None] | None = None,
                 notify: Callable[[str, dict], None] | None = None):
        self.store, self.plan, self.topics = store, plan, topics or Topics()
        self.send, self.notify = send, notify
        self._lock = threading.RLock()
        self.rounds: list[R.Round] = []
        self.floors: dict[int, dict[str, dict | int]] = {}
        self.results: dict[tuple[int, str], tuple[int, tuple]] = {}
        self.refusals: dict[str, str] = {}        # table -> why its last game did not count

    # -- the league's file ----------------------------------------------------------
    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        return self.store.rows(sql, args)

    def _write(self, sql: str, args: tuple = ()) -> None:
        self.store.execute(sql, args)

    def open(self) -> "Convention":
        """Load (or begin) the convention in the league's file; LeagueError
        if the file holds another one."""
        with self._lock:
            for sql in SCHEMA:
                self._write(sql)
            held = self._rows("SELECT plan FROM convention WHERE id = 1")
            if held and Plan.from_json(held[0][0]) != self.plan:
                raise LeagueError(
                    "this league file already runs another convention (other players, game, "
                    "tables, rounds or seed): give the same options, or a new --db")
            if not held:
                self._write("INSERT INTO convention VALUES (1, ?)", (self.plan.to_json(),))
            for number, body, floors in self._rows(
                    "SELECT round, body, floors FROM convention_rounds ORDER BY round"):
                self.rounds.append(_round_from(number, body))
                self.floors[number] = json.loads(floors)
            for number, table, gid, ranking in self._rows(
                    "SELECT round, table_id, game_id, ranking FROM convention_results"):
                self.results[(number, table)] = (gid, tuple(tuple(g) for g in
                                                            json.loads(ranking)))
            if not self.rounds:
                self._begin_round(1)
            self.sweep()
        return self

    # -- rounds ------------------------------------------------------------------------
    @property
    def current(self) -> R.Round:
        return self.rounds[-1]

    @property
    def done(self) -> bool:
        rnd = self.current
        return rnd.number >= self.plan.rounds and all(
            (rnd.number, p.table) in self.results for p in rnd.pods)

    def _rankings(self) -> dict[tuple[int, str], tuple]:
        return {k: ranking for k, (_, ranking) in self.results.items()}

    def _begin_round(self, number: int) -> None:
        p = self.plan
        rnd = R.pair_round(p.players, self.rounds, self._rankings(), number=number,
                           size=p.size, target=p.target, tables=p.tables, seed=p.seed,
                           mode=p.mode, total_rounds=p.rounds)
        floors = {t: self._last_finished(t) for t in p.tables}     # {store, game} each
        self._write("INSERT INTO convention_rounds VALUES (?, ?, ?, ?)",
                    (number, _round_body(rnd), json.dumps(floors), time.time_ns()))
        self.rounds.append(rnd)
        self.floors[number] = floors
        log.info("convention: round %d seated (%s)", number, rnd.mode)

    def _last_finished(self, table: str) -> dict:
        """The table's store now and its last finished game on it: the games
        of a round are those after it on that store, or any game on a store
        the table started afresh since (a replaced card starts at game 1)."""
        return {"store": self._store_of(table), "game": self._rows(
            "SELECT COALESCE(MAX(game_id), 0) FROM games WHERE table_id = ?"
            " AND finished = 1 AND counted = 1 AND " + CURRENT_STORE, (table,))[0][0]}

    def _store_of(self, table: str) -> str | None:
        rows = self._rows("SELECT store FROM tables WHERE table_id = ?", (table,))
        return rows[0][0] if rows else None

    def _floor(self, number: int, table: str) -> int:
        """The game id after which ``table``'s games count for round
        ``number``, on the table's store now: 0 on a store other than the
        one it had when the round was seated."""
        f = self.floors[number].get(table, 0)
        if isinstance(f, int):          # a round seated before the store was kept
            return f
        return f["game"] if f["store"] in (None, self._store_of(table)) else 0

    # -- results -------------------------------------------------------------------------
    def on_stored(self, kind: str, data: dict) -> None:
        """The subscriber stored a message: a result may complete a pod; a
        (re)connection publishes the pairings again."""
        if kind in ("game", "result"):     # a game's result (its topic's kind)
            self.sweep()
        elif kind == "status" and data.get("league") and data.get("connected"):
            self.publish_all()

    def sweep(self) -> bool:
        """Take back what was undone, count what finished, seat the next
        round when this one is complete; True if anything changed."""
        with self._lock:
            changed = self._take_back() | self._count()
            while not self.done and all((self.current.number, p.table) in self.results
                                        for p in self.current.pods):
                self._begin_round(self.current.number + 1)
                changed = True
                self._count()
        if changed:
            self.publish_all()
            if self.notify is not None:
                self.notify("convention", {"round": self.current.number, "done": self.done})
        return changed

    def _take_back(self) -> bool:
        rnd, changed = self.current, False
        for pod in rnd.pods:
            got = self.results.get((rnd.number, pod.table))
            if got is None:
                continue
            still = self._rows("SELECT finished * counted FROM games WHERE table_id = ? AND"
                               " game_id = ? AND " + CURRENT_STORE, (pod.table, got[0]))
            if not still or not still[0][0]:
                self._write("DELETE FROM convention_results WHERE round = ? AND table_id = ?",
                            (rnd.number, pod.table))
                del self.results[(rnd.number, pod.table)]
                log.info("convention: %s undid the ending of game %s; round %d waits for it",
                         pod.table, got[0], rnd.number)
                changed = True
        return changed

    def _count(self) -> bool:
        rnd, changed = self.current, False
        used = {(t, gid) for (_, t), (gid, _) in self.results.items()}
        for pod in rnd.pods:
            if (rnd.number, pod.table) in self.results:
                continue
            found = self._result_for(rnd.number, pod, used)
            if found is not None:
                gid, ranking = found
                self._write("INSERT INTO convention_results VALUES (?, ?, ?, ?, ?)",
                            (rnd.number, pod.table, gid, json.dumps(ranking), time.time_ns()))
                self.results[(rnd.number, pod.table)] = (gid, ranking)
                self.refusals.pop(pod.table, None)
                log.info("convention: round %d, %s: game %s counted", rnd.number, pod.table, gid)
                changed = True
        return changed

    def _result_for(self, number: int, pod: R.Pod, used) -> tuple[int, tuple] | None:
        """The first finished game at the pod's table after its floor that
        is the night's game with the pod's players: (game id, ranking)."""
        floor = self._floor(number, pod.table)
        for gid, game, counted in self._rows(
                "SELECT game_id, game, ranking FROM games WHERE table_id = ? AND finished = 1"
                " AND counted = 1 AND game_id > ? AND " + CURRENT_STORE + " ORDER BY game_id",
                (pod.table, floor)):
            if (pod.table, gid) in used:
                continue
            try:
                ranking = json.loads(counted)      # the league's own (replayed) ranking
                names = [n for g in ranking for n in g] if isinstance(ranking, list) else []
                mapping = same_players(pod.players, names)
                if game != self.plan.game or mapping is None:
                    raise R.RoundsError(
                        f"game {gid} was {game} with {', '.join(map(str, names))}, not "
                        f"{self.plan.title} with {', '.join(pod.players)}")
                return gid, R.check_ranking([[mapping[n] for n in g] for g in ranking],
                                            pod.players)
            except (R.RoundsError, ValueError, TypeError, AttributeError) as exc:
                self.refusals[pod.table] = str(exc)
        return None

    # -- what goes out ---------------------------------------------------------------------
    def pairing(self, table: str) -> dict:
        """The retained pairing message for ``table`` (without the wire version)."""
        with self._lock:
            rnd = self.current
            pod = next((p for p in rnd.pods if p.table == table), None)
            got = self.results.get((rnd.number, table))
            return {"table": table, "round": rnd.number, "rounds": self.plan.rounds,
                    "game": self.plan.game, "title": self.plan.title,
                    "players": list(pod.players) if pod else [],
                    "floor": self._floor(rnd.number, table),
                    "counted": got is not None, "counted_game": got[0] if got else None,
                    "done": self.done,
                    "sent_ns": time.time_ns()}

    def publish_all(self) -> None:
        """Every table's pairing, retained (again: harmless)."""
        if self.send is None:
            return
        for table in self.plan.tables:
            try:
                self.send(self.topics.pairing(table), dumps(self.pairing(table)))
            except Exception:       # the broker is away: published again on reconnect
                log.exception("convention: cannot publish %s's pairing", table)

    def _states(self) -> dict[str, dict]:
        out = {}
        for table, state in self._rows("SELECT table_id, state FROM tables"):
            try:
                st = json.loads(state) if state else {}
            except ValueError:
                st = {}
            out[table] = st if isinstance(st, dict) else {}
        return out

    def pod_status(self, number: int, pod: R.Pod, state: dict) -> tuple[str, str]:
        """(``done`` | ``playing`` | ``finished`` | ``wrong`` | ``waiting``, a line)."""
        if (number, pod.table) in self.results:
            return "done", f"result counted (game {self.results[(number, pod.table)][0]})"
        gid, floor = state.get("game_id"), self._floor(number, pod.table)
        if isinstance(gid, int) and not isinstance(gid, bool) and gid > floor and state.get("game"):
            names = [p.get("name") for p in state.get("players") or [] if isinstance(p, dict)]
            if state.get("game") == self.plan.game and same_players(pod.players, names):
                return ("finished", "finished: the result is on its way") \
                    if state.get("finished") else ("playing", "playing")
            return "wrong", (f"playing {state.get('title') or state.get('game')} with "
                             f"{', '.join(map(str, names))}: not this pod")
        if pod.table in self.refusals:
            return "wrong", self.refusals[pod.table]
        return "waiting", "not started yet"

    def view(self) -> dict:
        """What the league page shows of the convention."""
        with self._lock:
            states, rnd = self._states(), self.current
            pods = []
            for pod in rnd.pods:
                status, line = self.pod_status(rnd.number, pod, states.get(pod.table) or {})
                got = self.results.get((rnd.number, pod.table))
                pods.append({"table": pod.table, "players": list(pod.players),
                             "status": status, "line": line,
                             "ranking": [list(g) for g in got[1]] if got else None})
            history = [{"round": r.number, "mode": r.mode, "byes": list(r.byes),
                        "pods": [{"table": p.table, "players": list(p.players),
                                  "ranking": [list(g) for g in self.results[(r.number, p.table)][1]]
                                  if (r.number, p.table) in self.results else None}
                                 for p in r.pods]} for r in self.rounds[:-1]]
            return {"game": self.plan.game, "title": self.plan.title, "round": rnd.number,
                    "rounds": self.plan.rounds, "mode": rnd.mode, "seed": self.plan.seed,
                    "done": self.done, "pods": pods, "byes": list(rnd.byes),
                    "standings": self.standings(), "history": history}

    def standings(self) -> list[dict]:
        return [{"rank": s.rank, "name": s.name, "points": round(float(s.points), 2),
                 "buchholz": round(float(s.buchholz), 2), "h2h": round(float(s.h2h), 2),
                 "games": s.games, "byes": s.byes,
                 # a place among the pod's players ("2nd of 3"), not a fraction
                 "places": [{"round": rnd, "place": place, "of": size}
                            for rnd, place, size in s.places]}
                for s in R.standings(self.plan.players, self.rounds, self._rankings())]


__all__ = ["Convention", "Plan", "SCHEMA", "read_players", "same_players"]
