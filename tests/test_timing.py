"""The timing options of R3: ``turn_based`` (one seat acts per tick, in seat order from seat 0) and
``move_ticks`` (a move is in the air for some ticks and resolves, and may collide, when it lands).
Scenarios build exact tables from R10 fixed deals, make the moves by their R10 names and check the
table; then the observation, the environments and the agents under these options."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import IDLE, legal_names, make_deck, needs_pillow, new_game, play, rules, stock_rest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test

from nertz_env import agents, nertz_v0
from nertz_env.actions import ACTION_CALL, TO_FOUNDATION
from nertz_env.cards import parse_card
from nertz_env.config import NertzConfig
from nertz_env.game import Game
from nertz_env.layout import ObservationLayout
from nertz_env.render import render_text
from nertz_env.replay import replay
from nertz_env.turn_based import NertzTurnBasedEnv


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# --- R3 turn_based -------------------------------------------------------------------------


def test_r3_turn_based_seats_act_one_at_a_time_in_seat_order_from_seat_0():
    game = new_game(rules(num_players=3, turn_based=True), [IDLE] * 3)
    for tick in range(7):
        turn = tick % 3
        assert game.snapshot()["turn"] == game.turn == turn
        for p in range(3):
            if p == turn:
                assert {"wait", "draw"} <= legal_names(game, p), tick
            else:
                assert legal_names(game, p) == {"wait"}, (tick, p)
        names = ["wait"] * 3
        names[turn] = "draw"
        snap = play(game, *names)
        drawn = [len(range(p, tick + 1, 3)) for p in range(3)]  # DRAWs each seat has made so far
        assert [len(pl["waste"]) for pl in snap["players"]] == [3 * d for d in drawn]


def test_r3_turn_based_an_off_turn_move_is_illegal_and_played_as_wait():
    game = new_game(rules(turn_based=True), [IDLE, IDLE])
    before = game.snapshot()
    after = play(game, "wait", "draw", check=False)  # R4 allows seat 1 a DRAW, R3 not off turn
    assert after == {**before, "tick": 1, "turn": 1}
    assert game.state.illegal[0].tolist() == [False, True]
    assert "seat 1's turn" in game.why_illegal(0, game.catalogue.index("draw"))


def test_r3_turn_based_strict_mode_raises_and_the_parallel_api_takes_wait_off_turn():
    env = nertz_v0.parallel_env(num_players=2, turn_based=True, strict=True)
    env.reset(seed=0)
    draw = env.action_index("draw")
    with pytest.raises(ValueError, match=r"'draw'.*seat 0's turn \(R3 turn_based\)"):
        env.step({"player_0": 0, "player_1": draw})
    _, _, _, _, infos = env.step({"player_0": draw, "player_1": 0})
    assert not infos["player_0"]["illegal_action"] and env.snapshot()["turn"] == 1
    loose = nertz_v0.parallel_env(num_players=2, turn_based=True, illegal_action_penalty=1.0)
    loose.reset(seed=0)
    _, rewards, _, _, infos = loose.step({"player_0": 0, "player_1": draw})
    assert infos["player_1"]["illegal_action"] and rewards["player_1"] == -1.0
    parallel_api_test(nertz_v0.parallel_env(num_players=4, turn_based=True), num_cycles=300)


@pytest.mark.parametrize(
    ("options", "cycle"),
    [
        ({"turn_based": True}, 13 * 2),  # 35 cards: 12 DRAWs and the flip, once a round of 2 ticks
        ({"turn_based": True, "num_players": 3, "stock_draw": 1}, 36 * 3),
        ({"move_ticks": {"draw": 2}}, 13 * 2),  # a DRAW takes 2 ticks
        ({"move_ticks": {"foundation": 5}}, 13),  # only the DRAW's ticks count
        ({"move_ticks": {"draw": 3}, "turn_based": True}, 13 * 4),  # a DRAW of 3 ticks: every 2nd turn
    ],
)
def test_r5_stall_ticks_auto_is_one_whole_stock_cycle_in_ticks(options, cycle):
    """R5 "a whole stock cycle" under the timing options: the DRAWs of one cycle, times the ticks
    from one DRAW to the next (its move_ticks, rounded up to whole rounds under turn_based)."""
    config = NertzConfig(**{"num_players": 2, **options})
    game = new_game(config, [IDLE] * config.num_players)
    stock = game.snapshot()["players"][0]["stock"]
    for _ in range(cycle - 1):
        assert play(game, *["wait"] * config.num_players)["players"][0]["stock"] == stock
    assert play(game, *["wait"] * config.num_players)["players"][0]["stock"] == [stock[-1]] + stock[:-1]


def test_r3_turn_based_observation_says_whose_turn_it_is_egocentrically():
    env = nertz_v0.parallel_env(num_players=3, turn_based=True)
    lay = env.observation_layout
    plain = ObservationLayout(NertzConfig(num_players=3))
    assert lay.size == plain.size + 3 and "on_turn" not in plain.slices and "air_ticks" not in lay.slices
    obs, _ = env.reset(seed=0)

    def turns(obs):
        return [lay.view(obs[a]["observation"], "on_turn").tolist() for a in env.agents]

    assert turns(obs) == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]  # seat 0 on turn, seen from seats 0, 1, 2
    standard, _ = nertz_v0.parallel_env(num_players=3).reset(seed=0)
    assert all((obs[a]["observation"][: plain.size] == standard[a]["observation"]).all() for a in env.agents)
    obs, *_ = env.step(dict.fromkeys(env.agents, 0))
    assert turns(obs) == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert env.state()[lay.state_slices["on_turn"]].tolist() == [0, 1, 0]  # seat order
    lines = render_text(env.snapshot()).splitlines()
    assert [line.split(":")[0] for line in lines if line.endswith("(on turn)")] == ["player_1"]


def test_r3_turn_based_aec_env_passes_the_pettingzoo_tests():
    api_test(nertz_v0.env(num_players=3, turn_based=True), num_cycles=300)
    api_test(nertz_v0.env(num_players=2, turn_based=True, move_ticks={"foundation": 3, "draw": 2}), num_cycles=300)
    seed_test(lambda: nertz_v0.env(num_players=3, turn_based=True))
    assert isinstance(nertz_v0.raw_env(turn_based=True), NertzTurnBasedEnv)
    assert not isinstance(nertz_v0.env().unwrapped, NertzTurnBasedEnv)  # simultaneous: parallel_to_aec
    with pytest.raises(ValueError, match="needs turn_based=True"):
        NertzTurnBasedEnv(nertz_v0.parallel_env())


@needs_pillow  # render_test tries every render mode, rgb_array's too
def test_r3_turn_based_aec_env_passes_the_pettingzoo_render_test():
    render_test(lambda render_mode=None: nertz_v0.env(render_mode=render_mode, turn_based=True))


def one_card_decks():
    """Nertz piles of one card (AS, AH); player 1 also has 2H to play onto AH."""
    return [make_deck(["AS"], ["9S", "9H", "9D", "9C"]), make_deck(["AH"], ["2H", "KD", "KH", "KS"])]


def test_r3_turn_based_aec_selects_the_player_on_turn_and_accumulates_rewards():
    env = nertz_v0.env(config=rules(nertz_pile_size=1, turn_based=True, reward="relative"))
    env.reset(options={"decks": one_card_decks()})
    index = env.unwrapped.action_index
    n = len(env.unwrapped.action_names)
    assert env.agent_selection == "player_0"
    assert env.last()[0]["action_mask"][index("nertz>foundation")]
    assert env.observe("player_1")["action_mask"].tolist() == [1] + [0] * (n - 1)  # off turn: WAIT
    env.step(index("nertz>foundation"))  # tick 0: AS, +3 for player 0 and -3 relative for player 1
    assert env.agent_selection == "player_1"
    assert env.last()[1] == -3.0
    env.step(index("nertz>foundation"))  # tick 1: AH, the other way round
    assert env.agent_selection == "player_0"
    assert env.last()[1] == 3.0 - 3.0  # what happened to player 0 since its last action
    assert env.unwrapped._cumulative_rewards == {"player_0": 0.0, "player_1": 3.0}
    env.step(index("call"))  # tick 2: the hand ends (R5)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.last()[4]["end_reason"] == 1 and env.last()[4]["called"]
    assert env.unwrapped.outcome()["end_reason"] == "call" and env.unwrapped.outcome()["callers"] == ["player_0"]
    assert env.observe("player_1")["action_mask"].tolist() == [1] + [0] * (n - 1)
    while env.agents:
        env.step(None)
    assert env.unwrapped.snapshot()["tick"] == 3


def test_r3_turn_based_with_move_ticks_a_player_in_the_air_on_turn_may_only_wait():
    env = nertz_v0.env(config=rules(nertz_pile_size=1, turn_based=True, move_ticks={"foundation": 3}))
    env.reset(options={"decks": one_card_decks()})
    index = env.unwrapped.action_index
    env.step(index("nertz>foundation"))  # tick 0: AS takes off, lands in tick 2
    env.step(index("draw"))  # tick 1: player 1's turn
    assert env.agent_selection == "player_0"
    assert np.flatnonzero(env.last()[0]["action_mask"]).tolist() == [0]  # in the air: WAIT only
    env.step(0)  # tick 2: AS lands on player 0's own turn, and its reward with it
    assert env.unwrapped.snapshot()["foundations"] == [{"cards": [[0, "AS"]], "complete": False}]
    assert env.unwrapped._cumulative_rewards["player_0"] == 3.0
    assert env.agent_selection == "player_1"


# --- R3 move_ticks -------------------------------------------------------------------------


def aces_deck():
    return make_deck(["2C", "3C", "AS"], ["9S", "9H", "9D", "9C"])


def test_r3_move_ticks_a_three_tick_foundation_move_lands_in_its_third_tick():
    config = rules(move_ticks={"foundation": 3})
    game = new_game(config, [aces_deck(), IDLE])
    snap = play(game, "nertz>foundation", "draw")  # tick 0: judged now, takes off
    assert snap["foundations"] == [] and snap["players"][0]["nertz"] == ["2C", "3C", "AS"]
    assert snap["in_air"] == [{"action": "nertz>foundation", "card": "AS", "lands_in": 2}, None]
    assert legal_names(game, 0) == {"wait"} and "draw" in legal_names(game, 1)
    assert game.rewards.tolist() == [0, 0]
    snap = play(game, "wait", "draw")  # tick 1: in the air
    assert snap["foundations"] == [] and snap["in_air"][0]["lands_in"] == 1
    assert legal_names(game, 0) == {"wait"}
    snap = play(game, "wait", "draw")  # tick 2: lands
    assert snap["foundations"] == [{"cards": [[0, "AS"]], "complete": False}]
    assert snap["players"][0]["nertz"] == ["2C", "3C"] and snap["in_air"] == [None, None]
    assert game.rewards.tolist() == [3, 0]  # R7: the reward comes in the tick the move lands
    assert "draw" in legal_names(game, 0)
    assert len(snap["players"][1]["waste"]) == 9  # player 1 played on meanwhile


def test_r3_move_ticks_an_action_in_the_air_is_illegal_and_the_move_still_lands():
    game = new_game(rules(move_ticks={"foundation": 3}), [aces_deck(), IDLE])
    play(game, "nertz>foundation", "wait")
    snap = play(game, "draw", "wait", check=False)
    assert game.state.illegal[0].tolist() == [True, False]
    assert snap["players"][0]["waste"] == [] and snap["in_air"][0]["lands_in"] == 1
    assert "is in the air" in game.why_illegal(0, game.catalogue.index("draw"))
    assert play(game, "wait", "wait")["foundations"] == [{"cards": [[0, "AS"]], "complete": False}]


def heart_decks():
    """Both players hold 2H as work0; player 0's Nertz top is AH."""
    return [make_deck(["KC", "AH"], ["2H", "9S", "9D", "9C"]), make_deck(["KD", "QD"], ["2H", "9S", "9D", "9C"])]


