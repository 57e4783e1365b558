"""Hawker Wars tracker: one scenario per rule of the rulebook, then random play.

The scenarios are written from the rulebook (rules/003_8bc3475faaf40c47.txt)
and the publisher's FAQ rulings (rules/README.md); the readings where they
are silent are in docs/rules-notes.md (Hawker Wars).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from companion.games import RulesError, get_game
from companion.games.hawker import DATA, recipe_fits
from companion.races.edges import Edge
from companion.races.referee import RaceSpec, judge
from companion.record.gamefile import Replay, replay_lines

G = get_game("hawker")
ROOT = Path(__file__).resolve().parent.parent
MEAT, RICE, WATER, SPICES, EGG, FLOUR, CHILI, WILD = (
    "meat-seafood", "rice-noodles", "water", "spices", "egg", "flour", "chili", "wildcard")
PI, FR, CC, LS, FP = ("price-inflation", "family-recipe", "copycat-stall", "licence-suspended",
                      "food-poisoning")
YT, FHC, NL, MLXG, ROJAK = "you-tiao", "fish-head-curry", "nasi-lemak", "ma-la-xiang-guo", "rojak"
RESOLVE, END = {"type": "resolve"}, {"type": "end_turn"}
NO_EVENT = {"type": "event_check", "event": None}
EVENT = {"type": "event_check", "event": FP}


def play(s, *events, faults=False):
    """Apply ``events``, checking the invariants; a log clash (a fault for the host) only
    where a test says it expects one."""
    for ev in events:
        s = G.apply(s, ev)
        G.check_invariants(s)
        assert faults or not G.host_view(s)["faults"], (ev, G.host_view(s)["faults"])
    return s


def draw(player, pile, *cards):
    return {"type": "draw", "player": player, "pile": pile, "cards": list(cards)}


def poison(loser=None, tied=()):
    return {"type": "race", "reason": "food-poisoning", "winner": None, "loser": loser,
            "tied": list(tied), "false_starts": [], "ineligible": []}


def start(players=("ana", "bo"), stalls=("malay", "chinese"), dishes=(NL, YT, FHC, ROJAK),
          market=(EGG, WATER, SPICES), hands=None, **options):
    """A game set up with known cards: each player's 4 Ingredients and 1 Action."""
    hands = hands or {"ana": ([MEAT, RICE, CHILI, WATER], PI), "bo": ([FLOUR, WATER, EGG, WILD], LS)}
    s = G.setup(list(players), options)
    s = play(s, *[{"type": "choose_stall", "player": p, "stall": st}
                  for p, st in zip(players, stalls)])
    s = play(s, *[{"type": "dish", "card": d} for d in dishes])
    s = play(s, *[{"type": "market", "card": c} for c in market])
    for p in G._seats(s):
        ingredients, action = hands[p]
        s = play(s, draw(p, "ingredient", *ingredients), draw(p, "action", action))
    return s


def turn(s, ingredients=(SPICES, SPICES), action=CC, check=NO_EVENT):
    """The top of a turn: the event check, then 2 Ingredients and 1 Action drawn."""
    p = G.current_player(s)
    return play(s, check, draw(p, "ingredient", *ingredients), draw(p, "action", action))


def hand(s, p):
    return sorted(G.private_view(s, p)["hand"])


def refused(s, ev, *words):
    with pytest.raises(RulesError) as info:
        G.apply(s, ev)
    for w in words:
        assert w.lower() in str(info.value).lower(), str(info.value)
    return info.value


# -- components ----------------------------------------------------------------

def test_components_are_the_rulebook_list():
    """'53 Ingredient Cards - Meat / Seafood x 9 ... Wildcard x 3'; '17 Dish Cards';
    '25 Action Cards' (incl. the 5 Events shuffled in); FAQ: 'there are 4 Stop cards'."""
    s = G.setup(["ana", "bo"])
    ing = {k: n for k, n in s["total"].items() if k in DATA["ingredients"]}
    assert ing == {MEAT: 9, RICE: 9, WATER: 9, SPICES: 8, EGG: 5, FLOUR: 5, CHILI: 5, WILD: 3}
    assert sum(ing.values()) == 53
    assert sum(s["dish_total"].values()) == 17
    assert s["dish_total"] == {YT: 4, FHC: 4, NL: 4, MLXG: 4, ROJAK: 1}
    actions = sum(n for k, n in s["total"].items() if k in DATA["action_cards"])
    assert actions + s["total"][FP] == 25 and s["total"][LS] == 4 and s["total"][FP] == 5
    by_name = {st.name: st for st in G.settings}
    assert by_name["actions"].assumed and by_name["events"].assumed
    assert "Attack, Gain, Swap, Stop and Event" in by_name["actions"].rule
    assert json.dumps(G.info())          # the settings describe themselves as data


def test_dish_recipes_and_points():
    """'You Tiao (Ingredients: Flour, Water, Egg; 2 points)' ... 'Rojak Dish (... any 5
    ingredients; 3 points)'."""
    d = DATA["dishes"]
    assert (d[YT]["ingredients"], d[YT]["points"]) == ([FLOUR, WATER, EGG], 2)
    assert (sorted(d[FHC]["ingredients"]), d[FHC]["points"]) == (
        sorted([MEAT, WATER, RICE, SPICES]), 3)
    assert (sorted(d[NL]["ingredients"]), d[NL]["points"]) == (sorted([MEAT, RICE, CHILI]), 2)
    assert (sorted(d[MLXG]["ingredients"]), d[MLXG]["points"]) == (sorted([MEAT, RICE, SPICES]), 1)
    assert (d[ROJAK]["any"], d[ROJAK]["points"]) == (5, 3)


def test_action_counts_are_a_setting_and_checked():
    s = G.setup(["ana", "bo"], {"actions": {PI: 1, FR: 0, CC: 0, LS: 4}, "events": {FP: 2}})
    assert s["apile"]["size"] == 5 and s["events_aside"] == {FP: 2}
    with pytest.raises(RulesError, match="not one of"):
        G.setup(["ana", "bo"], {"actions": {"bribe": 2}})
    with pytest.raises(RulesError, match="whole number"):
        G.setup(["ana", "bo"], {"actions": {PI: -1}})
    with pytest.raises(RulesError):
        G.setup(["ana", "bo", "cy", "di", "ed"])


# -- setup ---------------------------------------------------------------------

def test_each_player_selects_a_different_hawker_card():
    """'Each player selects a Hawker card'."""
    s = G.setup(["ana", "bo"])
    s = play(s, {"type": "choose_stall", "player": "ana", "stall": "malay"})
    refused(s, {"type": "choose_stall", "player": "bo", "stall": "malay"}, "taken")
    refused(s, {"type": "choose_stall", "player": "bo", "stall": "thai"}, "must be one of")  # its shape
    refused(s, {"type": "dish", "card": NL}, "selects a Hawker card")


