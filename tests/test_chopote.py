"""Chopote tracker: one test per rule of the rulebook, quoting it; its random play is the
conformance test's (tests/test_conformance.py), with the boards and the checks below.

Written from the rulebook (rules/001_675cbcd5cb420753.txt, in French); the
readings where it is silent are in docs/rules-notes.md (Chopote). Positions
are built by hand with :func:`position`; on the default 2-player board ana is
red (start square 0, corridor after square 55) and bo is yellow (start 28,
corridor after square 27).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from companion.games import RulesError, get_game
from companion.games.chopote import DATA
from companion.record.gamefile import replay_lines

G = get_game("chopote")
ROOT = Path(__file__).resolve().parent.parent
DUO = ["ana", "bo"]
TRIO = ["ana", "bo", "cy"]
#: a board whose corridor is short enough for a bounce to come back out onto the track
SHORT = {"track_length": 56, "corridor_length": 3, "colours": DATA["board"]["colours"]}


def roll(player, value):
    return {"type": "roll", "player": player, "value": value}


def move(player, frm, to=None, captures=None):
    ev = {"type": "move", "player": player, "from": frm}
    if to is not None:
        ev["to"] = to
    if captures is not None:
        ev["captures"] = captures
    return ev


def play(state, *events):
    for ev in events:
        state = G.apply(state, ev)
        G.check_invariants(state)
    return state


def position(bottles: dict, turn="ana", rolled=None, players=DUO, **options):
    """A hand-written position in play: each player's bottles by position word
    (missing ones stay in the casier), ``turn`` to play, and the die ``rolled``."""
    s = G.setup(list(players), options)
    s["phase"], s["turn"] = "play", turn
    s["opening"]["rolling"] = []
    for p, where in bottles.items():
        where = list(where) + ["casier"] * (4 - len(where))
        s["bottles"][p] = sorted(G._progress(s, p, w) for w in where)
    G.check_invariants(s)
    if rolled:      # the die on the table, before the tracker plays a forced move by itself
        s["roll"], s["last_roll"] = rolled, {"player": turn, "value": rolled, "opening": False}
    return s


def where(state, player):
    """A player's bottles as sorted position words."""
    return sorted(b["label"] for b in next(
        p for p in G.public_view(state)["players"] if p["name"] == player)["bottles"])


def moves(state):
    return [(m["from"], m["to"]) for m in G.decisions(state)]


def lay(state, value):
    """The die on the table for the player to play, before the tracker plays
    a forced move by itself: the position the rules are asked about."""
    s = json.loads(json.dumps(state))
    s["roll"], s["last_roll"] = value, {"player": s["turn"], "value": value, "opening": False}
    return s


def refused(state, event, *words):
    """``event`` is refused, the state unchanged, and the refusal names the rule."""
    before = json.dumps(state, sort_keys=True)
    with pytest.raises(RulesError) as exc:
        G.apply(state, event)
    assert json.dumps(state, sort_keys=True) == before
    text = f"{exc.value} {exc.value.rule}"
    for w in words:
        assert w in text, text
    return exc.value


# -- material and setup ------------------------------------------------------------
def test_four_bottles_each_start_in_the_casier():
    """« Matériel: Un plateau, 4 bouteilles par joueur, 1 dé. » / « Les joueurs
    choisissent une couleur et rangent leur 4 bouteilles dans leur casier. »
    (a board, 4 bottles a player, 1 die; each player's 4 bottles go in their rack)"""
    s = G.setup(TRIO)
    view = G.public_view(s)
    assert [p["colour"] for p in view["players"]] == ["red", "blue", "yellow"]
    for p in view["players"]:
        assert p["counts"] == {"casier": 4, "start": 0, "track": 0, "corridor": 0, "home": 0}
    assert G.scores(s) == {"ana": 0, "bo": 0, "cy": 0}
    assert G.public_view(G.setup(DUO))["players"][1]["colour"] == "yellow"   # opposite red


def test_two_to_four_players():
    """« Nb de joueurs: 2 - 4 »"""
    with pytest.raises(RulesError, match="2 to 4"):
        G.setup(["a"])
    with pytest.raises(RulesError, match="2 to 4"):
        G.setup(["a", "b", "c", "d", "e"])
    G.setup(["a", "b", "c", "d"])


def test_players_choose_their_colour():
    """« Les joueurs choisissent une couleur » (players choose a colour)."""
    s = G.setup(TRIO, {"colours": {"cy": "red"}})
    assert s["colours"] == {"ana": "blue", "bo": "yellow", "cy": "red"}
    assert G.public_view(s)["players"][2]["start_square"] == 0
    assert G.info()["player_colours"] == ["red", "blue", "yellow", "green"]   # the form's
    with pytest.raises(RulesError, match="same colour"):
        G.setup(DUO, {"colours": {"ana": "red", "bo": "red"}})
    with pytest.raises(RulesError, match="colours of the board"):
        G.setup(DUO, {"colours": {"ana": "purple"}})


