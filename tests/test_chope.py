"""Chope! tracker: one scenario per rule of the rulebook, then random play.

The scenarios are written from the rulebook (rules/000_d00fafb888086ab1.txt);
the readings where it is silent are in docs/rules-notes.md (Chope!).
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from companion.games import RulesError, get_game
from companion.games.chope import DATA, best_seating
from companion.record.gamefile import replay_lines
from tests.kit.conformance import play_random

G = get_game("chope")
ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["ana", "bo", "cy"]          # colours by default: red, blue, green
SMALL = {
    "tables": {"red": 2, "blue": 2, "green": 2},
    "mynahs": 2,
    "foods": {"laksa": {"kind": "main", "copies": 3}, "biryani": {"kind": "main", "copies": 3},
              "satay": {"kind": "side", "copies": 3}, "otah": {"kind": "side", "copies": 2}},
    "favourite_cards": ["laksa", "biryani", "satay", "otah"],
}
LAKSA, BIRYANI, SATAY, OTAH = "food:laksa", "food:biryani", "food:satay", "food:otah"
RED, BLUE, GREEN = "table:red", "table:blue", "table:green"
KINDS = {"laksa": "main", "biryani": "main", "satay": "side", "otah": "side"}


def new(players=PLAYERS, **options):
    return G.setup(list(players), {**copy.deepcopy(SMALL), **options})


def play(state, *events):
    for ev in events:
        state = G.apply(state, ev)
        G.check_invariants(state)
    return state


def flip(card):
    return {"type": "flip", "card": card}


STOP = {"type": "stop"}


def chope(winner=None, tied=()):
    return {"type": "race", "reason": "chope", "winner": winner, "loser": None,
            "tied": list(tied), "false_starts": [], "ineligible": []}


def siam(loser=None, tied=()):
    return {"type": "race", "reason": "siam", "winner": None, "loser": loser,
            "tied": list(tied), "false_starts": [], "ineligible": []}


def give(state, player, *cards):
    """Test shortcut: move cards from the deck straight into a scoring area."""
    state = copy.deepcopy(state)
    for c in cards:
        state["deck"][c] -= 1
        state["hands"][player]["tables" if c.startswith("table:") else "food"].append(c)
    G.check_invariants(state)
    return state


def player(state, name):
    return next(p for p in G.public_view(state)["players"] if p["name"] == name)


# -- setup ---------------------------------------------------------------------
def test_setup_shuffles_tables_mynahs_and_food_into_the_hawker_centre_deck():
    s = G.setup(["ana", "bo"])
    view = G.public_view(s)
    assert view["deck_left"]["count"] == 24 + 8 + 60
    left = view["deck_left"]["cards"]
    assert sum(n for c, n in left.items() if c.startswith("table:")) == 24
    assert left["mynah"] == 8 and sum(DATA["foods"][f]["copies"] for f in DATA["foods"]) == 60
    assert [p["colour"] for p in view["players"]] == ["red", "orange"]
    assert view["current_player"] == "ana" and view["face_up"] == []
    assert G.scores(s) == {"ana": 0, "bo": 0}


def test_setup_host_sets_colours_starting_player_and_component_counts():
    s = new(colours={"cy": "red"}, starting_player="bo")
    view = G.public_view(s)
    assert {p["name"]: p["colour"] for p in view["players"]} == {
        "ana": "blue", "bo": "green", "cy": "red"}
    assert view["current_player"] == "bo" and view["deck_left"]["count"] == 6 + 2 + 11


@pytest.mark.parametrize("players,options", [
    (["ana"], {}),                                               # 2-6 players
    (["a", "b", "c", "d", "e", "f", "g"], {}),
    (PLAYERS, {"colours": {"ana": "red", "bo": "red"}}),         # one colour each
    (PLAYERS, {"colours": {"ana": "pink"}}),
    (PLAYERS, {"starting_player": "zed"}),
    (PLAYERS, {"mynahs": -1}),
    (PLAYERS, {"foods": {"laksa": {"kind": "dessert", "copies": 2}}}),
    (PLAYERS, {"tables": {}, "mynahs": 0, "foods": {}}),         # empty deck
    (PLAYERS, {"siam_tie": "everyone"}),
    (PLAYERS, {"unmatched_food_scores": 1}),
    (PLAYERS, {"favourite_food": True, "favourite_cards": ["durian"]}),
    (PLAYERS, {"no_such_option": 1}),
])
def test_setup_rejects_what_the_components_cannot_give(players, options):
    with pytest.raises(RulesError):
        G.setup(players, {**SMALL, **options})


# -- game turn -----------------------------------------------------------------
def test_stop_claims_all_face_up_food_and_passes_clockwise():
    s = play(new(), flip(LAKSA), flip(SATAY))
    assert G.public_view(s)["face_up"] == [LAKSA, SATAY]
    assert {"type": "stop"} in G.legal_events(s)
    s = play(s, STOP)
    assert player(s, "ana")["food"] == [LAKSA, SATAY]
    assert G.public_view(s)["face_up"] == [] and G.current_player(s) == "bo"
    s = play(s, flip(OTAH), STOP, flip(BIRYANI), STOP)
    assert G.current_player(s) == "ana"


def test_stop_needs_at_least_one_flip_this_turn():
    with pytest.raises(RulesError, match="flip at least one"):
        G.apply(new(), STOP)
    assert STOP not in G.legal_events(new())


def test_bust_discards_all_but_one_face_up_food_of_the_players_choice():
    s = play(new(), flip(LAKSA), flip(SATAY), flip(BIRYANI), flip(LAKSA))
    view = G.public_view(s)
    assert view["pending"]["kind"] == "keep" and view["pending"]["player"] == "ana"
    assert G.legal_events(s) == [{"type": "keep", "card": c} for c in (BIRYANI, LAKSA, SATAY)]
    with pytest.raises(RulesError, match="bust"):
        G.apply(s, flip(OTAH))
    with pytest.raises(RulesError, match="ONE"):
        G.apply(s, {"type": "keep", "card": OTAH})
    s = play(s, {"type": "keep", "card": SATAY})
    view = G.public_view(s)
    assert player(s, "ana")["food"] == [SATAY]      # reading: the kept card is claimed
    assert view["face_up"] == [] and view["discard"]["count"] == 3
    assert view["current_player"] == "bo"             # reading: a bust ends the turn


def test_bust_with_only_one_food_type_face_up_keeps_it_without_asking():
    s = play(new(), flip(LAKSA), flip(LAKSA))
    assert player(s, "ana")["food"] == [LAKSA] and G.current_player(s) == "bo"
    assert G.public_view(s)["discard"]["cards"] == {LAKSA: 1}


def test_bust_setting_kept_card_stays_face_up_for_the_next_player():
    s = play(new(bust_kept_card="stays"), flip(LAKSA), flip(SATAY), flip(SATAY),
             {"type": "keep", "card": LAKSA})
    assert player(s, "ana")["food"] == [] and G.public_view(s)["face_up"] == [LAKSA]
    assert G.current_player(s) == "bo" and STOP not in G.legal_events(s)
    s = play(s, flip(OTAH), STOP)
    assert player(s, "bo")["food"] == [LAKSA, OTAH]


def test_bust_setting_turn_goes_on_after_a_bust():
    s = play(new(bust_ends_turn=False), flip(LAKSA), flip(LAKSA))
    assert G.current_player(s) == "ana" and player(s, "ana")["food"] == [LAKSA]
    s = play(s, flip(SATAY), STOP)
    assert player(s, "ana")["food"] == [LAKSA, SATAY]


def test_bust_odds_count_remaining_food_of_face_up_types_over_cards_left():
    s = play(new(), flip(LAKSA), flip(SATAY))          # 19 cards, 2 gone
    odds = G.public_view(s)["bust_odds"]
    assert odds == {"cards": 2 + 2, "of": 17, "probability": round(4 / 17, 4)}
    assert G.public_view(new())["bust_odds"]["cards"] == 0


# -- table cards: chope --------------------------------------------------------
def test_table_card_first_other_player_to_chope_takes_it():
    s = play(new(), flip(LAKSA), flip(RED))
    req = G.race_request(s)
    assert (req.kind, req.eligible, req.reason, req.announced) == (
        "first-press", ("bo", "cy"), "chope", False)
    assert G.current_player(s) is None and G.public_view(s)["pending"]["card"] == RED
    with pytest.raises(RulesError, match="race"):
        G.apply(s, flip(SATAY))
    s = play(s, chope("cy"))
    assert player(s, "cy")["tables"] == [RED] and G.race_request(s) is None
    assert G.current_player(s) == "ana" and G.public_view(s)["face_up"] == [LAKSA]


def test_table_card_cannot_be_choped_by_the_player_who_flipped_it():
    s = play(new(), flip(RED))
    assert chope("ana") not in G.legal_events(s)
    with pytest.raises(RulesError, match="OTHER"):
        G.apply(s, chope("ana"))
    with pytest.raises(RulesError, match="siam"):
        G.apply(s, siam("bo"))


def test_a_false_starter_let_back_in_by_the_lockout_may_chope():
    """The referee's lockout setting lets a false starter win (rules notes,
    races); the tracker takes the referee's word for it."""
    from companion.races.edges import Edge
    from companion.races.referee import MS, RaceSpec, judge

    s = play(new(), flip(RED))
    req = G.race_request(s)
    spec = RaceSpec(req.kind, tuple(s["players"]), req.eligible, arm_ns=100 * MS,
                    lockout_ns=50 * MS)
    v = judge(spec, [Edge("bo", True, 90 * MS), Edge("bo", False, 95 * MS),
                     Edge("bo", True, 200 * MS), Edge("cy", True, 300 * MS)]).to_json()
    assert v["winner"] == "bo" and v["false_starts"] == ["bo"]
    s = G.apply(s, {"type": "race", "reason": "chope", **v})
    assert "table:red" in G.public_view(s)["players"][1]["tables"]


