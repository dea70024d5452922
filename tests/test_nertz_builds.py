"""R4.8, ``nertz_builds``: cards onto another player's Nertz top, same suit, one rank up or down.
Each scenario builds an exact table from R10 fixed deals, makes the moves by their R10 names
(``{source}>nertz@{k}``, k the target's seat offset) and checks the table, the owners of the
cards (R1), the scores (R7), the races (the readings of R3/R6 in ``tick.resolve_builds``) and
every layer above the engine."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import FULL_DECK, IDLE, cards_of, legal_names, make_deck, new_game, play
from pettingzoo.test import api_test, parallel_api_test

from nertz_env import agents, nertz_v0
from nertz_env.actions import TO_NERTZ, ActionCatalogue
from nertz_env.cards import parse_card
from nertz_env.config import NertzConfig
from nertz_env.engine import END_REASONS
from nertz_env.game import Game
from nertz_env.render import render_rgb, render_text
from nertz_env.replay import replay, start_recording
from nertz_env.vector import NertzVectorEnv


def rules(**options) -> NertzConfig:
    """Two players, three-card Nertz piles, builds on, lower seat wins races, no stall."""
    base = {"num_players": 2, "nertz_pile_size": 3, "collision": "seat", "stall_ticks": 10_000, "nertz_builds": True}
    return NertzConfig(**{**base, **options})


def builds(game: Game, player: int) -> set[str]:
    return {n for n in legal_names(game, player) if ">nertz@" in n}


def owned(snapshot: dict, player: int) -> list[tuple[str, int]]:
    """A player's Nertz pile bottom to top as (card, owner) pairs."""
    me = snapshot["players"][player]
    return list(zip(me["nertz"], me["nertz_owners"]))


def check_conservation(snapshot: dict, players: int) -> None:
    """R1: every player's 52 cards are each in exactly one place, counted by owner."""
    for p in range(players):
        assert sorted(cards_of(snapshot, p)) == sorted(FULL_DECK), p


def waste_build_table(work2: tuple[str, ...] = ("9S", "9H", "9D", "9C"), **options) -> Game:
    """Three players (R10 fixed deals) after one tick: player 0 has turned 5H onto the waste, which
    builds on player 1's 4H (3 Nertz cards left) and on player 2's 6H (2 left, AS played)."""
    config = rules(num_players=3, stock_draw=1, **options)
    deck0 = make_deck(["KC", "QC", "JC"], ["9S", "9H", "9D", "9C"], ["5H"])
    deck1 = make_deck(["KD", "QD", "4H"], ["9S", "9H", "9D", "9C"])
    deck2 = make_deck(["KS", "6H", "AS"], list(work2))
    game = new_game(config, [deck0, deck1, deck2])
    play(game, "draw", "wait", "nertz>foundation")
    assert builds(game, 0) == {"waste>nertz@1", "waste>nertz@2"}
    return game


def choice(game: Game, agent) -> str:
    return game.catalogue.names[agent.act({"observation": game.obs[0], "action_mask": game.masks[0]})]


# --- the catalogue (R10) --------------------------------------------------------------------


def test_r10_build_names_and_catalogue_size():
    config = NertzConfig(num_players=3, nertz_builds=True)
    catalogue = ActionCatalogue(config)
    standard = ActionCatalogue(config.replace(nertz_builds=False))
    assert len(catalogue) == len(standard) + (2 + 4) * 2
    assert catalogue.names[: len(standard)] == standard.names  # the standard rows keep their indices
    for name in ("nertz>nertz@1", "waste>nertz@2", "work0>nertz@1", "work3>nertz@2"):
        assert catalogue.name(catalogue.index(name)) == name
    with pytest.raises(ValueError, match="unknown action name"):
        catalogue.index("nertz>nertz@3")  # no fourth seat
    with pytest.raises(ValueError, match="unknown action name"):
        standard.index("nertz>nertz@1")  # only with the option


# --- R4.8 legality ----------------------------------------------------------------------------