def test_the_board_is_data_with_its_assumption_labelled():
    """« Matériel: Un plateau » — the text gives no size: the board is a setting,
    the common petits-chevaux board by default, labelled as an assumption."""
    setting = {s["name"]: s for s in G.info()["settings"]}["board"]
    assert setting["assumed"] is True and setting["kind"] == "data"
    assert setting["default"] == {"track_length": 56, "corridor_length": 6,
                                  "colours": [{"name": "red", "start": 0},
                                              {"name": "blue", "start": 14},
                                              {"name": "yellow", "start": 28},
                                              {"name": "green", "start": 42}]}
    s = G.setup(DUO, {"board": SHORT})
    assert G.public_view(s)["board"]["corridor_length"] == 3
    for bad, words in [
            ({**SHORT, "track_length": 3}, "track_length"),
            ({**SHORT, "corridor_length": 0}, "corridor_length"),
            ({**SHORT, "colours": [{"name": "red", "start": 0}, {"name": "blue", "start": 0}]},
             "own name and start square"),
            ({**SHORT, "colours": [{"name": "red", "start": 99}, {"name": "b", "start": 1}]},
             "square of the track"),
            ({**SHORT, "colours": SHORT["colours"][:2]}, "2 colours for 3 players"),
            ("big", "object")]:
        with pytest.raises(RulesError, match=words):
            G.setup(TRIO, {"board": bad})
    with pytest.raises(RulesError, match="unknown option"):
        G.setup(DUO, {"track": 30})


def test_settings_quote_the_rule_they_read():
    """Every reading is a declared setting that quotes the text it reads."""
    info = {s["name"]: s for s in G.info()["settings"]}
    assert set(info) == {"board", "colours", "opening_tie", "entry_count", "entry_roll",
                         "extra_roll_when_blocked"}
    assert "plus élevé" in info["opening_tie"]["rule"]
    assert "zone colorée de départ" in info["entry_count"]["rule"]
    assert "1 ou 6" in info["extra_roll_when_blocked"]["rule"]
    with pytest.raises(RulesError, match="opening_tie"):
        G.setup(DUO, {"opening_tie": "coin"})
    with pytest.raises(RulesError, match="true or false"):
        G.setup(DUO, {"extra_roll_when_blocked": "yes"})


# -- the opening roll ----------------------------------------------------------------
def test_the_highest_opening_roll_starts():
    """« Les joueurs lancent à tour de rôle leur dé. Celui qui tire le numéro le plus
    élevé débute. » (players roll in turn; the highest roll starts)."""
    s = G.setup(TRIO)
    assert G.current_player(s) == "ana"
    refused(s, roll("bo", 4), "ana's turn")
    s = play(s, roll("ana", 2), roll("bo", 5))
    assert G.current_player(s) == "cy"
    s = play(s, roll("cy", 3))
    assert G.public_view(s)["phase"] == "play"
    assert G.current_player(s) == "bo"
    assert G.decisions(s) == []                      # bo rolls afresh to play
    assert [e["player"] for e, _ in G.chance_outcomes(s)] == ["bo"] * 6


def test_a_tie_for_the_highest_roll_is_rolled_again_by_the_tied_players():
    """« Celui qui tire le numéro le plus élevé débute. » — silent on ties. Reading
    (opening_tie=roll_off): only the tied players roll again, until one is highest."""
    s = play(G.setup(TRIO), roll("ana", 6), roll("bo", 2), roll("cy", 6))
    view = G.public_view(s)
    assert view["phase"] == "opening" and view["opening"]["rolling"] == ["ana", "cy"]
    assert view["opening"]["round"] == 2
    refused(s, roll("bo", 6), "ana's turn")
    s = play(s, roll("ana", 3), roll("cy", 3), roll("ana", 1), roll("cy", 4))
    assert G.current_player(s) == "cy" and G.public_view(s)["phase"] == "play"


def test_a_tie_may_go_to_the_first_tied_player_in_seat_order():
    """« Celui qui tire le numéro le plus élevé débute. » — setting opening_tie=seat_order."""
    s = play(G.setup(TRIO, {"opening_tie": "seat_order"}),
             roll("ana", 1), roll("bo", 5), roll("cy", 5))
    assert G.current_player(s) == "bo" and G.public_view(s)["phase"] == "play"


