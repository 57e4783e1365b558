"""``python -m companion.web.server``: the table without the CLI.

The application is assembled in :mod:`companion.app` (store, session, buzzer
source, feedback, pipeline, web app, waitress); this module only keeps the
old entry point and names.
"""

from __future__ import annotations

import sys

from ..app import DEMO_GAME, DEMO_PLAYERS, Table, main, serve

__all__ = ["Table", "serve", "main", "DEMO_PLAYERS", "DEMO_GAME"]

if __name__ == "__main__":
    sys.exit(main())
