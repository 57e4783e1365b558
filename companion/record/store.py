"""The store: the table's durable, append-only event log in SQLite (an edge).

One SQLite file holds every game the table has played: a ``games`` table (who
played what, with which options, and the final summary once it ended) and an
append-only ``events`` table whose integer id is also the id of the live
update the web page gets (SSE ``Last-Event-ID``). The state of a game is what
replaying its events gives (:mod:`companion.record.gamefile`); nothing else is the
truth. See docs/store.md for the schema, durability and migrations.

Durability: the file is opened with ``journal_mode=WAL`` and
``synchronous=FULL``, so :meth:`Store.append` returns only after the WAL is
synced: an acknowledged event survives a crash or a power cut.

Safety: a file that is not SQLite, or is SQLite but not ours (another
application's tables, another ``application_id``), raises
:class:`StoreCorrupt` and is never written to.

>>> s = Store(":memory:")
>>> g = s.create_game("chope", [{"name": "ana", "colour": "red", "buzzer": "b1"}], {})
>>> s.append(g, {"type": "flip", "card": "laksa"}, expected_version=0)
1
>>> s.events(g)
[(1, {'type': 'flip', 'card': 'laksa'})]
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

#: ``PRAGMA application_id`` of a Tabletop Companion store ("TtCo").
APPLICATION_ID = 0x5474436F
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreError(Exception):
    """The store cannot do what was asked (I/O, a bad argument, a newer schema)."""


class StoreCorrupt(StoreError, ValueError):
    """The file is not a readable Tabletop Companion database; it is never overwritten."""


class StaleVersion(StoreError, ValueError):
    """The event was made against an older version of the game than the log's."""

    def __init__(self, message: str, expected: int | None = None, current: int | None = None):
        super().__init__(message)
        self.expected = expected
        self.current = current

    def to_json(self) -> dict:
        return {"error": str(self), "rule": "stale", "expected_version": self.expected,
                "version": self.current}


class UnknownGameId(StoreError, LookupError):
    """No game with that id in the store."""


class SeasonNameTaken(StoreError, ValueError):
    """Another season has that name already."""


# ---------------------------------------------------------------------------
# Schema and migrations. MIGRATIONS[v] takes a database from schema version v
# to v + 1 (0 is an empty file); each runs in one transaction that also sets
# ``PRAGMA user_version``. Never edit a released migration: add one.