@pytest.mark.parametrize("verdict, message", [
    (chope(tied=["bo"]), "two or more"),
    ({**chope("cy", tied=["ana", "bo"])}, "not both"),
    ({**chope("cy"), "ineligible": ["cy"]}, "both the winner and ineligible"),
    ({**chope("cy"), "loser": "ana"}, "never a loser"),
    (chope(tied=["ana", "bo"]), "two or more players of the race"),
    ({**chope("cy"), "ineligible": ["bo"]}, "cannot be ineligible"),
])
def test_a_chope_verdict_the_referee_cannot_give_is_refused(verdict, message):
    s = play(new(), flip(RED))
    with pytest.raises(RulesError, match=message):
        G.apply(s, verdict)


@pytest.mark.parametrize("verdict, message", [
    ({**siam(), "winner": "ana"}, "never a winner"),
    (siam(tied=["ana"]), "two or more"),
    ({**siam("bo", tied=["ana", "cy"])}, "not both"),
])
def test_a_siam_verdict_the_referee_cannot_give_is_refused(verdict, message):
    s = play(new(), flip("mynah"))
    with pytest.raises(RulesError, match=message):
        G.apply(s, verdict)


@pytest.mark.parametrize("verdict", [chope(tied=["bo", "cy"]), chope()])
def test_table_card_tied_chope_or_nobody_choping_discards_it(verdict):
    s = play(new(), flip(RED), verdict)
    assert G.public_view(s)["discard"]["cards"] == {RED: 1}
    assert all(not p["tables"] for p in G.public_view(s)["players"])


