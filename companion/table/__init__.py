"""The running game: one table's session, its races, its views and its way out.

* :mod:`~companion.table.session`: :class:`TableSession`, the one running
  game; it commits, persists and publishes;
* :mod:`~companion.table.tableraces`: the session's races on the race desk
  (:mod:`companion.races.desk`), and the cards queued behind an open race
  (:mod:`~companion.table.queued`);
* :mod:`~companion.table.seating`: who sits at which buzzer;
* :mod:`~companion.table.settings`: the table's race settings and their
  defaults;
* :mod:`~companion.table.gamelog`: the game's log as the running table
  holds it (the store's rows, their replay, the version);
* :mod:`~companion.table.outbox` and :mod:`~companion.table.events`: the
  table's one way out, a stream of typed events, outside its lock;
* :mod:`~companion.table.views` and :mod:`~companion.table.raceshots`: what
  the pages see, as pure functions of the state and a frozen shot of the race.
"""