def _v0_to_v1(conn: sqlite3.Connection) -> None:
    """The first schema: meta, games, events."""
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("""CREATE TABLE games (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        game TEXT NOT NULL,            -- tracker name, e.g. 'chope'
        players TEXT NOT NULL,         -- JSON list of {name, colour, buzzer}
        options TEXT NOT NULL,         -- JSON object, as given at setup
        created INTEGER NOT NULL       -- wall clock, Unix nanoseconds
    )""")
    conn.execute("""CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,   -- also the live-update id
        game_id INTEGER NOT NULL REFERENCES games(id),
        kind TEXT NOT NULL,            -- the event's "type"
        body TEXT NOT NULL,            -- the event, JSON
        created INTEGER NOT NULL       -- wall clock, Unix nanoseconds
    )""")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """History and resume: finished games and their summary, where a game came
    from, the table's current game, the live race scratch row, an index for
    per-game reads and triggers that make ``events`` append-only."""
    conn.execute("ALTER TABLE games ADD COLUMN finished INTEGER")      # wall ns, NULL while playing
    conn.execute("ALTER TABLE games ADD COLUMN summary TEXT")          # JSON, set when finished
    conn.execute("ALTER TABLE games ADD COLUMN source TEXT NOT NULL DEFAULT 'table'")
    conn.execute("CREATE INDEX events_by_game ON events (game_id, id)")
    conn.execute("""CREATE TABLE live_race (
        game_id INTEGER PRIMARY KEY REFERENCES games(id),
        version INTEGER NOT NULL,      -- the game's version when the race began
        body TEXT NOT NULL,            -- JSON: reason, spec, edges, phase
        updated INTEGER NOT NULL
    )""")
    conn.execute("""CREATE TRIGGER events_append_only_u BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END""")
    conn.execute("""CREATE TRIGGER events_append_only_d BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END""")
    row = conn.execute("SELECT MAX(id) FROM games").fetchone()
    if row[0] is not None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('current_game', ?)", (str(row[0]),))


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Buzzer and table faults (a stuck button, a refused verdict, a store
    error) are kept, so the host can see them after a restart."""
    conn.execute("""CREATE TABLE faults (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        game_id INTEGER REFERENCES games(id),   -- NULL: no game was running
        kind TEXT NOT NULL,            -- 'stuck', 'cleared', 'race-rejected', ...
        body TEXT NOT NULL,            -- JSON: player, fault, t_ns, message
        created INTEGER NOT NULL       -- wall clock, Unix nanoseconds
    )""")
    conn.execute("CREATE INDEX faults_by_game ON faults (game_id, id)")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """Private player links: each player's secret link to their own page.
    Only a digest of the secret is kept (with the random nonce the web layer
    derives it from under the server's key), so a copy of the database alone
    opens no player's page; a revoked link keeps its row, marked."""
    conn.execute("""CREATE TABLE player_links (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        game_id INTEGER NOT NULL REFERENCES games(id),  -- the game it was issued in
        player TEXT NOT NULL,          -- the player's name
        seats TEXT NOT NULL,           -- JSON sorted names at the table when issued
        nonce TEXT NOT NULL,           -- random; the link's secret is derived from it
        digest TEXT NOT NULL UNIQUE,   -- SHA-256 of the secret, hex
        created INTEGER NOT NULL,      -- wall clock, Unix nanoseconds
        revoked INTEGER                -- wall clock when revoked, NULL while valid
    )""")
    conn.execute("CREATE INDEX player_links_by_seats ON player_links (seats, player, id)")


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    """The cards queued behind a race, kept apart from any one race's row:
    written in the same transaction as the card's acknowledgement, and as
    each is logged, so a crash keeps every acknowledged card (they were in
    the live race's row, which a later race or a cancel replaced)."""
    conn.execute("""CREATE TABLE queued_cards (
        game_id INTEGER PRIMARY KEY REFERENCES games(id),
        body TEXT NOT NULL,            -- JSON [{event, logged_ns}], in order
        updated INTEGER NOT NULL       -- wall clock, Unix nanoseconds
    )""")


def _v5_to_v6(conn: sqlite3.Connection) -> None:
    """Seasons the host names: a span of nights (local dates, the end
    optional: a season still running), for reading ratings and statistics
    one season at a time. A game belongs to every season its night is in."""
    conn.execute("""CREATE TABLE seasons (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,     -- what the host called it
        start TEXT NOT NULL,           -- its first night, YYYY-MM-DD (local)
        end TEXT,                      -- its last night, YYYY-MM-DD; NULL: still running
        created INTEGER NOT NULL       -- wall clock, Unix nanoseconds
    )""")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v0_to_v1, _v1_to_v2, _v2_to_v3,
                                                          _v3_to_v4, _v4_to_v5, _v5_to_v6]
SCHEMA_VERSION = len(MIGRATIONS)


def _write_queue(conn: sqlite3.Connection, game_id: int, text: str, now: int) -> None:
    conn.execute("INSERT OR REPLACE INTO queued_cards (game_id, body, updated) VALUES (?, ?, ?)",
                 (game_id, text, now))


def _dumps(obj: Any, what: str) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} is not JSON: {exc}") from None