# -- the die -----------------------------------------------------------------------------
def test_the_die_is_chance_with_six_equal_faces_whenever_a_roll_is_due():
    """« 1 dé »: each face 1/6 — for the opening rolls, each turn and each extra roll."""
    s = G.setup(DUO)
    out = G.chance_outcomes(s)
    assert [e["value"] for e, _ in out] == [1, 2, 3, 4, 5, 6]
    assert all(p == Fraction(1, 6) for _, p in out) and sum(p for _, p in out) == 1
    assert G.decisions(s) == []
    s = position({"ana": ["track:3"]}, rolled=6)
    assert G.chance_outcomes(s) == [] and G.decisions(s)
    s = play(s, move("ana", "track:3"))
    assert [e for e, _ in G.chance_outcomes(s)] == [roll("ana", v) for v in range(1, 7)]
    assert G.legal_events(s) == [roll("ana", v) for v in range(1, 7)]


def test_a_die_shows_one_to_six():
    s = position({"ana": ["track:3"]})
    for bad in (0, 7, "6", True, None, 2.0):
        wrong_type = isinstance(bad, bool) or not isinstance(bad, int)   # the event's shape
        refused(s, roll("ana", bad), "whole number" if wrong_type else "1 to 6")
    refused(s, {"type": "roll", "player": "zed", "value": 3}, "not playing")


# -- leaving the casier -------------------------------------------------------------------
def test_a_bottle_leaves_the_casier_only_on_a_one_or_a_six():
    """« Le joueur doit tirer le numéro 1 ou 6 pour faire sortir une bouteille du
    casier. » (a 1 or a 6 is needed to take a bottle out of the rack)."""
    for value in (2, 3, 4, 5):
        s = position({}, rolled=value)
        assert G.decisions(s) == [{"type": "pass", "player": "ana"}]
        refused(s, move("ana", "casier"), "1 ou 6")
    for value in (1, 6):
        s = position({}, rolled=value)
        assert moves(s) == [("casier", "start")]
        s = play(s, move("ana", "casier", "start", {}))
        assert where(s, "ana") == ["casier", "casier", "casier", "start"]


def test_out_of_the_casier_onto_the_start_zone_then_roll_again_at_once():
    """« Il place alors sa bouteille sur la zone colorée de départ et relance
    immédiatement le dé pour faire avancer sa bouteille sur la case départ de sa
    couleur. » (the bottle goes to the coloured start zone; the player rolls again
    at once to move it onto the track from their start square). Reading
    (entry_count=start_is_one): the start square is the first square counted."""
    s = position({"ana": ["track:20"]}, rolled=1)
    s = play(s, move("ana", "casier", "start"))
    assert G.current_player(s) == "ana" and G.chance_outcomes(s)   # rolls again at once
    s = play(s, roll("ana", 3))
    # the new roll moves the bottle on the start zone (entry_roll=new_bottle)
    assert moves(s) == [("start", "track:2")]
    refused(s, move("ana", "track:20"), "zone colorée de départ")
    s = play(s, move("ana", "start"))
    assert where(s, "ana") == ["casier", "casier", "track:2", "track:20"]
    assert G.current_player(s) == "bo"                # a 3: no extra roll
    # with a 1, the bottle lands on the start square itself
    s = play(position({}, rolled=6), move("ana", "casier"), roll("ana", 1), move("ana", "start"))
    assert where(s, "ana")[-1] == "track:0"


def test_the_start_square_may_count_as_square_zero():
    """« ... pour faire avancer sa bouteille sur la case départ de sa couleur. »
    Setting entry_count=after_start: the bottle is set on the start square, then
    moves the full roll from there."""
    s = position({"ana": ["start"]}, rolled=3, entry_count="after_start")
    assert moves(s) == [("start", "track:3")]


def test_the_roll_after_leaving_may_move_any_bottle_as_a_setting():
    """« relance immédiatement le dé pour faire avancer sa bouteille » — setting
    entry_roll=any_bottle lets that roll move any bottle instead."""
    s = position({"ana": ["track:20"]}, rolled=6, entry_roll="any_bottle")
    s = play(s, move("ana", "casier"), roll("ana", 6))
    assert moves(s) == [("casier", "start"), ("start", "track:5"), ("track:20", "track:26")]
    s = position({"ana": ["track:20"]}, rolled=6)
    s = play(s, move("ana", "casier"), roll("ana", 6))
    assert moves(s) == [("start", "track:5")]         # not another bottle out


def test_a_blocked_entry_frees_the_roll_for_another_bottle():
    """« relance immédiatement le dé pour faire avancer sa bouteille » — if the
    start zone's bottle cannot move (an opponent in the way), another may."""
    s = position({"ana": ["track:20"], "bo": ["track:0"]}, rolled=6)
    s = play(s, move("ana", "casier"), roll("ana", 3))
    assert moves(s) == [("track:20", "track:23")]     # passing bo on track:0 is not allowed
    s = play(s, move("ana", "track:20"))
    assert where(s, "ana") == ["casier", "casier", "start", "track:23"]


