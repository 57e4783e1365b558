"""The store (issue #4): durable append-only log, versions, foreign files, migrations, paths."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import threading

import pytest

from companion.record import paths
from companion.record.store import (APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, StaleVersion, Store,
                             StoreCorrupt, StoreError, UnknownGameId)
from tests.kit.helpers import wait_for

PLAYERS = [{"name": "ana", "colour": "#ff0000", "buzzer": "b1"},
           {"name": "bo", "colour": "blue", "buzzer": None}]


def digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_append_and_read_back_with_durable_pragmas(tmp_path):
    path = tmp_path / "sub" / "dir" / "t.db"        # the directory is created
    with Store(path) as s:
        assert s.pragma("journal_mode") == "wal"
        assert s.pragma("synchronous") == 2          # FULL
        assert s.pragma("application_id") == APPLICATION_ID
        assert s.schema_version() == SCHEMA_VERSION
        g = s.create_game("chope", PLAYERS, {"variant": "x"})
        assert s.current_game() == g and s.version(g) == 0
        a = s.append(g, {"type": "flip", "card": "laksa", "ü": "ünïcode"})
        b = s.append(g, {"type": "undo"}, expected_version=a)
        assert b > a and s.version(g) == b
        assert s.events(g) == [(a, {"type": "flip", "card": "laksa", "ü": "ünïcode"}),
                               (b, {"type": "undo"})]
        assert s.events(g, after_id=a) == [(b, {"type": "undo"})]
        info = s.game_info(g)
        assert info["players"] == PLAYERS and info["options"] == {"variant": "x"}
        assert info["version"] == b and info["events"] == 2 and not info["finished"]
    with Store(path) as s:                           # reopened: all there
        assert [i for i, _ in s.events(g)] == [a, b]
        assert s.integrity_check() == "ok"


def test_event_ids_are_global_and_increasing_across_games():
    s = Store(":memory:")
    g1 = s.create_game("chope", PLAYERS, {})
    g2 = s.create_game("chomp", PLAYERS, {})
    ids = [s.append(g, {"type": "x"}) for g in (g1, g2, g1, g2)]
    assert ids == sorted(ids) and len(set(ids)) == 4
    assert [i for i, _ in s.events(g1)] == ids[0::2]
    assert s.current_game() == g2
    s.set_current(g1)
    assert s.current_game() == g1
    assert [g["id"] for g in s.list_games()] == [g2, g1]


def test_stale_expected_version_is_rejected_and_nothing_appended():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    a = s.append(g, {"type": "a"}, expected_version=0)
    with pytest.raises(StaleVersion, match="version 0.*nothing was logged") as exc:
        s.append(g, {"type": "b"}, expected_version=0)
    assert exc.value.expected == 0 and exc.value.current == a
    assert exc.value.to_json()["rule"] == "stale"
    assert [e for _, e in s.events(g)] == [{"type": "a"}]


def test_bad_arguments():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    with pytest.raises(StoreError):
        s.append(g, {"no": "type"})
    with pytest.raises(StoreError, match="not JSON"):
        s.append(g, {"type": "x", "bad": float("nan")})
    with pytest.raises(UnknownGameId):
        s.append(999, {"type": "x"})
    with pytest.raises(UnknownGameId):
        s.game_info(999)
    assert s.events(g) == []
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.events(g)


def test_events_are_append_only():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    s.append(g, {"type": "a"})
    for sql in ("UPDATE events SET body = '{}'", "DELETE FROM events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            s.conn.execute(sql)
    assert len(s.events(g)) == 1


def test_finished_games_keep_their_summary():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    s.mark_finished(g, {"scores": {"ana": 3}, "ranking": [["ana"], ["bo"]]})
    info = s.game_info(g)
    assert info["finished"] and info["summary"]["scores"] == {"ana": 3} and info["finished_at"]
    s.mark_finished(g, None)
    assert not s.game_info(g)["finished"]


def test_two_connections_appending_concurrently_one_wins_per_version(tmp_path):
    path = tmp_path / "t.db"
    stores = [Store(path), Store(path)]           # two processes' worth of connections
    g = stores[0].create_game("chope", PLAYERS, {})
    wins, stale = [], []
    lock = threading.Lock()

    def writer(k):
        store = stores[k % 2]
        for _ in range(40):
            v = store.version(g)
            try:
                i = store.append(g, {"type": "x", "k": k, "against": v}, expected_version=v)
                with lock:
                    wins.append((v, i))
            except StaleVersion:
                with lock:
                    stale.append(k)
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = stores[1].events(g)
    assert len(events) == len(wins)
    versions = [v for v, _ in wins]
    assert len(set(versions)) == len(versions)    # exactly one winner per version
    prev = 0
    for i, ev in events:                         # every event was made against its predecessor
        assert ev["against"] == prev
        prev = i
    for s in stores:
        s.close()


# ---------------------------------------------------------------------------
# foreign and corrupt files are refused and left untouched


@pytest.mark.parametrize("seed", range(6))
def test_a_file_of_random_bytes_is_refused_and_never_overwritten(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "junk.db"
    path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20000))))
    before = digest(path)
    with pytest.raises(StoreCorrupt, match="not a SQLite database.*untouched"):
        Store(path)
    assert digest(path) == before
    assert sorted(os.listdir(tmp_path)) == ["junk.db"]


@pytest.mark.parametrize("seed", range(4))
def test_a_sqlite_header_followed_by_garbage_is_refused(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "junk.db"
    path.write_bytes(b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(8192)))
    before = digest(path)
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert digest(path) == before


def test_a_text_file_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("my shopping list\n")
    with pytest.raises(StoreCorrupt, match="is not a SQLite database"):
        Store(path)
    assert path.read_text() == "my shopping list\n"


def test_another_applications_sqlite_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('gran', '555')")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(StoreCorrupt, match="another application.*contacts"):
        Store(path)
    assert digest(path) == before
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("contacts",)]
    conn.close()


@pytest.mark.parametrize("pragma", ["application_id = 42", "user_version = 7"])
def test_an_empty_database_of_another_application_is_refused(tmp_path, pragma):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA {pragma}")
    conn.close()
    before = digest(path)
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert digest(path) == before


def test_a_database_from_a_newer_companion_is_refused(tmp_path):
    path = tmp_path / "t.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = digest(path)
    with pytest.raises(StoreError, match="newer"):
        Store(path)
    assert digest(path) == before


def test_a_damaged_store_is_reported(tmp_path):
    path = tmp_path / "t.db"
    with Store(path) as s:
        g = s.create_game("chope", PLAYERS, {})
        for i in range(300):
            s.append(g, {"type": "x", "pad": "y" * 500, "i": i})
    data = bytearray(path.read_bytes())
    for off in range(4096 * 3, len(data) - 4096, 4096):   # trash the b-tree pages
        data[off:off + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    before = digest(path)
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert digest(path) == before


def test_an_empty_file_becomes_a_new_store(tmp_path):
    path = tmp_path / "t.db"
    path.write_bytes(b"")
    with Store(path) as s:
        assert s.schema_version() == SCHEMA_VERSION


# ---------------------------------------------------------------------------
# migrations


def make_v1(path):
    """A store as version 1 of the schema wrote it."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    MIGRATIONS[0](conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO games (game, players, options, created) VALUES (?, ?, ?, ?)",
                 ("chope", json.dumps(PLAYERS), "{}", 1_700_000_000 * 10 ** 9))
    for i in range(5):
        conn.execute("INSERT INTO events (game_id, kind, body, created) VALUES (1, 'x', ?, 0)",
                     (json.dumps({"type": "x", "i": i}),))
    conn.execute("COMMIT")
    conn.close()


