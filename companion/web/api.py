"""Helpers the JSON endpoints share: reading a body, checking a new game's
players, the games described for the page, the virtual buzzer. Errors are
raised, never caught here: the app's error handlers (``register_errors`` in
``companion/web/__init__.py``) turn them into JSON once for every view."""

from __future__ import annotations

import re
import time
from pathlib import Path

from flask import current_app, request, url_for

from ..translations import RULEBOOK_LANGUAGE


class BadRequest(ValueError):
    """A request body the API cannot use (400). ``field`` names the form
    control that caused it (``players.2.name``, ``options.tables``) so the
    page can show the message beside it."""

    def __init__(self, message: str, field: str | None = None, rule: str | None = None,
                 status: int = 400):
        super().__init__(message)
        self.field = field
        self.rule = rule
        self.status = status


class UnknownGame(LookupError):
    """A game name nobody registered, or one that failed to load (its recorded
    error): 404 when it is in the URL, 400 in a body."""

    def __init__(self, name, status: int = 404):
        from ..games import game_errors, game_names

        failed = game_errors().get(name) if isinstance(name, str) else None
        super().__init__(failed or f"unknown game {name!r}; known: {', '.join(game_names())}")
        self.status = status


def services():
    return current_app.extensions["companion"]


def body() -> dict:
    """The JSON object of the request; BadRequest if it is not one."""
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        raise BadRequest("the request body is nested too deeply") from None
    if data is None and not request.get_data():
        return {}
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def now_ns() -> int:
    clock = getattr(services().session, "clock", None) or time.monotonic_ns
    return clock()