# -- mynah cards: siam ---------------------------------------------------------
def test_mynah_last_player_to_siam_loses_the_type_they_have_less_of():
    s = give(new(), "bo", RED, BLUE, LAKSA, LAKSA, SATAY)
    s = play(s, flip(OTAH), flip("mynah"))
    req = G.race_request(s)
    assert (req.kind, req.eligible, req.reason) == ("last-press", ("ana", "bo", "cy"), "siam")
    s = play(s, siam("bo"))
    assert G.public_view(s)["pending"]["options"] == [BLUE, RED]
    assert G.current_player(s) == "bo"
    with pytest.raises(RulesError, match="LESS"):
        G.apply(s, {"type": "lose", "player": "bo", "card": LAKSA})
    with pytest.raises(RulesError):
        G.apply(s, {"type": "lose", "player": "cy", "card": RED})
    s = play(s, {"type": "lose", "player": "bo", "card": BLUE})
    assert player(s, "bo")["tables"] == [RED]
    assert G.public_view(s)["discard"]["cards"] == {BLUE: 1, "mynah": 1}
    assert G.current_player(s) == "ana" and G.public_view(s)["face_up"] == [OTAH]


def test_mynah_loser_with_equal_tables_and_food_chooses_either():
    """'They lose the type, either Table or Food, that they have LESS of (of
    their choose if equal).' The console's line says the choice is theirs."""
    s = play(give(new(), "cy", RED, LAKSA), flip("mynah"), siam("cy"))
    assert G.legal_events(s) == [{"type": "lose", "player": "cy", "card": c}
                                 for c in (LAKSA, RED)]
    rule = G.public_view(s)["pending"]["rule"]
    assert "of their choice if equal" in rule and "cy chooses" in rule


