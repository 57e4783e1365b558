"""A finished game as a play that BG Stats imports as it is.

BG Stats (the Board Game Stats app) documents one import format for plays
made elsewhere: "Push plays to BG Stats from other apps or websites"
(bgstatsapp.com/support/push-plays-to-bg-stats-from-other-apps-or-websites/).
A play is a JSON object (the game, its date, each player's name, score,
rank and whether they won, where it comes from); the app imports it from a
link, ``https://app.bgstatsapp.com/createPlay.html?data=<the JSON,
url-encoded>``, matching its game and players to the app's own. Its schema,
written from that page, is tests/schemas/bgstats_play.schema.json.

Each play names its source (``sourceName``, ``sourcePlayId``: the game's
id and start, so importing it twice is recognised), the game by its title
(``game.name``, ``sourceGameId`` the tracker's name) and each player by name
(``sourcePlayerId`` the name too: the same person across games). The
ranking is the tracker's own (its tie-breaks included), so ``rank`` and
``winner`` are given and ``highestWins`` only describes the usual case.
The companion does not know who started, so ``startPlayer`` is false.
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import quote

from ..games import get_game

SOURCE_NAME = "Tabletop Companion"
#: where the app takes a play from (its documented link)
CREATE_PLAY_URL = "https://app.bgstatsapp.com/createPlay.html?data="


def _title(game: str) -> str:
    try:
        return get_game(game).title
    except KeyError:
        return game


def _local(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9)


def play(info: dict) -> dict:
    """The BG Stats play of a finished game (a :meth:`Store.game_info`
    dict); ValueError for a game that has not finished."""
    summ = info.get("summary") if info.get("finished") else None
    if not isinstance(summ, dict):
        raise ValueError(f"game {info.get('id')} has not finished")
    scores = summ.get("scores") if isinstance(summ.get("scores"), dict) else {}
    ranking = [g for g in summ.get("ranking") or [] if isinstance(g, list)]
    start, end = info["created_ns"], info.get("finished_ns") or info["created_ns"]
    players = []
    for p in info["players"]:
        name = p["name"]
        rank = next((i for i, grp in enumerate(ranking, start=1) if name in grp), len(ranking) + 1)
        score = scores.get(name)
        players.append({"name": name, "sourcePlayerId": name, "score": score
                        if isinstance(score, (int, float)) and not isinstance(score, bool) else 0,
                        "rank": rank, "winner": rank == 1, "startPlayer": False, "role": ""})
    return {
        "sourceName": SOURCE_NAME,
        "sourcePlayId": f"{info['id']}-{start}",
        "playDate": _local(start).strftime("%Y-%m-%d %H:%M:%S"),
        "durationMin": max(0, (end - start) // 60_000_000_000),
        "location": "", "board": "", "comments": "",
        "game": {"name": _title(info["game"]), "sourceGameId": info["game"],
                 "highestWins": True, "noPoints": False},
        "players": players,
    }


def play_json(info: dict) -> str:
    """:func:`play` as the JSON text the app reads."""
    return json.dumps(play(info), ensure_ascii=False, separators=(",", ":"))


def import_link(info: dict) -> str:
    """The link that opens BG Stats' import of the game (on a phone with the app)."""
    return CREATE_PLAY_URL + quote(play_json(info), safe="")


__all__ = ["CREATE_PLAY_URL", "SOURCE_NAME", "import_link", "play", "play_json"]