def test_setup_deals_4_ingredients_and_1_action_then_events_are_shuffled_in():
    """'starts with 4 Ingredient cards and 1 Action card on hand'; 'When all cards are given
    out at the start of the game, shuffle Event cards evenly in the Action draw pile'."""
    s = start()
    view = G.public_view(s)
    assert [(p["ingredients"], p["actions"]) for p in view["players"]] == [(4, 1), (4, 1)]
    assert [d["dish"] for d in view["open_dishes"]] == [NL, YT, FHC, ROJAK]
    assert view["black_market"] == {"count": 3, "cards": {WATER: 1, SPICES: 1, EGG: 1}}
    assert view["piles"] == {"ingredient": 53 - 3 - 8, "action": 18 + 5, "dish": 13,
                             "action_discard": 0, "out_of_play": 0}
    assert view["event_odds"]["probability"] == "5/23"
    assert hand(s, "ana") == sorted([MEAT, RICE, CHILI, WATER, PI])
    assert G.current_player(s) == "ana" and view["pending"]["kind"] == "check"


def test_no_event_card_is_dealt_before_the_shuffle_in():
    s = G.setup(["ana", "bo"])
    s = play(s, {"type": "choose_stall", "player": "ana", "stall": "malay"},
             {"type": "choose_stall", "player": "bo", "stall": "indian"},
             *[{"type": "dish", "card": NL}] * 4, *[{"type": "market", "card": EGG}] * 3,
             draw("ana", "ingredient", EGG, EGG, WATER, WATER))
    refused(s, draw("ana", "action", FP), "not one of")
    assert all(e["type"] != "event_check" for e, _ in G.chance_outcomes(s))


def test_starting_player_option():
    """'The player who last visited a hawker center starts first.'"""
    s = start(starting_player="bo")
    assert G.current_player(s) == "bo" and G.public_view(s)["turn"] == "bo"


# -- the turn ------------------------------------------------------------------

def test_turn_checks_the_event_then_draws_2_ingredients_and_1_action():
    """'If you see an Event card at the top of the Action draw pile, play it immediately
    before starting your turn.' 'On each turn: Draw 2 Ingredient cards ... and 1 Action
    card'."""
    s = start()
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, "cannot cook now",
            "ana draws 2 Ingredient cards and 1 Action card (an Event on top")
    s = play(s, NO_EVENT)
    refused(s, draw("ana", "ingredient", EGG), "draws 2")
    refused(s, draw("bo", "ingredient", EGG, EGG), "the draw due now")
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, "cannot cook now")
    s = play(s, draw("ana", "action", FR), draw("ana", "ingredient", EGG, SPICES))
    assert G.public_view(s)["players"][0]["hand"] == 8
    assert G.public_view(s)["pending"]["kind"] == "play"


def test_up_to_2_actions_per_turn():
    """'Then, play up to 2 of the following actions: COOK ... ACTION ... TRADE'."""
    s = turn(start(), (SPICES, SPICES), FR)
    s = play(s, {"type": "trade", "give": [SPICES, SPICES], "take": EGG}, RESOLVE,
             {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, RESOLVE)
    refused(s, {"type": "play", "card": PI, "target": "bo"}, "up to 2")
    assert G.public_view(s)["actions_left"] == 0
    assert {"type": "end_turn"} in G.legal_events(s)


def test_same_action_twice_can_be_switched_off():
    s = turn(start(repeat_actions=False), (SPICES, SPICES), FR)
    s = play(s, {"type": "trade", "give": [SPICES, SPICES], "take": EGG}, RESOLVE)
    refused(s, {"type": "trade", "give": [WATER, EGG], "take": WATER}, "already played")


# -- cooking -------------------------------------------------------------------

def test_cook_matches_the_dish_and_scores_points_plus_own_stall_bonus():
    """'Match the Ingredients on hand to Ingredients on the Dish. Place used Ingredient
    cards in the Black Market.' 'Add 1 bonus point for each dish you cook from your
    stall.'"""
    s = turn(start())
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, WATER]}, "needs")
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI, WATER]}, "takes 3")
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]})
    assert G.scores(s)["ana"] == 0          # in play: a Stop may still come
    s = play(s, RESOLVE)
    assert G.scores(s) == {"ana": 3, "bo": 0}     # Nasi Lemak 2 + Malay stall bonus 1
    view = G.public_view(s)
    assert view["black_market"]["cards"] == {MEAT: 1, RICE: 1, WATER: 1, SPICES: 1, EGG: 1,
                                             CHILI: 1}
    assert view["open_dishes"][0] is None
    # "If you cook a dish, refill with new Dish cards at the end of your turn."
    s = play(s, END)
    assert G.public_view(s)["pending"]["kind"] == "dish"
    s = play(s, {"type": "dish", "card": MLXG})
    assert [d["dish"] for d in G.public_view(s)["open_dishes"]] == [MLXG, YT, FHC, ROJAK]
    assert G.current_player(s) == "bo"


def test_the_bonus_example_you_tiao_for_the_chinese_stall_is_3():
    """'Example: cooking You Tiao (2 points) from the Chinese Hawker Stall gives +1 bonus,
    for a total of 3 points.'"""
    s = play(turn(start()), END)
    s = turn(s)
    s = play(s, {"type": "cook", "dish": YT, "cards": [FLOUR, WATER, EGG]}, RESOLVE)
    assert G.scores(s)["bo"] == 3


def test_wildcards_stand_in_for_any_ingredient():
    s = play(turn(start()), END)
    s = turn(s, (MEAT, RICE))
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, WILD]}, RESOLVE)
    assert G.scores(s)["bo"] == 2            # Nasi Lemak is not the Chinese stall's dish
    assert recipe_fits(FHC, {WILD: 4}, 0) is None


def test_you_can_only_cook_from_the_open_dishes():
    """'You can only cook Dishes from here.'"""
    s = turn(start(dishes=(YT, YT, FHC, ROJAK)))
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, "open dish")


def test_rojak_is_cooked_with_any_5_ingredients_and_has_no_stall():
    """'1 x Rojak Dish (Ingredients: cook this dish with any 5 ingredients; 3 points)'."""
    s = turn(start(), (EGG, FLOUR))
    refused(s, {"type": "cook", "dish": ROJAK, "cards": [MEAT, RICE, CHILI, WATER]}, "any 5")
    s = play(s, {"type": "cook", "dish": ROJAK, "cards": [MEAT, RICE, CHILI, WATER, EGG]},
             RESOLVE)
    assert G.scores(s)["ana"] == 3


def test_a_cook_must_use_cards_in_the_logged_hand():
    s = turn(start())
    refused(s, {"type": "cook", "dish": YT, "cards": [FLOUR, WATER, EGG]}, "does not hold")


# -- Action cards --------------------------------------------------------------

def test_price_inflation_makes_the_target_cook_with_1_extra_ingredient():
    """'Price Inflation (Attack): Target hawker has to cook with 1 extra ingredient for the
    next dish they cook.'"""
    s = turn(start())
    refused(s, {"type": "play", "card": PI, "target": "ana"}, "another player")
    s = play(s, {"type": "play", "card": PI, "target": "bo"}, RESOLVE, END)
    assert G.public_view(s)["players"][1]["inflation"] == 1
    s = turn(s, (WATER, SPICES))
    refused(s, {"type": "cook", "dish": YT, "cards": [FLOUR, WATER, EGG]}, "extra")
    s = play(s, {"type": "cook", "dish": YT, "cards": [FLOUR, WATER, EGG, SPICES]}, RESOLVE)
    assert G.scores(s)["bo"] == 3 and G.public_view(s)["players"][1]["inflation"] == 0


