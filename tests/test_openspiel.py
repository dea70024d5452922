"""``python_nertz``, the OpenSpiel game (``nertz_env.integrations.openspiel``): OpenSpiel's own API
checks pass, it plays the very game ``nertz_v0`` plays (same deal, observations, masks, rewards and
end), and bad parameters, deals and actions are refused by name. Skips without ``open_spiel``."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="needs OpenSpiel: pip install 'nertz-env[openspiel]'")

from nertz_env import nertz_v0  # noqa: E402
from nertz_env.integrations import openspiel  # noqa: E402  (registers python_nertz)


def random_joint(state, rng) -> list[int]:
    return [int(rng.choice(state.legal_actions(p))) for p in range(state.num_players())]


@pytest.mark.parametrize(
    "params, serialize",
    [({"players": 3, "deals": 50}, True), ({"players": 4, "partners": True, "reward": "relative"}, False),
     ({"players": 2, "stock_draw": 1, "reward": "sparse", "turn_based": True}, False)],
)  # fmt: skip
def test_openspiel_api_checks_pass(params, serialize):
    """OpenSpiel's random simulation test: legal actions, clones, returns within the game's
    utility bounds, observation tensors, and (serialize) a state rebuilt from its history."""
    game = pyspiel.load_game(openspiel.GAME_NAME, params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=serialize, verbose=False)


@pytest.mark.parametrize("deal", [0, 7])
def test_plays_the_game_nertz_v0_plays(deal):
    """Deal ``d`` is ``nertz_v0``'s ``reset(seed=d)``; the same joint actions then give the same
    observations, legal actions, rewards and end, tick by tick (R2, R3)."""
    game = openspiel.load_game(players=3, deals=10)
    state = game.new_initial_state()
    assert state.is_chance_node() and [p for _, p in state.chance_outcomes()] == [0.1] * 10
    state.apply_action(deal)
    env = nertz_v0.parallel_env(num_players=3)
    obs, _ = env.reset(seed=deal)
    rng, returns = np.random.default_rng(deal), np.zeros(3)
    while env.agents:
        for p, agent in enumerate(env.possible_agents):
            assert np.array_equal(state.observation_tensor(p), obs[agent]["observation"].astype(np.float32))
            assert state.legal_actions(p) == np.flatnonzero(obs[agent]["action_mask"]).tolist()
        joint = random_joint(state, rng)
        state.apply_actions(joint)
        obs, rewards, terms, truncs, _ = env.step(dict(zip(env.possible_agents, joint)))
        assert state.rewards() == [rewards[a] for a in env.possible_agents]
        returns += state.rewards()
        assert state.is_terminal() == (all(terms.values()) or all(truncs.values()))
    assert state.is_terminal() and state.returns() == returns.tolist()
    # dense rewards: the score gained since the deal, which dealt -2 x 13 (R7)
    assert state.returns() == [s + 26 for s in env.outcome()["final_scores"].values()]


def test_sparse_returns_are_the_r7_scores_and_clones_are_independent():
    game = openspiel.load_game(players=2, reward="sparse", deals=4)
    state = game.new_initial_state()
    state.apply_action(3)
    rng = np.random.default_rng(1)
    for _ in range(5):
        state.apply_actions(random_joint(state, rng))
    copy = state.clone()
    before = (copy.observation_tensor(0), copy.legal_actions(1), str(copy))
    copy_scores = copy.scores()
    while not state.is_terminal():
        state.apply_actions(random_joint(state, rng))
    assert (copy.observation_tensor(0), copy.legal_actions(1), str(copy)) == before
    assert not copy.is_terminal() and copy.returns() == [0.0, 0.0]
    assert state.returns() == state.scores()  # R7: the score itself, paid at the end
    assert copy.scores() == copy_scores and state.returns() == state.scores()  # each state its own table
    assert game.min_utility() <= min(state.returns()) <= max(state.returns()) <= game.max_utility()


def test_states_sharing_the_engine_play_as_if_alone():
    """Two states of one game, stepped in turn through the game's one engine, follow the same
    trajectories as each played alone (each state's table is restored when the other moved it)."""
    game = openspiel.load_game(players=2, deals=10)

    def trajectory(state, seed):
        rng = np.random.default_rng(seed)
        while True:
            yield state.observation_tensor(0), state.legal_actions(1), state.rewards(), state.scores()
            if state.is_terminal():
                return
            state.apply_actions(random_joint(state, rng))

    def dealt(deal):
        state = game.new_initial_state()
        state.apply_action(deal)
        return state

    alone = [list(trajectory(dealt(4), 0)), list(trajectory(dealt(4), 1))]
    live, together = [trajectory(dealt(4), 0), trajectory(dealt(4), 1)], [[], []]
    while any(live):  # one tick of each in turn
        for i, moves in enumerate(live):
            step = next(moves, None) if moves else None
            if step is None:
                live[i] = None
            else:
                together[i].append(step)
    assert together == alone and alone[0] != alone[1]  # plain lists: observation, legal actions, rewards, scores


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match=r"python_nertz: invalid players=9: accepted an integer from 2 to 8"):
        openspiel.load_game(players=9)
    with pytest.raises(ValueError, match=r"python_nertz: deals must be an integer from 1 to 2\*\*24, got 0"):
        openspiel.load_game(deals=0)
    with pytest.raises(ValueError, match=r"invalid block_moves='some': accepted 'any', 'whole' or 'none'"):
        openspiel.load_game(block_moves="some")
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'player'"):
        openspiel.load_game(player=3)
    with pytest.raises(ValueError, match="python_nertz: unknown parameter"):
        openspiel.config_of({"episode": "match"})
    game = openspiel.load_game(players=2)
    with pytest.raises(ValueError, match="provides one observation.*got perfect_recall=True, public_info=True"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))