def test_r4_8_builds_go_one_rank_up_or_down_on_the_same_suit():
    """5H onto 4H (up), then the waste's 4H onto that 5H (down), which now belongs to player 0."""
    config = rules(stock_draw=1)
    deck0 = make_deck(["2C", "3C", "5H"], ["9S", "9H", "9D", "9C"], ["4H"])
    deck1 = make_deck(["KC", "KD", "4H"], ["9S", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1])
    assert builds(game, 0) == {"nertz>nertz@1"}
    assert builds(game, 1) == {"nertz>nertz@1"}  # 4H onto 5H as well
    snap = play(game, "nertz>nertz@1", "wait")
    assert owned(snap, 1) == [("KC", 1), ("KD", 1), ("4H", 1), ("5H", 0)]
    assert snap["players"][0]["nertz"] == ["2C", "3C"]
    assert snap["scores"] == [-2 * 2, -2 * 4]  # R7: the holder pays for the built card
    play(game, "draw", "wait")
    assert builds(game, 0) == {"waste>nertz@1"}
    snap = play(game, "waste>nertz@1", "wait")
    assert owned(snap, 1)[-2:] == [("5H", 0), ("4H", 0)]  # two 4H in one pile, told apart by owner
    check_conservation(snap, 2)
    game.state_vector()  # a code twice in one Nertz pile is shown, not a crash


def test_r4_8_wrong_suit_rank_gap_and_an_empty_pile_are_not_builds():
    config = rules(num_players=3, nertz_pile_size=2)
    deck0 = make_deck(["KC", "2S"], ["5D", "6H", "3H", "5H"])
    deck1 = make_deck(["KD", "4H"], ["9S", "9H", "9D", "9C"])
    deck2 = make_deck(["AD", "AS"], ["9S", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1, deck2])
    # 5D is the wrong suit, 6H two ranks off; 2S goes on player 2's AS (two seats on).
    assert builds(game, 0) == {"nertz>nertz@2", "work2>nertz@1", "work3>nertz@1"}
    play(game, "wait", "wait", "nertz>foundation")
    play(game, "wait", "wait", "nertz>foundation")
    assert game.snapshot()["players"][2]["nertz"] == []
    assert builds(game, 0) == {"work2>nertz@1", "work3>nertz@1"}  # an empty pile has no top
    assert "call" in legal_names(game, 2)
    play(game, "nertz>nertz@2", "wait", "wait", check=False)
    assert game.state.illegal[0].tolist() == [True, False, False]
    assert "empty" in game.why_illegal(0, game.catalogue.index("nertz>nertz@2"))
    assert "suit" in game.why_illegal(0, game.catalogue.index("work0>nertz@1"))


def test_r4_8_without_the_option_nothing_is_built():
    game = new_game(rules(nertz_builds=False), [make_deck(["2C", "3C", "5H"], ["9S", "9H", "9D", "9C"]),
                                                make_deck(["KC", "KD", "4H"], ["9S", "9H", "9D", "9C"])])
    assert not any("@" in n for n in game.catalogue.names)
    assert "nertz_owners" not in game.snapshot()["players"][0]  # the standard snapshot is unchanged


def test_r4_8_a_full_nertz_pile_of_52_cards_takes_no_build():
    """The Nertz pile has 52 places: 48 dealt plus four builds fill it."""
    config = rules(nertz_pile_size=48)
    deck0 = make_deck([c for c in FULL_DECK if c not in ("6H", "5H", "4H", "3H", "2H")][:47] + ["2H"],
                      ["6H", "5H", "4H", "3H"])
    deck1 = make_deck([c for c in FULL_DECK if c != "7H"][:47] + ["7H"], ["TS", "JS", "QS", "KS"])
    game = new_game(config, [deck0, deck1])
    for j in range(4):
        play(game, f"work{j}>nertz@1", "wait")
    snap = game.snapshot()
    assert len(snap["players"][1]["nertz"]) == 52 and snap["players"][1]["nertz"][-1] == "3H"
    assert builds(game, 0) == set()  # 2H would fit 3H, but there is no room
    assert "full" in game.why_illegal(0, game.catalogue.index("nertz>nertz@1"))
    check_conservation(snap, 2)


# --- R1 ownership and R7 scoring --------------------------------------------------------------


def test_r7_a_built_card_scores_for_its_owner_when_the_holder_plays_it_to_a_foundation():
    config = rules()
    deck0 = make_deck(["KC", "KD", "2H"], ["9S", "9H", "9D", "9C"])
    deck1 = make_deck(["QC", "QD", "3H"], ["AH", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1])
    snap = play(game, "nertz>nertz@1", "work0>foundation")  # a build and the owner's other move
    assert owned(snap, 1) == [("QC", 1), ("QD", 1), ("3H", 1), ("2H", 0)]
    snap = play(game, "wait", "nertz>foundation")
    assert snap["foundations"] == [{"cards": [[1, "AH"], [0, "2H"]], "complete": False}]
    assert snap["scores"] == [1 - 2 * 2, 1 - 2 * 3]
    obs = game.obs[1]  # R9: the card shows in its owner's foundation block
    assert game.layout.view(obs, "opp1.foundation")[parse_card("2H")] == 1
    snap = play(game, "wait", "nertz>foundation")
    assert snap["foundations"][0]["cards"] == [[1, "AH"], [0, "2H"], [1, "3H"]]
    assert snap["scores"] == [1 - 2 * 2, 2 - 2 * 2]
    check_conservation(snap, 2)