def test_r3_move_ticks_a_pile_taken_while_a_card_is_in_the_air_makes_it_collide_on_landing():
    """R6 on landing: player 1's 2H lands first and takes the only AH pile; player 0's 2H, legal
    when it took off, finds no pile when it lands and stays where it was."""
    game = new_game(rules(nertz_pile_size=2, move_ticks={"foundation": 2}), heart_decks())
    play(game, "nertz>foundation", "wait")
    play(game, "wait", "wait")  # tick 1: AH lands
    play(game, "wait", "work0>foundation")  # tick 2: player 1's 2H takes off
    snap = play(game, "work0>foundation", "wait")  # tick 3: player 0's takes off, player 1's lands
    assert snap["foundations"] == [{"cards": [[0, "AH"], [1, "2H"]], "complete": False}]
    assert snap["in_air"] == [{"action": "work0>foundation", "card": "2H", "lands_in": 1}, None]
    snap = play(game, "wait", "wait")  # tick 4: player 0's lands on nothing
    assert game.state.collision[0].tolist() == [True, False]
    assert snap["foundations"] == [{"cards": [[0, "AH"], [1, "2H"]], "complete": False}]
    assert snap["players"][0]["work"][0] == ["2H"] and snap["in_air"] == [None, None]
    assert game.rewards.tolist() == [0, 0]