# -- moving ----------------------------------------------------------------------------------
def test_a_bottle_moves_by_the_roll_anticlockwise():
    """« Les bouteilles sont déplacées sur la piste dans le sens inverse des aiguilles
    d'une montre. » / « Le joueur fait avancer la bouteille de son choix d'un nombre
    de cases correspondant au numéro tiré avec le dé. » (bottles move anticlockwise
    — the squares are numbered that way — by the number rolled, a bottle of the
    player's choice)."""
    s = position({"ana": ["track:3", "track:40"]}, rolled=5)
    assert moves(s) == [("track:3", "track:8"), ("track:40", "track:45")]
    s = play(s, move("ana", "track:40", "track:45", {}))
    assert where(s, "ana") == ["casier", "casier", "track:3", "track:45"]
    # bo's lap runs from 28 round past 55 to 0 and on to 27
    s = position({"bo": ["track:54"]}, turn="bo", rolled=4)
    assert moves(s) == [("track:54", "track:2")]
    refused(position({"ana": ["track:3"]}, rolled=5), move("ana", "track:3", "track:1"),
            "track:8")


def test_no_bottle_may_pass_an_opponent():
    """« Il n'est pas autorisé à dépasser son adversaire. » (no passing an opponent)."""
    s = position({"ana": ["track:10"], "bo": ["track:12"]}, rolled=4)
    assert G.decisions(s) == [{"type": "pass", "player": "ana"}]
    refused(s, move("ana", "track:10"), "dépasser son adversaire", "track:12")
    s = position({"ana": ["track:10"], "bo": ["track:12"]}, rolled=1)
    assert moves(s) == [("casier", "start"), ("track:10", "track:11")]   # short of bo: fine
    s = position({"ana": ["track:10"], "bo": ["track:12"]}, rolled=2)
    assert moves(s) == [("track:10", "track:12")]     # onto bo: a capture, not a pass


def test_own_bottles_share_a_square_and_may_be_passed():
    """« Deux ou plusieurs de ses bouteilles peuvent être placées sur la même case du
    jeu. » (two or more of one's own bottles may stand on one square)."""
    s = position({"ana": ["track:5", "track:5", "track:7"]}, rolled=2)
    assert moves(s) == [("track:5", "track:7"), ("track:7", "track:9")]   # one per square
    s = play(s, move("ana", "track:5", "track:7", {}))
    assert where(s, "ana") == ["casier", "track:5", "track:7", "track:7"]
    s = position({"ana": ["track:5", "track:6"]}, rolled=3)
    assert ("track:5", "track:8") in moves(s)          # over its own bottle


def test_a_one_or_a_six_rolls_again():
    """« Un joueur rejoue à chaque fois qu'il fait 1 ou 6. » (a 1 or a 6 plays again)."""
    for value, next_player in ((1, "ana"), (6, "ana"), (2, "bo"), (5, "bo")):
        s = play(position({"ana": ["track:3"]}, rolled=value), move("ana", "track:3"))
        assert G.current_player(s) == next_player
    s = play(position({"ana": ["track:3"]}, rolled=6), move("ana", "track:3"),
             roll("ana", 6), move("ana", "track:9"), roll("ana", 2), move("ana", "track:15"))
    assert where(s, "ana")[-1] == "track:17" and G.current_player(s) == "bo"


def test_a_blocked_one_or_six_still_rolls_again():
    """« Un joueur rejoue à chaque fois qu'il fait 1 ou 6. » — even when the roll
    could not be played (reading; setting extra_roll_when_blocked)."""
    blocked = {"ana": ["track:10", "home", "home", "home"], "bo": ["track:12"]}
    s = play(position(blocked, rolled=6), {"type": "pass", "player": "ana"})
    assert G.current_player(s) == "ana"
    s = play(position(blocked, rolled=6, extra_roll_when_blocked=False),
             {"type": "pass", "player": "ana"})
    assert G.current_player(s) == "bo"


# -- blocked --------------------------------------------------------------------------------
def test_a_player_must_play_even_a_bad_move():
    """« Un joueur est toujours obligé de jouer, même dans une situation
    défavorable. » (a player must always play, even when it hurts): here the only
    move walks a bottle next to an opponent who can take it."""
    s = position({"ana": ["track:10"], "bo": ["track:5"]}, rolled=2)
    assert G.decisions(s) == [move("ana", "track:10", "track:12", {})]
    refused(s, {"type": "pass", "player": "ana"}, "obligé de jouer", "square 10 → square 12")


def test_a_player_passes_only_when_blocked_as_in_the_text():
    """« Le joueur ne passe son tour que dans une situation de blocage. Un joueur est
    bloqué par exemple, si un adversaire devant lui l'empêche d'avancer et s'il ne
    peut pas non plus sortir ses bouteilles du casier. » (a player passes only when
    blocked: e.g. an opponent in front stops them and no bottle can leave the rack)."""
    s = position({"ana": ["track:10"], "bo": ["track:11"]}, rolled=3)
    assert G.decisions(s) == [{"type": "pass", "player": "ana"}]
    assert G.legal_events(s) == [{"type": "pass", "player": "ana"}]
    s = play(s, {"type": "pass", "player": "ana"})
    assert G.current_player(s) == "bo" and where(s, "ana")[-1] == "track:10"
    assert G.public_view(s)["last_move"]["passed"] is True
    # with a 6 the casier is open: not blocked
    assert moves(position({"ana": ["track:10"], "bo": ["track:11"]}, rolled=6)) == [
        ("casier", "start")]