def test_bad_deals_and_actions_are_refused_with_the_reason():
    game = openspiel.load_game(players=2, deals=100)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="the chance node takes a deal from 0 to 99, got 100"):
        state.apply_action(100)
    with pytest.raises(ValueError, match=r"at the chance node: apply_action\(deal\) deals first \(R2\)"):
        state.apply_actions([0, 0])
    state.apply_action(3)
    with pytest.raises(ValueError, match="apply_actions takes one action per player"):
        state.apply_action(0)
    with pytest.raises(ValueError, match="a tick takes 2 actions"):
        state.apply_actions([0])
    call = game.catalogue.index("call")
    assert state.action_to_string(1, call) == "call" and call not in state.legal_actions(1)
    reason = r"call needs an empty Nertz pile \(R4.6\)"
    with pytest.raises(ValueError, match=rf"player 1's action {call} is illegal: {reason}"):
        state.apply_actions([0, call])
    with pytest.raises(ValueError, match="action 9999 is illegal: not in the catalogue"):
        state.apply_actions([9999, 0])
    assert state.current_player() == pyspiel.PlayerId.SIMULTANEOUS and "tick 0" in str(state)


def test_openspiel_tools_run_it():
    """OpenSpiel's RL environment and its turn-based transform play whole hands of legal moves."""
    from open_spiel.python import rl_environment

    game = openspiel.load_game(players=2, max_cycles=300)
    env = rl_environment.Environment(game, seed=5)
    step = env.reset()
    rng, ticks = np.random.default_rng(0), 0
    while not step.last():
        step = env.step([int(rng.choice(step.observations["legal_actions"][p])) for p in range(2)])
        ticks += 1
    assert 0 < ticks <= 300
    assert len(step.observations["info_state"][0]) == game.observation_tensor_size()
    turn_based = pyspiel.convert_to_turn_based(game)
    assert turn_based.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    pyspiel.random_sim_test(turn_based, num_sims=1, serialize=False, verbose=False)