def test_family_recipe_cooks_any_open_dish_with_any_3_ingredients():
    """'Family Recipe (Gain): Play with any 3 ingredients on hand to cook any dish.'"""
    s = turn(start(), (SPICES, SPICES), FR)
    s = play(s, {"type": "play", "card": FR, "dish": FHC, "cards": [WATER, SPICES, SPICES]},
             RESOLVE)
    assert G.scores(s)["ana"] == 3           # Fish Head Curry, not Malay: no bonus
    assert G.public_view(s)["actions_left"] == 1
    assert G.public_view(s)["action_discard"] == {FR: 1}


def test_family_recipe_may_count_as_two_actions():
    s = turn(start(family_recipe_actions=2), (SPICES, SPICES), FR)
    s = play(s, {"type": "play", "card": FR, "dish": FHC, "cards": [WATER, SPICES, SPICES]},
             RESOLVE)
    assert G.public_view(s)["actions_left"] == 0


@pytest.mark.parametrize("bonus, after", [("kept", {"ana": 3, "bo": 0}),
                                           ("follows", {"ana": 2, "bo": 0})])
def test_copycat_stall_swaps_hawker_cards(bonus, after):
    """'Copycat Stall (Swap): Swop your Hawker card with another player.' What it does to
    bonuses already earned: copycat_bonus."""
    s = turn(start(copycat_bonus=bonus), (SPICES, SPICES), CC)
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, RESOLVE,
             {"type": "play", "card": CC, "target": "bo"}, RESOLVE)
    assert [p["stall"] for p in G.public_view(s)["players"]] == ["chinese", "malay"]
    assert G.scores(s) == after


def test_licence_suspended_stops_a_cook_and_its_ingredients_go_to_the_black_market():
    """'Licence Suspended (Stop): Stop a player's action. Can be played anytime.' FAQ: a
    stopped cook's ingredients go to the Black Market."""
    s = turn(start())
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]},
             {"type": "stop", "player": "bo"}, RESOLVE)
    view = G.public_view(s)
    assert G.scores(s) == {"ana": 0, "bo": 0}
    assert view["open_dishes"][0]["dish"] == NL
    assert view["black_market"]["count"] == 6 and view["action_discard"] == {LS: 1}
    assert view["actions_left"] == 1 and view["last_action"]["stopped"]
    assert hand(s, "bo") == sorted([FLOUR, WATER, EGG, WILD])


def test_a_stop_can_stop_a_stop():
    """FAQ: a Stop card can stop a Stop card."""
    hands = {"ana": ([MEAT, RICE, CHILI, WATER], LS), "bo": ([FLOUR, WATER, EGG, WILD], LS)}
    s = turn(start(hands=hands))
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]},
             {"type": "stop", "player": "bo"})
    refused(s, {"type": "stop", "player": "bo"}, "played the card")
    s = play(s, {"type": "stop", "player": "ana"})
    # bo holds no Action card now: nobody can stop ana's Stop, so the cook takes effect
    assert G.public_view(s)["chain"] is None and G.scores(s)["ana"] == 3
    refused(s, {"type": "stop", "player": "bo"}, "no action is in play")
    s = play(s, RESOLVE, END)     # logged anyway: the same step, accepted once
    assert G.scores(s)["ana"] == 3
    assert G.public_view(s)["action_discard"] == {LS: 2}


def test_a_stopped_trade_follows_stop_trade():
    for how, market, ingredients in (("market", 5, 4), ("undone", 3, 6)):
        s = turn(start(stop_trade=how))
        s = play(s, {"type": "trade", "give": [WATER, CHILI], "take": EGG},
                 {"type": "stop", "player": "bo"}, RESOLVE)
        assert G.public_view(s)["black_market"]["count"] == market
        assert G.public_view(s)["players"][0]["ingredients"] == ingredients
    s = turn(start(stop_trade="no"))
    s = play(s, {"type": "trade", "give": [WATER, CHILI], "take": EGG})
    # a TRADE nobody may stop takes effect at once
    assert G.public_view(s)["chain"] is None and EGG in hand(s, "ana")
    refused(s, {"type": "stop", "player": "bo"}, "no action is in play")


def test_events_are_not_played_from_a_hand_and_cannot_be_stopped():
    """'Food Poisoning (Event): This card cannot be stopped. Play immediately'."""
    s = turn(start())
    refused(s, {"type": "play", "card": FP}, "never from a hand")
    s = start(poisoning_hold="seconds")
    s = play(s, EVENT)
    refused(s, {"type": "stop", "player": "bo"}, "holding")


# -- trade, hand limit, piles ---------------------------------------------------

def test_trade_2_ingredients_for_1_from_the_black_market():
    """'Trade any 2 Ingredients on hand for 1 Ingredient from the Black Market.'"""
    s = turn(start())
    refused(s, {"type": "trade", "give": [WATER], "take": EGG}, "2 ingredients")
    refused(s, {"type": "trade", "give": [WATER, CHILI], "take": FLOUR}, "no flour")
    s = play(s, {"type": "trade", "give": [WATER, CHILI], "take": EGG}, RESOLVE)
    assert EGG in hand(s, "ana") and CHILI not in hand(s, "ana")
    assert G.public_view(s)["black_market"]["cards"] == {WATER: 2, SPICES: 1, CHILI: 1}


def test_hand_limit_10_at_the_end_of_the_turn():
    """'You can hold a maximum number of 10 cards on hand at the end of each turn. Discard
    any excess cards.'"""
    s = play(turn(start()), END)              # ana: 8 cards
    s = play(turn(s), END)                    # bo
    s = turn(s, (EGG, EGG), FR)               # ana: 11 cards
    s = play(s, END)
    assert G.public_view(s)["pending"]["kind"] == "limit"
    refused(s, {"type": "discard", "cards": [EGG, EGG]}, "exactly 1")
    s = play(s, {"type": "discard", "cards": [FR]})
    assert G.public_view(s)["players"][0]["hand"] == 10
    assert G.public_view(s)["action_discard"] == {FR: 1}
    assert G.current_player(s) == "bo"


def test_ingredient_pile_reshuffled_from_the_black_market_leaving_3():
    """FAQ: when the Ingredient pile runs out, shuffle the Black Market into a new pile but
    leave 3 cards in the Market."""
    s = turn(start())
    # test shortcut: all but one unseen Ingredient set out of play, so the pile is nearly out
    unseen = {k: n for k, n in G._pool(s).items() if k in DATA["ingredients"]}
    unseen[FLOUR] -= 1
    s["box"], s["ipile"]["size"] = unseen, 1
    G.check_invariants(s)
    s = play(s, {"type": "trade", "give": [WATER, CHILI], "take": EGG}, RESOLVE, END)
    s = play(s, NO_EVENT, draw("bo", "ingredient", FLOUR))
    assert G.public_view(s)["pending"]["kind"] == "reshuffle"      # market: 4 cards
    refused(s, draw("bo", "ingredient", WATER), "reshuffle")
    refused(s, {"type": "reshuffle", "keep": [EGG, EGG, EGG]}, "leave 3")
    s = play(s, {"type": "reshuffle", "keep": [WATER, CHILI, SPICES]})
    assert G.public_view(s)["black_market"]["cards"] == {WATER: 1, SPICES: 1, CHILI: 1}
    assert G.public_view(s)["piles"]["ingredient"] == 1
    refused(s, draw("bo", "ingredient", EGG), "accounted for")    # the pile is one Water
    s = play(s, draw("bo", "ingredient", WATER), draw("bo", "action", PI))
    assert G.public_view(s)["players"][1]["ingredients"] == 6