def iso(wall_ns: int | None) -> str | None:
    """A wall-clock time in Unix nanoseconds as ISO 8601 UTC (seconds)."""
    if wall_ns is None:
        return None
    return datetime.fromtimestamp(wall_ns // 1_000_000_000, timezone.utc).isoformat()


def _check_header(path: Path) -> None:
    """Refuse a file that is not SQLite before SQLite gets a chance to touch it."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    if size == 0:
        return  # an empty file is an empty database
    if not path.is_file():
        raise StoreCorrupt(f"{path} is not a regular file; refusing to use it as the store")
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    if head != SQLITE_MAGIC:
        raise StoreCorrupt(
            f"{path} is not a SQLite database (it starts with {head[:8]!r}); it was left "
            f"untouched: move it away or point COMPANION_DB at another file")


class Store:
    """The event log. Thread-safe: one connection guarded by a lock.

    ``path`` is a file (created with its directory if missing), ``":memory:"``
    for tests, or None for :func:`companion.record.paths.default_db_path`.
    ``wall_clock`` stamps rows (Unix ns); it is never used for game time.
    """

    def __init__(self, path: str | os.PathLike | None = None,
                 wall_clock: Callable[[], int] = time.time_ns, timeout_s: float = 10.0):
        if path is None:
            from .paths import default_db_path
            path = default_db_path()
        self.memory = str(path) == ":memory:"
        self.path = ":memory:" if self.memory else Path(path)
        self.wall_clock = wall_clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # the background writer of the live race row (save_live_race_soon)
        self._pending_lock = threading.Lock()
        self._idle = threading.Condition(self._pending_lock)
        self._pending: dict[int, tuple[int, dict, Callable | None] | None] = {}   # None: delete
        self._writing = False
        self._closed = self._stopping = False
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None
        # set by the writer (under _pending_lock) when it ends: it cannot
        # tell the store itself once its weak reference is dead
        self._writer_gone = threading.Event()
        self.migrated_from: int | None = None
        self.backup_path: Path | None = None
        if not self.memory:
            _check_header(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of {self.path}: {exc}") from None
        try:
            conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        try:
            self._open(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    # -- opening ---------------------------------------------------------
    def _open(self, conn: sqlite3.Connection) -> None:
        where = self.path
        try:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            objects = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")]
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"{where} is not a readable SQLite database ({exc}); it was "
                               f"left untouched") from None
        fresh = app == 0 and version == 0 and not objects
        if not fresh and app != APPLICATION_ID:
            shown = ", ".join(objects[:8]) + (", ..." if len(objects) > 8 else "")
            raise StoreCorrupt(
                f"{where} is a SQLite database of another application (application_id "
                f"{app:#x}, tables: {shown or 'none'}), not a Tabletop Companion store; it was "
                f"left untouched: point COMPANION_DB at another file")
        if not fresh and version == 0:
            raise StoreCorrupt(f"{where} has a Tabletop Companion id but no schema version; "
                               f"it was left untouched")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{where} was written by a newer Tabletop Companion (schema "
                             f"{version}; this version reads up to {SCHEMA_VERSION}): upgrade "
                             f"the companion; the file was left untouched")
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if not self.memory and str(mode).lower() != "wal":
                raise StoreError(f"{where}: the file system does not allow WAL journaling "
                                 f"(journal_mode={mode}); use a local disk")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            if not fresh:
                check = conn.execute("PRAGMA quick_check").fetchall()
                if check != [("ok",)]:
                    detail = "; ".join(str(r[0]) for r in check[:3])
                    raise StoreCorrupt(f"{where} is damaged ({detail}); it was left untouched: "
                                       f"keep it for recovery and start a new store")
            if version < SCHEMA_VERSION:
                if version > 0 and not self.memory:
                    self.backup_path = self._backup(conn, version)
                self._migrate(conn)
                self.migrated_from = version
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"{where} is damaged or cannot be read as a store ({exc}); it "
                               f"was left untouched: keep it for recovery") from None

    def _backup(self, conn: sqlite3.Connection, version: int) -> Path:
        """A copy of the database before its schema is migrated."""
        base = Path(f"{self.path}.schema{version}.bak")
        dest, n = base, 1
        while dest.exists():
            n += 1
            dest = base.with_name(f"{base.name}.{n}")
        target = sqlite3.connect(str(dest))
        try:
            conn.backup(target)
        finally:
            target.close()
        return dest

    def _migrate(self, conn: sqlite3.Connection) -> None:
        while True:
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version >= SCHEMA_VERSION:
                    conn.execute("COMMIT")
                    return
                MIGRATIONS[version](conn)
                conn.execute(f"PRAGMA user_version = {version + 1}")
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                             (str(version + 1),))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- plumbing ----------------------------------------------------------
    def close(self) -> None:
        """Write what the background writer still holds, then close the file."""
        if getattr(self, "_pending_lock", None) is not None:
            try:
                self.flush(timeout_s=10.0)
            except Exception:  # noqa: BLE001 - closing must not fail on a bad row
                pass
            with self._pending_lock:
                self._closed = self._stopping = True
                writer = self._writer
            self._wake.set()
            if writer is not None and writer is not threading.current_thread():
                writer.join(2)
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the store is closed")
        return self._conn

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock for a ``with`` block: nothing else uses
        :attr:`conn` meanwhile (the league's publisher reading and writing
        an in-memory store's connection)."""
        with self._lock:
            yield

    def _write(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``fn`` in one IMMEDIATE transaction; durable when this returns."""
        with self._lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"the store is busy or unwritable: {exc}") from None
            try:
                out = fn(conn)
                conn.execute("COMMIT")
                return out
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"write failed: {exc}") from None
                raise

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            try:
                return self.conn.execute(sql, args).fetchall()
            except OverflowError:
                return []   # an id past SQLite's 64-bit integers names no row
            except sqlite3.Error as exc:
                raise StoreError(f"read failed: {exc}") from None

    def schema_version(self) -> int:
        return self._read("PRAGMA user_version")[0][0]

    def integrity_check(self) -> str:
        return "; ".join(r[0] for r in self._read("PRAGMA integrity_check"))

    def pragma(self, name: str):
        return self._read(f"PRAGMA {name}")[0][0]

    # -- games ---------------------------------------------------------------
    def create_game(self, game: str, players: list[dict], options: dict,
                    created_ns: int | None = None, *, source: str = "table",
                    events: Iterable[dict] = (), summary: dict | None = None,
                    make_current: bool = True) -> int:
        """A new game (and, for an import, its events) in one transaction.

        ``make_current`` makes it the table's current game (what a restart
        resumes); imports pass False."""
        players_json = _dumps(list(players), "players")
        options_json = _dumps(dict(options or {}), "options")
        bodies = [(_kind(e), _dumps(e, "event")) for e in events]
        summary_json = None if summary is None else _dumps(summary, "summary")
        now = self.wall_clock()
        created = now if created_ns is None else created_ns

        def tx(conn):
            cur = conn.execute(
                "INSERT INTO games (game, players, options, created, source, finished, summary)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game, players_json, options_json, created, source,
                 None if summary is None else now, summary_json))
            gid = cur.lastrowid
            conn.executemany(
                "INSERT INTO events (game_id, kind, body, created) VALUES (?, ?, ?, ?)",
                [(gid, k, b, now) for k, b in bodies])
            if make_current:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('current_game', ?)", (str(gid),))
            return gid
        return self._write(tx)

    def current_game(self) -> int | None:
        """The table's current game: the newest one started at the table (a
        finished game stays current, showing its result, until a new one)."""
        rows = self._read("SELECT value FROM meta WHERE key = 'current_game'")
        return int(rows[0][0]) if rows else None

    def set_current(self, game_id: int) -> None:
        self._require(game_id)
        self._write(lambda c: c.execute(
            "INSERT OR REPLACE INTO meta VALUES ('current_game', ?)", (str(game_id),)))

    def _require(self, game_id: int) -> None:
        if not self._read("SELECT 1 FROM games WHERE id = ?", (game_id,)):
            raise UnknownGameId(f"no game {game_id} in the store")

    _GAME_COLS = ("SELECT g.id, g.game, g.players, g.options, g.created, g.finished, g.summary,"
                  " g.source, (SELECT MAX(e.id) FROM events e WHERE e.game_id = g.id),"
                  " (SELECT COUNT(*) FROM events e WHERE e.game_id = g.id) FROM games g")

    @staticmethod
    def _info(row) -> dict:
        gid, game, players, options, created, finished, summary, source, last, count = row
        return {"id": gid, "game": game, "players": json.loads(players),
                "options": json.loads(options), "created_ns": created, "created": iso(created),
                "finished": finished is not None, "finished_ns": finished,
                "finished_at": iso(finished),
                "summary": None if summary is None else json.loads(summary),
                "source": source, "version": last or 0, "events": count}

    def game_info(self, game_id: int) -> dict:
        """``{"id","game","players","options","created","created_ns","finished",
        "finished_ns","finished_at","summary","source","version","events"}``."""
        rows = self._read(self._GAME_COLS + " WHERE g.id = ?", (game_id,))
        if not rows:
            raise UnknownGameId(f"no game {game_id} in the store")
        return self._info(rows[0])

    def list_games(self) -> list[dict]:
        """Every game, newest first."""
        return [self._info(r) for r in self._read(self._GAME_COLS + " ORDER BY g.id DESC")]

    def update_players(self, game_id: int, players: list[dict]) -> None:
        """Change colours / buzzers (metadata, not game state)."""
        body = _dumps(list(players), "players")
        self._require(game_id)
        self._write(lambda c: c.execute("UPDATE games SET players = ? WHERE id = ?",
                                        (body, game_id)))

    def mark_finished(self, game_id: int, summary: dict | None) -> None:
        """Record the final summary (None: the game is being played again,
        e.g. its last event was undone)."""
        body = None if summary is None else _dumps(summary, "summary")
        when = None if summary is None else self.wall_clock()
        self._require(game_id)
        self._write(lambda c: c.execute(
            "UPDATE games SET finished = ?, summary = ? WHERE id = ?", (when, body, game_id)))

    # -- events --------------------------------------------------------------
    def version(self, game_id: int) -> int:
        """The game's version: the id of its last event, 0 when it has none."""
        return self._read("SELECT COALESCE(MAX(id), 0) FROM events WHERE game_id = ?",
                          (game_id,))[0][0]

    def append(self, game_id: int, event: dict, expected_version: int | None = None,
               queued: list | None = None) -> int:
        """Append one event; its id once it is durable (the WAL is synced).

        With ``expected_version``, the append happens only if the game's
        version is still that (checked in the same transaction), else
        :class:`StaleVersion` and nothing is written. With ``queued``, the
        game's queued cards become that list in the same transaction (a
        queued card logged: it leaves the queue as it enters the log)."""
        if not isinstance(event, dict):
            raise StoreError("an event must be a JSON object")
        kind, body = _kind(event), _dumps(event, "event")
        now = self.wall_clock()
        queue = None if queued is None else _dumps(queued, "queued cards")

        def tx(conn):
            if expected_version is not None:
                current = conn.execute(
                    "SELECT COALESCE(MAX(id), 0) FROM events WHERE game_id = ?",
                    (game_id,)).fetchone()[0]
                if current != expected_version:
                    raise StaleVersion(
                        f"stale event: it was made against version {expected_version} of game "
                        f"{game_id} but the log is at version {current}; nothing was logged",
                        expected_version, current)
            try:
                cur = conn.execute(
                    "INSERT INTO events (game_id, kind, body, created) VALUES (?, ?, ?, ?)",
                    (game_id, kind, body, now))
            except sqlite3.IntegrityError:
                raise UnknownGameId(f"no game {game_id} in the store") from None
            if queue is not None:
                _write_queue(conn, game_id, queue, now)
            return cur.lastrowid
        return self._write(tx)

    # -- the cards queued behind a race (see docs/store.md, "Resume") ----------
    def save_queued(self, game_id: int, queued: list) -> None:
        """The game's queued cards (``[{event, logged_ns}]``, in order), now
        and durably: the host's card is acknowledged only after this."""
        text, now = _dumps(queued, "queued cards"), self.wall_clock()
        self._write(lambda c: _write_queue(c, game_id, text, now))

    def load_queued(self, game_id: int) -> list | None:
        """The game's queued cards as saved (None: never saved)."""
        rows = self._read("SELECT body FROM queued_cards WHERE game_id = ?", (game_id,))
        return json.loads(rows[0][0]) if rows else None

    def events(self, game_id: int, after_id: int = 0) -> list[tuple[int, dict]]:
        """The game's events with id > ``after_id``, in log order."""
        rows = self._read("SELECT id, body FROM events WHERE game_id = ? AND id > ? ORDER BY id",
                          (game_id, after_id))
        return [(i, json.loads(b)) for i, b in rows]

    def has_event(self, game_id: int, event_id: int) -> bool:
        return bool(self._read("SELECT 1 FROM events WHERE game_id = ? AND id = ?",
                               (game_id, event_id)))

    # -- faults -----------------------------------------------------------------
    def record_fault(self, game_id: int | None, fault: dict) -> int:
        """Keep one fault (durable like an event); returns its id."""
        text = _dumps(fault, "fault")
        kind = str(fault.get("fault") or "fault")
        now = self.wall_clock()
        return self._write(lambda c: c.execute(
            "INSERT INTO faults (game_id, kind, body, created) VALUES (?, ?, ?, ?)",
            (game_id, kind, text, now)).lastrowid)

    def faults(self, game_id: int | None = None, limit: int = 100) -> list[dict]:
        """The newest ``limit`` faults (of one game, or all), oldest first;
        each with its ``id`` and ``created`` wall time."""
        if game_id is None:
            rows = self._read("SELECT id, body, created FROM faults ORDER BY id DESC LIMIT ?",
                              (limit,))
        else:
            rows = self._read("SELECT id, body, created FROM faults WHERE game_id = ?"
                              " ORDER BY id DESC LIMIT ?", (game_id, limit))
        return [{**json.loads(b), "id": i, "created": c} for i, b, c in reversed(rows)]

    # -- the live race scratch row (see docs/store.md, "Resume") ---------------
    def save_live_race(self, game_id: int, version: int, body: dict) -> None:
        """Write the live race row now, durably (it replaces any pending
        :meth:`save_live_race_soon` of the same game)."""
        text = _dumps(body, "live race")
        now = self.wall_clock()
        with self._lock:
            with self._pending_lock:
                self._pending.pop(game_id, None)
            self._write(lambda c: c.execute(
                "INSERT OR REPLACE INTO live_race (game_id, version, body, updated)"
                " VALUES (?, ?, ?, ?)", (game_id, version, text, now)))

    def save_live_race_soon(self, game_id: int, version: int, body: dict,
                            on_error: Callable[[StoreError], None] | None = None) -> None:
        """Hand the live race row to the background writer and return at once.

        The edge path (a press taken by the live race) calls this under the
        session's lock: it only swaps the pending row and wakes the writer,
        which writes it durably a moment later, off the lock. Rows of the
        same game coalesce (only the newest is written); ``body`` must not be
        changed afterwards. A failed write calls ``on_error`` from the
        writer thread. :meth:`flush` waits for the write; :meth:`close`
        flushes first."""
        self._queue(game_id, (version, body, on_error))

    def _queue(self, game_id: int, item: tuple | None) -> None:
        """Make ``item`` (a row, or None: delete) the game's pending write."""
        with self._pending_lock:
            if self._closed:
                raise StoreError("the store is closed")
            self._pending[game_id] = item
            if self._writer is None or not self._writer.is_alive():
                self._writer_gone = threading.Event()
                self._writer = threading.Thread(
                    target=_live_race_writer,
                    args=(weakref.ref(self), self._wake, self._idle, self._writer_gone),
                    name="store-live-race", daemon=True)
                self._writer.start()
        self._wake.set()

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every pending :meth:`save_live_race_soon` row is written
        (or failed); False if ``timeout_s`` passed first."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._pending_lock:
            while self._pending or self._writing:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                writer = self._writer
                if (writer is None or not writer.is_alive() or self._writer_gone.is_set()
                        or writer is threading.current_thread()):
                    # no writer (closing, it died, or it ended because the store is
                    # being collected), or this is the writer itself: write here
                    self._drain()
                    continue
                self._idle.wait(left)
        return True

    def _drain(self) -> None:
        """Write the pending live-race rows (the writer thread, or a flush);
        called with ``_pending_lock`` held, which it releases around each
        write. ``_lock`` is taken first, so a :meth:`clear_live_race` or
        :meth:`save_live_race` in between always wins over an older row."""
        while self._pending:
            game_id = next(iter(self._pending))
            self._writing = True
            self._pending_lock.release()
            failure = None
            on_error = None
            try:
                with self._lock:
                    with self._pending_lock:
                        present = game_id in self._pending
                        item = self._pending.pop(game_id, None)
                    try:
                        if item is not None:
                            version, body, on_error = item
                            text = _dumps(body, "live race")
                            now = self.wall_clock()
                            self._write(lambda c: c.execute(
                                "INSERT OR REPLACE INTO live_race (game_id, version, body, "
                                "updated) VALUES (?, ?, ?, ?)", (game_id, version, text, now)))
                        elif present:
                            self._write(lambda c: c.execute(
                                "DELETE FROM live_race WHERE game_id = ?", (game_id,)))
                    except StoreError as exc:
                        failure = exc
                if failure is not None and on_error is not None:
                    try:
                        on_error(failure)
                    except Exception:  # noqa: BLE001 - a callback must not kill the writer
                        pass
            finally:
                self._pending_lock.acquire()
                self._writing = False
        self._idle.notify_all()

    def write_pending(self) -> bool:
        """One turn of the background writer (its thread calls this when
        woken): write the pending live-race rows. False when the store is
        closing with nothing left to write: the writer ends."""
        try:
            with self._pending_lock:
                if self._stopping and not self._pending:
                    return False
                self._drain()
        except Exception:  # noqa: BLE001 - a closed connection: the pending rows stay
            with self._pending_lock:
                self._idle.notify_all()
        return True

    def load_live_race(self, game_id: int) -> tuple[int, dict] | None:
        rows = self._read("SELECT version, body FROM live_race WHERE game_id = ?", (game_id,))
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def clear_live_race(self, game_id: int, wait: bool = True) -> None:
        """Delete the live race row (and drop a pending one not yet written).

        ``wait=False`` hands the deletion to the background writer (the
        session, once the race's event is logged: the row is stale anyway,
        as the game's version has moved on)."""
        if not wait:
            self._queue(game_id, None)
            return
        with self._lock:
            with self._pending_lock:
                self._pending.pop(game_id, None)
            self._write(lambda c: c.execute("DELETE FROM live_race WHERE game_id = ?",
                                            (game_id,)))


    # -- seasons (see docs/store.md, "Seasons") ---------------------------------
    def add_season(self, name: str, start: str, end: str | None = None) -> dict:
        """A new season: ``name`` (unique), its first night ``start`` and last
        ``end`` (``YYYY-MM-DD``; None: still running); checked by the caller
        (:func:`companion.record.ratings.check_season`). The new row."""
        now = self.wall_clock()

        def tx(conn):
            try:
                return conn.execute("INSERT INTO seasons (name, start, end, created) "
                                    "VALUES (?, ?, ?, ?)", (name, start, end, now)).lastrowid
            except sqlite3.IntegrityError:
                raise SeasonNameTaken(f"another season is called {name}") from None
        sid = self._write(tx)
        return next(s for s in self.seasons() if s["id"] == sid)

    def seasons(self) -> list[dict]:
        """Every season, ``{"id","name","start","end"}``, the latest start first."""
        rows = self._read("SELECT id, name, start, end FROM seasons ORDER BY start DESC, id DESC")
        return [{"id": i, "name": n, "start": a, "end": b} for i, n, a, b in rows]

    def remove_season(self, season_id: int) -> bool:
        """Forget a season (its games stay); False if there was none."""
        return bool(self._write(lambda c: c.execute(
            "DELETE FROM seasons WHERE id = ?", (season_id,)).rowcount))

    # -- private player links (see docs/store.md, "Player links") -----------
    @staticmethod
    def seats_key(names: Iterable[str]) -> str:
        """The key of a table's seating: its player names, sorted, as JSON."""
        return json.dumps(sorted(str(n) for n in names), ensure_ascii=False)

    @staticmethod
    def _link(row) -> dict:
        lid, gid, player, seats, nonce, digest, created, revoked = row
        return {"id": lid, "game_id": gid, "player": player, "seats": json.loads(seats),
                "nonce": nonce, "digest": digest, "created_ns": created, "created": iso(created),
                "revoked": revoked is not None, "revoked_ns": revoked}

    _LINK_COLS = "SELECT id, game_id, player, seats, nonce, digest, created, revoked FROM player_links"

    def add_player_link(self, game_id: int, player: str, seats: Iterable[str], nonce: str,
                        digest: str) -> dict:
        """Record a new link for ``player`` at this seating (the names of
        ``seats``), revoking that player's earlier links at the same seating,
        in one transaction; the new row."""
        if not isinstance(player, str) or not isinstance(nonce, str) \
                or not isinstance(digest, str) or len(digest) != 64:
            raise StoreError("a player link needs a player name, a nonce and a SHA-256 digest")
        key = self.seats_key(seats)
        now = self.wall_clock()

        def tx(conn):
            conn.execute("UPDATE player_links SET revoked = ? WHERE seats = ? AND player = ?"
                         " AND revoked IS NULL", (now, key, player))
            try:
                cur = conn.execute(
                    "INSERT INTO player_links (game_id, player, seats, nonce, digest, created)"
                    " VALUES (?, ?, ?, ?, ?, ?)", (game_id, player, key, nonce, digest, now))
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"could not record the link: {exc}") from None
            return cur.lastrowid
        lid = self._write(tx)
        return self._link(self._read(self._LINK_COLS + " WHERE id = ?", (lid,))[0])

    def find_player_link(self, digest: str) -> dict | None:
        """The link whose secret has this digest (revoked or not), or None."""
        if not isinstance(digest, str):
            return None
        rows = self._read(self._LINK_COLS + " WHERE digest = ?", (digest,))
        return self._link(rows[0]) if rows else None

    def player_links(self, seats: Iterable[str]) -> dict[str, dict]:
        """Each player's newest link at this seating (revoked or not), by name."""
        rows = self._read(self._LINK_COLS + " WHERE seats = ? ORDER BY id",
                          (self.seats_key(seats),))
        return {r[2]: self._link(r) for r in rows}

    def revoke_player_links(self, seats: Iterable[str], player: str | None = None) -> int:
        """Revoke the valid links at this seating (one player's, or all);
        how many were revoked."""
        key, now = self.seats_key(seats), self.wall_clock()
        if player is None:
            return self._write(lambda c: c.execute(
                "UPDATE player_links SET revoked = ? WHERE seats = ? AND revoked IS NULL",
                (now, key)).rowcount)
        return self._write(lambda c: c.execute(
            "UPDATE player_links SET revoked = ? WHERE seats = ? AND player = ?"
            " AND revoked IS NULL", (now, key, player)).rowcount)