def test_r3_move_ticks_moves_landing_in_the_same_tick_race_by_r6():
    game = new_game(rules(nertz_pile_size=2, move_ticks={"foundation": 2}), heart_decks())
    play(game, "nertz>foundation", "wait")
    play(game, "wait", "wait")
    play(game, "work0>foundation", "work0>foundation")  # both take off in tick 2
    snap = play(game, "wait", "wait")  # both land in tick 3: collision="seat", seat 0 wins
    assert snap["foundations"] == [{"cards": [[0, "AH"], [0, "2H"]], "complete": False}]
    assert game.state.collision[0].tolist() == [False, True]
    assert game.state.won_race[0].tolist() == [True, False]
    assert snap["players"][1]["work"][0] == ["2H"]


def test_r3_moves_of_one_tick_play_the_standard_game():
    """With every move taken lasting one tick (calls, the slow kind here, never made), the timed
    engine plays the standard game: same tables, masks, rewards and observation."""
    timed, plain = Game(NertzConfig(num_players=3, move_ticks={"call": 4})), Game(NertzConfig(num_players=3))
    assert NertzConfig(move_ticks=1) == NertzConfig() and NertzConfig(move_ticks=1).is_default_timing
    base = plain.layout.size
    rng = np.random.default_rng(3)
    for hand in range(3):
        timed.reset(seed=hand)
        plain.reset(seed=hand)
        while not plain.ended:
            assert (timed.masks == plain.masks).all()
            mask = plain.masks.copy()
            mask[:, ACTION_CALL] = 0
            actions = ((rng.random(mask.shape) + 0.5 * (np.arange(mask.shape[1]) > 2)) * mask).argmax(1)
            timed.step(actions)
            plain.step(actions)
            snap = timed.snapshot()
            assert snap.pop("in_air") == [None] * 3
            assert snap == plain.snapshot()
            assert (timed.rewards == plain.rewards).all()
            assert (timed.obs[:, :base] == plain.obs).all() and not timed.obs[:, base:].any()
        assert timed.ended