def test_agents_play_as_openspiel_bots():
    """``agent_bot`` seats this package's players in OpenSpiel's ``evaluate_bots``: each bot plays
    what its agent plays from that seat's ``nertz_v0`` observation, and the heuristic outscores
    uniform random play on every deal."""
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    from nertz_env import agents
    from nertz_env.agents.openspiel_bot import agent_bot

    game = openspiel.load_game(players=2, deals=1000)
    for deal in range(3):
        state = game.new_initial_state()
        state.apply_action(deal)
        bots = [agent_bot(game, 0, "heuristic"), agent_bot(game, 1, "random", seed=deal)]
        shadow = state.clone()
        heuristic, scratch = agents.make("heuristic", config=game.config), []
        while len(scratch) < 20:  # the bot's move is the agent's on the same observation
            move = heuristic.act({"observation": shadow.observation_vector(0), "action_mask": shadow.action_mask(0)})
            scratch.append(move == bots[0].step(shadow))
            shadow.apply_actions([move, shadow.legal_actions(1)[0]])
        assert all(scratch)
        returns = evaluate_bots(state, bots, np.random.default_rng(deal))
        assert returns[0] > returns[1]
    with pytest.raises(ValueError, match="player must be a seat from 0 to 1, got 2"):
        agent_bot(game, 2, "greedy")
    with pytest.raises(ValueError, match="unknown agent"):
        agent_bot(game, 0, "grandmaster")


def test_bots_of_one_spec_at_different_seats_draw_from_different_streams():
    """By default a bot's seed is its seat: two ``random`` bots do not draw the same uniforms at
    every tick (they did when every seat defaulted to seed 0); a given seed is kept."""
    from nertz_env.agents.openspiel_bot import agent_bot

    game = openspiel.load_game(players=2, deals=10)
    bots = [agent_bot(game, seat, "random") for seat in (0, 1)]
    assert [b.agent.seed for b in bots] == [0, 1]
    assert not np.array_equal(bots[0].agent.rng.random(8), bots[1].agent.rng.random(8))
    assert agent_bot(game, 1, "random", seed=5).agent.seed == 5


@pytest.mark.parametrize("reward", ["dense", "sparse"])
def test_returns_stay_within_the_utility_bounds_when_others_build_on_a_nertz_pile(reward):
    """R4.8 (``nertz_builds``): the cards others build on a Nertz pile count against its owner (R7),
    so a score can fall below the penalty of the cards dealt; the game's utility bounds allow it."""
    game = openspiel.load_game(players=2, nertz_builds=True, reward=reward, deals=1)
    builds = {i for i in range(len(game.catalogue)) if ">nertz@" in game.catalogue.name(i)}
    state = game.new_initial_state()
    state.apply_action(0)
    rng, lowest = np.random.default_rng(0), 0.0
    while not state.is_terminal():  # seat 0 builds on seat 1's Nertz pile whenever it may
        onto = [a for a in state.legal_actions(0) if a in builds]
        state.apply_actions([onto[0] if onto else int(rng.choice(state.legal_actions(0))), 0])
        lowest = min(lowest, *state.returns())
    assert state.scores()[1] < -2 * 13  # seat 1's pile grew past the 13 cards dealt
    assert game.min_utility() <= lowest and max(state.returns()) <= game.max_utility()


def test_seat_queries_refuse_a_player_that_is_not_a_seat():
    """A seat is 0 to P - 1 (a deal, for the chance player, 0 to deals - 1): a pseudo-player or a
    seat too large raises by name, where it read another seat's row (or numpy's IndexError)."""
    game = openspiel.load_game(players=3, deals=10)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="deal 10 is not a deal: deals are 0 to 9"):
        state.action_to_string(pyspiel.PlayerId.CHANCE, 10)
    state.apply_action(2)
    for bad in (pyspiel.PlayerId.SIMULTANEOUS, 3):
        with pytest.raises(ValueError, match=rf"legal_actions takes a seat from 0 to 2, got {bad}"):
            state.legal_actions(bad)
    with pytest.raises(ValueError, match="no flat joint actions: ask legal_actions\\(p\\) of each seat"):
        state.legal_actions()
    with pytest.raises(
        ValueError, match=r"action_to_string takes a seat from 0 to 2 \(or -1, the chance player\), got 5"
    ):
        state.action_to_string(5, 0)
    with pytest.raises(ValueError, match="observation_vector takes a seat from 0 to 2, got -1"):
        state.observation_vector(-1)
    with pytest.raises(ValueError, match="action_mask takes a seat from 0 to 2, got 3"):
        state.action_mask(3)