def test_action_pile_is_not_reshuffled_draw_2_ingredients_instead():
    """FAQ: when the Action pile runs out it is not reshuffled (draw 2 Ingredients
    instead)."""
    s = start(actions={PI: 2, FR: 0, CC: 0, LS: 0}, events={FP: 0},
              hands={"ana": ([MEAT, RICE, CHILI, WATER], PI), "bo": ([FLOUR, WATER, EGG, WILD], PI)})
    assert G.public_view(s)["piles"]["action"] == 0 and G.public_view(s)["event_odds"] is None
    assert G.public_view(s)["pending"]["kind"] == "draw"
    refused(s, draw("ana", "ingredient", EGG, EGG), "draws 4")
    s = play(s, draw("ana", "ingredient", EGG, EGG, FLOUR, FLOUR))
    assert G.public_view(s)["players"][0]["hand"] == 9


# -- the end -------------------------------------------------------------------

@pytest.mark.parametrize("n, target", [(2, 15), (3, 13), (4, 11)])
def test_targets_by_player_count(n, target):
    """'2 player game: 15 points ... 3 player game: 13 points ... 4 player game: 11'."""
    s = G.setup(["ana", "bo", "cy", "di"][:n])
    assert G.public_view(s)["target"] == target


def test_the_first_to_the_target_wins_and_the_others_are_ranked_by_points():
    """'First player to cook Dishes and reach the target number of points for the game
    wins!'"""
    s = turn(start())
    s["cooked"]["ana"] = [{"dish": FHC, "points": 3, "stall": "indian", "bonus": False,
                           "family_recipe": False}] * 4       # 12 points (shortcut)
    s["cooked"]["bo"] = [{"dish": YT, "points": 2, "stall": "chinese", "bonus": True,
                          "family_recipe": False}] * 4        # 12 points
    s["dish_total"][FHC] += 4
    s["dish_total"][YT] += 4
    G.check_invariants(s)
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]})
    assert not G.finished(s)                  # a Stop could still come
    s = play(s, RESOLVE)
    assert G.finished(s) and G.scores(s) == {"ana": 15, "bo": 12}
    assert G.ranking(s) == [["ana"], ["bo"]]
    assert G.legal_events(s) == []
    with pytest.raises(RulesError, match="over"):
        G.apply(s, END)


def test_a_winning_cook_in_play_ends_the_game_once_nobody_stops_it():
    s = turn(start())
    s["cooked"]["ana"] = [{"dish": FHC, "points": 3, "stall": "indian", "bonus": False,
                           "family_recipe": False}] * 4
    s["dish_total"][FHC] += 4
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]})
    assert not G.finished(s)          # bo may hold a Licence Suspended
    assert {"type": "stop", "player": "bo"} in G.legal_events(s)
    assert "anyone holding Licence Suspended may stop it" in G.public_view(s)["pending"]["text"]
    done = play(s, END)               # the next step logged: nobody stopped it
    assert G.finished(done) and done["winner"] == "ana"
    done = play(s, RESOLVE)
    assert G.finished(done) and done["winner"] == "ana"
    stopped = play(s, {"type": "stop", "player": "bo"}, RESOLVE)
    assert not G.finished(stopped) and stopped["chain"] is None
    assert G.scores(stopped)["ana"] == 12


# -- Food Poisoning -------------------------------------------------------------

def test_food_poisoning_asks_for_an_announced_first_release_race_over_everyone():
    """'All players to hold their stomach with 1 hand for a turn. First player to let go
    loses 2 cards from their hand.'"""
    s = play(start(players=("ana", "bo", "cy"), stalls=("malay", "chinese", "indian"),
                   hands={"ana": ([MEAT, RICE, CHILI, WATER], PI),
                          "bo": ([FLOUR, WATER, EGG, WILD], LS),
                          "cy": ([SPICES, SPICES, WATER, RICE], FR)}), EVENT)
    req = G.race_request(s)
    assert (req.kind, req.reason, req.announced) == ("first-release", "food-poisoning", True)
    assert req.eligible == ("ana", "bo", "cy") and req.info["stake"] == 2
    assert G.race_reason("food-poisoning").word({"loser": "bo"}, req.info) == \
        "bo let go first and loses 2 cards"
    assert G.public_view(s)["action_discard"] == {FP: 1}


def test_food_poisoning_loser_gives_up_2_cards_of_their_choice():
    s = play(start(poisoning_hold="seconds"), EVENT)
    refused(s, NO_EVENT, "holding")
    s = play(s, poison("bo"))
    assert G.current_player(s) == "bo" and G.race_request(s) is None
    refused(s, {"type": "lose", "player": "bo", "cards": [FLOUR]}, "exactly 2")
    refused(s, {"type": "lose", "player": "bo", "cards": [MEAT, RICE]}, "does not hold")
    s = play(s, {"type": "lose", "player": "bo", "cards": [FLOUR, LS]})
    view = G.public_view(s)
    assert view["players"][1]["hand"] == 3
    assert view["black_market"]["cards"][FLOUR] == 1 and view["action_discard"] == {FP: 1, LS: 1}
    assert G.current_player(s) == "ana" and view["pending"]["kind"] == "check"


def test_food_poisoning_tie_or_nobody_letting_go_costs_nothing():
    for verdict in (poison(tied=["ana", "bo"]), poison()):
        s = play(start(poisoning_hold="seconds"), EVENT, verdict)
        assert s["loss"] is None and G.public_view(s)["players"][1]["hand"] == 5


