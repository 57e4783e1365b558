"""Games brought to the moments a page must read right at (issue 33):
a race open, a countdown, the host's question, a verdict, the end. Each is a
real :class:`~companion.table.session.TableSession` driven through its
public calls (``log``, ``log_private``, ``start_race``, ``feed_edge`` on the
session's clock)."""

from __future__ import annotations

import time

from companion.table.session import TableSession

STALLS = ["malay", "chinese", "indian", "international"]
HANDS = {"ana": (["egg", "egg", "flour", "chili"], ["family-recipe"]),
         "bo": (["meat-seafood", "water", "spices", "spices"], ["copycat-stall"]),
         "cy": (["rice-noodles", "rice-noodles", "water", "wildcard"], ["price-inflation"]),
         "di": (["meat-seafood", "egg", "flour", "chili"], ["licence-suspended"])}


def seats(names):
    return [{"name": n, "buzzer": str(i + 1)} for i, n in enumerate(names)]


def hawker_setup(names) -> list[dict]:
    """Hawker Wars' setup events for ``names`` (in seat order): stalls, the
    four dishes and the market, as the host logs them."""
    return ([{"type": "choose_stall", "player": n, "stall": st} for n, st in zip(names, STALLS)]
            + [{"type": "dish", "card": d}
               for d in ("you-tiao", "fish-head-curry", "nasi-lemak", "rojak")]
            + [{"type": "market", "card": c} for c in ("water", "water", "spices")])


def hawker_dealt(session, names) -> None:
    """A new Hawker Wars game on ``session`` (players log their own draws)
    for ``names`` (keys of :data:`HANDS`), set up and dealt."""
    session.new_game("hawker", seats(names), {"draws": "private"})
    for ev in hawker_setup(names):
        session.log(ev)
    for name in names:                        # each from their own page
        ingredients, actions = HANDS[name]
        session.log_private(name, {"type": "draw", "player": name, "pile": "ingredient",
                                   "cards": ingredients})
        session.log_private(name, {"type": "draw", "player": name, "pile": "action",
                                   "cards": actions})


def hawker_at_food_poisoning(store, names, clock=None, **settings) -> TableSession:
    """A Hawker Wars game (players log their own draws) set up and dealt,
    with Food Poisoning turned up at the start of the first turn: the game
    now asks for the announced first-release race. ``clock``: the session's
    (default the monotonic clock)."""
    session = (TableSession(store, settings=settings or None) if clock is None
               else TableSession(store, clock=clock, settings=settings or None))
    hawker_dealt(session, names)
    session.log({"type": "event_check", "event": "food-poisoning"})
    req = session.host_snapshot()["race_request"]
    assert req["kind"] == "first-release" and req["reason"] == "food-poisoning"
    assert sorted(req["eligible"]) == sorted(names)          # every player, 2 players too
    return session


# -- Chope! with a small deck, real presses on the mock buzzers ----------------------

DECK = {"tables": {"red": 2, "blue": 2, "green": 1}, "mynahs": 2, "favourite_cards": ["laksa"],
        "foods": {"laksa": {"name": "Laksa", "kind": "main", "copies": 2},
                  "teh": {"name": "Teh tarik", "kind": "side", "copies": 2}}}
COLOURS = {"Ana": "blue", "Bo": "red", "Cy": "green"}


def chope(t, **options):
    t.session.new_game("chope", [{"name": n, "colour": c} for n, c in COLOURS.items()],
                       dict(DECK, colours=COLOURS, **options))


def demo_chope(t, *pages):
    """A new game like the live table's demo (Chope!, Ana, Bo and Cy on
    their own buzzers, the rules' defaults): a scene played again starts it,
    and each of ``pages`` waits until it shows it (its version 0)."""
    t.session.new_game("chope", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    for page in pages:
        page.wait_for_selector("body[data-version='0']")


def chope_board(t, phone):
    """A new Chope! game and a scoreboard on a phone: (table, session, page)."""
    from tests.kit.browser import open_board

    chope(t)
    return t, t.session, open_board(phone(), t)


def flips(s):
    """How many cards the host has logged in the game, and queued behind its race."""
    return (sum(1 for _, e in s.store.events(s.game_id) if e.get("type") == "flip")
            + len(s.snapshot()["queued"]))


def tap(t, name, hold_s=0.08):
    """A real press on the mock buzzer ``name`` (stamped by the pipeline)."""
    t.source.press(name)
    time.sleep(hold_s)
    t.source.release(name)


def _red_then_blue(t, bo_again: bool) -> None:
    """Bo slams the Red Table (logged); Cy presses 0.45 s after Bo;
    ``bo_again``: Bo presses again at 0.80 s; the Blue Table is logged at
    0.95 s. Played again on a new game if the machine was too busy to keep
    those times (tests.kit.scene)."""
    from tests.kit.scene import on_time

    s = t.session

    def play(scene):
        if flips(s):                      # a playing before this one: start over
            chope(t)
        tap(t, "Bo", 0.03)
        s.log({"type": "flip", "card": "table:red"})
        scene.by(0.1, "Bo's slam and the Red Table")
        scene.at(0.45, "Cy's press")
        tap(t, "Cy", 0.03)
        if bo_again:
            scene.at(0.80, "Bo's press")
            tap(t, "Bo", 0.03)
        scene.at(0.95, "the Blue Table")
        s.log({"type": "flip", "card": "table:blue"})
        scene.by(0.95, "the Blue Table's log")
    on_time(play)


def doubtful_nobody(t):
    """Bo slams the Red Table (logged); Cy presses 0.45 s after Bo, and
    nobody after: the Red Table's runner-up, or the Blue Table's first slam?
    The Blue Table is logged 0.5 s later: the judge asks the host "Cy, or
    nobody slammed it" (a choice with no player)."""
    _red_then_blue(t, bo_again=False)


def doubtful(t):
    """Bo slams the Red Table (logged); Cy presses 0.45 s after Bo: the Red
    Table's runner-up, or the first slam of the Blue one? Bo presses again
    (his second press is the Blue Table's). The Blue Table is logged."""
    _red_then_blue(t, bo_again=True)
