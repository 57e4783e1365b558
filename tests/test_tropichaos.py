"""Tropichaos tracker: one scenario per rule of the rulebook, hidden chip
stands, odds, then random play.

The scenarios are written from the rulebook (rules/004_b303d945b4f1f6f9.txt);
the readings where it is silent are in docs/rules-notes.md (Tropichaos). The
random games are played by a small physical table written here from the
rulebook (a real bag, real hands), which logs what a host and the players'
own pages would log; the tracker must accept all of it, offer it among its
legal events, keep the public view free of hidden fruits, and score the
game as the rulebook does.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import pytest

from companion.games import RulesError, get_game
from companion.record.gamefile import Replay, replay_lines
from tests.kit.conformance import check_replay

G = get_game("tropichaos")
ROOT = Path(__file__).resolve().parent.parent
FRUITS = ("kiwi", "mango", "pomegranate")
SEASONS = ("spring", "summer", "autumn")
K, M, P = FRUITS
#: the rulebook's table: "Sold in Spring | Sold in Summer | Sold in Autumn"
TABLE = {"kiwi": {"spring": 2, "summer": 1, "autumn": 1},
         "mango": {"spring": 1, "summer": 2, "autumn": 1},
         "pomegranate": {"spring": 0, "summer": 0, "autumn": 3}}
THREE = ["ana", "bo", "cy"]


def new(players=THREE, **options):
    return G.setup(list(players), options)


def play(state, *events):
    for ev in events:
        state = G.apply(state, ev)
        G.check_invariants(state)
    return state


def draw(chip):
    return {"type": "draw", "chip": chip}


def deal(player, chip="fruit"):
    return {"type": "deal", "player": player, "chip": chip}


def take(chip):
    return {"type": "take", "chip": chip}


def sell(count, **extra):
    return {"type": "sell", "count": count, **extra}


def started(players=THREE, market=(K, M, P), deals=None, **options):
    """Set up: the Market drawn, the starting chips dealt (hidden)."""
    s = new(players, **options)
    s = play(s, *map(draw, market))
    order = G.public_view(s)["order"]
    for p in deals if deals is not None else G.public_view(s)["deals"]:
        s = play(s, deal(p) if isinstance(p, str) else deal(*p))
    assert G.public_view(s)["phase"] == "turn", order
    return s


def view(s):
    return G.public_view(s)


def vp(s, name):
    return next(p for p in view(s)["players"] if p["name"] == name)


def refused(s, ev, words=""):
    with pytest.raises(RulesError) as exc:
        G.apply(s, ev)
    assert words.lower() in str(exc.value).lower(), str(exc.value)
    return exc.value


# -- components and set-up ---------------------------------------------------

def test_components_48_fruit_chips_and_12_season_chips_in_the_bag():
    """ "48 Fruit Chips (16 each): Kiwi, Mango, Pomegranate" · "12 Season Chips" ·
    "Put all of the fruit chips and season chips into the bag" """
    v = view(new())
    assert v["bag"] == {"chips": 60, "seasons": 12, "fruits": 48,
                        "unseen_fruits": {K: 16, M: 16, P: 16}, "hidden_in_hands": 0}
    assert v["odds"]["next_draw_season"]["fraction"] == "1/5"          # 12/60
    assert {k: o["fraction"] for k, o in v["odds"]["next_draw"].items()} == {
        "season": "1/5", K: "4/15", M: "4/15", P: "4/15"}


def test_season_marker_starts_on_S_and_the_board_layout_is_a_labelled_assumption():
    """ "place the season marker on the space in the upper left marked with an "S"" """
    v = view(new())
    assert v["board"]["marker"] == 0 and v["season"] == "spring"
    length = next(x for x in G.info()["settings"] if x["name"] == "season_length")
    assert length["assumed"] is True and length["kind"] == "choice"
    assert length["default"] == "full" and view(new())["board"]["spaces"][-1] == "end"
    s = new(season_board=["summer", "autumn", "end"])
    assert view(s)["season"] == "summer" and view(s)["board"]["moves_left"] == 2
    assert view(s)["rules"]["season_length"] == "custom"


def test_the_game_length_is_a_setting_with_named_boards_no_json():
    """Issue 23: "The Tropichaos season board as a setting with named lengths"."""
    length = next(x for x in G.info()["settings"] if x["name"] == "season_length")
    assert [c["value"] for c in length["choices"]] == ["full", "short", "quick"]
    assert length["choices"][0]["label"].startswith("Full game (8 moves")
    moves = {}
    for name in ("full", "short", "quick"):
        v = view(new(season_length=name))
        spaces = v["board"]["spaces"]
        assert spaces[0] == "spring" and spaces[-1] == "end"
        assert {"spring", "summer", "autumn"} <= set(spaces)   # every season has its turn
        assert v["rules"]["season_length"] == name
        moves[name] = v["board"]["moves_left"]
    assert moves == {"full": 8, "short": 6, "quick": 3}
    with pytest.raises(RulesError, match="season_length"):
        new(season_length="marathon")


def test_a_board_longer_than_the_season_chips_or_malformed_is_refused():
    for bad in (["spring"] * 13 + ["end"], ["spring", "winter", "end"], ["spring"], "x",
                ["spring", "summer"]):
        with pytest.raises(RulesError):
            new(season_board=bad)


def test_market_is_three_chips_drawn_from_the_bag():
    """ "Take out 3 chips from the bag, and line them face up in the middle of the play
    area. This is called the "Market"." """
    s = play(new(), draw(K), draw(M))
    assert view(s)["phase"] == "market" and view(s)["market"] == [K, M]
    s = play(s, draw(K))
    assert view(s)["market"] == [K, M, K] and view(s)["bag"]["chips"] == 57
    assert view(s)["phase"] == "deal"


def test_market_season_chip_is_redrawn():
    """ "If a season chip or 3 of the same type of fruit are drawn from the bag, please
    redraw until there are 3 chips and at least 2 different kinds of fruit." """
    s = play(new(), draw(K), draw("season"))
    v = view(s)
    assert v["market"] == [K] and v["bag"]["seasons"] == 12 and v["bag"]["chips"] == 59
    assert v["board"]["marker"] == 0 and v["returned"]["season"] == 1