def test_food_poisoning_hold_for_a_turn_lets_the_turn_go_on_until_it_ends():
    s = play(start(), EVENT)
    assert G.race_request(s).info["hold"] == "turn"
    s = play(s, NO_EVENT, draw("ana", "ingredient", EGG, EGG), draw("ana", "action", FR),
             {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, RESOLVE)
    assert G.race_request(s) is not None      # still holding during the turn
    s = play(s, END)                          # the turn is over: everyone held on
    assert G.race_request(s) is None and s["loss"] is None


def test_two_events_in_one_hold_for_a_turn_add_up():
    s = play(start(), EVENT, EVENT)
    assert G.race_request(s).info["stake"] == 4
    s = play(s, poison("ana"))
    assert s["loss"]["count"] == 4


def test_a_player_who_never_held_loses_at_go_by_the_referees_rule():
    """DESIGN: 'a player not holding at the arm time counts as releasing at the arm
    time'."""
    s = play(start(poisoning_hold="seconds"), EVENT)
    req = G.race_request(s)
    spec = RaceSpec(req.kind, req.players, req.eligible, arm_ns=1_000_000_000,
                    deadline_ns=1_000_000_000 + req.info["wait_ms"] * 1_000_000)
    edges = [Edge("ana", True, 500_000_000), Edge("ana", False, 9_000_000_000)]   # bo never held
    verdict = judge(spec, edges).to_json()
    assert verdict["loser"] == "bo"
    s = play(s, {"type": "race", "reason": "food-poisoning", **{
        k: verdict[k] for k in ("winner", "loser", "tied", "false_starts", "ineligible")}})
    assert s["loss"] == {"player": "bo", "count": 2, "chooser": "bo"}
    # a tie within the window: both let go within it, nobody loses
    spec = RaceSpec(req.kind, req.players, req.eligible, arm_ns=1_000_000_000,
                    tie_window_ns=2_000_000)
    edges = [Edge("ana", True, 0), Edge("bo", True, 0), Edge("ana", False, 3_000_000_000),
             Edge("bo", False, 3_001_000_000)]
    verdict = judge(spec, edges).to_json()
    assert verdict["loser"] is None and verdict["tied"] == ["ana", "bo"]


def test_poisoning_loss_settings_box_and_the_left_neighbour_chooses():
    s = play(start(poisoning_hold="seconds", poisoning_loss="box",
                   poisoning_chooser="left"), EVENT, poison("ana"))
    assert G.current_player(s) == "bo"
    s = play(s, {"type": "lose", "player": "ana", "cards": [WATER, PI]})
    assert G.public_view(s)["piles"]["out_of_play"] == 2


def test_a_loser_with_fewer_than_2_cards_loses_what_they_have():
    s = play(start(poisoning_hold="seconds"), EVENT)
    s["hands"]["bo"] = {"ingredient": 1, "action": 0, "known": {WILD: 1}, "public": {}}
    s["box"] = {FLOUR: 1, WATER: 1, EGG: 1, LS: 1}        # test shortcut: 4 cards gone
    G.check_invariants(s)
    s = play(s, poison("bo"))
    assert s["loss"]["count"] == 1


# -- odds -----------------------------------------------------------------------

def test_event_odds_are_exact():
    s = start()
    odds = {e["event"]: p for e, p in G.chance_outcomes(s)}
    assert odds == {None: Fraction(18, 23), FP: Fraction(5, 23)}
    assert G.chance_probability(s, lambda e: e.get("event") == FP) == Fraction(5, 23)
    s = play(s, EVENT)
    assert G.public_view(s)["event_odds"]["probability"] == "2/11"   # 4 of 22


def test_event_odds_with_events_in_even_stacks():
    """'shuffle Event cards evenly in the Action draw pile' read as one Event per stack."""
    s = start(event_shuffle="stacks")        # 18 Actions + 5 Events: stacks 5,5,5,4,4 (+1 each)
    assert s["apile"]["stacks"] == [[5, 1], [5, 1], [5, 1], [4, 1], [4, 1]]
    assert G.public_view(s)["event_odds"]["probability"] == "1/5"
    s = play(s, EVENT)                        # the first stack has no Event left
    assert G.public_view(s)["event_odds"]["probability"] == "0/1"
    assert G.event_odds(s)["percent"] == 0.0
    # no Event can be on top now: the check needs no tap, the draw is next
    assert {e["type"] for e, _ in G.chance_outcomes(s)} == {"draw"}


def test_distance_to_target_in_the_public_view():
    s = play(turn(start()), {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, RESOLVE)
    assert [(p["score"], p["to_target"]) for p in G.public_view(s)["players"]] == [
        (3, 12), (0, 15)]


def test_draw_odds_are_hypergeometric_and_sum_to_1():
    s = play(start(), NO_EVENT)
    odds = G.chance_outcomes(s)
    assert sum(p for _, p in odds) == 1
    unseen = G._pool(s)
    total = sum(unseen[k] for k in DATA["ingredients"])
    two_wild = next(p for e, p in odds if e["cards"] == [WILD, WILD])
    assert two_wild == Fraction(unseen[WILD] * (unseen[WILD] - 1), total * (total - 1))


# -- hidden hands -----------------------------------------------------------------

def test_public_information_only_checks_hand_sizes_and_the_unseen_pool():
    """Mode 'public': draws are logged with a count; cooks are checked against what the
    table can know."""
    s = G.setup(["ana", "bo"], {"draws": "public"})
    s = play(s, {"type": "choose_stall", "player": "ana", "stall": "malay"},
             {"type": "choose_stall", "player": "bo", "stall": "chinese"},
             *[{"type": "dish", "card": d} for d in (NL, YT, FHC, ROJAK)],
             *[{"type": "market", "card": c} for c in (WILD, WILD, EGG)])
    events = G.legal_events(s)
    assert events == [{"type": "draw", "player": "ana", "pile": "ingredient", "count": 4}]
    for p in ("ana", "bo"):
        s = play(s, {"type": "draw", "player": p, "pile": "ingredient", "count": 4},
                 {"type": "draw", "player": p, "pile": "action", "count": 1})
    s = play(s, NO_EVENT, {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2},
             {"type": "draw", "player": "ana", "pile": "action", "count": 1})
    refused(s, {"type": "cook", "dish": ROJAK, "cards": [WILD, WILD, EGG, EGG, EGG]},
            "accounted for")                  # 2 Wildcards are in the Black Market: 1 left
    refused(s, {"type": "cook", "dish": ROJAK, "cards": [EGG] * 5}, "accounted for")
    s = play(s, {"type": "cook", "dish": FHC, "cards": [MEAT, WATER, RICE, WILD]}, RESOLVE)
    refused(s, {"type": "trade", "give": [WILD, MEAT], "take": EGG},
            "accounted for")                  # the third Wildcard was just cooked
    assert not [e for e in G.private_events(s, "ana") if e["type"] == "draw"]
    assert G.public_view(s)["players"][0]["ingredients"] == 2


def test_a_cook_needs_enough_cards_in_hand():
    s = G.setup(["ana", "bo"], {"draws": "public"})
    s["hands"]["ana"]["ingredient"] = 2
    s["ipile"]["size"] -= 2
    s["stalls"] = {"ana": "malay", "bo": "chinese"}
    s["open"] = [NL, None, None, None]
    s["dish_pile"] -= 1
    s["todo"] = [{"do": "play"}]
    G.check_invariants(s)
    refused(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, "holds only 2")


def test_private_draw_logged_by_the_player_and_hidden_from_the_table():
    s = play(start(), NO_EVENT)
    mine = G.private_events(s, "ana")
    assert mine and all(e["type"] == "draw" and e["player"] == "ana" for e in mine
                        if e["type"] == "draw")
    assert not [e for e in G.private_events(s, "bo") if e["type"] == "draw"]
    # the host console offers only the cardless fallback
    cardless = {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2}
    assert G.host_events(s) == [cardless] and cardless in G.legal_events(s)
    ev = draw("ana", "ingredient", WILD, EGG)
    assert G.public_event(ev) == {"type": "draw", "player": "ana", "pile": "ingredient",
                                  "count": 2}
    assert "Wildcard" not in G.describe(ev) and "Egg" not in G.describe(ev)
    s = play(s, ev)
    assert hand(s, "ana") == sorted([MEAT, RICE, CHILI, WATER, PI, WILD, EGG])
    assert hand(s, "bo") == sorted([FLOUR, WATER, EGG, WILD, LS])


def test_a_draw_the_drawer_can_see_is_impossible_is_refused():
    """A draw is refused when what the drawer can know rules it out: 2 Wildcards face up in
    the Black Market and 1 in ana's own hand leave none to draw ('Wildcard x 3')."""
    s = start(market=(WILD, WILD, EGG), hands={"ana": ([MEAT, RICE, CHILI, WILD], PI),
                                               "bo": ([FLOUR, WATER, EGG, EGG], LS)})
    s = play(s, NO_EVENT)
    refused(s, draw("ana", "ingredient", WILD, EGG), "no wildcard", "accounted for")
    assert draw("ana", "ingredient", EGG, EGG) in G.private_events(s, "ana")
    assert not [e for e in G.private_events(s, "ana") if WILD in e.get("cards", ())]
    # the only Licence Suspended (actions setting) is in bo's own hand: he cannot draw one
    s = start(actions={PI: 3, FR: 0, CC: 3, LS: 1})
    s = play(s, NO_EVENT, draw("ana", "ingredient", SPICES, SPICES), draw("ana", "action", CC),
             END, NO_EVENT, draw("bo", "ingredient", FLOUR, FLOUR))
    refused(s, draw("bo", "action", LS), "no licence suspended", "accounted for")


def two_worlds(bo_ingredients, bo_action=CC, **options):
    """The same game twice, told apart only by the cards bo drew on his first turn (hidden
    from ana): ana's 4 + Meat, Rice, Chili, Water; bo's Flour, Water, Egg, Wildcard."""
    worlds = []
    for bo_draw in bo_ingredients:
        s = start(**options)
        s = play(s, NO_EVENT, draw("ana", "ingredient", EGG, FLOUR), draw("ana", "action", CC),
                 END, NO_EVENT, draw("bo", "ingredient", *bo_draw),
                 draw("bo", "action", bo_action), END, NO_EVENT)
        worlds.append(s)
    return worlds


def outcome(s, ev):
    """What the player who logs ``ev`` learns: accepted, or the refusal's words."""
    try:
        G.apply(s, ev)
    except RulesError as exc:
        return str(exc)
    return "accepted"


def all_draws(player, pile, n):
    kinds = list(DATA["ingredients"]) if pile == "ingredient" else list(DATA["action_cards"])
    groups = [[]]
    for _ in range(n):
        groups = [g + [k] for g in groups for k in kinds if not g or
                  kinds.index(k) >= kinds.index(g[-1])]
    return [draw(player, pile, *g) for g in groups]


def test_a_players_page_learns_nothing_of_other_hands_from_draws():
    """Bo privately draws the last 2 Wildcards (or, in the twin world, Egg and Spices). Ana's
    page must be offered the same draws in both worlds, and every draw she might log (all
    45 pairs of Ingredients) must get the same answer in both: otherwise a refusal ('no
    Wildcard can be in the Ingredient pile') tells her what bo holds."""
    last_wild, other = two_worlds([(WILD, WILD), (EGG, SPICES)])
    assert G.public_view(last_wild) == G.public_view(other)
    assert G.private_events(last_wild, "ana") == G.private_events(other, "ana")
    assert G.private_view(last_wild, "ana") == G.private_view(other, "ana")
    assert draw("ana", "ingredient", WILD, WILD) in G.private_events(last_wild, "ana")
    probes = all_draws("ana", "ingredient", 2)
    assert len(probes) == 36
    assert [outcome(last_wild, ev) for ev in probes] == [outcome(other, ev) for ev in probes]
    # ana logs a Wildcard: possible as far as she can know, so it is accepted in both worlds
    a = play(last_wild, draw("ana", "ingredient", WILD, EGG), faults=True)
    b = play(other, draw("ana", "ingredient", WILD, EGG))
    assert G.private_view(a, "ana") == G.private_view(b, "ana")
    assert G.private_events(a, "ana") == G.private_events(b, "ana")
    assert G.public_view(a) == G.public_view(b)
    # the Action draws she may log get the same answers too
    actions = all_draws("ana", "action", 1)
    assert [outcome(a, ev) for ev in actions] == [outcome(b, ev) for ev in actions]
    # the clash is the host's to sort out: 4 Wildcards logged, 3 in the game
    assert G.host_view(b)["inconsistent"] == [] and G.host_view(b)["faults"] == []
    host = G.host_view(a)
    assert host["inconsistent"] == [{"card": WILD, "name": "Wildcard", "logged": 4,
                                     "in_game": 3, "text": "Wildcard (4 logged, 3 in the game)"}]
    (fault,) = host["faults"]
    assert fault["event"] == {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2}
    assert fault["over"] == {WILD: 1} and "Wildcard (4 logged, 3 in the game)" in fault["text"]
    assert fault["turn"] == 3 and "ana draws 2" in fault["text"]
    # the game goes on: ana's hand is hers as she logged it, and the chances still add up
    a = play(a, draw("ana", "action", PI),
             {"type": "cook", "dish": NL, "cards": [MEAT, RICE, WILD]}, RESOLVE, faults=True)
    assert G.scores(a)["ana"] == 3 and G.host_view(a)["inconsistent"][0]["logged"] == 4
    a = play(a, END, {"type": "dish", "card": MLXG}, NO_EVENT, faults=True)
    assert len(G.host_view(a)["faults"]) == 1
    assert sum(p for _, p in G.chance_outcomes(a)) == 1


def test_a_players_own_moves_are_checked_against_what_they_can_know():
    """Ana's first draw was logged without its cards (the host's fallback): whether she may
    cook with a Wildcard from it must not depend on bo holding the other Wildcards."""
    worlds = []
    for bo_draw in ((WILD, WILD), (EGG, SPICES)):
        s = start()
        s = play(s, NO_EVENT, {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2},
                 draw("ana", "action", CC), END, NO_EVENT, draw("bo", "ingredient", *bo_draw),
                 draw("bo", "action", CC), END, NO_EVENT, draw("ana", "ingredient", EGG, EGG),
                 draw("ana", "action", CC))
        worlds.append(s)
    last_wild, other = worlds
    assert G.private_events(last_wild, "ana") == G.private_events(other, "ana")
    cook = {"type": "cook", "dish": NL, "cards": [MEAT, RICE, WILD]}
    assert cook in G.private_events(last_wild, "ana")
    moves = [e for e in G.private_events(other, "ana") if e["type"] != "end_turn"]
    assert [outcome(last_wild, e) for e in moves] == [outcome(other, e) for e in moves]
    a = play(last_wild, cook, faults=True)
    assert [f["over"] for f in G.host_view(a)["faults"]] == [{WILD: 1}]
    assert G.host_view(play(other, cook))["faults"] == []
    # what her own logged hand rules out is still refused, with the same words in both
    too_many = {"type": "cook", "dish": ROJAK, "cards": [MEAT, RICE, FLOUR, FLOUR, FLOUR]}
    assert outcome(last_wild, too_many) == outcome(other, too_many) != "accepted"


def test_a_blind_pick_from_another_hand_is_checked_against_what_the_picker_knows():
    """poisoning_chooser 'left': bo draws ana's 2 lost cards blind. His page is offered, and
    accepted, whatever ana's hand may hold as far as he knows; a pick that does not fit
    ana's hand as she logged it is a fault for the host, and the tracker forgets which
    Ingredients she holds (they stay counted)."""
    opts = {"poisoning_hold": "seconds", "poisoning_chooser": "left"}
    worlds = [play(start(hands={"ana": (ing, PI), "bo": ([FLOUR, WATER, EGG, WILD], LS)},
                         **opts), EVENT, poison("ana"))
              for ing in ([MEAT, RICE, CHILI, WATER], [SPICES, SPICES, CHILI, CHILI])]
    a, b = worlds
    assert G.private_events(a, "bo") == G.private_events(b, "bo")
    picks = [e for e in G.private_events(a, "bo") if e["type"] == "lose"]
    assert {"type": "lose", "player": "ana", "cards": [SPICES, SPICES]} in picks
    assert [outcome(a, e) for e in picks] == [outcome(b, e) for e in picks] == \
        ["accepted"] * len(picks)
    s = play(a, {"type": "lose", "player": "ana", "cards": [SPICES, SPICES]}, faults=True)
    assert G.private_view(s, "ana")["hand"] == [PI]
    assert G.private_view(s, "ana")["unknown"] == {"ingredient": 2, "action": 0}
    (fault,) = G.host_view(s)["faults"]
    assert "forgets which Ingredient cards ana holds" in fault["text"]
    assert G.host_view(s)["inconsistent"] == []
    # a pick that fits her hand is no fault
    s = play(a, {"type": "lose", "player": "ana", "cards": [CHILI, PI]})
    assert G.host_view(s)["faults"] == [] and hand(s, "ana") == [MEAT, RICE, WATER]


def test_public_view_depends_only_on_public_events():
    """The wire check: a game whose private draws are replaced by their public form shows
    the table exactly the same at every step; no public view names a card in a hand."""
    rng = random.Random(5)
    rep = random_game(rng, ["ana", "bo", "cy"], {})
    twin = Replay.start("hawker", ["ana", "bo", "cy"], {})
    for i, ev in enumerate(rep.events):
        twin.apply(G.public_event(ev))
        real = rep.states[len(twin.events)]
        view = json.dumps(G.public_view(twin.state))
        assert '"hand": [' not in view and '"known"' not in view
        assert G.public_view(twin.state) == G.public_view(real)
        assert G.host_view(twin.state) == G.host_view(real)
        if i % 7 == 0:                        # the host console's offers show no hand either
            assert G.host_events(twin.state) == G.host_events(real)
    assert any(e["type"] == "draw" and "cards" in e for e in rep.events)


# -- random play ----------------------------------------------------------------

def random_step(s, rng) -> dict:
    """Chance sampled from chance_outcomes, decisions uniform (as the tracker knows the
    hands), race outcomes from race_outcomes()."""
    req = G.race_request(s)
    if req is not None and (G._hold_blocks(s) or rng.random() < 0.2):
        return rng.choice(G.race_outcomes(s))
    decisions = G.decisions(s, "tracker")
    chance = G.chance_outcomes(s)
    if chance and (not decisions or rng.random() < 0.9):
        assert sum(p for _, p in chance) == 1
        x, acc = Fraction(rng.random()), Fraction(0)
        for ev, p in chance:
            acc += p
            if x < acc:
                return ev
        return chance[-1][0]
    assert decisions, G.public_view(s)["pending"]
    return rng.choice(decisions)


def random_game(rng, players, options, undo_every=0, max_events=4000) -> Replay:
    rep = Replay.start("hawker", players, options)
    G.check_invariants(rep.state)
    for step in range(max_events):
        if G.finished(rep.state):
            return rep
        ev = random_step(rep.state, rng)
        before = rep.state
        rep.apply(ev)
        G.check_invariants(rep.state)
        view = G.host_view(rep.state)      # the tracker's own draws never clash
        assert json.dumps(view) and not view["faults"] and not view["inconsistent"]
        if undo_every and step % undo_every == 0:
            after = rep.state
            rep.apply({"type": "undo"})
            assert rep.state is before
            rep.apply(ev)
            assert rep.state == after
    raise AssertionError("game not finished")


def test_every_listed_event_is_legal_in_a_random_game():
    """What the host console and a player's page offer is accepted (a sample each step)."""
    rng = random.Random(11)
    hand_moves = ("cook", "play", "trade", "stop", "lose", "discard")
    for options in ({}, {"draws": "public", "poisoning_hold": "seconds"}):
        s = G.setup(["ana", "bo", "cy"], options)
        steps = 0
        while not G.finished(s) and steps < 120:
            offered = G.decisions(s, "tracker") + [e for e, _ in G.chance_outcomes(s)]
            private = [e for p in s["players"] for e in G.private_events(s, p)]
            # a player's page offers the draws possible as far as that player knows: the
            # real draw is always among them, and each is accepted (a clash with a hand the
            # player cannot see is a fault for the host, never a refusal that tells them)
            assert all(e in private for e, _ in G.chance_outcomes(s) if e["type"] == "draw"
                       and "cards" in e)
            for ev in rng.sample(private, min(8, len(private))):
                G.check_invariants(G.apply(s, ev))
            # the host console's offers: hand moves are what public information allows,
            # which a real (logged) hand may refuse; everything else must be accepted
            offered += [e for e in G.host_events(s) if e["type"] not in hand_moves
                        or options.get("draws") == "public"]
            for ev in rng.sample(offered, min(5, len(offered))):
                G.apply(s, ev)
            s = G.apply(s, random_step(s, rng))
            steps += 1


def blind(s, player):
    """``s`` as if every hand but ``player``'s had been drawn unlogged: the tracker knows
    of them only what the table saw, and nothing the table did not see of the pile."""
    out = json.loads(json.dumps(s))
    for q, h in out["hands"].items():
        if q != player:
            h["known"] = dict(h["public"])
    out["ipile"]["known"] = dict(out["ipile"]["public"])
    return type(s)(out)


@pytest.mark.slow
def test_a_players_page_depends_only_on_what_that_player_knows():
    """In random games, each player's page (offers, view, and the answer to anything they
    log, offered or a probe) is the same when the other hands are unknown to the tracker."""
    rng = random.Random(23)
    for options in ({}, {"poisoning_chooser": "left", "poisoning_hold": "seconds"}):
        s = G.setup(["ana", "bo", "cy"], options)
        steps = 0
        while not G.finished(s) and steps < 150:
            for p in s["players"]:
                twin = blind(s, p)
                G.check_invariants(twin)
                mine = G.private_events(s, p)
                assert mine == G.private_events(twin, p)
                assert G.private_view(s, p) == G.private_view(twin, p)
                due = G._draw_due(s, p)
                probes = all_draws(p, due["pile"], due["count"]) if due and \
                    due["count"] <= 2 else []
                for ev in rng.sample(mine, min(3, len(mine))) + \
                        rng.sample(probes, min(6, len(probes))):
                    assert outcome(s, ev) == outcome(twin, ev), ev
            s = G.apply(s, random_step(s, rng))
            steps += 1


def test_bad_input_is_refused_with_a_clear_error():
    s = turn(start())
    for ev in ({"type": "cook"}, {"type": "cook", "dish": NL, "cards": "meat"},
               {"type": "cook", "dish": NL, "cards": {MEAT: -1}},
               {"type": "trade", "give": [1, 2], "take": EGG}, {"type": "play", "card": None},
               {"type": "draw", "count": True}, {"type": "bake"}, {"type": "stop"},
               {"type": "lose", "cards": [EGG, EGG]}, {"type": "reshuffle", "keep": []}):
        with pytest.raises(RulesError):
            G.apply(s, ev)
    assert G.describe({"type": "cook", "dish": NL, "cards": "x"})


# -- the example game ---------------------------------------------------------------

def test_the_example_game_replays_to_the_winning_cook():
    path = ROOT / "docs" / "examples" / "hawker.jsonl"
    rep = replay_lines(path.read_text().splitlines())
    s = rep.state
    assert G.finished(s)
    assert s["winner"] == "bo" and G.scores(s) == {"ana": 10, "bo": 16}
    assert G.ranking(s) == [["bo"], ["ana"]]
    assert rep.events[-1]["type"] in ("resolve", "cook")


# -- steps the tracker takes by itself (issue 23) -----------------------------------

def test_a_draw_before_the_event_check_means_no_event_was_on_top():
    """'If you see an Event card at the top of the Action draw pile, play it immediately
    before starting your turn': a draw logged first says none was seen."""
    s = start()
    s = play(s, draw("ana", "ingredient", EGG, SPICES))
    assert G.public_view(s)["pending"]["kind"] == "draw"
    assert G.public_view(s)["event_odds"]["cards_left"] == 23      # nothing left the pile yet
    s = play(s, NO_EVENT)              # logged anyway (a slow console): the same step
    refused(s, NO_EVENT, "cannot check")          # ... but only once
    s = play(s, draw("ana", "action", FR))
    assert G.public_view(s)["pending"]["kind"] == "play"


def test_a_refill_with_one_possible_dish_turns_it_up_by_itself():
    s = start(dishes=(NL, YT, FHC, MLXG))
    s["dish_total"] = {NL: 1, YT: 1, FHC: 1, MLXG: 1, ROJAK: 2}   # only Rojak left unseen
    s["dish_pile"] = 2
    s = play(turn(s), {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]}, RESOLVE, END)
    view = G.public_view(s)
    assert [d and d["dish"] for d in view["open_dishes"]] == [ROJAK, YT, FHC, MLXG]
    assert view["pending"]["kind"] == "check" and view["piles"]["dish"] == 1
    s = play(s, {"type": "dish", "card": ROJAK})          # logged anyway: accepted once
    assert G.public_view(s)["piles"]["dish"] == 1
    refused(s, {"type": "dish", "card": ROJAK}, "cannot turn a dish")


def test_an_action_nobody_can_stop_takes_effect_without_a_resolve():
    """Nobody else holds an Action card, as the whole table can see: no Stop can come."""
    hands = {"ana": ([MEAT, RICE, CHILI, WATER], PI), "bo": ([FLOUR, WATER, EGG, WILD], PI)}
    s = turn(start(hands=hands))                   # ana draws a Copycat Stall
    s = play(s, {"type": "play", "card": PI, "target": "bo"},     # bo may hold a Stop
             {"type": "play", "card": CC, "target": "bo"}, END)
    s = turn(s, (EGG, EGG), CC)
    s = play(s, {"type": "play", "card": PI, "target": "ana"})
    # ana played both her Action cards and drew none since: nobody can stop it
    assert G.public_view(s)["chain"] is None and G.public_view(s)["players"][0]["inflation"] == 1
    s = play(s, RESOLVE)               # the console's tap, after the fact: the same step
    assert G.public_view(s)["pending"]["kind"] == "play"


def test_players_choose_their_own_stall_and_the_last_one_left_is_taken_by_itself():
    s = G.setup(["ana", "bo"])
    assert G.private_events(s, "ana") == [
        {"type": "choose_stall", "player": "ana", "stall": k} for k in DATA["stalls"]]
    s = G.setup(["ana", "bo", "cy", "di"])
    s = play(s, *[{"type": "choose_stall", "player": p, "stall": k}
                  for p, k in (("ana", "malay"), ("bo", "chinese"), ("cy", "indian"))])
    assert s["stalls"]["di"] == "international"
    assert G.public_view(s)["pending"]["kind"] == "dish"


def test_a_page_never_offers_what_the_server_refuses_after_a_clash():
    """A 4th Wildcard logged (two logs disagree) is a fault for the host; each page then
    still offers only moves and draws the tracker accepts."""
    s = start()                                   # bo holds a Wildcard
    s = play(s, NO_EVENT, draw("ana", "ingredient", WILD, WILD), draw("ana", "action", FR),
             END, NO_EVENT, draw("bo", "ingredient", WILD, EGG), faults=True)
    view = G.host_view(s)
    assert view["inconsistent"][0]["text"] == "Wildcard (4 logged, 3 in the game)"
    assert "Wildcard (4 logged, 3 in the game)" in view["faults"][0]["text"]
    s = play(s, draw("bo", "action", CC), faults=True)
    for p in ("ana", "bo"):
        for ev in G.private_events(s, p):
            G.apply(s, ev)                        # none refused


def test_plain_words():
    s = turn(start())
    s = play(s, {"type": "cook", "dish": NL, "cards": [MEAT, RICE, CHILI]})
    text = G.public_view(s)["pending"]["text"]
    assert text.startswith("ana cooks Nasi Lemak: anyone holding Licence Suspended")
    assert G.public_view(s)["chain"]["text"] == "ana cooks Nasi Lemak"
    assert G.describe({"type": "draw", "player": "ana", "pile": "action", "count": 1}) == \
        "ana draws 1 Action card"
    with pytest.raises(RulesError) as info:
        G.apply(start(), draw("ana", "ingredient", EGG))
    assert "card(s)" not in str(info.value) and "2 Ingredient cards" in str(info.value)


def test_the_console_offers_the_turns_draw_while_the_event_check_is_due():
    """With public draws the host logs each draw: the turn's first draw is offered at
    once (no "no Event" tap), beside the Event that would come first."""
    s = G.setup(["ana", "bo"], {"draws": "public"})
    s = play(s, *[{"type": "choose_stall", "player": p, "stall": k}
                  for p, k in (("ana", "malay"), ("bo", "chinese"))],
             *[{"type": "dish", "card": d} for d in (NL, YT, FHC, ROJAK)],
             *[{"type": "market", "card": c} for c in (EGG, WATER, SPICES)])
    while G.public_view(s)["pending"]["kind"] == "draw":
        s = play(s, next(e for e in G.host_events(s) if e["type"] == "draw"))
    offers = G.host_events(s)
    first = {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2}
    assert first in offers and EVENT in offers
    s = play(s, first)
    assert G.public_view(s)["pending"]["text"] == "ana draws 1 Action card"
