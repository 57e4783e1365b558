"""The store's files, guarded: one server per store, private modes, a store
that can be written.

Before the table opens its :class:`~companion.record.store.Store`, it takes
:class:`StoreLock` (a second ``companion serve`` on the same file is refused,
naming the first), makes the database and its companions private
(:func:`private_files`: the log holds secret Favourites and the host's
logins), and refuses a store it could not keep its log in
(:func:`check_writable`: a full disk, a read-only file), with the reason.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .store import StoreError, failure_cause

#: Start-up refuses a store on a disk with less free space than this.
MIN_FREE_BYTES = 1 << 20


class StoreInUse(StoreError):
    """Another companion process is serving this store."""


class StoreLock:
    """One server per store: an exclusive ``flock`` on ``<db>.lock`` (mode
    0600), holding the pid of the process that took it, and a second one on
    the database file itself, which is what makes it one per *file* (its
    device and inode) rather than per path: a symlink, a hard link or
    another spelling of the path reaches the same open file's lock (issue
    20, 5). ``flock`` locks are apart from SQLite's own (``fcntl``) locks;
    the database's descriptor is kept open until :meth:`release`, after the
    store is closed, because closing one would drop SQLite's locks. The
    kernel releases both when the process dies, so a crash never leaves a
    stale lock."""

    def __init__(self, db_path):
        self.path = Path(f"{db_path}.lock")
        self.db_path = db_path
        self._fd: int | None = None
        self._db_fd: int | None = None

    def acquire(self) -> "StoreLock":
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot create the lock file {self.path}: "
                             f"{exc.strerror or exc}") from None
        if not _flocked(fd):
            try:
                other = os.read(fd, 32).decode("ascii", "replace").strip()
            except OSError:
                other = ""
            os.close(fd)
            who = f"pid {other}" if other.isdigit() else "another process"
            raise StoreInUse(
                f"{self.db_path} is already served by another companion ({who}); one server "
                f"per store: stop that one first"
                f"{f' (kill {other})' if other.isdigit() else ''}, or give this one "
                f"another --db") from None
        try:
            self._db_fd = _lock_file_itself(self.db_path)
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            os.fchmod(fd, 0o600)
        except OSError:
            pass
        self._fd = fd
        return self

    def release(self) -> None:
        db_fd, self._db_fd = self._db_fd, None
        if db_fd is not None:
            os.close(db_fd)       # drops the file's flock (the store is closed by now)
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            os.close(fd)          # closing drops the flock


def _flocked(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting; False if another
    open file holds one."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _lock_file_itself(db_path) -> int | None:
    """An exclusive ``flock`` on the database file (made empty, mode 0600,
    if missing), or StoreInUse naming the file it really is: another
    companion holds it under another path. None if the file cannot be
    opened at all (the store then says what is wrong with it)."""
    try:
        fd = os.open(db_path, os.O_RDONLY | os.O_CREAT, 0o600)
    except OSError:
        return None
    if not _flocked(fd):
        st = os.fstat(fd)
        os.close(fd)
        real = os.path.realpath(db_path)
        try:   # the first server's pid, if it named the store by its real path
            pid = Path(f"{real}.lock").read_text().strip()
        except OSError:
            pid = ""
        raise StoreInUse(
            f"{db_path} is the same file as a store another companion is serving "
            f"({f'pid {pid}' if pid.isdigit() else 'another process'}; "
            f"the file is {real}, device {st.st_dev} inode {st.st_ino}, reached here "
            f"through a symlink or another name): one server per store: stop that one "
            f"first, or give this one another --db") from None
    return fd


def private_files(db_path) -> None:
    """Mode 0600 for the store and its companions (``-wal``, ``-shm``, the
    cookie secret, the logins, the lock): they hold secret Favourites and
    the host's logins. A missing database is created empty with 0600 first,
    so SQLite gives its ``-wal`` and ``-shm`` the same mode."""
    path = Path(db_path)
    if not path.exists():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError:
            pass            # the store reports what is wrong with the place
    for p in (path, *(Path(f"{path}{s}") for s in ("-wal", "-shm", "-secret", "-logins",
                                                    ".lock"))):
        try:
            if p.exists() and (p.stat().st_mode & 0o077):
                os.chmod(p, 0o600)
        except OSError:
            pass


def check_writable(store, min_free: int = MIN_FREE_BYTES, free_bytes=None) -> None:
    """StoreError saying why, if the table could not keep its log in
    ``store``: a disk with less than ``min_free`` bytes free, or a write
    that fails (a read-only file or disk). The probe rewrites a meta row
    with the value it already has."""
    if store.memory:
        return
    path = store.path
    try:
        free = free_bytes(path) if free_bytes else _free_bytes(path)
    except OSError:
        free = None
    if free is not None and free < min_free:
        raise StoreError(f"cannot keep the table's log in {path}: the disk is full "
                         f"({free // 1024} KB free); free some space or use another --db")
    conn = store.conn
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                         (row[0] if row else str(store.schema_version()),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise StoreError(f"cannot keep the table's log in {path}: {failure_cause(exc)} "
                         f"({exc}); nothing was changed") from None


def _free_bytes(path) -> int:
    st = os.statvfs(Path(path).parent)
    return st.f_bavail * st.f_frsize


__all__ = ["StoreInUse", "StoreLock", "check_writable", "private_files", "MIN_FREE_BYTES"]