def test_the_board_says_why_a_bottle_cannot_move():
    """Each bottle that cannot play the roll carries the rule's words, for the board
    to answer a tap on it: « Il n'est pas autorisé à dépasser son adversaire. »"""
    s = position({"ana": ["track:10", "track:30", "home"], "bo": ["track:12"]}, rolled=4)
    view = G.public_view(s)
    assert [m["from"] for m in view["moves"]] == ["track:30"]
    assert [(r["from"], r["rule"]) for r in view["unplayable"]] == [
        ("casier", "Le joueur doit tirer le numéro 1 ou 6 pour faire sortir une bouteille "
                   "du casier."),
        ("track:10", "Il n'est pas autorisé à dépasser son adversaire."),
        ("home", "Quand le joueur atteint l'arrivée, il replace la bouteille vide dans son "
                 "casier, la tête en bas.")]
    assert "track:12" in view["unplayable"][1]["why"]
    s = play(position({"ana": ["track:20"]}, rolled=6), move("ana", "casier"), roll("ana", 2))
    assert [r["from"] for r in G.public_view(s)["unplayable"]] == ["casier", "track:20"]
    assert G.public_view(play(s, move("ana", "start")))["unplayable"] == []


def test_a_move_or_pass_needs_a_roll_first():
    s = position({"ana": ["track:10"]})
    refused(s, move("ana", "track:10"), "roll the die")
    refused(s, {"type": "pass"}, "roll the die")
    s = play(s, roll("ana", 3))
    refused(s, roll("ana", 4), "play it")
    refused(s, move("bo", "casier"), "ana's turn")
    refused(s, move("ana", "track:11"), "no bottle on track:11")
    refused(s, move("ana", "corridor:9"), "not a position")
    refused(s, move("ana", 5), "must be a text")                # the event's shape
    refused(s, {"type": "jump"}, "unknown Chopote event")
    refused(play(G.setup(DUO)), move("ana", "casier"), "who starts")


# -- capture ----------------------------------------------------------------------------------
def test_landing_on_an_opponent_sends_it_back_to_its_casier():
    """« Un joueur mange la bouteille de l'adversaire quand il arrive sur la même case.
    Il renverse alors la bouteille adverse et prend sa place. La bouteille adverse
    renversée est immédiatement replacée dans son casier, et non sur la zone de
    départ. » (landing on an opponent takes it: back to its rack, not the start zone)."""
    s = position({"ana": ["track:10"], "bo": ["track:13", "track:40"]}, rolled=3)
    assert G.decisions(s) == [move("ana", "track:10", "track:13", {"bo": 1})]
    s = play(s, move("ana", "track:10", "track:13", {"bo": 1}))
    assert where(s, "ana")[-1] == "track:13"
    assert where(s, "bo") == ["casier", "casier", "casier", "track:40"]
    assert G.public_view(s)["last_move"]["captures"] == {"bo": 1}
    refused(position({"ana": ["track:10"], "bo": ["track:13"]}, rolled=3),
            move("ana", "track:10", "track:13", {}), "mange")


def test_a_capture_is_never_forced():
    """« Même s'il en a la possibilité, un joueur n'est pas obligé de prendre la
    bouteille de l'adversaire et peut choisir de jouer une autre bouteille. »
    (a player need not take, and may play another bottle)."""
    s = position({"ana": ["track:10", "track:30"], "bo": ["track:13"]}, rolled=3)
    assert moves(s) == [("track:10", "track:13"), ("track:30", "track:33")]
    s = play(s, move("ana", "track:30"))
    assert where(s, "bo")[-1] == "track:13"


def test_several_bottles_on_one_square_are_taken_at_once():
    """« Plusieurs bouteilles peuvent être prises à la fois lorsqu'elles sont placées
    sur la même case, uniquement si elles sont situées sur la piste circulaire. »
    (several bottles on one square are all taken at once, only on the track)."""
    s = position({"ana": ["track:10"], "bo": ["track:14", "track:14", "track:14"]}, rolled=4)
    s = play(s, move("ana", "track:10", "track:14", {"bo": 3}))
    assert where(s, "bo") == ["casier"] * 4
    assert G.describe(G.public_view(s)["last_move"] | {"type": "move"}).endswith(
        "takes 3 of bo's bottles")