def test_r7_the_holders_penalty_counts_foreign_cards():
    config = rules(nertz_pile_size=1, call_bonus=10)
    game = new_game(config, [make_deck(["5H"], ["9S", "9H", "9D", "9C"]), make_deck(["4H"], ["9S", "9H", "9D", "9C"])])
    play(game, "nertz>nertz@1", "wait")
    assert "call" not in legal_names(game, 1)  # R4.6: a call needs an empty pile, foreign cards too
    snap = play(game, "call", "wait")
    assert snap["ended"] and snap["end_reason"] == "call"
    assert snap["scores"] == [0 + 10, -2 * 2]


def test_r1_a_built_card_keeps_its_owner_through_work_piles_and_further_builds():
    config = rules(num_players=3, nertz_pile_size=2)
    deck0 = make_deck(["KC", "5H"], ["9S", "9H", "9D", "9C"])
    deck1 = make_deck(["KD", "4H"], ["6S", "7H", "9D", "9C"])
    deck2 = make_deck(["QD", "6H"], ["9S", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1, deck2])
    play(game, "nertz>nertz@1", "wait", "wait")
    snap = play(game, "wait", "nertz>work0", "wait")  # the foreign 5H onto the holder's 6S
    assert snap["players"][1]["work"][0] == ["6S", "5H"]
    assert snap["players"][1]["work_owners"] == [[1, 0], [1], [1], [1]]
    assert game.layout.view(game.obs[1], "self.work0")[parse_card("5H")] == 1  # by code (R9)
    snap = play(game, "wait", "work0>work1:2", "wait")  # a block keeps its owners
    assert snap["players"][1]["work_owners"][1] == [1, 1, 0]
    snap = play(game, "wait", "work1>nertz@1", "wait")  # on to player 2's 6H, one rank down
    assert owned(snap, 2) == [("QD", 2), ("6H", 2), ("5H", 0)]
    assert snap["players"][1]["work"][1] == ["7H", "6S"]
    text = render_text(snap)
    assert "nertz 5H(0) (3)" in text and "6S 5H" not in text
    check_conservation(snap, 3)


# --- races (R3, R6 readings) --------------------------------------------------------------------


def race_game(config):
    """Player 0's Nertz top is 5H; players 1 and 2 can build 4H (Nertz) and 6H (work0) on it."""
    deck0 = make_deck(["KC", "QC", "5H"], ["6S", "9H", "AH", "9C"])
    deck1 = make_deck(["KD", "QD", "4H"], ["9S", "9H", "9D", "9C"])
    deck2 = make_deck(["KS", "QS", "JS"], ["6H", "9H", "9D", "9C"])
    return [deck0, deck1, deck2]


def test_races_two_builders_on_one_pile_collision_seat_lower_seat_wins():
    config = rules(num_players=3)
    game = new_game(config, race_game(config))
    snap = play(game, "wait", "nertz>nertz@2", "work0>nertz@1")
    assert owned(snap, 0)[-2:] == [("5H", 0), ("4H", 1)]
    assert snap["players"][2]["work"][0] == ["6H"]  # the loser keeps the card
    assert game.state.collision[0].tolist() == [False, False, True]
    assert game.state.won_race[0].tolist() == [False, True, False]
    check_conservation(snap, 3)


def test_races_random_races_are_drawn_from_the_seeded_stream():
    config = rules(num_players=3, collision="random")
    winners = []
    for seed in [*range(120), 7]:
        game = new_game(config, race_game(config), seed=seed)
        play(game, "wait", "nertz>nertz@2", "work0>nertz@1")
        assert game.state.won_race[0].sum() == 1 and game.state.collision[0].sum() == 1
        winners.append(int(game.state.won_race[0, 2]))
    assert 30 <= sum(winners[:120]) <= 90
    assert winners[-1] == winners[7]
    favoured = rules(num_players=3, collision="random", speed=(1.0, 1.0, 1000.0))
    game = new_game(favoured, race_game(favoured), seed=3)
    play(game, "wait", "nertz>nertz@2", "work0>nertz@1")
    assert game.state.won_race[0].tolist() == [False, False, True]