def test_a_version_1_store_migrates_forward_with_its_data_and_a_backup(tmp_path):
    path = tmp_path / "t.db"
    make_v1(path)
    with Store(path) as s:
        assert s.migrated_from == 1 and s.schema_version() == SCHEMA_VERSION
        assert [e["i"] for _, e in s.events(1)] == list(range(5))
        assert s.current_game() == 1                       # v2 knows the current game
        info = s.game_info(1)
        assert info["source"] == "table" and not info["finished"]
        s.append(1, {"type": "x", "i": 5}, expected_version=s.version(1))
        s.save_live_race(1, s.version(1), {"reason": "chope"})
        backup = s.backup_path
    assert backup is not None and backup.exists()
    conn = sqlite3.connect(backup)                         # the backup is the old file
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 5
    conn.close()
    with Store(path) as s:                                 # and it stays migrated
        assert s.migrated_from is None and len(s.events(1)) == 6


def test_every_migration_step_from_empty_gives_the_same_schema(tmp_path):
    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    old = tmp_path / "old.db"
    make_v1(old)
    Store(old).close()

    def schema(p):
        conn = sqlite3.connect(p)
        rows = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
        conn.close()
        return rows
    assert schema(fresh) == schema(old)


# ---------------------------------------------------------------------------
# the live race scratch row