def test_the_start_zone_and_the_corridor_are_safe():
    """« Les bouteilles placées sur la zone de départ ou sur le couloir d'arrivée ne
    peuvent pas être prises. » (bottles on a start zone or in a home corridor
    cannot be taken). bo lands on ana's start square and runs past the mouth of
    ana's corridor: only the bottles on the track are taken."""
    s = position({"ana": ["start", "track:0", "track:0", "corridor:2"], "bo": ["track:54"]},
                 turn="bo", rolled=2)
    assert G.decisions(s) == [move("bo", "track:54", "track:0", {"ana": 2})]
    s = play(s, move("bo", "track:54"))
    assert where(s, "ana") == ["casier", "casier", "corridor:2", "start"]
    assert where(s, "bo")[-1] == "track:0"


# -- the home corridor -----------------------------------------------------------------------
def test_a_full_lap_then_up_the_corridor():
    """« Chaque bouteille doit faire un tour de piste avant d'atteindre l'arrivée. Le
    joueur emprunte le couloir d'arrivée perpendiculaire à la piste » (a full lap of
    the track, then into the home corridor). ana's lap ends on square 55, bo's on 27:
    bo runs past ana's corridor, ana turns into it."""
    s = position({"ana": ["track:52"], "bo": ["track:26"]}, rolled=5)
    assert moves(s) == [("track:52", "corridor:2")]
    s = play(s, move("ana", "track:52"), roll("bo", 4))
    assert moves(s) == [("track:26", "corridor:3")]
    s = position({"bo": ["track:52"]}, turn="bo", rolled=5)
    assert moves(s) == [("track:52", "track:1")]


def test_the_finish_needs_the_exact_count():
    """« ... et doit réussir à tomber exactement sur la zone d'arrivée centrale de sa
    couleur. » (the bottle must land exactly on the central finish)."""
    s = position({"ana": ["corridor:4", "track:20"]}, rolled=3)
    assert ("corridor:4", "home") in moves(s)
    s = play(s, move("ana", "corridor:4", "home"))
    assert G.scores(s) == {"ana": 1, "bo": 0}
    assert where(s, "ana") == ["casier", "casier", "home", "track:20"]


def test_bottles_in_the_corridor_share_squares_but_do_not_pass():
    """« Plusieurs bouteilles peuvent être rentrées dans le couloir. Les bouteilles
    peuvent être placées sur la même case, mais ne peuvent pas se dépasser. »
    (several bottles may be in the corridor, share a square, never pass each other)."""
    s = position({"ana": ["corridor:1", "corridor:3"]}, rolled=2)
    assert moves(s) == [("corridor:1", "corridor:3"), ("corridor:3", "corridor:5")]
    s = position({"ana": ["corridor:1", "corridor:3"]}, rolled=3)
    assert moves(s) == [("corridor:3", "corridor:6")]
    refused(s, move("ana", "corridor:1"), "ne peuvent pas se dépasser", "corridor:3")
    s = position({"ana": ["corridor:3", "corridor:3"]}, rolled=1)
    s = play(s, move("ana", "corridor:3"))
    assert where(s, "ana") == ["casier", "casier", "corridor:3", "corridor:4"]


def test_no_passing_at_the_mouth_of_the_corridor():
    """« Il n'est pas autorisé à dépasser son adversaire. » and « ne peuvent pas se
    dépasser » at the corridor's mouth: an opponent on the last square of the lap
    bars the way in (landing on it takes it); so does one's own bottle inside."""
    s = position({"ana": ["track:53"], "bo": ["track:55"]}, rolled=4)
    assert G.decisions(s) == [{"type": "pass", "player": "ana"}]
    refused(s, move("ana", "track:53"), "dépasser son adversaire", "track:55")
    s = position({"ana": ["track:53"], "bo": ["track:55"]}, rolled=2)
    assert G.decisions(s) == [move("ana", "track:53", "track:55", {"bo": 1})]
    s = position({"ana": ["track:55", "corridor:1"]}, rolled=3)
    assert moves(s) == [("corridor:1", "corridor:4")]
    s = position({"ana": ["track:55", "corridor:1"]}, rolled=1)
    assert ("track:55", "corridor:1") in moves(s)


def test_corridor_bottles_cannot_be_taken():
    """« Les bouteilles situées dans le couloir ne peuvent pas être mangées par
    l'adversaire. » (bottles in the corridor cannot be eaten)."""
    s = position({"ana": ["corridor:1", "corridor:1"], "bo": ["track:53"]}, turn="bo", rolled=6)
    s = play(s, move("bo", "track:53", "track:3", {}))
    assert where(s, "ana") == ["casier", "casier", "corridor:1", "corridor:1"]