def test_a_table_race_names_its_flipper_who_cannot_chope():
    """'all other players may reserve the table ... The first player to do so
    must take that Table card': the flipper is named so that a table that
    arms races with the flipper's buzzer knows whose it is."""
    s = play(new(), flip(RED))
    req = G.race_request(s)
    assert req.info["flipper"] == "ana" and "ana" not in req.eligible


def test_mynah_loser_with_only_one_type_loses_that_type_by_default():
    s = play(give(new(), "bo", SATAY, OTAH), flip("mynah"), siam("bo"))
    assert G.public_view(s)["pending"]["options"] == [OTAH, SATAY]
    spared = play(give(new(siam_empty_type="spared"), "bo", SATAY, OTAH), flip("mynah"),
                  siam("bo"))
    assert player(spared, "bo")["food"] == [SATAY, OTAH]
    assert G.public_view(spared)["discard"]["cards"] == {"mynah": 1}


def test_mynah_loser_with_no_cards_takes_it_and_loses_a_card_next_time_they_gain_any():
    s = play(new(), flip("mynah"), siam("bo"))
    assert player(s, "bo")["mynahs"] == 1 and player(s, "bo")["mynah_debt"] == 1
    assert G.public_view(s)["discard"]["count"] == 0
    s = play(s, flip(RED), chope("bo"))              # gains one card: forced to lose it
    assert player(s, "bo")["tables"] == [] and player(s, "bo")["mynahs"] == 0
    assert player(s, "bo")["mynah_debt"] == 0
    assert G.public_view(s)["discard"]["cards"] == {RED: 1, "mynah": 1}


def test_mynah_debt_is_paid_with_a_card_of_the_debtors_choice():
    s = play(new(), flip("mynah"), siam("bo"), flip(SATAY), STOP,
             flip(LAKSA), flip(OTAH), STOP)
    assert G.public_view(s)["pending"] == {
        "kind": "lose", "player": "bo", "why": "debt", "options": [LAKSA, OTAH],
        "rule": "bo owes a card for a Mynah: lose a Table or Food card"}
    with pytest.raises(RulesError):
        G.apply(s, flip(BIRYANI))
    s = play(s, {"type": "lose", "player": "bo", "card": OTAH})
    assert player(s, "bo")["food"] == [LAKSA] and G.current_player(s) == "cy"


@pytest.mark.parametrize("verdict", [siam(tied=["bo", "cy"]), siam()])
def test_mynah_tie_for_last_or_no_loser_nobody_loses_by_default(verdict):
    s = play(give(new(), "bo", RED), flip("mynah"), verdict)
    assert player(s, "bo")["tables"] == [RED]
    assert G.public_view(s)["discard"]["cards"] == {"mynah": 1}


def test_mynah_tie_setting_all_tied_players_lose():
    s = play(give(new(siam_tie="all"), "bo", RED), flip("mynah"), siam(tied=["bo", "cy"]))
    assert player(s, "bo")["tables"] == []                   # forced loss
    assert player(s, "cy")["mynahs"] == 1 and player(s, "cy")["mynah_debt"] == 1
    assert G.public_view(s)["discard"]["cards"] == {RED: 1}  # the Mynah went to cy


# -- end of game ---------------------------------------------------------------
def tiny(**options):
    foods = {"laksa": {"kind": "main", "copies": 2}, "satay": {"kind": "side", "copies": 1}}
    return G.setup(["ana", "bo"], {"tables": {"red": 1, "blue": 1}, "mynahs": 0,
                                   "foods": foods, **options})


