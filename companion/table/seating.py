"""Who sits at which buzzer: the table's players, their colours and buzzer ids.

A source names a physical buzzer (:class:`~companion.races.edges.ButtonEdge`); the
referee and the game name players (:class:`~companion.races.edges.Edge`). The
seating maps one to the other: a player with no buzzer id is reached by
their name.
"""

from __future__ import annotations

from ..games import RulesError
from ..races.edges import Edge, VirtualEdge
from ..record.history import normalise_players


def buzzer_map(players: list[dict]) -> dict[str, str]:
    """Buzzer id (or the name of a player who has none) -> player name."""
    out = {p["name"]: p["name"] for p in players if not p["buzzer"]}
    out.update({p["buzzer"]: p["name"] for p in players if p["buzzer"]})
    return out


def seated(buzzers: dict[str, str], edge) -> Edge | None:
    """``edge`` (a ButtonEdge, or an Edge naming a buzzer) said of the player
    seated at its buzzer; None for an unknown buzzer or what is not an edge
    (a phone's VirtualEdge names its player already)."""
    if isinstance(edge, VirtualEdge):
        return None
    buzzer = getattr(edge, "buzzer", None)
    if buzzer is None:
        buzzer = getattr(edge, "player", None)
    t_ns = getattr(edge, "t_ns", None)
    name = buzzers.get(buzzer) if isinstance(buzzer, str) else None
    if name is None or isinstance(t_ns, bool) or not isinstance(t_ns, int):
        return None
    return Edge(name, bool(edge.pressed), t_ns)


def reseat(players: list[dict], name: str, colour: str | None = None,
           buzzer: str | None | bool = False) -> list[dict]:
    """The players with ``name``'s colour or buzzer changed (``buzzer=None``
    unassigns it; False leaves it); RulesError for an unknown player."""
    players = [dict(p) for p in players]
    for p in players:
        if p["name"] == name:
            if colour is not None:
                p["colour"] = colour
            if buzzer is not False:
                p["buzzer"] = buzzer
            return normalise_players(players)
    raise RulesError(f"no player called {name!r}", "setup")


__all__ = ["buzzer_map", "reseat", "seated"]