def test_r5_moves_in_the_air_complete_when_the_hand_ends():
    """R5 "cards in the air complete their move": player 1's 2H, made in the calling tick and due
    two ticks later, lands at the end of that tick."""
    game = new_game(rules(nertz_pile_size=1, move_ticks={"foundation": 3}, call_bonus=10), one_card_decks())
    play(game, "nertz>foundation", "nertz>foundation")
    play(game, "wait", "wait")
    snap = play(game, "wait", "wait")  # tick 2: both aces land, piles started in seat order
    assert [f["cards"] for f in snap["foundations"]] == [[[0, "AS"]], [[1, "AH"]]]
    snap = play(game, "call", "work0>foundation")
    assert snap["ended"] and snap["end_reason"] == "call" and snap["callers"] == [0]
    assert [f["cards"] for f in snap["foundations"]] == [[[0, "AS"]], [[1, "AH"], [1, "2H"]]]
    assert snap["in_air"] == [None, None] and snap["scores"] == [1 + 10, 2]
    assert game.rewards.tolist() == [10, 1]


def test_r3_move_ticks_a_slow_call_ends_the_hand_when_it_lands():
    game = new_game(rules(nertz_pile_size=1, move_ticks={"call": 3}), one_card_decks())
    play(game, "nertz>foundation", "wait")
    snap = play(game, "call", "nertz>foundation")  # tick 1: the call takes off
    assert not snap["ended"] and snap["in_air"][0] == {"action": "call", "card": None, "lands_in": 2}
    snap = play(game, "wait", "work0>foundation")
    assert not snap["ended"] and snap["callers"] == []
    snap = play(game, "wait", "call")  # tick 3: player 0's call lands; player 1's, in the air, too
    assert snap["ended"] and snap["end_reason"] == "call" and snap["callers"] == [0, 1]
    assert snap["tick"] == 4 and snap["in_air"] == [None, None]