def test_end_when_deck_runs_out_last_player_takes_the_cards_last_drawn():
    s = play(tiny(), flip(LAKSA), STOP, flip(RED), chope("ana"), flip(SATAY), flip(BLUE))
    assert not G.finished(s)                         # the race for the last card first
    s = play(s, chope("ana"), flip(LAKSA))
    assert player(s, "bo")["food"] == [SATAY, LAKSA]  # claimed without a stop
    assert G.finished(s) and G.legal_events(s) == [] and G.current_player(s) is None
    with pytest.raises(RulesError, match="over"):
        G.apply(s, STOP)


def test_end_a_bust_on_the_last_card_is_still_a_bust():
    s = play(tiny(), flip(RED), chope("bo"), flip(BLUE), chope("bo"),
             flip(LAKSA), flip(SATAY), flip(LAKSA), {"type": "keep", "card": SATAY})
    assert G.finished(s) and player(s, "ana")["food"] == [SATAY]


# -- scoring -------------------------------------------------------------------
def seat(tables, food, colour="red", **kw):
    return best_seating(tables, food, colour, KINDS, **kw)


def test_scoring_each_table_scores_exactly_one_main_and_optionally_one_side():
    r = seat([BLUE], [LAKSA, SATAY, OTAH])
    assert (r["total"], r["food"], r["tables_used"]) == (2, 2, 1)
    assert r["plates"] == [{"table": BLUE, "main": LAKSA, "side": SATAY}]
    assert seat([BLUE, GREEN], [LAKSA, BIRYANI, SATAY])["total"] == 3


def test_scoring_a_table_with_only_sides_is_unmatched_and_scores_minus_one():
    r = seat([BLUE, GREEN], [SATAY, OTAH])
    assert (r["total"], r["leftover_tables"], r["food"]) == (-2, -2, 0)


def test_scoring_table_in_own_colour_gains_one_additional_point():
    assert seat([RED, BLUE], [LAKSA])["total"] == 1 + 1 - 1      # own colour seated first
    assert seat([RED], [])["total"] == -1                         # unused: no bonus
    assert seat([RED], [], own_colour_bonus="any")["total"] == 0  # setting


def test_scoring_unmatched_food_scores_nothing_unless_the_setting_says_so():
    assert seat([], [LAKSA, SATAY])["total"] == 0
    assert seat([], [LAKSA, SATAY], unmatched_food_scores=True)["total"] == 2
    assert seat([BLUE], [SATAY], unmatched_food_scores=True)["total"] == 0


def brute_force_seating(tables, food, colour, bonus, unmatched):
    """Every assignment of each food card to a table (or none) the rulebook allows."""
    best = None
    for slots in itertools.product(range(-1, len(tables)), repeat=len(food)):
        mains, sides = Counter(), Counter()
        for f, t in zip(food, slots):
            if t >= 0:
                (mains if KINDS[f[5:]] == "main" else sides)[t] += 1
        if max([*mains.values(), *sides.values(), 0]) > 1 or set(sides) - set(mains):
            continue
        pts = len(food) if unmatched else sum(mains.values()) + sum(sides.values())
        pts += sum(t == f"table:{colour}" and (i in mains or bonus == "any")
                   for i, t in enumerate(tables))
        pts -= len(tables) - len(mains)
        best = pts if best is None else max(best, pts)
    return best


def test_scoring_optimiser_finds_the_best_assignment_brute_force():
    checked = 0
    for nt in range(4):
        for tables in itertools.combinations_with_replacement([RED, BLUE], nt):
            for nf in range(5):
                for food in itertools.combinations_with_replacement([LAKSA, BIRYANI, SATAY], nf):
                    for bonus, unmatched in itertools.product(("matched", "any"), (False, True)):
                        r = seat(list(tables), list(food), own_colour_bonus=bonus,
                                 unmatched_food_scores=unmatched)
                        assert r["total"] == brute_force_seating(
                            tables, food, "red", bonus, unmatched), (tables, food, bonus)
                        # the plates shown are a real assignment of the player's cards
                        plated = [p["table"] for p in r["plates"]]
                        on = [p["main"] for p in r["plates"]] + [
                            p["side"] for p in r["plates"] if p["side"]]
                        assert not Counter(plated) - Counter(tables)
                        assert not Counter(on) - Counter(food)
                        assert all(KINDS[p["main"][5:]] == "main" for p in r["plates"])
                        assert all(KINDS[p["side"][5:]] == "side" for p in r["plates"] if p["side"])
                        assert r["food_seated"] == len(on)
                        checked += 1
    assert checked == 10 * 35 * 4