def test_market_third_fruit_of_a_kind_is_redrawn():
    """ "... or 3 of the same type of fruit are drawn ... redraw until there are 3 chips and
    at least 2 different kinds of fruit." """
    s = play(new(), draw(M), draw(M), draw(M))
    assert view(s)["market"] == [M, M] and view(s)["bag"]["chips"] == 58
    s = play(s, draw(P))
    assert view(s)["market"] == [M, M, P]


def test_market_redraw_setting_returns_the_whole_market():
    s = play(new(market_redraw="market"), draw(M), draw(K), draw("season"))
    assert view(s)["market"] == [] and view(s)["bag"]["chips"] == 60


def test_last_and_second_to_last_players_take_one_starting_chip():
    """ "The last player and the second to last player in the turn order each take 1 chip
    from the bag, and place them in their starting hand." """
    s = play(new(["ana", "bo", "cy", "di"]), draw(K), draw(M), draw(P))
    assert view(s)["deals"] == ["cy", "di"]
    refused(s, deal("bo"), "cy")
    refused(s, take(K), "cannot take")
    s = play(s, deal("cy"), deal("di"))
    assert [p["hand"] for p in view(s)["players"]] == [0, 0, 1, 1]
    assert view(s)["current_player"] == "ana" and view(s)["bag"]["chips"] == 55
    s = play(new(["ana", "bo", "cy", "di"], starting_player="bo"), draw(K), draw(M), draw(P))
    assert view(s)["order"] == ["bo", "cy", "di", "ana"]
    assert view(s)["deals"] == ["di", "ana"]


def test_two_players_the_non_starting_player_takes_one_chip():
    """ "When playing a 2-player game: The player that isn't the starting player takes 1
    chip." """
    s = play(new(["ana", "bo"]), draw(K), draw(M), draw(P))
    assert view(s)["deals"] == ["bo"]
    s = play(new(["ana", "bo"], starting_player="bo"), draw(K), draw(M), draw(P))
    assert view(s)["deals"] == ["ana"]


def test_season_chip_drawn_for_a_hand_is_revealed_returned_and_drawn_again():
    """ "If a season chip is drawn, reveal it and then return it to the bag. Keep drawing
    until a fruit chip appears." """
    s = play(new(), draw(K), draw(M), draw(P))
    s = play(s, deal("bo", "season"))
    v = view(s)
    assert v["deals"] == ["bo", "cy"] and v["bag"]["chips"] == 57 and v["bag"]["seasons"] == 12
    assert v["board"]["marker"] == 0 and vp(s, "bo")["hand"] == 0
    outcomes = dict((e["chip"], p) for e, p in G.chance_outcomes(s))
    assert outcomes == {"season": Fraction(12, 57), "fruit": Fraction(45, 57)}


# -- a turn: Take ------------------------------------------------------------

def test_take_puts_the_chip_in_hand_and_a_draw_replaces_it():
    """ "Choose 1 of the 3 chips in the market and add it to your hand." · "Take 1 chip from
    the bag and place it face up in the previous chip's location." """
    s = started()
    s = play(s, take(M))
    v = view(s)
    assert v["market"] == [K, P] and vp(s, "ana")["hand"] == 1 and v["phase"] == "draw"
    assert vp(s, "ana")["taken"] == {M: 1}                 # what was taken is public
    refused(s, take(K), "cannot take")
    s = play(s, draw(K))
    assert view(s)["market"] == [K, K, P] and view(s)["current_player"] == "bo"
    refused(started(), take(K) | {"slot": 2}, "slot")
    refused(started(market=(K, K, M)), take(P), "no pomegranate")


def test_on_your_turn_take_or_sell_and_turns_go_clockwise():
    """ "On your turn you must either "(1) Take" or "(2) Sell"." · "turns are taken clockwise
    in order from the starting player" """
    s = started()
    assert G.decisions(s) == [take(K) | {"player": "ana"}, take(M) | {"player": "ana"},
                              take(P) | {"player": "ana"}]     # ana holds nothing to sell
    s = play(s, take(K), draw(M))
    assert view(s)["current_player"] == "bo"
    assert G.decisions(s) == [take(M) | {"player": "bo"}, take(P) | {"player": "bo"},
                              sell(1, player="bo")]           # bo's starting chip
    s = play(s, sell(1))
    assert view(s)["current_player"] == "cy"
    refused(s, take(M) | {"player": "ana"}, "cy")


def cycle_take(s, chip):
    """The current player takes ``chip`` and the same fruit comes out of the bag: the
    Market is as it was (never overstocked)."""
    return play(s, take(chip), draw(chip))


def test_holding_five_chips_you_can_only_sell():
    """ "If you have 5 chips in your hand when your turn comes, you can only "(2) Sell"." """
    s = started(["ana", "bo"], deals=["bo"])
    for chip in (K, M, P, K):
        s = cycle_take(cycle_take(s, chip), chip)        # ana, then bo
    assert (vp(s, "ana")["hand"], vp(s, "bo")["hand"]) == (4, 5)
    s = cycle_take(s, M)                                 # ana may still Take: 5 chips
    assert view(s)["current_player"] == "bo" and vp(s, "bo")["must_sell"]
    refused(s, take(K), "you can only sell")
    assert G.decisions(s) == [sell(5, player="bo")]
    s = play(s, sell(5))
    refused(s, take(K), "you can only sell")             # ana now holds 5
    assert G.decisions(s) == [sell(5, player="ana")]


