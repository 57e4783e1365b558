"""Tabletop Companion: a table-side referee and scorekeeper for physical games.

The pure core (:mod:`companion.referee`, :mod:`companion.games`) takes time and
cards in as values; the edges (:mod:`companion.buzzers`, :mod:`companion.store`,
:mod:`companion.web`) talk to pins, files and sockets.
"""

from .edges import Edge

__all__ = ["Edge"]
__version__ = "0.1.0"
