"""The durable record: the table's log on disk, the game file, the history.

* :mod:`~companion.record.store`: the append-only event log in SQLite, the
  only source of truth (docs/store.md);
* :mod:`~companion.record.storefiles` and :mod:`~companion.record.paths`:
  where the store's file lives, and the guards around it (one server per
  store, private modes, a store that can be written);
* :mod:`~companion.record.eventlog`: the log's own engine (undo and redo
  over a tracker's events, the replay);
* :mod:`~companion.record.gamefile`: one game as JSON lines, replayable, its
  races judged again (docs/game-file.md);
* :mod:`~companion.record.history`: statistics and export, pure functions of
  the store's games.
"""