def test_scoring_running_score_is_what_final_scoring_would_give_now():
    s = play(new(), flip(LAKSA), flip(SATAY), STOP, flip(RED), chope("ana"), flip(BLUE),
             chope("ana"))
    detail = player(s, "ana")["score_detail"]
    assert G.scores(s)["ana"] == 2 + 1 - 1 == player(s, "ana")["score"]
    assert detail["plates"] == [{"table": RED, "main": LAKSA, "side": SATAY}]
    assert (detail["own_colour"], detail["leftover_tables"]) == (1, -1)


def test_tie_goes_to_the_player_with_most_table_cards():
    s = play(tiny(unmatched_food_scores=True), flip(BLUE), chope("bo"),
             flip(LAKSA), flip(SATAY), STOP, flip(LAKSA), STOP, flip(RED), chope())
    assert G.finished(s) and G.scores(s) == {"ana": 2, "bo": 2}
    assert G.ranking(s) == [["bo"], ["ana"]]


def test_tie_on_points_and_tables_is_shared_play_again():
    s = play(tiny(foods={"laksa": {"kind": "main", "copies": 2}}), flip(BLUE), chope("bo"),
             flip(LAKSA), STOP, flip(RED), chope("ana"), flip(LAKSA))
    assert G.finished(s) and G.scores(s) == {"ana": 2, "bo": 2}
    assert G.ranking(s) == [["ana", "bo"]]


# -- favourite food variant ----------------------------------------------------
def dealt(fav_ana, fav_bo, fav_cy):
    return play(new(favourite_food=True),
                *[{"type": "favourite", "player": p, "food": f}
                  for p, f in zip(PLAYERS, (fav_ana, fav_bo, fav_cy))])


def test_favourite_food_each_player_gets_a_card_before_the_first_flip():
    s = new(favourite_food=True)
    with pytest.raises(RulesError, match="My Favourite"):
        G.apply(s, flip(LAKSA))
    assert {e["type"] for e in G.legal_events(s)} == {"favourite"}
    assert G.public_view(s)["pending"] == {"kind": "favourites", "waiting": PLAYERS}
    s = play(s, {"type": "favourite", "player": "bo", "food": "laksa"})
    with pytest.raises(RulesError, match="one"):
        G.apply(s, {"type": "favourite", "player": "bo", "food": "satay"})
    with pytest.raises(RulesError, match="variant"):
        G.apply(new(), {"type": "favourite", "player": "bo", "food": "satay"})


def test_favourite_food_stays_secret_until_the_end():
    events = [flip(LAKSA), flip(SATAY), STOP, flip(RED), chope("ana"), flip(LAKSA), STOP]
    a, b = dealt("laksa", "otah", "satay"), dealt("satay", "laksa", "biryani")
    for ev in [None] + events:
        if ev:
            a, b = G.apply(a, ev), G.apply(b, ev)
        # the whole table (host included) sees the same thing whoever holds what
        assert G.public_view(a) == G.public_view(b)
        assert G.host_view(a) == G.host_view(b)
        assert G.scores(a) == G.scores(b) and G.legal_events(a) == G.legal_events(b)
    assert player(a, "ana")["favourite_dealt"] and player(a, "ana")["favourite"] is None
    assert G.describe({"type": "favourite", "player": "ana", "food": "laksa"}) == \
        G.describe({"type": "favourite", "player": "ana", "food": "otah"})


def test_favourite_food_only_its_holder_sees_it_on_their_private_page():
    s = dealt("laksa", "otah", "satay")
    s = play(s, flip(LAKSA), STOP)
    assert G.hidden_information
    assert G.private_view(s, "ana") == {"favourite": "laksa", "favourite_name": "Laksa",
                                        "favourite_points": 1}
    assert G.private_view(s, "bo")["favourite"] == "otah"
    assert G.private_view(s, "zed") == {} and G.private_view(new(), "ana") == {}
    assert all(p["favourite"] is None for p in G.public_view(s)["players"])
    assert G.host_view(s) == G.host_view(play(dealt("otah", "satay", "laksa"), flip(LAKSA), STOP))


