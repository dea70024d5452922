"""``python_nertz``, the OpenSpiel game (``nertz_env.integrations.openspiel``): OpenSpiel's own API
checks pass, it plays the very game ``nertz_v0`` plays (same deal, observations, masks, rewards and
end), and bad parameters, deals and actions are refused by name. Skips without ``open_spiel``."""

from __future__ import annotations

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
    with pytest.raises(ValueError, match="provides one observation"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))


def test_bad_deals_and_actions_are_refused_with_the_reason():
    game = openspiel.load_game(players=2, deals=100)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="the chance node takes a deal from 0 to 99, got 100"):
        state.apply_action(100)
    with pytest.raises(ValueError, match="a tick takes 2 actions at a simultaneous node"):
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
