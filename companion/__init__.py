"""Tabletop Companion: a table-side referee and scorekeeper for physical games.

The pure race core (:mod:`companion.races`) and the games' rules
(:mod:`companion.games`) take time and cards in as values; the running game
(:mod:`companion.table`) keeps its durable record (:mod:`companion.record`);
the edges (:mod:`companion.buzzers`, :mod:`companion.record.store`,
:mod:`companion.web`) talk to pins, files and sockets. docs/architecture.md
draws the layers.
"""

from .races.edges import Edge

__all__ = ["Edge"]
__version__ = "0.1.0"