def test_favourite_food_each_player_logs_their_own_card():
    s = new(favourite_food=True)
    assert G.private_events(s, "bo") == [{"type": "favourite", "player": "bo", "food": f}
                                         for f in SMALL["favourite_cards"]]
    s = play(s, G.private_events(s, "bo")[1])
    assert G.private_events(s, "bo") == [] and G.private_events(s, "ana")
    assert G.private_events(new(), "ana") == []


def test_favourite_food_dealing_is_chance_without_giving_away_who_holds_what():
    """Dealt from the My Favourite cards: the next player gets each card not
    dealt yet evenly; the host's list still offers every food to everyone
    waiting, whatever was dealt."""
    s = play(new(favourite_food=True), {"type": "favourite", "player": "ana", "food": "satay"})
    assert G.chance_outcomes(s) == [({"type": "favourite", "player": "bo", "food": f},
                                     Fraction(1, 3)) for f in ("laksa", "biryani", "otah")]
    other = play(new(favourite_food=True), {"type": "favourite", "player": "ana", "food": "otah"})
    assert G.legal_events(s) == G.legal_events(other)
    assert G.decisions(s) == [] and G.bust_odds(s) is None


def test_settings_are_declared_with_their_rulebook_line():
    names = {st.name: st for st in G.settings}
    assert set(names) == set(G.default_options()) == {
        "tables", "mynahs", "foods", "favourite_cards", "colours", "starting_player",
        "unmatched_food_scores", "own_colour_bonus", "bust_kept_card", "bust_ends_turn",
        "siam_tie", "siam_empty_type", "favourite_food"}
    assert all(names[k].assumed and names[k].kind == "data"
               for k in ("tables", "foods", "favourite_cards"))
    assert names["siam_tie"].choices == ("nobody", "all")
    assert "LESS" in names["siam_empty_type"].rule
    assert G.info()["race_reasons"]["siam"]["kind"] == "last-press"


def test_a_copy_of_the_state_shares_only_what_never_changes():
    from companion.games.chope import FIXED
    s = play(give(new(), "bo", RED, LAKSA), flip(SATAY), flip("mynah"), siam("bo"))
    c = G.copy_state(s)
    assert c == s
    for key, value in s.items():
        if isinstance(value, (dict, list)):
            assert (c[key] is value) == (key in FIXED), key


def test_favourite_food_scores_one_per_matching_food_card_even_unmatched_at_the_end():
    foods = {"laksa": {"kind": "main", "copies": 2}, "satay": {"kind": "side", "copies": 1}}
    s = G.setup(["ana", "bo"], {"tables": {"red": 1, "blue": 0}, "mynahs": 0, "foods": foods,
                                "favourite_food": True, "favourite_cards": ["laksa", "satay"]})
    s = play(s, {"type": "favourite", "player": "ana", "food": "laksa"},
             {"type": "favourite", "player": "bo", "food": "satay"},
             flip(LAKSA), STOP, flip(SATAY), STOP, flip(LAKSA), STOP)
    assert G.scores(s) == {"ana": 0, "bo": 0}         # nothing seated, favourites hidden
    s = play(s, flip(RED), chope("ana"))
    assert G.finished(s)
    # ana: red table + laksa + own colour = 2, +2 for both laksa (one unseated)
    # bo: an unseated satay = 0, +1 favourite
    assert G.scores(s) == {"ana": 4, "bo": 1}
    assert player(s, "ana")["favourite"] == "laksa"
    assert player(s, "ana")["score_detail"]["favourite"] == 2


# -- the log: illegal events ---------------------------------------------------
def test_logging_more_cards_of_a_kind_than_the_deck_holds_is_illegal():
    s = play(new(), flip(OTAH), flip(OTAH))
    with pytest.raises(RulesError, match="deck holds only 2") as err:
        G.apply(s, flip(OTAH))
    assert err.value.rule == "components"
    assert {"type": "flip", "card": OTAH} not in G.legal_events(s)
    s = play(new(), flip("mynah"), siam(), flip("mynah"), siam())
    with pytest.raises(RulesError, match="deck holds only 2 Mynah"):
        G.apply(s, flip("mynah"))