def test_live_race_row_is_saved_replaced_and_cleared():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    assert s.load_live_race(g) is None
    s.save_live_race(g, 0, {"edges": []})
    s.save_live_race(g, 0, {"edges": [1]})
    assert s.load_live_race(g) == (0, {"edges": [1]})
    s.clear_live_race(g)
    assert s.load_live_race(g) is None


def test_a_live_race_row_handed_to_the_background_writer_is_written_soon():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    gate = threading.Event()
    real = s._write

    def slow(fn):
        gate.wait(5)                       # the disk is slow: the caller must not wait
        return real(fn)
    s._write = slow
    for n in range(5):
        s.save_live_race_soon(g, 7, {"edges": list(range(n + 1))})   # returns at once
    assert s.flush(timeout_s=0.05) is False     # returned while the write still waits
    gate.set()
    assert s.flush(timeout_s=10)
    s._write = real
    assert s.load_live_race(g) == (7, {"edges": [0, 1, 2, 3, 4]})   # the newest row won


def test_a_clear_wins_over_an_older_row_still_waiting_to_be_written():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    with s._lock:                          # hold the writer back
        s.save_live_race_soon(g, 1, {"edges": [1]})
        cleared = threading.Thread(target=s.clear_live_race, args=(g,))
        cleared.start()
    cleared.join(5)
    assert s.flush(timeout_s=10)
    assert s.load_live_race(g) is None
    s.save_live_race_soon(g, 2, {"edges": [2]})
    s.clear_live_race(g, wait=False)       # a queued deletion replaces the queued row
    assert s.flush(timeout_s=10) and s.load_live_race(g) is None
    s.save_live_race_soon(g, 3, {"edges": [3]})
    s.save_live_race(g, 4, {"edges": [4]})  # a durable save supersedes the queued one
    assert s.flush(timeout_s=10) and s.load_live_race(g) == (4, {"edges": [4]})


def test_close_writes_what_the_background_writer_still_holds(tmp_path):
    path = tmp_path / "t.db"
    s = Store(path)
    g = s.create_game("chope", PLAYERS, {})
    s.save_live_race_soon(g, 3, {"edges": ["press"]})
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.save_live_race_soon(g, 3, {"edges": []})
    with Store(path) as again:
        assert again.load_live_race(g) == (3, {"edges": ["press"]})


def test_a_background_write_that_fails_is_reported_to_its_caller():
    s = Store(":memory:")
    g = s.create_game("chope", PLAYERS, {})
    errors = []
    s.save_live_race_soon(g, 1, {"bad": float("nan")}, on_error=errors.append)
    assert s.flush(timeout_s=10)
    assert len(errors) == 1 and isinstance(errors[0], StoreError) and "JSON" in str(errors[0])
    assert s.load_live_race(g) is None
    s.save_live_race_soon(g, 1, {"edges": []})        # the writer carries on
    assert s.flush(timeout_s=10) and s.load_live_race(g) == (1, {"edges": []})