def test_a_larger_roll_goes_to_the_finish_and_back_down():
    """« Si le joueur tire un nombre plus élevé que le nombre de cases qui lui reste à
    parcourir pour atteindre l'arrivée, le joueur avance d'abord sa bouteille jusqu'à
    la zone d'arrivée puis recule ensuite dans le couloir. » (a roll larger than the
    count left goes up to the finish, then back down the corridor)."""
    s = position({"ana": ["corridor:4"]}, rolled=5)     # 3 to the finish, 2 back
    assert moves(s) == [("corridor:4", "corridor:5")]
    s = play(s, move("ana", "corridor:4"))
    last = G.public_view(s)["last_move"]
    assert last["path"] == ["corridor:5", "corridor:6", "home", "corridor:6", "corridor:5"]
    assert last["bounce"] is True
    assert G.scores(s) == {"ana": 0, "bo": 0}


def test_a_bounce_may_come_back_out_onto_the_track_and_take():
    """« En reculant, la bouteille peut ressortir du couloir. Le joueur retourne alors
    sur ses pas en ressortant à gauche du couloir. Il peut à ce moment manger la
    bouteille d'un adversaire. » (backing down, the bottle may leave the corridor,
    retracing its steps out to the left, and may take an opponent there). On a board
    with a 3-square corridor: from corridor:3 a 6 goes home, back down the corridor
    and out onto squares 55 then 54, where bo's two bottles are taken."""
    s = position({"ana": ["corridor:3", "home", "home", "home"],
                  "bo": ["track:54", "track:54", "track:40"]}, rolled=6, board=SHORT)
    assert G.decisions(s) == [move("ana", "corridor:3", "track:54", {"bo": 2})]
    s = play(s, move("ana", "corridor:3", "track:54", {"bo": 2}))
    assert G.public_view(s)["last_move"]["path"] == [
        "home", "corridor:3", "corridor:2", "corridor:1", "track:55", "track:54"]
    assert where(s, "bo") == ["casier", "casier", "casier", "track:40"]
    assert where(s, "ana") == ["home", "home", "home", "track:54"]
    assert G.scores(s)["ana"] == 3


def test_a_bottle_back_on_the_track_can_be_taken_again():
    """« Il peut également se faire manger tant qu'il reste sur la piste. » (it can be
    taken again as long as it stays on the track); and it must come round again."""
    s = position({"ana": ["corridor:3"], "bo": ["track:50"]}, rolled=6, board=SHORT)
    s = play(s, move("ana", "corridor:3", "track:54"), roll("ana", 4))
    assert moves(s) == [("track:54", "corridor:3")]      # back in, counting from 54
    s = position({"ana": ["corridor:3", "track:10"], "bo": ["track:50"]}, rolled=6,
                 board=SHORT)
    s = play(s, move("ana", "corridor:3"), roll("ana", 3), move("ana", "track:10"),
             roll("bo", 4))
    assert G.decisions(s) == [move("bo", "track:50", "track:54", {"ana": 1})]
    s = play(s, move("bo", "track:50"))
    assert where(s, "ana") == ["casier", "casier", "casier", "track:13"]


def test_a_bounce_does_not_pass_an_opponent_on_the_way_out():
    """« Il n'est pas autorisé à dépasser son adversaire. » — also when backing out of
    the corridor (reading): an opponent on square 55 stops a bounce that would end
    on 54; landing on 55 takes it."""
    s = position({"ana": ["corridor:3", "home", "home", "home"], "bo": ["track:55"]},
                 rolled=6, board=SHORT)
    assert G.decisions(s) == [{"type": "pass", "player": "ana"}]
    s = position({"ana": ["corridor:3"], "bo": ["track:55"]}, rolled=5, board=SHORT)
    assert G.decisions(s) == [move("ana", "corridor:3", "track:55", {"bo": 1})]


def test_on_the_default_board_a_bounce_stays_in_the_corridor():
    """On the assumed 6-square corridor the longest bounce (a 6 from corridor:6)
    ends on corridor:2: coming back out needs a corridor of 4 squares or fewer."""
    s = play(position({"ana": ["corridor:6"]}, rolled=6), move("ana", "corridor:6"))
    assert where(s, "ana")[-1] == "corridor:2"


# -- the end ---------------------------------------------------------------------------------
def test_a_finished_bottle_goes_back_to_the_casier_upside_down():
    """« Quand le joueur atteint l'arrivée, il replace la bouteille vide dans son
    casier, la tête en bas. » (a finished bottle goes back in the rack upside down:
    home for good, never taken out again)."""
    s = position({"ana": ["home", "track:3"]}, rolled=6)
    assert moves(s) == [("casier", "start"), ("track:3", "track:9")]
    refused(s, move("ana", "home"), "tête en bas")
    view = G.public_view(s)["players"][0]
    assert view["counts"] == {"casier": 2, "start": 0, "track": 1, "corridor": 0, "home": 1}