def _live_race_writer(ref: "weakref.ref[Store]", wake: threading.Event,
                      idle: threading.Condition, gone: threading.Event) -> None:
    """The store's background writer: wait for pending live-race rows and
    write them. Holds the store only while writing, so an unreferenced store
    is still collected (and closed). When it ends it sets ``gone`` and wakes
    :meth:`Store.flush` through ``idle``: a store being collected has its weak
    reference cleared before its ``__del__`` flushes, and that flush must then
    write the rows itself rather than wait for a writer that is no more."""
    try:
        while True:
            wake.wait()
            wake.clear()
            store = ref()
            if store is None or not store.write_pending():
                return
            del store
    finally:
        with idle:
            gone.set()
            idle.notify_all()


def failure_cause(exc: BaseException) -> str:
    """What a failed write means for the people at the table, in their
    words: "the disk is full", "the database is read-only"... (from SQLite's
    own message, which the StoreError carries)."""
    text = str(exc).lower()
    if "is full" in text or "no space" in text:
        return "the disk is full"
    if "readonly" in text or "read-only" in text:
        return "the database is read-only (check the file's and the disk's permissions)"
    if "disk i/o" in text or "i/o error" in text:
        return "the disk failed (an I/O error)"
    if "locked" in text or "busy" in text:
        return "the database is locked by another program"
    if "unable to open" in text or "permission" in text:
        return "the database cannot be opened for writing (permissions)"
    if "closed" in text:
        return "the store is closed"
    return f"the store failed ({exc})"


def _kind(event: dict) -> str:
    kind = event.get("type") if isinstance(event, dict) else None
    if not isinstance(kind, str) or not kind:
        raise StoreError("an event must be a JSON object with a 'type'")
    return kind


__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "Store", "StoreError",
           "StoreCorrupt", "StaleVersion", "UnknownGameId", "SeasonNameTaken", "iso",
           "failure_cause"]