def test_r5_a_draw_in_the_air_turns_the_stock_a_stall_rotation_left():
    config = rules(stall_ticks=2, move_ticks={"draw": 3})
    deck0 = make_deck(["2C", "3C", "4C"], ["9S", "9H", "9D", "9C"])
    game = new_game(config, [deck0, IDLE])
    stock = stock_rest(deck0, config)
    play(game, "draw", "wait")
    snap = play(game, "wait", "wait")  # tick 1: no progress for 2 ticks, the stock rotates
    rotated = [stock[-1]] + stock[:-1]
    assert snap["players"][0]["stock"] == rotated and snap["players"][0]["waste"] == []
    assert snap["in_air"][0] == {"action": "draw", "card": None, "lands_in": 1}
    snap = play(game, "wait", "wait")  # tick 2: the DRAW lands on the rotated stock
    assert snap["players"][0]["waste"] == rotated[::-1][:3]
    assert snap["players"][0]["stock"] == rotated[:-3]


def test_r5_the_stall_rule_waits_for_a_card_in_the_air():
    """A card that may be progress holds the stall rotation until it lands (here it lands, so
    the clock starts again and the rotation comes two ticks after)."""
    config = rules(stall_ticks=2, move_ticks={"foundation": 4})
    game = new_game(config, [aces_deck(), IDLE])
    idle = game.snapshot()["players"][1]["stock"]
    play(game, "nertz>foundation", "wait")
    for tick in (1, 2):
        snap = play(game, "wait", "wait")
        assert snap["players"][1]["stock"] == idle, tick  # past the limit, but AS is in the air
    snap = play(game, "wait", "wait")  # tick 3: AS lands: progress
    assert snap["foundations"] == [{"cards": [[0, "AS"]], "complete": False}]
    assert play(game, "wait", "wait")["players"][1]["stock"] == idle
    assert play(game, "wait", "wait")["players"][1]["stock"] == [idle[-1]] + idle[:-1]


def test_r3_move_ticks_observation_shows_every_move_in_the_air():
    config = rules(move_ticks={"foundation": 3})
    game = new_game(config, [aces_deck(), IDLE])
    lay = game.layout
    assert lay.size == ObservationLayout(rules()).size + 3 * 2 and "on_turn" not in lay.slices
    play(game, "nertz>foundation", "draw")
    card = parse_card("AS") + 1
    seen = [[lay.view(game.obs[v], part).tolist() for part in ("air_ticks", "air_kind", "air_card")] for v in (0, 1)]
    assert seen[0] == [[2, 0], [TO_FOUNDATION, 0], [card, 0]]
    assert seen[1] == [[0, 2], [0, TO_FOUNDATION], [0, card]]  # egocentric: player 0 is opp1
    state = game.state_vector()
    assert state[lay.state_slices["air_ticks"]].tolist() == [2, 0]
    assert "in the air: nertz>foundation AS, lands in 2" in render_text(game.snapshot())


# --- Agents and environments under the timing options -----------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"turn_based": True},
        {"move_ticks": {"foundation": 3, "draw": 2, "work": 2}},
        {"turn_based": True, "move_ticks": 2, "num_players": 3},
    ],  # fmt: skip
)
def test_every_agent_plays_only_legal_actions_under_the_timing_options(options):
    config = NertzConfig(**{"num_players": 4, "max_cycles": 400, **options})
    game = Game(config)
    names = ("random", "passive", "greedy", "heuristic")
    seats = [agents.make(names[p % 4], seed=p, config=config) for p in range(config.num_players)]
    game.reset(seed=1)
    while not game.ended:
        actions = np.array([seat.act({"observation": game.obs[p], "action_mask": game.masks[p]})
                            for p, seat in enumerate(seats)])  # fmt: skip
        assert game.masks[np.arange(config.num_players), actions].all()
        game.step(actions)
        assert not game.state.illegal[0].any()


def test_the_parallel_api_under_move_ticks():
    parallel_api_test(nertz_v0.parallel_env(num_players=3, move_ticks={"foundation": 3, "draw": 2}), num_cycles=300)
    env = nertz_v0.parallel_env(config=rules(move_ticks={"foundation": 3}), strict=True)
    env.reset(options={"decks": [aces_deck(), IDLE]})
    env.step({"player_0": env.action_index("nertz>foundation"), "player_1": 0})
    with pytest.raises(ValueError, match="in the air"):
        env.step({"player_0": env.action_index("draw"), "player_1": 0})


def test_a_recorded_hand_under_the_timing_options_replays_exactly():
    env = nertz_v0.parallel_env(num_players=3, turn_based=True, move_ticks={"foundation": 3}, record=True)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(120):
        if not env.agents:
            break
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
    frames = replay(env.recording)
    assert frames[-1]["snapshot"] == env.snapshot()
    assert "in_air" in frames[-1]["snapshot"] and "turn" in frames[-1]["snapshot"]
