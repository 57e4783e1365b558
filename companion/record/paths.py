"""Where the table's files live (an edge: it reads the environment).

The store (the SQLite event log, see docs/store.md) is one file:

1. ``$COMPANION_DB``, if set: that path, as given (``~`` expanded).
2. ``$STATE_DIRECTORY``, if set (systemd sets it for a unit with
   ``StateDirectory=``; it may hold several paths separated by ``:``, the
   first is used): ``companion.db`` in it.
3. Otherwise the user's data directory (platformdirs), e.g.
   ``~/.local/share/tabletop-companion/companion.db`` on Linux.

>>> str(default_db_path({"COMPANION_DB": "/tmp/t.db"}))
'/tmp/t.db'
>>> str(default_db_path({"STATE_DIRECTORY": "/var/lib/companion:/var/lib/other"}))
'/var/lib/companion/companion.db'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

APP_NAME = "tabletop-companion"
DB_NAME = "companion.db"
ENV_DB = "COMPANION_DB"
ENV_STATE = "STATE_DIRECTORY"


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory for the table's state (not created here)."""
    env = os.environ if environ is None else environ
    state = env.get(ENV_STATE, "")
    first = state.split(":")[0].strip() if state else ""
    if first:
        return Path(first)
    import platformdirs
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """The store's path: ``$COMPANION_DB``, else ``companion.db`` in :func:`data_dir`."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_DB, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return data_dir(env) / DB_NAME


__all__ = ["APP_NAME", "DB_NAME", "ENV_DB", "ENV_STATE", "data_dir", "default_db_path"]