@pytest.mark.parametrize("event", [
    {"type": "flip", "card": "food:durian"}, {"type": "flip", "card": ["x"]}, {"type": "flip"},
    {"type": "keep", "card": LAKSA}, {"type": "lose", "player": "ana", "card": LAKSA},
    {"type": "favourite", "player": "ana", "food": "laksa"}, {"type": "favourite", "player": "ana"},
    chope("bo"), {"type": "dance"}, {"type": "choice"},
    {"type": "race", "reason": "siam", "tied": "bo"},
])
def test_illegal_event_raises_a_named_rule_and_leaves_state_unchanged(event):
    s = play(new(), flip(LAKSA))
    before = copy.deepcopy(s)
    with pytest.raises(RulesError) as err:
        G.apply(s, event)
    assert err.value.rule and s == before


def test_illegal_race_verdict_leaves_state_unchanged():
    s = play(new(), flip(RED))
    before = copy.deepcopy(s)
    for bad in (chope("ana"), chope("zed"), {**chope(), "tied": ["zed"]}, siam("bo")):
        with pytest.raises(RulesError):
            G.apply(s, bad)
    assert s == before


def test_legal_events_are_exactly_what_applies():
    rng = random.Random(3)
    for _ in range(30):
        s = new(players=PLAYERS[: rng.choice((2, 3))], siam_tie=rng.choice(("nobody", "all")))
        while not G.finished(s):
            legal = G.legal_events(s)
            for ev in legal:
                G.check_invariants(G.apply(s, ev))
            for c in s["total"]:
                if {"type": "flip", "card": c} not in legal:
                    with pytest.raises(RulesError):
                        G.apply(s, flip(c))
            s = G.apply(s, rng.choice(legal))


def test_invariants_catch_a_card_in_two_places():
    s = play(new(), flip(LAKSA))
    s["hands"]["bo"]["food"].append(LAKSA)
    with pytest.raises(AssertionError):
        G.check_invariants(s)


def test_public_view_is_the_scoreboard_json():
    s = play(new(favourite_food=True), *[{"type": "favourite", "player": p, "food": "laksa"}
                                         for p in PLAYERS], flip(LAKSA), flip(RED))
    view = json.loads(json.dumps(G.public_view(s)))
    assert set(view) == {
        "game", "players", "turn", "current_player", "starting_player", "flips_this_turn",
        "face_up", "contested", "deck_left", "bust_odds", "discard", "pending",
        "queued_choices", "scores", "finished", "ranking", "rules", "cards"}
    assert set(view["players"][0]) == {
        "name", "colour", "tables", "food", "table_count", "food_count", "mains", "sides",
        "mynahs", "mynah_debt", "favourite_dealt", "favourite", "score", "score_detail"}
    assert view["pending"]["race"]["kind"] == "first-press"
    assert view["cards"][LAKSA] == {"name": "Laksa", "kind": "main"}
    assert view["cards"][RED] == {"name": "Red Table", "kind": "table"}


# -- random play ---------------------------------------------------------------
def test_play_random_undo_then_same_event_is_the_identity():
    rng = random.Random(11)
    for players in (["a", "b"], ["a", "b", "c", "d", "e", "f"]):
        rep = play_random("chope", players, {"favourite_food": True}, rng, undo_every=1)
        assert G.finished(rep.state) and len(rep.events) >= 92
        G.check_invariants(rep.state)


# -- the example game file -----------------------------------------------------
def test_example_game_file_replays_to_the_end():
    path = ROOT / "docs" / "examples" / "chope.jsonl"
    with open(path) as fh:
        rep = replay_lines(fh)
    summary = rep.summary()
    assert summary["finished"] and summary["game"] == "chope"
    assert 40 <= len(rep.events) <= 80
    assert json.dumps(summary)
    kinds = Counter(e["type"] for e in rep.events)
    assert {"favourite", "flip", "stop", "keep", "race"} <= set(kinds)