def test_an_unreferenced_store_with_a_writer_is_still_collected(tmp_path):
    import gc
    import weakref
    s = Store(tmp_path / "t.db")
    g = s.create_game("chope", PLAYERS, {})
    s.save_live_race_soon(g, 1, {"edges": []})
    assert s.flush(timeout_s=10)
    writer, ref = s._writer, weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None
    writer.join(5)
    assert not writer.is_alive()
    with Store(tmp_path / "t.db") as again:
        assert again.load_live_race(g) == (1, {"edges": []})


def test_a_store_collected_with_a_row_still_pending_writes_it_without_stalling(tmp_path):
    """The garbage collector clears the writer's weak reference before the
    store's ``__del__`` flushes: the writer then ends, and the flush must
    write the row itself at once (it used to wait out its whole 10 s)."""
    import gc
    import weakref
    s = Store(tmp_path / "t.db")
    g = s.create_game("chope", PLAYERS, {})
    alive = weakref.ref(s)
    flushing = threading.Event()

    waits: list = []                      # (timeout, notified) of each wait of the flush

    class NotingCondition(threading.Condition):
        def wait(self, timeout=None):
            flushing.set()
            waits.append((timeout, super().wait(timeout)))
            return waits[-1][1]

    class HeldUntilFlushing(threading.Event):
        """The writer's wake-up, held back until the collector's flush waits."""
        def wait(self, timeout=None):
            woke = super().wait(timeout)
            assert flushing.wait(5)
            return woke

    s._idle = NotingCondition(s._pending_lock)
    s._wake = HeldUntilFlushing()
    s.save_live_race_soon(g, 1, {"edges": ["press"]})
    writer = s._writer
    s.cycle = s                           # collected by the cycle collector, not refcounts
    del s
    collector = threading.Thread(target=gc.collect, daemon=True)   # a deadlock would hang it
    collector.start()
    assert wait_for(lambda: not collector.is_alive())
    assert waits and all(notified for _, notified in waits), waits   # none waited its time out
    assert alive() is None
    writer.join(5)
    assert not writer.is_alive()
    with Store(tmp_path / "t.db") as again:
        assert again.load_live_race(g) == (1, {"edges": ["press"]})


def test_import_creates_a_game_with_its_events_in_one_go():
    s = Store(":memory:")
    current = s.create_game("chope", PLAYERS, {})
    g = s.create_game("chope", PLAYERS, {}, source="import", events=[{"type": "a"}, {"type": "b"}],
                      summary={"scores": {}}, make_current=False)
    assert s.current_game() == current
    assert [e["type"] for _, e in s.events(g)] == ["a", "b"]
    assert s.game_info(g)["finished"] and s.game_info(g)["source"] == "import"


# ---------------------------------------------------------------------------
# paths


def test_default_path_environment_variable_wins():
    env = {"COMPANION_DB": "~/x/table.db", "STATE_DIRECTORY": "/var/lib/companion"}
    assert paths.default_db_path(env) == paths.Path("~/x/table.db").expanduser()


def test_default_path_under_systemd_uses_the_state_directory():
    env = {"STATE_DIRECTORY": "/var/lib/companion:/var/lib/second"}
    assert str(paths.default_db_path(env)) == "/var/lib/companion/companion.db"


def test_default_path_is_the_user_data_directory(monkeypatch, tmp_path):
    import platformdirs
    monkeypatch.setattr(platformdirs, "user_data_dir",
                        lambda app, appauthor=None: str(tmp_path / app))
    assert paths.default_db_path({}) == tmp_path / "tabletop-companion" / "companion.db"


def test_store_without_a_path_opens_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("COMPANION_DB", str(tmp_path / "env.db"))
    with Store() as s:
        assert s.path == tmp_path / "env.db"
    assert (tmp_path / "env.db").exists()