def test_overstocked_taker_gets_a_deduction_and_exchanges():
    """ "After replenishing the previous chip, if there are 3 of the same type of fruit in the
    market, it becomes overstocked. The player that took the fruit during that turn receives
    1 deduction chip. Then, you must exchange the fruit chips in the market with any fruit
    chip from your hand, except for the fruit that is overstocked" """
    s = started(market=(K, K, M))
    s = play(s, take(M), draw(P))             # ana: M              market K K P
    s = play(s, take(P), draw(M))             # bo: start + P       market K K M
    s = play(s, take(M), draw(K))             # cy: start + M       market K K K
    v = view(s)
    assert v["phase"] == "exchange" and v["overstocked"] == K and v["current_player"] == "cy"
    assert vp(s, "cy")["deductions"] == 1
    # cy holds the Mango just taken and a starting chip the table has not seen
    assert [e["give"] for e in G.decisions(s)] == [[M], [P]]
    refused(s, {"type": "exchange", "give": [K]}, "except for the fruit that is overstocked")
    refused(s, {"type": "exchange", "give": [M, P]}, "exactly one")
    refused(s, {"type": "exchange", "give": []}, "give")
    s = play(s, {"type": "exchange", "give": [M]})
    v = view(s)
    assert v["market"] == [M, K, K] and v["current_player"] == "ana"
    assert vp(s, "cy")["taken"] == {M: 1, K: 1} and vp(s, "cy")["given"] == {M: 1}
    assert vp(s, "cy")["hand"] == 2


def test_overstock_exchange_tells_what_the_taker_holds():
    """ "exchange ... with any fruit chip from your hand": giving a Pomegranate says cy's
    starting chip was one."""
    s = started(market=(K, K, M))
    s = play(s, take(M), draw(P), take(P), draw(M), take(M), draw(K))
    s1 = play(s, {"type": "exchange", "give": [P]})
    assert view(s1)["market"] == [P, K, K]
    refused(s1, {"type": "starting_hand", "player": "cy", "chip": K}, "does not fit")
    play(s1, {"type": "starting_hand", "player": "cy", "chip": P})
    # cy named a Kiwi first: then only the Mango can be given
    s2 = play(s, {"type": "starting_hand", "player": "cy", "chip": K})
    refused(s2, {"type": "exchange", "give": [P]}, "does not fit")
    assert [e["give"] for e in G.decisions(s2)] == [[M], [P]]    # the host sees no secret


def test_overstock_with_one_possible_exchange_is_made_automatically():
    """ana holds only the Mango she took in public: the exchange is forced."""
    s = started(market=(K, K, M))
    s = play(s, take(M), draw(K))
    v = view(s)
    assert vp(s, "ana")["deductions"] == 1 and v["market"] == [M, K, K]
    assert vp(s, "ana")["hand"] == 1
    assert vp(s, "ana")["taken"] == {M: 1, K: 1} and vp(s, "ana")["given"] == {M: 1}
    assert v["current_player"] == "bo" and any("exchanges" in n for n in v["news"])
    # logged anyway (the host saw it happen at the table): the same step, not a refusal
    same = play(s, {"type": "exchange", "player": "ana", "give": [M]})
    assert same["stands"] == s["stands"] and same["market"] == s["market"]
    assert view(same)["current_player"] == "bo" and "same step" in view(same)["news"][0]
    assert play(s, {"type": "exchange", "give": [M]})["stands"] == s["stands"]
    refused(s, {"type": "exchange", "player": "ana", "give": [P]}, "only one possible: Mango")
    refused(s, {"type": "exchange", "player": "bo", "give": [M]}, "already made ana's")
    # only right after it: once the next step is logged, an exchange is out of turn
    later = play(s, take(K))
    refused(later, {"type": "exchange", "player": "ana", "give": [M]}, "cannot exchange now")


def test_overstock_exchange_several_setting():
    """Setting overstock_exchange="several": the taker may exchange more than one chip, as
    long as the Market keeps at least 2 kinds of fruit."""
    s = started(market=(K, K, M), overstock_exchange="several")
    s = play(s, take(M), draw(P), take(P), draw(M), take(M), draw(K))
    options = [e["give"] for e in G.decisions(s)]
    assert options == [[M], [P], [M, M], [M, P]]       # [M, M]: if the starting chip is M
    s = play(s, {"type": "exchange", "give": [M, P]})
    assert view(s)["market"] == [M, P, K]
    assert vp(s, "cy")["taken"] == {M: 1, K: 2} and vp(s, "cy")["hand"] == 2


def test_a_season_chip_moves_the_marker_leaves_the_market_and_is_replaced():
    """ "After replenishing the previous chip, if a season chip appeared, move the season
    marker on the season board to the next space and continue the season. Remove that
    season chip from the market, take out a new chip, and place it in the market." """
    s = started()
    s = play(s, take(K), draw("season"))
    v = view(s)
    assert v["board"]["marker"] == 1 and v["seasons_out"] == 1 and v["bag"]["seasons"] == 11
    assert v["phase"] == "draw" and v["market"] == [M, P]
    s = play(s, draw(K))
    assert view(s)["market"] == [K, M, P] and view(s)["current_player"] == "bo"


def test_season_chips_that_keep_appearing_move_the_marker_each_time():
    """ "If season chips keep appearing, repeat this process." """
    s = started()
    s = play(s, take(K), draw("season"), draw("season"), draw("season"))
    assert view(s)["board"]["marker"] == 3 and view(s)["season"] == "summer"
    s = play(s, draw(M))
    assert view(s)["phase"] == "turn"


def test_the_game_ends_when_the_marker_reaches_the_final_space():
    """ "Once the season marker reaches the final space, the game ends." """
    s = started(season_board=["spring", "summer", "end"])
    s = play(s, take(K), draw("season"))
    assert not G.finished(s) and view(s)["phase"] == "draw"
    s = play(s, draw("season"))
    # nobody sold anything: nothing to turn over
    assert G.finished(s) and G.legal_events(s) == []
    refused(s, take(M), "game is over")


# -- a turn: Sell ------------------------------------------------------------

def hand_of(n, **options):
    """ana's turn, holding n chips taken in public (Kiwi, Mango, Pomegranate, Kiwi, Mango);
    bo sells the starting chip, then Takes Kiwis and sells them."""
    s = started(["ana", "bo"], market=(K, M, P), deals=["bo"], **options)
    for chip in (K, M, P, K, M)[:n]:
        s = cycle_take(s, chip)
        s = play(s, sell(1)) if vp(s, "bo")["hand"] else cycle_take(s, K)
    assert view(s)["current_player"] == "ana" and vp(s, "ana")["hand"] == n
    return s