def optional_int(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{key!r} must be an integer", key)
    return value


def need_game() -> None:
    """409 unless a game is running (logging, undo and races need one)."""
    if services().session.game is None:
        raise BadRequest("no game is running: start a new game first", rule="setup", status=409)


_COLOUR = re.compile(r"^(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-zA-Z]{3,20})$")


def check_players(players) -> list[dict]:
    """The ``players`` of a new game: names, colours (``#rrggbb`` or a colour
    word, nothing a stylesheet could be tricked with), buzzers. A refusal
    names the field (``players.<i>.name``...) so the form shows it there."""
    if not isinstance(players, list) or not players:
        raise BadRequest("'players' must be a non-empty list", "players")
    out = []
    for i, p in enumerate(players):
        if isinstance(p, str):
            p = {"name": p}
        if not isinstance(p, dict):
            raise BadRequest(f"player {i + 1} must be an object with a 'name'", f"players.{i}")
        name = p.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadRequest(f"player {i + 1} needs a name", f"players.{i}.name")
        if len(name) > 40:
            raise BadRequest(f"player {i + 1}'s name is longer than 40 characters",
                             f"players.{i}.name")
        colour = p.get("colour") or None
        if colour is not None and (not isinstance(colour, str) or not _COLOUR.match(colour)):
            raise BadRequest(f"{name}'s colour must be #rrggbb or a colour word",
                             f"players.{i}.colour")
        buzzer = p.get("buzzer") or None
        if buzzer is not None and not isinstance(buzzer, str):
            raise BadRequest(f"{name}'s buzzer must be a name or null", f"players.{i}.buzzer")
        out.append({"name": name.strip(), "colour": colour, "buzzer": buzzer})
        handicap = p.get("handicap_ms") or 0
        if isinstance(handicap, bool) or not isinstance(handicap, int) \
                or not 0 <= handicap <= 2000:
            raise BadRequest(f"{name}'s handicap must be a whole number of ms from 0 to 2000",
                             f"players.{i}.handicap_ms")
        if handicap:
            out[-1]["handicap_ms"] = handicap
    return out


# ---------------------------------------------------------------------------
# the games, described for the page


def _inferred_setting(name: str, default) -> dict:
    """A form control for an option the game has not declared as a
    :class:`~companion.games.Setting` yet: a checkbox for a bool, a number
    field for an int, the JSON box for anything else."""
    kind = "bool" if isinstance(default, bool) else "int" if isinstance(default, int) else "data"
    out = {"name": name, "kind": kind, "default": default, "label": name.replace("_", " "),
           "rule": "", "help": "", "assumed": False, "declared": False}
    if kind == "int":
        out["minimum"] = out["maximum"] = None
    return out


def panel_script(name: str) -> str | None:
    """The URL of ``static/games/<name>.js`` if the game has its own panel
    script, else None (the page then draws the generic panel)."""
    if not isinstance(name, str) or not name.isidentifier():
        return None
    folder = Path(current_app.static_folder or "") / "games"
    if (folder / f"{name}.js").is_file():
        return url_for("static", filename=f"games/{name}.js")
    return None


def game_info(name: str) -> dict:
    """``get_game(name).info()`` plus what the page needs: its panel script,
    a form control for every option (declared settings first), and
    ``colours_option`` when the rules use the players' colours."""
    from ..games import get_game

    try:
        game = get_game(name)
    except KeyError:
        raise UnknownGame(name) from None
    info = dict(game.info())
    settings = [dict(s, declared=True) for s in info.get("settings") or []]
    declared = {s["name"] for s in settings}
    for key, default in game.default_options().items():
        if key not in declared:
            settings.append(_inferred_setting(key, default))
    info["settings"] = settings
    info["script"] = panel_script(game.name)
    # A game whose scoring reads the players' colours takes them as its
    # ``colours`` option (player -> colour word): the form's colour pickers
    # fill it, so the colour chosen is the colour the rules use.
    info["colours_option"] = "colours" in game.default_options()
    # the language its rulebook is written in: its rule quotes are shown in it
    info["rules_language"] = RULEBOOK_LANGUAGE.get(game.name, "en")
    return info


def page_game(snapshot: dict) -> dict | None:
    """The running game's description for a page to ship inline (no round
    trip before the first paint); None without a game or for one that no
    longer loads (the page then draws it generically)."""
    name = snapshot.get("game")
    if not name:
        return None
    try:
        return game_info(name)
    except (UnknownGame, ImportError):
        return None


def games_info() -> list[dict]:
    """Every registered game that loads, described (:func:`game_info`)."""
    from ..games import available_games

    return [game_info(name) for name in available_games()]


#: a page's own id for its presses' numbers (drawn when it loads)
PAGE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def press_virtual(player: str, pressed: bool, seq: int | None, origin: str) -> None:
    """A page's virtual buzzer into the table: through its one way in, the
    same queue and thread as a pin's edge. ``origin`` is the kind of page
    (``board``, ``host``, ``own``): with the page's own id (``page`` in the
    body), it names the numbers ``seq`` follows, so a scoreboard's numbers
    never make a player's own page's presses look old."""
    page = body().get("page")
    if page is not None and (not isinstance(page, str) or not PAGE_ID.fullmatch(page)):
        raise BadRequest("'page' must be the page's id: 1 to 32 letters, digits, - or _",
                         "page")
    svc = services()
    svc.session.virtual_press(player, pressed, seq=seq, page=f"{origin}:{page or ''}")


def virtual_press(origin: str):
    """A virtual buzzer from a page: ``{"player": name, "pressed": bool,
    "seq": n, "page": id}``, stamped when the server receives it
    (millisecond accuracy). ``seq`` (optional, increasing by one per change
    on the page) lets the session put a press and its release back in order
    when two requests overtake each other; ``page`` is the id the page drew
    when it loaded (its numbers are its own)."""
    data = body()
    player, pressed = data.get("player"), data.get("pressed", True)
    if not isinstance(player, str) or not isinstance(pressed, bool):
        raise BadRequest("send {\"player\": name, \"pressed\": true|false}")
    seq = optional_int(data, "seq")
    press_virtual(player, pressed, seq, origin)
    return {"ok": True, "player": player, "pressed": pressed, "accuracy": "ms"}