def test_the_first_with_all_four_bottles_home_wins():
    """« Objectif: Le gagnant est celui qui aura rentré le premier ses 4 bouteilles. »
    (the winner is the first to bring all 4 bottles home). Reading: the others rank by
    bottles home, then by the distance they still have to go."""
    s = position({"ana": ["home", "home", "home", "corridor:6"],
                  "bo": ["home", "home", "track:10", "track:20"],
                  "cy": ["home", "home", "track:21", "track:30"]},
                 players=TRIO, rolled=1)
    s = play(s, move("ana", "corridor:6", "home"))
    assert G.finished(s) and G.public_view(s)["winner"] == "ana"
    assert G.current_player(s) is None and G.chance_outcomes(s) == [] and G.decisions(s) == []
    assert G.scores(s) == {"ana": 4, "bo": 2, "cy": 2}
    # cy's bottles on squares 21 and 30 (from start 28: 13 + 60 to go) have further to
    # go than bo's on 10 and 20 (from start 14: 10 + 56)
    assert G.ranking(s) == [["ana"], ["bo"], ["cy"]]
    refused(s, roll("ana", 3), "over")


def test_equal_bottles_and_distance_share_a_place():
    s = position({"ana": ["home", "home", "home", "corridor:6"], "bo": ["home"], "cy": ["home"]},
                 players=TRIO, rolled=1)
    s = play(s, move("ana", "corridor:6", "home"))
    assert G.ranking(s) == [["ana"], ["bo", "cy"]]


# -- views and the log --------------------------------------------------------------------
def test_the_public_view_shows_every_bottle_and_the_last_move():
    s = position({"ana": ["start", "track:3", "corridor:2", "home"], "bo": ["track:9"]},
                 rolled=4)
    view = G.public_view(s)
    assert view["roll"] == 4 and view["last_roll"] == {"player": "ana", "value": 4,
                                                        "opening": False}
    ana = view["players"][0]
    assert [b["where"] for b in ana["bottles"]] == ["start", "track", "corridor", "home"]
    assert ana["bottles"][1]["square"] == 3 and ana["bottles"][2]["square"] == 2
    assert ana["mouth_square"] == 55 and view["players"][1]["mouth_square"] == 27
    assert view["board"]["colours"][1] == {"name": "blue", "start": 14, "mouth": 13}
    assert view["moves"] == G.decisions(s)
    s = play(s, move("ana", "track:3"))
    assert G.public_view(s)["last_move"]["path"] == ["track:4", "track:5", "track:6", "track:7"]
    json.dumps(G.public_view(s))
    assert G.host_view(s) == G.public_view(s)


def test_describe_reads_like_the_table():
    assert G.describe(roll("ana", 6)) == "ana rolls a 6"
    assert G.describe(move("ana", "casier", "start", {})) == "ana: casier → start zone"
    assert G.describe(move("bo", "track:3", "track:9", {"ana": 1})) == \
        "bo: square 3 → square 9, takes ana's bottle"
    assert G.describe({"type": "pass", "player": "cy"}) == "cy is blocked and passes"


def test_the_example_game_replays_to_its_winner():
    lines = (ROOT / "docs" / "examples" / "chopote.jsonl").read_text().splitlines()
    rep = replay_lines(lines)
    assert G.finished(rep.state)
    first = json.loads(next(line for line in lines if line.startswith("{")))
    assert rep.game.name == "chopote" and rep.players == first["players"]
    winner = G.public_view(rep.state)["winner"]
    assert G.ranking(rep.state)[0] == [winner]
    assert G.scores(rep.state)[winner] == 4
    kinds = [e["type"] for e in rep.events]
    assert "pass" in kinds and any(e.get("captures") for e in rep.events)
    assert any("undo" in line for line in lines)


# -- random play to the end -----------------------------------------------------------------
# -- steps the tracker takes by itself (issue 23) ---------------------------------------------
def test_a_blocked_roll_passes_by_itself_and_logging_the_pass_anyway_is_that_step():
    """« Le joueur ne passe son tour que dans une situation de blocage »: with no
    move, there is nothing to choose, so the roll alone passes (one host tap)."""
    s = play(position({}), roll("ana", 3))              # all in the casier: blocked
    assert G.current_player(s) == "bo" and s["forced"] == {"type": "pass", "player": "ana"}
    assert G.public_view(s)["last_move"]["forced"] is True
    same = play(s, {"type": "pass", "player": "ana"})     # an old console logs it anyway
    assert G.public_view(same) == G.public_view(s) and same["forced"] is None
    refused(same, {"type": "pass", "player": "ana"}, "bo's turn")     # but only once
    s = play(position({}), roll("ana", 6))               # a 6 brings a bottle out: a move
    assert s["forced"] is None and moves(s) == [("casier", "start")]
    s = play(position({"ana": ["track:10"]}), roll("ana", 3))
    assert moves(s) == [("track:10", "track:13")]        # one move: still the host's tap