def test_ticks_at_the_deal_or_after_the_end_are_refused_by_what_the_state_is():
    game = openspiel.load_game(players=2, deals=5, max_cycles=2)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=r"at the chance node: apply_action\(deal\) deals first \(R2\), got"):
        state.apply_actions([0, 0])
    state.apply_action(1)
    while not state.is_terminal():
        state.apply_actions([0, 0])
    for move in (lambda: state.apply_actions([0, 0]), lambda: state.apply_action(0)):
        with pytest.raises(ValueError, match=r"the hand is over \(R5\): a terminal state takes no action"):
            move()
    assert state.history() == [1, 0, 0, 0, 0]


def test_a_game_and_its_states_are_freed():
    """The state whose table the game's engine holds is not kept alive by the game: no cycle through
    OpenSpiel's C++ side keeps a game, its engine and its last state after the last reference."""
    game = openspiel.load_game(players=2, deals=5)
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_actions([0, 0])
    engine = weakref.ref(game._engine)
    del game, state
    gc.collect()
    assert engine() is None


def test_agent_bot_refuses_another_games_states_and_a_spec_that_is_not_a_string():
    from nertz_env.agents.openspiel_bot import agent_bot

    game = openspiel.load_game(players=2, deals=10)
    bot = agent_bot(game, np.int64(1), "greedy")  # a numpy integer is a seat too
    assert bot.player == 1 and type(bot.player) is int
    for other, differs in (({"stock_draw": 1}, "stock_draw=1"), ({"players": 3}, "players=3")):
        state = openspiel.load_game(deals=10, **{"players": 2, **other}).new_initial_state()
        state.apply_action(0)
        with pytest.raises(
            ValueError, match=rf"AgentBot \(seat 1\) was built for another game: this state's has {differs}"
        ):
            bot.step(state)
    same_rules = openspiel.load_game(players=2, deals=3).new_initial_state()  # only the deals differ
    same_rules.apply_action(0)
    assert bot.step(same_rules) in same_rules.legal_actions(1)
    with pytest.raises(ValueError, match="AgentBot plays the simultaneous nodes of python_nertz, got None"):
        bot.step(None)
    with pytest.raises(TypeError, match="spec must be an agent spec string such as 'heuristic:depth=3'"):
        agent_bot(game, 0, None)


def test_an_edited_serialized_state_is_refused_at_its_first_move():
    """OpenSpiel rebuilds a Python game's state from its pickled ``__dict__`` and takes the history as
    written: a history, mask or observation that disagrees with the table raises, where an edited
    mask let an illegal action through (played as WAIT) and an edited deal went unnoticed."""
    import base64
    import pickle

    game = openspiel.load_game(players=2, deals=10)
    state = game.new_initial_state()
    state.apply_action(3)
    state.apply_actions([1, 1])
    text = pyspiel.serialize_game_and_state(game, state)
    head, _, encoded = text.rpartition("__dict__=")
    views = pickle.loads(base64.b64decode(encoded))
    views["_masks"] = np.ones_like(views["_masks"])  # every action "legal"
    forged = head + "__dict__=" + base64.b64encode(pickle.dumps(views)).decode() + "\n"
    call = game.catalogue.index("call")  # R4.6: illegal with 13 cards in the Nertz pile
    for edited, move in ((forged, lambda s: s.apply_actions([call, 0])), (text.replace("-1:3,", "-1:7,"), str)):
        _, copy = pyspiel.deserialize_game_and_state(edited)
        with pytest.raises(ValueError, match="not match its table.*: was a serialized state edited"):
            move(copy)
    _, copy = pyspiel.deserialize_game_and_state(text)  # unedited, it plays on
    copy.apply_actions([0, 0])