@pytest.mark.parametrize("n", [1, 3, 5])
def test_odd_hands_sell_all(n):
    """ "If you have an odd number of chips in your hand (1, 3, or 5), you must sell all of
    them." """
    s = hand_of(n)
    for wrong in range(1, n):
        refused(s, sell(wrong), "must sell all")
    s = play(s, sell(n))
    assert vp(s, "ana")["hand"] == 0 and vp(s, "ana")["sold"]["spring"] == n


@pytest.mark.parametrize("n", [2, 4])
def test_even_hands_sell_half_or_all(n):
    """ "If you have an even number of chips in your hand (2 or 4), you can choose to sell
    half of them or all of them. (You can choose which chips you want to sell.)" """
    s = hand_of(n)
    assert [e["count"] for e in G.decisions(s) if e["type"] == "sell"] == [n // 2, n]
    for wrong in set(range(0, n + 2)) - {n // 2, n}:
        refused(s, sell(wrong), "half")
    half = play(s, sell(n // 2))
    assert vp(half, "ana")["hand"] == n // 2 and vp(half, "ana")["sold_total"] == n // 2
    assert vp(play(s, sell(n)), "ana")["hand"] == 0


def test_an_empty_hand_cannot_sell():
    s = started()
    refused(s, sell(0), "no chip to sell")
    assert all(e["type"] == "take" for e in G.decisions(s))


def test_sales_lie_face_down_by_season_and_the_public_sees_counts_only():
    """ "Players add up the points of the face-down chips in front of their chip stand for
    each season." """
    s = hand_of(2)
    s = play(s, sell(1, chips=[K]))
    p = vp(s, "ana")
    assert p["sold"] == {"spring": 1, "summer": 0, "autumn": 0}
    assert p["revealed"] == {} and p["score"] is None
    assert "kiwi" not in json.dumps(G.public_event(sell(1, chips=[K], player="ana")))


def test_season_values_are_the_rulebooks_table():
    """ "If you sell a kiwi in spring it's worth 2 points and worth 1 point in other seasons.
    Mangos are worth 2 points in summer and 1 point in other seasons. Pomegranates are worth
    3 points in autumn and 0 points in other seasons." """
    from companion.games.tropichaos import sale_points
    for fruit, by_season in TABLE.items():          # one chip sold: the table's value
        for season, points in by_season.items():
            assert sale_points(season, [fruit]) == points, (fruit, season)
    assert sale_points("spring", [K, M, P]) == 3
    assert sale_points("summer", [K, M, P]) == 3
    assert sale_points("autumn", [K, M, P, P]) == 8


# -- the end and the score ---------------------------------------------------

def short_game(board=("spring", "summer", "autumn", "end")):
    """Two players; ana sells a Kiwi in spring and a Pomegranate in autumn; bo sells their
    starting chip and a Mango in summer and takes a deduction."""
    s = started(["ana", "bo"], market=(K, M, P), deals=["bo"], season_board=list(board))
    s = play(s, take(K), draw(K))                   # ana K; market M P K
    s = play(s, sell(1))                            # bo sells the starting chip (spring)
    s = play(s, sell(1))                            # ana sells K in spring: 2
    s = play(s, take(M), draw("season"), draw(P))   # bo M; summer; market P K P
    s = play(s, take(P), draw(M))                   # ana P; market K P M
    s = play(s, sell(1))                            # bo sells M in summer: 2
    s = play(s, take(K), draw("season"), draw(K))   # ana K; autumn; market P M K
    s = play(s, take(M), draw(K))                   # bo M; market P K K
    s = play(s, sell(2))                            # ana sells P K in autumn: 3 + 1
    return s


def test_end_score_is_sales_minus_deductions_hand_chips_count_nothing():
    """ "Your final score is the total of these points minus the number of deduction chips you
    have. Any chips left in your hand will not become points or deductions." """
    s = short_game()
    assert view(s)["season"] == "autumn" and vp(s, "bo")["hand"] == 1
    s = play(s, take(K), draw("season"))            # bo K (hand 2); the final space
    v = view(s)
    assert v["phase"] == "reveal" and not G.finished(s)
    # ana's piles are all worked out in public (she had no starting chip, and sold
    # all of her hand each time); bo's spring pile is his hidden starting chip
    assert v["face_down_piles"] == [{"player": "bo", "season": "spring"}]
    assert vp(s, "ana")["revealed"]["autumn"]["chips"] == {K: 1, P: 1}
    assert {e["chips"][0] for e in G.decisions(s)} == {K, M, P}
    s = play(s, {"type": "reveal", "player": "bo", "season": "spring", "chips": [P]})
    assert G.finished(s)
    assert G.scores(s) == {"ana": 2 + 3 + 1, "bo": 0 + 2}
    assert vp(s, "bo")["breakdown"]["sales"] == 2 and vp(s, "bo")["hand"] == 2
    assert G.ranking(s) == [["ana"], ["bo"]]


def test_a_reveal_that_does_not_fit_is_refused():
    s = short_game()
    s = play(s, take(K), draw("season"))
    refused(s, {"type": "reveal", "player": "bo", "season": "spring", "chips": [K, K]}, "1")
    refused(s, {"type": "reveal", "player": "ana", "season": "autumn", "chips": [K, K]},
            "already turned over: Kiwi, Pomegranate")
    refused(s, {"type": "reveal", "player": "bo", "season": "autumn", "chips": [K]}, "nothing")


def test_a_reveal_the_tracker_made_itself_is_accepted_as_the_same_step():
    """Issue 23: steps the tracker takes by itself (a pile the table can work out is
    turned over automatically) are accepted as the same step when logged anyway, even
    once the game is over."""
    s = short_game()
    s = play(s, take(K), draw("season"))
    assert "autumn" in s["auto_revealed"]["ana"]
    same = {"type": "reveal", "player": "ana", "season": "autumn", "chips": [P, K]}
    s2 = play(s, same)
    assert s2["revealed"] == s["revealed"] and "same step" in view(s2)["news"][0]
    s = play(s, {"type": "reveal", "player": "bo", "season": "spring", "chips": [P]})
    assert G.finished(s)
    done = play(s, same)                            # after the last pile: still the same step
    assert G.finished(done) and G.scores(done) == G.scores(s)
    refused(s, {"type": "reveal", "player": "ana", "season": "autumn", "chips": [K, K]},
            "already turned over")
    refused(s, take(K), "over")


def test_the_end_offers_only_reveals_that_fit_what_the_players_noted():
    """Issue 23: the console offered pile reveals the tracker then refused ("no way of
    filling ... chip stand") when a player had named her chips on her own page."""
    s = short_game()
    s = play(s, {"type": "starting_hand", "player": "bo", "chip": M})
    s = play(s, take(K), draw("season"))
    offered = G.decisions(s)
    assert offered == [{"type": "reveal", "player": "bo", "season": "spring", "chips": [M]}]
    s = play(s, offered[0])
    assert G.finished(s) and G.decisions(s) == []
    assert view(s)["status"] == "ana wins with 6 points"


def test_a_reveal_is_checked_against_what_the_player_logged():
    s = short_game()
    s = play(s, {"type": "starting_hand", "player": "bo", "chip": M})
    s = play(s, take(K), draw("season"))
    refused(s, {"type": "reveal", "player": "bo", "season": "spring", "chips": [P]}, "fit")
    s = play(s, {"type": "reveal", "player": "bo", "season": "spring", "chips": [M]})
    assert G.scores(s)["bo"] == 1 + 2


def tie_game(tiebreak="seat", players=THREE, market=(K, M, P), **options):
    """A one-move board: every sale is in spring."""
    return started(players, market=market, season_board=["spring", "end"],
                   latest_tiebreak=tiebreak, **options)


def reveal(player, chips, season="spring"):
    return {"type": "reveal", "player": player, "season": season, "chips": chips}


def test_tiebreak_most_chips_sold():
    """ "In case of a tie, the player that sold the most fruit chips is the winner." """
    s = tie_game()
    s = play(s, take(K), draw(M))             # ana: K               market M M P
    s = play(s, take(M), draw(K))             # bo: start + M        market K M P
    s = play(s, take(P), draw(P))             # cy: start + P        market K M P
    s = play(s, sell(1))                      # ana sells K in spring: 2
    s = play(s, sell(2))                      # bo sells both
    s = play(s, sell(2))                      # cy sells both
    s = play(s, take(K), draw("season"))      # the final space
    assert view(s)["face_down_piles"] == [{"player": "bo", "season": "spring"},
                                          {"player": "cy", "season": "spring"}]
    s = play(s, reveal("bo", [M, M]), reveal("cy", [K, P]))
    assert G.finished(s)
    assert G.scores(s) == {"ana": 2, "bo": 1 + 1, "cy": 2 + 0}
    # ana sold 1 chip, bo and cy 2: ana last; bo and cy still tied (no deductions):
    # the later in turn order wins
    assert G.ranking(s) == [["cy"], ["bo"], ["ana"]]


def test_tiebreak_fewer_deductions_before_turn_order():
    """ "If it's still tied, the player with fewer deduction chips wins." """
    s = tie_game(players=["ana", "bo"], market=(K, M, P))
    s = play(s, take(M), draw(K))             # ana: M               market K K P
    s = play(s, take(P), draw(K))             # bo: start + P        market K K K
    assert vp(s, "bo")["deductions"] == 1
    s = play(s, {"type": "exchange", "give": [P]})     # bo: start + K; market P K K
    s = play(s, sell(1))                      # ana sells M in spring: 1
    s = play(s, sell(1))                      # bo sells one of two
    s = play(s, take(P), draw("season"))
    s = play(s, reveal("bo", [K]))            # 2 - 1 deduction = 1
    assert G.scores(s) == {"ana": 1, "bo": 1}
    assert [vp(s, p)["sold_total"] for p in ("ana", "bo")] == [1, 1]
    assert G.ranking(s) == [["ana"], ["bo"]]  # bo is later in turn order but has a deduction


def test_last_tiebreak_latest_in_turn_order_and_the_recent_setting():
    """ "If it's still tied after that, the player that took their turn the latest is the
    winner": by default the later in the turn order from the starting player; setting
    latest_tiebreak="recent": whoever took a turn most recently."""
    for rule, expected in (("seat", [["cy"], ["bo"], ["ana"]]),
                           ("recent", [["ana"], ["cy"], ["bo"]])):
        s = tie_game(rule)
        s = play(s, take(K), draw(M))          # ana: K               market M M P
        s = play(s, take(M), draw(K))          # bo                   market K M P
        s = play(s, take(K), draw(P))          # cy                   market P M P
        s = play(s, take(M), draw("season"))   # ana ends the game; nobody sold
        assert G.finished(s) and G.scores(s) == {"ana": 0, "bo": 0, "cy": 0}
        assert G.ranking(s) == expected, rule


# -- hidden information -------------------------------------------------------

def test_hidden_starting_chip_and_sales_never_reach_the_public():
    """What a player took from the Market is public; their starting chip and their sales
    are not."""
    secret = [deal("bo", K), {"type": "starting_hand", "player": "cy", "chip": P},
              sell(1, chips=[K], player="bo"), {"type": "sold", "player": "cy", "sale": 0,
                                                  "chips": [P]}]
    for ev in secret:
        pub = G.public_event(ev)
        assert not any(f in json.dumps(pub) for f in FRUITS), pub
        assert not any(f in G.describe(ev).lower() for f in FRUITS), G.describe(ev)
    s = play(new(), draw(K), draw(M), draw(P), deal("bo", K), deal("cy"))
    s_pub = play(new(), draw(K), draw(M), draw(P), deal("bo"), deal("cy"))
    assert view(s) == view(s_pub)
    assert G.private_view(s, "bo")["chips"] == [K]
    assert G.private_view(s, "cy")["exact"] is False
    assert G.private_view(s_pub, "bo")["possible_hands"] == [[K], [M], [P]]


def test_player_pages_offer_their_own_events():
    s = play(new(), draw(K), draw(M), draw(P))
    assert G.private_events(s, "bo") == [deal("bo", f) for f in FRUITS]
    assert G.private_events(s, "ana") == []
    s = play(s, deal("bo"), deal("cy"))
    assert G.private_events(s, "bo") == [
        {"type": "starting_hand", "player": "bo", "chip": f} for f in FRUITS]
    s = play(s, take(K), draw(K), {"type": "starting_hand", "player": "bo", "chip": M})
    assert G.private_events(s, "bo") == [
        sell(1, player="bo", chips=[M])]
    s = play(s, sell(1))
    assert G.private_events(s, "bo") == [
        {"type": "sold", "player": "bo", "sale": 0, "chips": [M]}]


def test_private_view_works_out_sales_from_the_players_own_notes():
    """A sale the host logged by count is worked out on the seller's page when her stand
    allows one answer only (she sold all of a hand she knows)."""
    s = play(new(), draw(K), draw(M), draw(P), deal("bo", P), deal("cy"))
    s = play(s, take(M), draw(M))             # ana: Mango
    s = play(s, take(K), draw(K))             # bo: Pomegranate (noted) + Kiwi
    s = play(s, sell(1), sell(1))             # cy sells her starting chip; ana her Mango
    bo = G.private_view(s, "bo")
    assert bo["chips"] == [K, P] and bo["exact"]
    assert bo["now"]["points"] == 2 and [c["points"] for c in bo["coming"]] == [1 + 0, 1 + 3]
    assert G.private_view(s, "cy")["sales"][0]["chips"] is None    # cy noted nothing
    assert G.private_view(s, "ana")["sales"] == [
        {"season": "spring", "count": 1, "space": 0, "chips": [M], "named": False, "points": 1}]
    s = play(s, sell(2))                      # bo sells both
    assert G.private_view(s, "bo")["sales"][0]["chips"] == [K, P]
    assert G.private_view(s, "bo")["sold_points"] == 2 + 0
    assert view(s)["players"][1]["sold"]["spring"] == 2 and "points" not in json.dumps(
        view(s)["players"][1]["sales"])


def test_a_named_sale_is_checked_against_the_stand():
    """The tracker checks every sale it can: the fruits when it knows them."""
    s = hand_of(2)                              # ana took K and M in public
    refused(s, sell(1, chips=[P]), "does not fit")
    refused(s, sell(2, chips=[K, K]), "does not fit")
    s = play(s, sell(1, chips=[M]))
    assert G.private_view(s, "ana")["chips"] == [K]


def test_private_view_shows_the_stand_and_its_worth_now_and_in_coming_seasons():
    s = hand_of(3, season_board=["spring", "summer", "autumn", "spring", "end"])
    pv = G.private_view(s, "ana")
    assert pv["exact"] and sorted(pv["chips"]) == sorted([K, M, P])
    assert pv["now"] == {"season": "spring", "points": 3, "min": 3, "max": 3}
    assert [(c["season"], c["points"]) for c in pv["coming"]] == [("summer", 3),
                                                                  ("autumn", 5)]
    assert pv["worth"]["autumn"]["points"] == 1 + 1 + 3


def test_a_draw_the_bag_cannot_hold_is_refused():
    """The tracker checks what is left in the bag: 16 chips of each fruit."""
    s = started(["ana", "bo"], market=(K, M, P), deals=["bo"])
    while True:
        v = view(s)
        if v["phase"] == "turn":
            cur = v["current_player"]
            s = play(s, sell(5) if vp(s, cur)["hand"] == 5 else take(K))
        elif v["bag"]["unseen_fruits"][K] == 1:
            break
        else:
            s = play(s, draw(K))
    # one Kiwi unseen: in the bag, or bo's hidden starting chip
    assert dict((e["chip"], p) for e, p in G.chance_outcomes(s))[K] > 0
    named = play(s, {"type": "starting_hand", "player": "bo", "chip": K})
    refused(named, draw(K), "does not fit")
    assert view(named) == view(s)
    s = play(s, draw(K))                       # so bo's starting chip is no Kiwi
    assert view(s)["bag"]["unseen_fruits"][K] == 0
    while view(s)["phase"] != "draw":
        cur = view(s)["current_player"]
        s = play(s, sell(5) if vp(s, cur)["hand"] == 5 else take(view(s)["market"][0]))
    refused(s, draw(K), "all 16 kiwi chips are accounted for")
    assert K not in [e["chip"] for e, _ in G.chance_outcomes(s)]
    refused(play(new(), draw(K), draw(M), draw(P), deal("bo"), deal("cy")),
            {"type": "starting_hand", "player": "ana", "chip": K}, "no starting chip")


def test_bad_events_give_clear_errors():
    s = started()
    for ev in ({"type": "fly"}, take("banana"), take(None), sell("2"), {"type": "exchange"},
               {"type": "reveal"}, deal("ana"), {"type": "sold", "player": "ana", "sale": 3},
               {"type": "starting_hand", "player": "ana", "chip": K},
               {"type": "starting_hand", "player": "zed", "chip": K}, draw("season")):
        with pytest.raises(RulesError):
            G.apply(s, ev)
    with pytest.raises(RulesError):
        G.apply(s, "take")


# -- odds --------------------------------------------------------------------

def test_odds_next_draw_and_season_before_a_players_next_turn():
    """Season chips are never hidden: the chance that the next draw is one is exact; the
    chance the season moves before a player's next turn assumes everyone before them
    Takes."""
    s = started()                       # 57 chips: 12 Season, 45 fruit (2 in hands? no)
    v = view(s)
    assert v["bag"]["chips"] == 55 and v["bag"]["seasons"] == 12
    assert v["odds"]["next_draw_season"]["fraction"] == "12/55"
    # ana's turn: before bo's next turn only ana draws; before cy's, ana and bo; before
    # ana's own next turn all three
    for p, d in (("bo", 1), ("cy", 2), ("ana", 3)):
        no_season = Fraction(1)
        for i in range(d):
            no_season *= Fraction(43 - i, 55 - i)
        assert vp(s, p)["draws_before_turn"] == d
        assert vp(s, p)["season_moves_before_turn"]["fraction"] == str(1 - no_season)


def test_fruit_odds_count_hidden_starting_chips_as_possibly_in_the_bag():
    """ "chips still hidden in hands count as possibly in the bag for the public view" """
    s = started(market=(K, K, M))
    odds = G.draw_odds(s)
    # unseen fruit: 14 K, 15 M, 16 P (45 = 43 in the bag + 2 hidden); 55 chips in the bag
    assert odds == {"season": Fraction(12, 55), K: Fraction(43, 55) * Fraction(14, 45),
                    M: Fraction(43, 55) * Fraction(15, 45), P: Fraction(43, 55) * Fraction(16, 45)}
    assert sum(odds.values()) == 1
    assert odds == brute_force_odds(s)


# -- the example game ---------------------------------------------------------

def test_example_game_replays_to_the_rulebook_scores_and_a_tiebreak():
    with open(ROOT / "docs" / "examples" / "tropichaos.jsonl") as f:
        rep = replay_lines(f)
    s = rep.state
    assert G.finished(s)
    # worked out by hand in the comments of the file
    assert G.scores(s) == {"ana": 2 + 2, "bo": 3 + 3 - 1, "cy": 3 + 2}
    assert G.ranking(s) == [["cy"], ["bo"], ["ana"]]       # cy sold more chips than bo
    assert [vp(s, p)["sold_total"] for p in ("ana", "bo", "cy")] == [3, 4, 5]
    assert vp(s, "bo")["deductions"] == 1 and vp(s, "cy")["deductions"] == 0
    # ana's piles and every autumn pile were worked out by the table; the two piles
    # with a starting chip were turned over by the host
    assert s["auto_revealed"] == {"ana": ["spring", "autumn"], "bo": ["autumn"],
                                  "cy": ["autumn"]}


# -- random play ---------------------------------------------------------------

def brute_force_odds(s) -> dict:
    """The next bag draw's odds for the table, by brute force: every ordered choice of
    distinct unseen fruit chips for the hidden starting chips that each player's public
    history allows (worked out by :func:`public_starts`), each equally likely."""
    v = view(s)
    unseen = [f for f in FRUITS for _ in range(v["bag"]["unseen_fruits"][f])]
    hidden = [p["name"] for p in v["players"] if p["starting_chip"]]
    allowed = {p: public_starts(s, p) for p in hidden}
    bag = v["bag"]["chips"]
    seasons = v["bag"]["seasons"]
    counts, kept = Counter(), 0
    for idx in itertools.permutations(range(len(unseen)), len(hidden)):
        if all(unseen[i] in allowed[p] for i, p in zip(idx, hidden)):
            kept += 1
            left = Counter(unseen) - Counter(unseen[i] for i in idx)
            for f in FRUITS:
                counts[f] += Fraction(left[f], bag)
    out = {"season": Fraction(seasons, bag)} if seasons else {}
    for f in FRUITS:
        if counts[f]:
            out[f] = counts[f] / kept
    return out


def public_starts(s, player) -> set:
    """The starting chips ``player``'s public history allows (takes, exchanges and sales by
    count), tried chip by chip from the public sale records."""
    steps = _public_steps(s, player)

    def ok(start):
        @lru_cache(maxsize=None)
        def go(i, hand):
            if i == len(steps):
                return True
            kind, arg = steps[i]
            h = list(hand)
            if kind == "gain":
                return go(i + 1, tuple(sorted(h + [arg])))
            if kind == "start":
                return go(i + 1, tuple(sorted(h + [start])))
            if kind == "give":
                if arg not in h:
                    return False
                h.remove(arg)
                return go(i + 1, tuple(h))
            return any(go(i + 1, tuple(sorted(h[j] for j in range(len(h)) if j not in c)))
                       for c in itertools.combinations(range(len(h)), arg))
        return go(0, ())

    return {f for f in FRUITS if ok(f)}


def _public_steps(s, player):
    """The tracker's public record of the player's stand, event by event: fruits in (takes,
    exchanges), her starting chip, fruits out (exchanges), sales by count."""
    return [{"gain": lambda st: ("gain", FRUITS[st[1]]), "start": lambda st: ("start", None),
             "give": lambda st: ("give", FRUITS[st[1]]),
             "sell": lambda st: ("sell", st[2])}[st[0]](st)
            for st in s["stands"][player]["steps"]]


class Table:
    """A physical game of Tropichaos, written from the rulebook: a real bag, real hands,
    real face-down piles. It plays random legal moves and logs what the host and the
    players' own pages would log."""

    def __init__(self, rng, players, board, exchange="one", redraw="chip"):
        self.rng, self.players, self.board = rng, players, board
        self.exchange, self.redraw = exchange, redraw
        self.bag = ["season"] * 12 + [f for f in FRUITS for _ in range(16)]
        rng.shuffle(self.bag)
        self.hands = {p: [] for p in players}
        self.piles = {p: {x: [] for x in SEASONS} for p in players}
        self.deductions = Counter()
        self.market, self.marker = [], 0

    def draw(self):
        return self.bag.pop()

    def back(self, chip):
        self.bag.insert(self.rng.randrange(len(self.bag) + 1), chip)


def play_table(rng, players, board, private_rate=0.5, exchange="one", check_odds=False):
    """Play one physical game; feed its log to the tracker (``full``: with the players'
    private events; ``public``: the same log as the table sees it). Returns both replays
    and the table."""
    t = Table(rng, players, board, exchange)
    opts = {"season_board": board, "overstock_exchange": exchange}
    full = Replay.start("tropichaos", players, opts)
    public = Replay.start("tropichaos", players, opts)
    later = []            # private events a player logs at some later point

    def log(ev, private=False):
        state = full.state
        if private:
            me = ev["player"]
            assert ev in G.private_events(state, me), (ev, G.private_events(state, me))
        else:
            pub = G.public_event(ev)
            legal = G.legal_events(state)
            assert pub in legal or ev in legal, (ev, legal)
        full.apply(ev)
        if ev["type"] not in ("starting_hand", "sold"):
            public.apply(G.public_event(ev))
        G.check_invariants(full.state)
        assert G.public_view(full.state) == G.public_view(public.state)
        if len(full.events) % 5 == 0:
            assert G.host_view(full.state) == G.host_view(public.state)
        if later and rng.random() < 0.3:
            log(later.pop(rng.randrange(len(later))), private=True)

    while len(t.market) < 3:                           # set-up: the Market
        c = t.draw()
        log({"type": "draw", "chip": c})
        if c == "season" or t.market.count(c) == 2:
            t.back(c)
        else:
            t.market.append(c)
    order = players
    dealt = order[1:] if len(players) == 2 else order[-2:]
    for p in dealt:                                    # the starting chips
        while True:
            c = t.draw()
            if c == "season":
                log(deal(p, "season"))
                t.back(c)
                continue
            t.hands[p].append(c)
            if rng.random() < private_rate:
                log(deal(p, c), private=True)
            else:
                log(deal(p, "fruit"))
                if rng.random() < private_rate:
                    later.append({"type": "starting_hand", "player": p, "chip": c})
            break
    turn, sales = 0, Counter()
    while True:
        p = order[turn % len(order)]
        turn += 1
        hand = t.hands[p]
        options = []
        if len(hand) < 5:
            options += [("take", f) for f in dict.fromkeys(t.market)]
        if hand:
            options += [("sell", n) for n in ([len(hand)] if len(hand) % 2 else
                                              [len(hand) // 2, len(hand)])]
        assert options
        if check_odds:
            check_public_odds(full.state)
        kind, arg = rng.choice(options)
        if kind == "sell":
            chips = sorted(rng.sample(hand, arg), key=FRUITS.index)
            for c in chips:
                hand.remove(c)
            season = t.board[t.marker]
            t.piles[p][season] += chips
            ev = sell(arg, player=p)
            if rng.random() < private_rate:
                log(ev | {"chips": chips}, private=True)
            else:
                log(ev)
                if rng.random() < private_rate:
                    later.append({"type": "sold", "player": p, "sale": sales[p],
                                  "chips": chips})
            sales[p] += 1
            continue
        slot = t.market.index(arg)
        t.market.pop(slot)
        hand.append(arg)
        log(take(arg) | {"player": p})
        ended = False
        while True:
            c = t.draw()
            log(draw(c))
            if c == "season":
                t.marker += 1
                if t.board[t.marker] == "end":
                    ended = True
                    break
                continue
            t.market.insert(slot, c)
            break
        if ended:
            break
        if len(set(t.market)) == 1:                    # overstocked
            over = t.market[0]
            t.deductions[p] += 1
            others = [c for c in hand if c != over]
            give = []
            if others:
                n = 1 if exchange == "one" else rng.randint(1, min(2, len(others)))
                give = sorted(rng.sample(others, n), key=FRUITS.index)
                if len(set(give)) == 1 and n == 3:
                    give = give[:2]
            for g in give:
                hand.remove(g)
                hand.append(over)
            t.market = give + [over] * (3 - len(give))
            if G.public_view(full.state)["phase"] == "exchange":
                log({"type": "exchange", "player": p, "give": give})
            assert sorted(G.public_view(full.state)["market"]) == sorted(t.market)
        assert G.public_view(full.state)["market"] == t.market
    # the end: the piles turned over one by one
    while later:
        log(later.pop(), private=True)
    while not G.finished(full.state):
        pile = G.public_view(full.state)["face_down_piles"][0]
        log({"type": "reveal", "player": pile["player"], "season": pile["season"],
             "chips": sorted(t.piles[pile["player"]][pile["season"]])})
    return full, public, t


def rulebook_scores(t):
    return {p: sum(TABLE[c][x] for x in SEASONS for c in t.piles[p][x]) - t.deductions[p]
            for p in t.players}


def rulebook_ranking(t, players):
    sc = rulebook_scores(t)

    def key(p):
        sold = sum(len(t.piles[p][x]) for x in SEASONS)
        return (sc[p], sold, -t.deductions[p], players.index(p))
    return [[p] for p in sorted(players, key=key, reverse=True)]


def check_public_odds(state):
    odds = dict((e["chip"], p) for e, p in G.chance_outcomes(state)) if \
        G.public_view(state)["phase"] == "draw" else None
    if odds is not None:
        assert odds == brute_force_odds(state)
    v = G.public_view(state)
    bag, fruits = v["bag"]["chips"], v["bag"]["fruits"]
    n = len(v["order"])
    cur = v["order"].index(v["current_player"])
    for q in v["players"]:
        # every player from the current one up to q (all of them when q is current)
        seats = [(cur + i) % n for i in range(n)]
        seats = seats[:seats.index(q["seat"])] if q["seat"] != cur else seats
        d = sum(v["players"][i]["hand"] < 5 for i in seats)
        no = Fraction(1)
        for i in range(d):
            no *= Fraction(max(fruits - i, 0), bag - i)
        assert q["draws_before_turn"] == d
        assert Fraction(q["season_moves_before_turn"]["fraction"]) == 1 - no


def test_random_physical_games_conserve_chips_hide_fruits_and_score_by_the_rulebook(random_play):
    """Random games at a real table (a real bag and hands), as many as the conformance
    test plays (``--random-games``): every logged event is one the tracker offers, chips
    are conserved at every step, the public view with and without the players' private
    events is the same, the final scores and ranking are the rulebook's, replay equals the
    live game, and the odds equal a brute-force count. (Random play on the tracker alone,
    with undo, is the conformance test's.)"""
    games, _ = random_play
    rng = random.Random(11)
    events = 0
    for i in range(games):
        players = [f"p{j}" for j in range(rng.randint(2, 5))]
        board = rng.choice([["spring", "spring", "summer", "summer", "autumn", "autumn",
                             "spring", "spring", "end"], ["spring", "summer", "autumn", "end"],
                            ["summer", "autumn", "spring", "summer", "end"]])
        full, public, t = play_table(rng, players, board, private_rate=rng.choice([0, .5, 1]),
                                     exchange=rng.choice(["one", "several"]),
                                     check_odds=i % 6 == 0)
        events += len(full.events)
        assert G.finished(full.state) and G.finished(public.state)
        assert G.scores(full.state) == rulebook_scores(t) == G.scores(public.state)
        assert G.ranking(full.state) == rulebook_ranking(t, players)
        check_replay(full)
    assert events > 100 * games // 3