@pytest.mark.parametrize("own_move", ["nertz>work0", "nertz>nertz@1"])
def test_races_the_owner_playing_from_the_pile_blocks_builds_onto_it(own_move):
    """Player 0 moves its 5H (onto its 6S, or onto player 1's 4H, a build of its own) while player 2
    builds 6H onto it: player 0's move stands, player 2's card stays (a collision)."""
    config = rules(num_players=3)
    game = new_game(config, race_game(config))
    snap = play(game, own_move, "wait", "work0>nertz@1")
    assert snap["players"][0]["nertz"] == ["KC", "QC"]
    assert snap["players"][2]["work"][0] == ["6H"]
    assert game.state.collision[0].tolist() == [False, False, True]
    check_conservation(snap, 3)


def test_races_two_players_building_their_nertz_tops_onto_each_other_both_fail():
    config = rules(num_players=3)
    game = new_game(config, race_game(config))
    snap = play(game, "nertz>nertz@1", "nertz>nertz@2", "wait")
    assert snap["players"][0]["nertz"][-1] == "5H" and snap["players"][1]["nertz"][-1] == "4H"
    assert game.state.collision[0].tolist() == [True, True, False]


def test_races_an_owner_losing_its_own_foundation_race_still_blocks_builds():
    """Reading: the owner's hand was on the pile, whether or not its move then lands (R6)."""
    config = rules(num_players=3)
    deck0 = make_deck(["KC", "QC", "AH"], ["2H", "9H", "9D", "9C"])
    deck1 = make_deck(["KD", "QD", "2H"], ["9S", "9H", "9D", "9C"])
    deck2 = make_deck(["KS", "QS", "JS"], ["3H", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1, deck2])
    play(game, "nertz>foundation", "wait", "wait")
    snap = play(game, "work0>foundation", "nertz>foundation", "work0>nertz@2")
    assert snap["foundations"][0]["cards"] == [[0, "AH"], [0, "2H"]]
    assert snap["players"][1]["nertz"][-1] == "2H" and snap["players"][2]["work"][0] == ["3H"]
    assert game.state.collision[0].tolist() == [False, True, True]


def test_races_builds_onto_each_others_piles_from_work_piles_both_land():
    config = rules()
    deck0 = make_deck(["KC", "QC", "5H"], ["5S", "9H", "9D", "9C"])
    deck1 = make_deck(["KD", "QD", "4S"], ["4H", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1])
    snap = play(game, "work0>nertz@1", "work0>nertz@1")
    assert owned(snap, 0)[-1] == ("4H", 1) and owned(snap, 1)[-1] == ("5S", 0)
    assert not game.state.collision[0].any()
    assert snap["scores"] == [-8, -8]


def test_r5_a_build_is_progress():
    config = rules(stall_ticks=2)
    deck0 = make_deck(["KC", "QC", "5H"], ["5S", "9H", "9D", "9C"])
    deck1 = make_deck(["KD", "QD", "4S"], ["4H", "9H", "9D", "9C"])
    game = new_game(config, [deck0, deck1])
    play(game, "wait", "wait")
    assert game.state.since_progress[0] == 1
    play(game, "work0>nertz@1", "wait")
    assert game.state.since_progress[0] == 0


# --- every layer above the engine -----------------------------------------------------------


def test_replay_and_pictures_handle_foreign_cards():
    pytest.importorskip("PIL")
    config = rules(num_players=3, nertz_pile_size=2)
    deck0 = make_deck(["KC", "5H"], ["9S", "9H", "9D", "9C"])
    deck1 = make_deck(["KD", "4H"], ["6S", "7H", "9D", "9C"])
    game = new_game(config, [deck0, deck1, IDLE])
    recording = start_recording(game)
    for names in (["nertz>nertz@1", "wait", "wait"], ["wait", "nertz>work0", "wait"]):
        recording.actions.append(names)
        play(game, *names)
    frames = replay(type(recording).from_json(recording.to_json()))
    assert frames[-1]["snapshot"] == game.snapshot()
    image = render_rgb(frames[-1]["snapshot"], frames[-1]["events"])
    assert image.ndim == 3 and image.shape[2] == 3


@pytest.mark.parametrize("name", ["random", "passive", "greedy", "heuristic"])
def test_agents_play_only_legal_actions_with_builds(name):
    config = NertzConfig(num_players=3, nertz_builds=True, max_cycles=300)
    game = Game(config)
    seats = [agents.make(name, seed=p, config=config) for p in range(3)]
    made = 0
    for seed in range(3):
        game.reset(seed=seed)
        while not game.ended:
            actions = np.array([s.act({"observation": game.obs[p], "action_mask": game.masks[p]})
                                for p, s in enumerate(seats)])
            assert all(game.masks[p, a] for p, a in enumerate(actions))
            made += sum(game.catalogue.table[a, 0] == TO_NERTZ for a in actions)
            game.step(actions)
            assert not game.state.illegal[0].any()
        check_conservation(game.snapshot(), 3)
    if name in ("random", "greedy"):
        assert made > 0  # they use the new rows


def test_greedy_builds_from_the_waste_onto_the_opponent_with_fewest_nertz_cards():
    game = waste_build_table()
    greedy = agents.make("greedy", config=game.config)
    assert choice(game, greedy) == "waste>nertz@2"  # player 2 has 2 Nertz cards, player 1 has 3


def test_nertz_v0_parallel_and_aec_with_builds():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        parallel_api_test(nertz_v0.parallel_env(num_players=3, nertz_builds=True), num_cycles=200)
        api_test(nertz_v0.env(num_players=2, nertz_builds=True), num_cycles=200)
    env = nertz_v0.parallel_env(num_players=4, nertz_builds=True)
    env.reset(seed=0)
    assert env.action_space("player_0").n == len(ActionCatalogue(NertzConfig(num_players=4, nertz_builds=True)))
    assert env.unwrapped.action_index("work0>nertz@3") > 0


def test_heuristic_builds_from_the_waste_onto_the_opponent_nearest_to_calling():
    """The same table as greedy's: 5H onto player 2's 6H (2 Nertz cards) rather than player 1's 4H (3)."""
    game = waste_build_table()
    # build=-100 turns building off: the waste card then stays where it is.
    assert ">nertz@" not in choice(game, agents.make("heuristic", config=game.config, build=-100.0))
    assert choice(game, agents.make("heuristic", config=game.config)) == "waste>nertz@2"
    snap = play(game, "waste>nertz@2", "wait", "wait")
    assert owned(snap, 2) == [("KS", 2), ("6H", 2), ("5H", 0)]


def test_heuristic_does_not_build_on_a_pile_its_owner_can_play_from():
    """R4.8 as read here: a pile whose owner plays from it in the tick takes no build. Player 2's
    6H can go onto their 7S, so the build goes to player 1's 4H, whose owner cannot move it."""
    game = waste_build_table(work2=("7S", "9H", "9D", "9C"))
    assert "nertz>work0" in legal_names(game, 2)
    assert choice(game, agents.make("heuristic", config=game.config)) == "waste>nertz@1"
    # Under Snerts' R4.3 (nertz_to_work=False) that 6H has nowhere to go: the build goes to player 2.
    game = waste_build_table(work2=("7S", "9H", "9D", "9C"), nertz_to_work=False)
    assert not any(name.startswith("nertz>") for name in legal_names(game, 2))
    assert choice(game, agents.make("heuristic", config=game.config)) == "waste>nertz@2"


def test_a_table_of_building_heuristics_ends_its_hands_by_calls():
    """Builds that the pile's owner would block are not tried, so heuristics do not block each
    other tick after tick: every hand of 32 ends in a call (R5), with builds made on the way."""
    env = NertzVectorEnv(32, num_players=4, nertz_builds=True, seed=3)
    heuristic = agents.make("heuristic", config=env.config)
    obs, masks = env.reset()
    done, made = np.zeros(32, bool), 0
    reasons = np.zeros(32, np.int64)
    while not done.all():
        actions = heuristic.act_batch(obs.reshape(128, -1), masks.reshape(128, -1)).reshape(32, 4)
        made += int(((env.catalogue.table[actions, 0] == TO_NERTZ) & ~done[:, None]).sum())
        obs, masks, _, _, _, infos = env.step(actions)
        ended = infos["episode"]["done"] & ~done
        reasons[ended] = infos["episode"]["end_reason"][ended]
        done |= ended
    assert made > 100
    assert (reasons == END_REASONS.index("call")).all()
